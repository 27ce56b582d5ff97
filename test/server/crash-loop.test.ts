import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { afterAll, describe, expect, it } from "vitest";
import { ReplayStore } from "../../db/store.ts";
import type { ClientFrame } from "../../protocol/frames.ts";
import { createTokens } from "../support/tokens.ts";
import { DocsBot, expectNothingLost } from "../support/docs-bot.ts";
import { runLudus, type ServerProcess, startServerProcess } from "../support/server-process.ts";
import { BACKENDS, freshDatabase } from "../support/stores.ts";

/**
 * A real `ludus serve` under bots of several games, turn-based and simultaneous, killed with SIGKILL at
 * random points again and again. The bots are written from docs/protocol.md alone: after each kill they
 * reconnect, resume every match `welcome` lists and resend every act they saw no ack for. Afterwards every
 * acknowledged action is in the store, every match the server ever made has been played to its end, and
 * `ludus replay verify --all` is clean. LUDUS_CRASH_CYCLES sets the number of kills (a few hundred for a
 * soak; LUDUS_CRASH_GAMES=all plays every game).
 */

const CYCLES = Number(process.env.LUDUS_CRASH_CYCLES ?? 12);
const MATCHES_PER_BOT = Number(process.env.LUDUS_CRASH_MATCHES ?? 6) + Math.floor(CYCLES / 3);

/** Every other seat a built-in strategy. */
const againstBuiltins = (seats: number, strategy = "random") =>
  Object.fromEntries(Array.from({ length: seats - 1 }, (_, i) => [String(i + 1), `strategy:${strategy}`]));

/** What each bot plays, one private match after another against built-ins (the last two meet in the queue). */
const CORE: { name: string; lanes: number; frame: ClientFrame }[] = [
  {
    name: "ipd",
    lanes: 2,
    frame: { type: "create", game: "ipd", config: { rounds: 12 }, opponents: againstBuiltins(2, "tit-for-tat") },
  },
  {
    name: "donor",
    lanes: 1,
    frame: { type: "create", game: "donor-game", config: { agents: 6 }, opponents: againstBuiltins(6) },
  },
  {
    name: "trust",
    lanes: 1,
    frame: { type: "create", game: "trust-and-split", variant: "rps", opponents: againstBuiltins(2) },
  },
  {
    name: "kuhn",
    lanes: 2,
    frame: { type: "create", game: "kuhn-poker", config: { rounds: 4 }, opponents: againstBuiltins(2) },
  },
  {
    name: "leduc",
    lanes: 1,
    frame: { type: "create", game: "leduc-poker", config: { hands: 2 }, opponents: againstBuiltins(2) },
  },
  { name: "queue-a", lanes: 1, frame: { type: "queue", game: "ipd", variant: "classic" } },
  { name: "queue-b", lanes: 1, frame: { type: "queue", game: "ipd", variant: "classic" } },
];
const MORE: typeof CORE = [
  { name: "ttt", lanes: 1, frame: { type: "create", game: "tic-tac-toe", opponents: againstBuiltins(2) } },
  {
    name: "holdem",
    lanes: 1,
    frame: { type: "create", game: "holdem", variant: "hulhe", config: { hands: 2 }, opponents: againstBuiltins(2) },
  },
  { name: "dond", lanes: 1, frame: { type: "create", game: "deal-or-no-deal", opponents: againstBuiltins(2) } },
  { name: "nego", lanes: 1, frame: { type: "create", game: "simple-negotiation", opponents: againstBuiltins(2) } },
];
const BOTS = process.env.LUDUS_CRASH_GAMES === "all" ? [...CORE, ...MORE] : CORE;

describe.each(BACKENDS)("a server killed with SIGKILL again and again (%s)", (backend) => {
  const dataDir = mkdtempSync(join(tmpdir(), "ludus-crash-"));
  let server: ServerProcess | undefined;
  let dropDatabase: (() => Promise<void>) | undefined;
  afterAll(async () => {
    server?.child.kill("SIGKILL");
    await dropDatabase?.();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(
    `loses no acknowledged action over ${CYCLES} kills, and every match is played to its end`,
    async () => {
      const storeArgs = ["--data-dir", dataDir];
      if (backend === "postgres") {
        const db = await freshDatabase();
        dropDatabase = db.drop;
        storeArgs.push("--database-url", db.url);
      }
      // A long hold: a restart under load must never cost a seat. The queue bots meet each other, or a built-in
      // after 2 s (a ticket lost in a crash leaves the two with unequal counts: the last must not wait for ever).
      const args = [...storeArgs, "--hold", "300", "--fill-after", "2000"];
      const tokens = await createTokens(
        { dataDir, ...(backend === "postgres" ? { databaseUrl: storeArgs[3] } : {}) },
        BOTS.map(({ name }) => `${name}-${backend}`),
      );
      server = await startServerProcess(args);
      const bots = BOTS.map(({ name, lanes, frame }, i) => {
        let planned = 0;
        const plan = () => (planned++ < MATCHES_PER_BOT ? frame : undefined);
        const token = tokens[i];
        return new DocsBot(() => server!.wsUrl, token, { lanes, plan, format: name === "kuhn" ? "msgpack" : "json" });
      });
      bots.forEach((bot) => bot.start());
      const acks = () => bots.reduce((n, bot) => n + bot.ackCount, 0);

      let kills = 0;
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        // Kill at a random point: after a random number of further acknowledged decisions.
        const target = acks() + 5 + Math.floor(Math.random() * 25);
        await Promise.race(
          bots.map((bot) => bot.until(() => acks() >= target || bots.every((b) => b.done), "play", 120_000)),
        );
        if (bots.every((b) => b.done)) break;
        server.child.kill("SIGKILL");
        await server.exited;
        kills++;
        server = await startServerProcess(args);
      }
      await Promise.all(
        bots.map((bot, i) => bot.until(() => bot.done, `${BOTS[i].name} to finish its matches`, 240_000)),
      );
      bots.forEach((bot) => bot.stop());
      server.child.kill("SIGTERM");
      await server.exited;
      server = undefined;

      const matches = new Set(bots.flatMap((bot) => [...bot.seats.keys()])).size;
      console.info(`crash loop (${backend}): ${kills} kills, ${matches} matches, ${acks()} acknowledged decisions`);
      expect(kills).toBeGreaterThan(0);
      const store = await ReplayStore.open({
        dataDir,
        ...(backend === "postgres" ? { databaseUrl: storeArgs[3] } : {}),
      });
      try {
        // Every match the server ever made was played to its end, and nothing acknowledged is missing.
        await expectNothingLost(store, bots);
      } finally {
        await store.close();
      }
      const verify = await runLudus(["replay", "verify", "--all", ...storeArgs]);
      expect(verify.out + verify.err).toMatch(/: 0 differences in 0 matches/);
      expect(verify.code).toBe(0);
    },
    30 * 60_000,
  );
});
