import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getGame } from "../../games/registry.ts";
import { createStrategy } from "../../policies/baselines/index.ts";
import { playMatch } from "../../policies/simulate.ts";
import { createTokens } from "../support/tokens.ts";
import { RawBot } from "../support/raw-bot.ts";
import { runLudus, type ServerProcess, startServerProcess } from "../support/server-process.ts";
import { until } from "../support/until.ts";
import { migratedDataDir } from "../support/data-dirs.ts";

/**
 * A match whose seats are all in-process (built-ins) runs inside `ludus serve` without holding anyone up:
 * its decisions go to the store in bulk, off the per-step path, while bots are answered and new matches
 * start. Checked by events: every ping and every creation is answered while the long match is still playing.
 */

const HANDS = 100_000;

describe("a long match between built-ins inside ludus serve", () => {
  let dataDir: string;
  let server: ServerProcess;
  let watcher: string;
  beforeAll(async () => {
    dataDir = await migratedDataDir("ludus-in-process-");
    [watcher] = await createTokens({ dataDir }, ["watcher"]);
    server = await startServerProcess(["--data-dir", dataDir]);
  });
  afterAll(async () => {
    server?.child.kill("SIGTERM");
    await server?.exited;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(`plays ${HANDS.toLocaleString("en")} hands of Kuhn poker while pings are answered and matches are created`, async () => {
    const bot = await RawBot.connect(server.wsUrl, watcher);
    bot.send({
      type: "create",
      game: "kuhn-poker",
      config: { rounds: HANDS, history: 0 },
      seat: null,
      opponents: { "0": "strategy:random", "1": "strategy:nash" },
      group: "long-run",
    });
    const created = await bot.next("created");
    expect(created).toMatchObject({ seat: null, seats: [] });
    const summary = async () =>
      (await (await fetch(`${server.url}/matches?game=kuhn-poker&limit=1`)).json()).matches[0];
    const live = async () => (await summary()).endedAt === null;

    let answered = 0;
    let started = 0;
    // Round after round: a ping, then a new match with a bot seat, each answered while the long match plays.
    while (await live()) {
      bot.send({ type: "ping", id: answered });
      await bot.next("pong", (f) => f.id === answered);
      answered++;
      bot.send({ type: "create", game: "ipd", config: { rounds: 1 }, opponents: { "1": "strategy:always-defect" } });
      const other = await bot.next("created", (f) => f.seat === 0);
      const turn = await bot.next("turn", (f) => f.match === other.match);
      bot.act(other.match, turn.seq, { type: "cooperate" });
      await bot.next("match_end", (f) => f.match === other.match);
      started++;
    }
    expect(answered).toBeGreaterThanOrEqual(3);
    expect(started).toBe(answered);

    const match = await summary();
    expect(match).toMatchObject({ id: created.match, endReason: "completed", group: "long-run" });
    expect(match.steps).toBeGreaterThanOrEqual(2 * HANDS);
    const health = await (await fetch(`${server.url}/health`)).json();
    expect(health.store.unwritten).toBe(0);
    bot.close();
  });
});

describe("a long match between built-ins across a crash", () => {
  it("is played on from its durable log after SIGKILL, to the same end as uninterrupted", async () => {
    const dataDir = await migratedDataDir("ludus-in-process-crash-");
    const [watcher] = await createTokens({ dataDir }, ["watcher"]);
    let server = await startServerProcess(["--data-dir", dataDir]);
    try {
      const bot = await RawBot.connect(server.wsUrl, watcher);
      const seed = "crash-run";
      bot.send({
        type: "create",
        game: "kuhn-poker",
        config: { rounds: 20_000, history: 0 },
        seat: null,
        seed,
        opponents: { "0": "strategy:random", "1": "strategy:nash" },
      });
      const created = await bot.next("created");
      const written = async () =>
        (await (await fetch(`${server.url}/matches?game=kuhn-poker&limit=1`)).json()).matches[0];
      // Wait until some of its decisions are durable (a bulk batch is 4,000), then kill the server mid-match.
      await until("a batch of the match written", async () => {
        const steps = await (await fetch(`${server.url}/matches/${created.match}/view?seat=public`)).json();
        return (steps.turns?.length ?? 0) > 0;
      });
      const before = await written();
      expect(before.endedAt).toBeNull();
      server.child.kill("SIGKILL");
      await server.exited;
      server = await startServerProcess(["--data-dir", dataDir]);
      await until("the restored match ended", async () => (await written()).endedAt !== null);
      const after = await written();
      expect(after, JSON.stringify(after)).toMatchObject({ id: created.match, endReason: "completed" });
      // The same seed played uninterrupted, in-process, ends the same.
      const kuhn = getGame("kuhn-poker");
      const config = kuhn.schema.parse({ rounds: 20_000, history: 0 });
      const strategies = ["random", "nash"].map((name) => createStrategy("kuhn-poker", name));
      expect(after.returns).toEqual(playMatch(kuhn, config, strategies, seed).returns);
      bot.close();
      server.child.kill("SIGTERM");
      await server.exited;
      // And its stored log re-simulates decision for decision.
      const verify = await runLudus(["replay", "verify", "--match", created.match, "--data-dir", dataDir]);
      expect(verify.code, verify.out + verify.err).toBe(0);
    } finally {
      server.child.kill("SIGKILL");
      await server.exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
