import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { MatchRecord } from "../../db/records.ts";
import { ReplayStore } from "../../db/store.ts";
import { createTokens } from "../support/tokens.ts";
import { RawBot } from "../support/raw-bot.ts";
import { runLudus, startServerProcess } from "../support/server-process.ts";
import { mountSmallDisk } from "../support/small-disk.ts";
import { matchHeader } from "../support/match-header.ts";
import { until } from "../support/until.ts";

/**
 * The embedded store on a disk that fills up. A WAL write that fails is a PANIC in PostgreSQL; PGlite's
 * wasm has no process to end, and the next query used to spin for ever with the event loop blocked (no
 * health, no signals, hung after space came back). Now the writes wait, the process stays responsive,
 * and once space is back the store is reopened (recovering from its WAL) and everything is written.
 */
const disk = mountSmallDisk(80);

const record = (id: string, n: number): MatchRecord =>
  matchHeader(id, {
    seats: [{ kind: "bot", name: "a" }, { kind: "builtin", name: "random", strategy: "random" }],
    // A long, unindexed field makes every rewrite of the row a sizeable WAL record while the table itself
    // stays small (the new row version fits the old one's page): the WAL, not the table, fills the disk.
    statuses: [`${n}`.padEnd(1200, "x") as "ACTIVE", "ACTIVE"],
    steps: n,
    createdAt: new Date(0),
  });

afterAll(() => disk?.unmount());

describe.skipIf(!disk)("the embedded store on a full disk", () => {
  it("keeps the process responsive while the disk is full, and writes everything once space is back", async () => {
    const store = await ReplayStore.open({
      dataDir: join(disk!.dir, "data"),
      groupCommit: { retryMinMs: 20, retryMaxMs: 200 },
    });
    try {
      disk!.fill(3 * 1024 * 1024);
      // Rewrite one match's row until the store says it cannot write (the WAL fills the last megabytes).
      let n = 0;
      const writes: Promise<void>[] = [];
      while (store.writer.failure === undefined && n < 100_000) {
        writes.push(store.writer.writeMatch(record("full", ++n)));
        if (n % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 0));
      }
      expect(store.writer.failure, `after ${n} writes`).toMatch(/space|disk|reopen|failed/i);
      // The event loop turns: timers fire while the store waits (it used to spin inside wasm).
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      disk!.free();
      await Promise.all(writes);
      await store.writer.drain();
      expect(store.writer.failure).toBeUndefined();
      expect((await store.match("full"))?.steps).toBe(n);
    } finally {
      await store.close();
      rmSync(store.where.replace(/\/replay$/, ""), { recursive: true, force: true }); // room for the next test
    }
  }, 180_000);

  it("survives a WAL write that fails (a PANIC): reopened from its WAL once space is back", async () => {
    const store = await ReplayStore.open({ dataDir: join(disk!.dir, "panic") });
    try {
      await store.sql.exec("CREATE TABLE churn (id int PRIMARY KEY, v text)");
      disk!.fill(3 * 1024 * 1024);
      // Rewriting one short row grows the WAL, not the table: the WAL write is what fails.
      let failure: unknown;
      let last = 0;
      for (let i = 1; i < 200_000 && failure === undefined; i++) {
        try {
          await store.sql.query(
            "INSERT INTO churn VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v",
            [String(i).repeat(400).slice(0, 1500)],
          );
          last = i;
        } catch (error) {
          failure = error;
        }
      }
      expect(String((failure as Error)?.message)).toMatch(/reopened on the next write|cannot be reopened/);
      expect((failure as { code?: string }).code).toBe("CONNECTION_STORE_DOWN"); // a passing failure: writers retry
      // Still full: the store says it cannot be reopened yet, and nothing hangs.
      await expect(store.sql.query("SELECT 1")).rejects.toThrow(/cannot be reopened yet|failed/);
      disk!.free();
      // The writer retries as for any passing failure, until a fresh instance opens.
      await store.writer.writeMatch(record("after", 1));
      expect((await store.match("after"))?.steps).toBe(1);
      const [{ v }] = await store.sql.query<{ v: string }>("SELECT v FROM churn WHERE id = 1");
      // The write that failed may have reached the WAL before the PANIC: then recovery keeps it too.
      expect([last, last + 1].some((n) => v === String(n).repeat(400).slice(0, 1500))).toBe(true);
    } finally {
      await store.close();
      rmSync(store.where.replace(/\/replay$/, ""), { recursive: true, force: true }); // room for the next test
    }
  }, 180_000);
});

describe.skipIf(!disk)("ludus serve on a disk that fills up, or is read-only", () => {
  it("answers /health and stops on SIGTERM while the disk is full, losing nothing acknowledged", async () => {
    const dataDir = join(disk!.dir, "served");
    const [filler] = await createTokens({ dataDir }, ["filler"]);
    const server = await startServerProcess(["--data-dir", dataDir]);
    const bot = await RawBot.connect(server.wsUrl, filler);
    bot.play((turn) => (turn.legal[0].kind === "fixed" ? turn.legal[0].action : ""));
    bot.send({ type: "create", game: "ipd", config: { rounds: 500 }, opponents: { "1": "strategy:random" } });
    await bot.next("ack", (a) => a.seq > 20);
    disk!.fill(0);
    const failure = await until("the store's failure in /health", async () => {
      const health = await (await fetch(`${server.url}/health`, { signal: AbortSignal.timeout(5000) })).json();
      return health.store.failure as string | null;
    });
    expect(failure).toMatch(/space|disk|reopen|failed/i);
    const acked = bot.frames.filter((f) => f.type === "ack").length;
    server.child.kill("SIGTERM");
    await server.exited;
    expect(server.stderr()).toMatch(/ludus: stopped; 1 live match is kept/);
    disk!.free();
    bot.close();
    const store = await ReplayStore.open({ dataDir });
    const match = bot.frames.find((f) => f.type === "ack")!;
    expect((await store.steps("match" in match ? match.match : "")).length).toBeGreaterThanOrEqual(acked);
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }, 180_000);

  it("a read-only data directory gets one sentence and exit 1, not a stack trace", async () => {
    const frozen = mountSmallDisk(64)!; // a disk of its own: one holding open files cannot be made read-only
    try {
      const dataDir = join(frozen.dir, "data");
      const store = await ReplayStore.open({ dataDir });
      await store.close();
      execFileSync("mount", ["-o", "remount,ro", frozen.dir]);
      const { code, err } = await runLudus(["serve", "--port", "0", "--data-dir", dataDir]);
      expect(code).toBe(1);
      expect(err.trim().split("\n")).toHaveLength(1);
      expect(err).toMatch(/^ludus: error: cannot .*read-only \(EROFS\)/);
      const fresh = await runLudus(["serve", "--port", "0", "--data-dir", join(frozen.dir, "new")]);
      expect(fresh.err).toMatch(/^ludus: error: cannot create the data directory .*read-only/);
    } finally {
      frozen.unmount();
    }
  });
});
