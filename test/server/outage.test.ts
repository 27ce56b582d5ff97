import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ReplayStore } from "../../db/store.ts";
import type { ClientFrame, TurnFrame } from "../../protocol/frames.ts";
import { createTokens } from "../support/tokens.ts";
import { DocsBot } from "../support/docs-bot.ts";
import { RawBot } from "../support/raw-bot.ts";
import { type ServerProcess, startServerProcess } from "../support/server-process.ts";
import { needs, serviceAddress } from "../support/services.ts";
import { freshDatabase } from "../support/stores.ts";
import { TcpProxy } from "../support/tcp-proxy.ts";
import { until } from "../support/until.ts";

const { ready, suite } = needs(["postgres"], "the replay store's PostgreSQL goes away under load");

describe.skipIf(!ready)(suite, () => {
  const dataDir = mkdtempSync(join(tmpdir(), "ludus-outage-"));
  const proxy = new TcpProxy({ host: "127.0.0.1", port: serviceAddress("postgres").port });
  let server: ServerProcess | undefined;
  let drop: (() => Promise<void>) | undefined;
  afterAll(async () => {
    server?.child.kill("SIGKILL");
    await proxy.refuse();
    await drop?.();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("holds acks, refuses new matches, says why, and resumes with nothing lost", async () => {
    const db = await freshDatabase();
    drop = db.drop;
    await proxy.up();
    const url = new URL(db.url);
    url.port = String(proxy.port);
    url.hostname = "127.0.0.1";
    const args = ["--data-dir", dataDir, "--database-url", url.toString(), "--hold", "300", "--max-unwritten", "60"];
    // Made before the server starts: it knows them when the store goes away, so they still connect then.
    const names = ["load-0", "load-1", "load-2", "queued-a", "queued-b"];
    const made = await createTokens({ dataDir, databaseUrl: db.url }, names);
    const [newcomerToken] = await createTokens({ dataDir, databaseUrl: db.url }, ["newcomer"], "bot", 1000);
    const tokenOf = (name: string) => made[names.indexOf(name)];
    server = await startServerProcess(args);
    const health = async () => (await (await fetch(`${server!.url}/health`)).json()).store;
    let planned = 0;
    const frame: ClientFrame = {
      type: "create",
      game: "ipd",
      config: { rounds: 30 },
      opponents: { "1": "strategy:tit-for-tat" },
    };
    const bots = Array.from(
      { length: 3 },
      (_, i) =>
        new DocsBot(() => server!.wsUrl, tokenOf(`load-${i}`), {
          lanes: 4,
          plan: () => (planned++ < 40 ? frame : undefined),
        }),
    );
    bots.forEach((bot) => bot.start());
    const acks = () => bots.reduce((n, bot) => n + bot.ackCount, 0);
    const more = (n: number, what: string) => {
      const target = acks() + n;
      return Promise.race(bots.map((bot) => bot.until(() => acks() >= target, what, 60_000)));
    };
    await more(100, "play before the outage");

    // Refused for longer than the few connects that used to break the pool.
    await proxy.refuse();
    // A queue's match starts while the store is away: its first frames acknowledge nothing, so they wait for no
    // commit; its first decision's ack waits for the store, as every ack does.
    const pair = await Promise.all(
      ["queued-a", "queued-b"].map((name) => RawBot.connect(server!.wsUrl, tokenOf(name))),
    );
    for (const bot of pair) bot.send({ type: "queue", game: "kuhn-poker" });
    const [paired] = await Promise.all(pair.map((bot) => bot.next("match_start")));
    const opener = await Promise.race(pair.map((bot) => bot.next("turn").then((turn) => ({ bot, turn }))));
    const check = (turn: TurnFrame) => turn.legal[0].kind === "fixed" ? turn.legal[0].action : undefined;
    opener.bot.play(check);
    const newcomer = await RawBot.connect(server.wsUrl, newcomerToken);
    let refused = false;
    for (let i = 0; i < 200 && !refused; i++) {
      newcomer.send({ type: "create", game: "ipd", opponents: { "1": "strategy:random" } });
      newcomer.send({ type: "ping", id: i }); // answered at once: the create's answer, if any, came before it
      await newcomer.next("pong", (p) => p.id === i);
      refused = newcomer.frames.some((f) => f.type === "error" && f.code === "store_unavailable");
    }
    expect(refused).toBe(true);
    // No `created` went out for a match the store never took: nobody holds a match a crash could take back.
    expect(newcomer.frames.filter((f) => f.type === "created")).toEqual([]);
    const down = await health();
    expect(down.failure).toMatch(/ECONNREFUSED|ECONNRESET|connect|closed/i);
    expect(down.unwritten).toBeLessThan(200); // bounded: 60 and what was already on its way
    const frozen = acks();
    // The outage lasts until the server has said, more than once, what it waits for.
    await until("a report", () => /still waiting for the replay store \(\d+ s\)/.test(server!.stderr()));
    expect(acks()).toBeLessThanOrEqual(frozen + bots.length * 4 * 2);

    expect(opener.bot.frames.filter((f) => f.type === "ack")).toEqual([]);
    await proxy.up();
    expect(await opener.bot.next("ack")).toMatchObject({ match: paired.match, seq: opener.turn.seq });
    pair.forEach((bot) => bot.play(check));
    await Promise.all(pair.map((bot) => bot.next("match_end")));
    pair.forEach((bot) => bot.close());
    await more(50, "play after the database came back");
    expect(server.stderr()).toMatch(/the replay store is writable again/);
    // Matches created before the refusals were announced only now that they are stored.
    await newcomer.next("created", () => true, { timeoutMs: 30_000 });
    newcomer.close();

    // A network that carries nothing: no error, just silence. The server says so.
    proxy.stall();
    await until("a stall", async () => /no answer from .* for \d+ s/.test((await health()).failure ?? ""));
    await proxy.up();
    await more(50, "play after the stall");

    // A stop while the database is away ends within its bound; nothing acknowledged is lost.
    await proxy.refuse();
    const ackedBeforeStop = acks();
    server.child.kill("SIGTERM");
    await server.exited;
    expect(server.stderr()).toMatch(/ludus: stopped; \d+ live match/);
    await proxy.up();
    server = await startServerProcess(args);
    await Promise.all(bots.map((bot) => bot.until(() => bot.done, "every match to finish", 180_000)));
    bots.forEach((bot) => bot.stop());
    expect(acks()).toBeGreaterThan(ackedBeforeStop);
    for (const bot of bots) expect(bot.errors).toEqual([]);
    server.child.kill("SIGTERM");
    await server.exited;
    server = undefined;

    const store = await ReplayStore.open({ dataDir, databaseUrl: db.url });
    try {
      for (const bot of bots) {
        for (const [match, seqs] of bot.acked) {
          const stored = new Map((await store.steps(match)).map((s) => [s.seq, s.action]));
          for (const [seq, action] of seqs) expect(stored.get(seq), `${match} seq ${seq}`).toEqual(action);
        }
      }
      // The newcomer's match was never played: it is the only one not finished.
      const unfinished = await store.unfinished();
      expect(unfinished.every((m) => m.seats.some((s) => s?.name === "newcomer"))).toBe(true);
    } finally {
      await store.close();
    }
  }, 600_000);
});

/**
 * Matches the server plays alone (a `create` with `seat: null` between built-ins) running into an outage: they pause
 * while the store cannot take their records, new ones are refused, the buffer stays bounded and /health answers; a
 * bot's ack waits for the store only, not behind their backlog; everything is written once the store is back.
 */
const inProcess = needs(["postgres"], "the replay store's PostgreSQL goes away under in-process play");

describe.skipIf(!inProcess.ready)(inProcess.suite, () => {
  const dataDir = mkdtempSync(join(tmpdir(), "ludus-outage-in-process-"));
  const proxy = new TcpProxy({ host: "127.0.0.1", port: serviceAddress("postgres").port });
  let server: ServerProcess | undefined;
  let drop: (() => Promise<void>) | undefined;
  afterAll(async () => {
    server?.child.kill("SIGKILL");
    await proxy.refuse();
    await drop?.();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(
    "pauses in-process play, refuses more of it, keeps the buffer bounded, and plays on once the store is back",
    async () => {
      const db = await freshDatabase();
      drop = db.drop;
      await proxy.up();
      const url = new URL(db.url);
      url.port = String(proxy.port);
      url.hostname = "127.0.0.1";
      const MAX_UNWRITTEN = 10_000;
      // Past the bound: the bulk batch (4,000 decisions) an in-process match may hand over as the bound is reached,
      // and a record or two per live match of players.
      const SLACK = 4_000 + 10;
      const [watcherToken, playerToken] = await createTokens({ dataDir, databaseUrl: db.url }, ["watcher", "player"]);
      server = await startServerProcess([
        "--data-dir",
        dataDir,
        "--database-url",
        url.toString(),
        "--max-unwritten",
        String(MAX_UNWRITTEN),
      ]);
      const health = async () => (await (await fetch(`${server!.url}/health`)).json()).store;
      const steps = async () => {
        const { matches } = await (await fetch(`${server!.url}/live?game=kuhn-poker`)).json();
        return new Map((matches as { id: string; steps: number }[]).map((m) => [m.id, m.steps]));
      };
      const long: ClientFrame = {
        type: "create",
        game: "kuhn-poker",
        seat: null,
        config: { rounds: 100_000, history: 1 },
        opponents: { "0": "strategy:random", "1": "strategy:always-call" },
      };
      const watcher = await RawBot.connect(server.wsUrl, watcherToken);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        watcher.send(long);
        ids.push((await watcher.next("created")).match);
      }
      const player = await RawBot.connect(server.wsUrl, playerToken);
      player.send({ type: "create", game: "ipd", config: { rounds: 5 }, opponents: { "1": "strategy:tit-for-tat" } });
      const turn = await player.next("turn");
      await until("in-process play", async () => [...(await steps()).values()].some((n) => n > 1000));

      await proxy.refuse();
      player.act(turn.match, turn.seq, { type: "cooperate" });
      await until("the store to be seen failing", async () => (await health()).failure);
      // On an idle machine a long match can play all its hands before the outage: those still live are what pauses.
      const paused = await steps();
      const live = ids.filter((id) => paused.has(id));
      expect(live.length).toBeGreaterThan(0);

      // A new match between built-ins is refused while the store is away, saying why.
      watcher.send(long);
      const refusal = await watcher.next("error");
      expect(refusal).toMatchObject({ code: "store_unavailable" });
      expect(refusal.message).toMatch(/in-process seats are refused: the replay store is unavailable/);

      // Until the server has said again what it waits for, /health answers and the buffer stays within its bound.
      let most = 0;
      await until("a report", async () => {
        most = Math.max(most, (await health()).unwritten);
        return /still waiting for the replay store \(\d+ s\)/.test(server!.stderr());
      });
      expect(most).toBeLessThanOrEqual(MAX_UNWRITTEN + SLACK);
      // Nothing in-process was played meanwhile.
      expect(await steps()).toEqual(paused);
      expect(player.frames.filter((f) => f.type === "ack")).toEqual([]);

      await proxy.up();
      expect(await player.next("ack")).toMatchObject({ match: turn.match, seq: turn.seq });
      await until("in-process play to go on", async () => {
        const now = await steps();
        return live.some((id) => (now.get(id) ?? Infinity) > paused.get(id)!);
      });
      watcher.send(long);
      const again = await watcher.next("created");
      watcher.close();
      player.close();
      server.child.kill("SIGTERM");
      await server.exited;
      server = undefined;

      // What was played is in the store, each match's log without a hole; the acknowledged decision too.
      const store = await ReplayStore.open({ dataDir, databaseUrl: db.url });
      try {
        for (const id of [...ids, again.match]) {
          const seqs = (await store.steps(id)).map((s) => s.seq);
          expect(seqs.length).toBeGreaterThanOrEqual(paused.get(id) ?? 0);
          expect(seqs).toEqual(seqs.map((_, i) => i + 1));
        }
        expect((await store.steps(turn.match)).find((s) => s.seq === turn.seq)?.action).toEqual({ type: "cooperate" });
      } finally {
        await store.close();
      }
    },
    300_000,
  );
});
