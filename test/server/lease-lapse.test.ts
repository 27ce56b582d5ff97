import process from "node:process";
import { afterEach, describe, expect, it } from "vitest";
import { RawBot } from "../support/raw-bot.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { freshDatabase } from "../support/stores.ts";
import { until } from "../support/until.ts";

/**
 * A server process whose lease lapses while it runs (a stall longer than the lease, made here by ageing the lease
 * in the store) and whose matches a peer took meanwhile (a stand-in peer, written into the store, that then dies
 * at once) puts its matches to rest and joins again as a new life, which takes back what the lapsed peer left.
 * Its bot's connection stays open and is given the match again where it now lives (here: the new life of the same
 * process), as a `match_start` with `resumed: true` that it did not have to ask for, then its open turn. The match
 * finishes, and every decision acknowledged before and after is in the store once.
 */
describe.skipIf(!process.env.DATABASE_URL)("a server whose lease lapses while it runs (postgres)", () => {
  let test: TestServer | undefined;
  let drop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await test?.close();
    await drop?.();
  });

  it("hands its matches over, joins again as a new life, and its bots play on over the same connection", async () => {
    const db = await freshDatabase();
    drop = db.drop;
    test = await startTestServer({ databaseUrl: db.url, leaseMs: 1000 });
    const { server } = test;
    expect(server.cluster.epoch).toBe(1);
    const bot = await RawBot.connect(test.wsUrl, await test.token());
    bot.send({ type: "create", game: "ipd", config: { rounds: 10 }, opponents: { 1: "strategy:tit-for-tat" } });
    const { match } = await bot.next("created");
    for (let i = 0; i < 3; i++) {
      const turn = await bot.next("turn");
      bot.act(match, turn.seq, { type: "cooperate" });
      await bot.next("ack");
    }
    const open = await bot.next("turn");

    const from = bot.frames.length;
    // What a peer's claim does, in one statement so that the server cannot renew in between: it marks the lapsed
    // life taken over and makes the match its own. Its own lease has lapsed too: it died once it had the match.
    await server.store.sql.query(
      `WITH peer AS (
         INSERT INTO nodes (id, epoch, url, shared, lease_until, started_at)
         VALUES ('peer', 1, '', true, clock_timestamp() - interval '1 second', clock_timestamp())
       ), lapsed AS (
         UPDATE nodes SET lease_until = clock_timestamp() - interval '1 second', taken_at = clock_timestamp()
         WHERE id = $1
       )
       UPDATE matches SET owner = 'peer', owner_epoch = 1 WHERE id = $2`,
      [server.cluster.node, match],
    );
    const start = await bot.next("match_start", (f) => f.match === match, { from });
    expect(start.resumed).toBe(true);
    expect(server.cluster.epoch).toBe(2);
    // The open decision is offered again, with the same number: nothing of it was taken.
    const again = await bot.next("turn", (f) => f.match === match, { from });
    expect(again.seq).toBe(open.seq);
    bot.play(() => ({ type: "defect" }));
    const end = await bot.next("match_end", (f) => f.match === match);
    expect(end.reason).toBe("completed");
    expect(bot.frames.filter((f) => f.type === "error")).toEqual([]);

    const steps = await server.store.steps(match);
    const mine = steps.filter((s) => s.seat === 0).map((s) => s.action);
    expect(mine).toEqual([...Array(3).fill({ type: "cooperate" }), ...Array(7).fill({ type: "defect" })]);
    const acked = bot.frames.flatMap((f) => f.type === "ack" && f.match === match ? [f.seq] : []);
    expect(new Set(acked).size).toBe(10);
    for (const seq of acked) expect(steps.some((s) => s.seq === seq && s.seat === 0)).toBe(true);
    await until("the end to be stored", async () => (await server.store.match(match))?.endedAt != null);
    const [row] = await server.store.sql.query<{ owner: string; owner_epoch: number }>(
      "SELECT owner, owner_epoch FROM matches WHERE id = $1",
      [match],
    );
    expect(row).toEqual({ owner: server.cluster.node, owner_epoch: 2 });
    bot.close();
  });
});
