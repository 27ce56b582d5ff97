import { afterEach, describe, expect, it } from "vitest";
import { RawBot } from "../support/raw-bot.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { needs } from "../support/services.ts";
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
/**
 * What a peer's claim does, in one statement so that the server cannot renew in between: it marks the server's
 * lapsed life taken over and makes `match` (if any) its own. Its own lease has lapsed too: it died once it had it.
 */
async function takeOver(server: TestServer["server"], match = ""): Promise<void> {
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
}

const { ready, suite } = needs(["postgres"], "a server whose lease lapses while it runs (postgres)");

describe.skipIf(!ready)(suite, () => {
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
    await takeOver(server, match);
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

  /**
   * Requests in flight when the lease lapses are answered all the same. A `create` whose first write the fence
   * refuses (the life was taken over before the match was stored) is refused, saying to create again, rather than
   * left unanswered; a queue ticket waiting since before the lapse, which the new life's pairing would drop as a
   * stopped life's, is put back as the new life's and paired with the next player to queue.
   */
  it("answers a create it could not store and keeps its waiting queue tickets", async () => {
    const db = await freshDatabase();
    drop = db.drop;
    // A lease so long that the server renews only when the test says (Cluster.refresh).
    test = await startTestServer({ databaseUrl: db.url, leaseMs: 600_000 });
    const { server } = test;
    const waiting = await RawBot.connect(test.wsUrl, await test.token());
    waiting.send({ type: "queue", game: "kuhn-poker" });
    await waiting.next("queued");

    await takeOver(server);
    const creator = await RawBot.connect(test.wsUrl, await test.token());
    creator.send({ type: "create", game: "ipd", config: { rounds: 3 }, opponents: { 1: "strategy:tit-for-tat" } });
    const refusal = await creator.next("error");
    expect(refusal).toMatchObject({ code: "server_stopping" });
    expect(refusal.message).toContain("`create` was not made");
    expect(refusal.match).toBeUndefined();
    expect(creator.frames.filter((f) => f.type === "created" || f.type === "match_start")).toEqual([]);

    server.cluster.refresh();
    await until("the server to join again as a new life", () => server.cluster.epoch === 2);
    // Created again, the match is made, stored and played under the new life.
    creator.send({ type: "create", game: "ipd", config: { rounds: 3 }, opponents: { 1: "strategy:tit-for-tat" } });
    const { match } = await creator.next("created");
    creator.play(() => ({ type: "cooperate" }));
    expect((await creator.next("match_end", (f) => f.match === match)).reason).toBe("completed");

    const latecomer = await RawBot.connect(test.wsUrl, await test.token());
    latecomer.send({ type: "queue", game: "kuhn-poker" });
    const paired = await latecomer.next("match_start");
    expect((await waiting.next("match_start")).match).toBe(paired.match);
    expect(waiting.frames.filter((f) => f.type === "error")).toEqual([]);
    for (const bot of [waiting, creator, latecomer]) bot.close();
  });
});
