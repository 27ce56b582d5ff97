import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClientFrame } from "../../protocol/frames.ts";
import { createTokens } from "../support/tokens.ts";
import { RawBot } from "../support/raw-bot.ts";
import { type ServerProcess, startServerProcess } from "../support/server-process.ts";
import { needs, serviceAddress } from "../support/services.ts";
import { freshDatabase } from "../support/stores.ts";
import { TcpProxy } from "../support/tcp-proxy.ts";
import { until } from "../support/until.ts";

/**
 * Redis gone from under a cluster of two processes (a proxy in front of it refuses every connection): a match a
 * process plays for a bot connected to it plays on; a bot still authenticates, and is told which of its matches this
 * process plays; a new match or a queue ticket, which need Redis, is refused at once with what is wrong rather than
 * left hanging; the logs say so a few times, not once a frame. Once Redis is back, new matches are made again and the
 * queue pairs bots of the two processes.
 */
const { ready, suite } = needs(["postgres", "redis"], "a cluster whose Redis goes away");

describe.skipIf(!ready)(suite, () => {
  const proxy = new TcpProxy(serviceAddress("redis"));
  const dirs = [1, 2].map((i) => mkdtempSync(join(tmpdir(), `ludus-outage-${i}-`)));
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    await proxy.up();
    db = await freshDatabase();
    for (const [i, dir] of dirs.entries()) {
      servers.push(
        await startServerProcess(
          ["--data-dir", dir, "--database-url", db.url, "--node", `o${i + 1}`, "--lease", "2", "--fill-after", "0"],
          { REDIS_URL: `redis://127.0.0.1:${proxy.port}` },
        ),
      );
    }
  }, 180_000);

  afterAll(async () => {
    for (const server of servers) server.child.kill("SIGKILL");
    await proxy.refuse();
    await db?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("plays on what needs no peer, refuses what needs Redis at once, and pairs across processes once it is back", async () => {
    const [a, b, c] = await createTokens({ dataDir: dirs[0], databaseUrl: db.url }, ["near", "later", "other"]);
    const near = await RawBot.connect(servers[0].wsUrl, a);
    near.send({ type: "create", game: "ipd", config: { rounds: 20 }, opponents: { 1: "strategy:tit-for-tat" } });
    const { match } = await near.next("created");
    const firstTurn = await near.next("turn");
    near.act(match, firstTurn.seq, { type: "cooperate" });
    await near.next("ack");

    await proxy.refuse();
    const logBefore = servers.map((s) => s.stderr().length);
    // The match this process plays for its own bot plays to its end.
    near.play(() => ({ type: "cooperate" }));
    expect((await near.next("match_end")).reason).toBe("completed");

    // A bot still gets in, and learns of its matches here.
    const later = await RawBot.connect(servers[0].wsUrl, b);
    const create: ClientFrame = { type: "create", game: "ipd", opponents: { 1: "strategy:random" } };
    later.send(create);
    const refused = await later.next("error");
    expect(refused.code).toBe("store_unavailable");
    expect(refused.message).toMatch(/the cluster's Redis cannot be used just now .*; try again shortly/);
    later.send({ type: "queue", game: "ipd" });
    expect((await later.next("error")).code).toBe("store_unavailable");
    // A few lines about it, not one a frame.
    const said = servers.map((s, i) => s.stderr().slice(logBefore[i]).split("\n").length);
    for (const lines of said) expect(lines).toBeLessThan(30);

    await proxy.up();
    await until("new matches to be made again", async () => {
      const from = later.frames.length;
      later.send(create);
      const answer = await until(
        "an answer",
        () => later.frames.slice(from).find((f) => f.type === "created" || f.type === "error"),
      );
      return answer.type === "created";
    });
    // The queue pairs bots of the two processes again.
    const other = await RawBot.connect(servers[1].wsUrl, c);
    const queuers = [later, other];
    const from = queuers.map((bot) => bot.frames.length);
    for (const bot of queuers) {
      bot.play(() => ({ type: "defect" }));
      bot.send({ type: "queue", game: "ipd" });
    }
    const [s1, s2] = await Promise.all(
      queuers.map((bot, i) => bot.next("match_start", (f) => !f.resumed, { from: from[i] })),
    );
    expect(s1.match).toBe(s2.match);
    for (const bot of [near, later, other]) bot.close();
  });
});
