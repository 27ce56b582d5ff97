import { execFileSync } from "node:child_process";
import { get } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { Client, type Room } from "@colyseus/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MatchEndFrame, ServerFrame, TurnFrame } from "../../protocol/frames.ts";
import { createTokens } from "../support/tokens.ts";
import { RawBot } from "../support/raw-bot.ts";
import { runLudus, type ServerProcess, startServerProcess } from "../support/server-process.ts";
import { needs, serviceUrl } from "../support/services.ts";
import { freshDatabase } from "../support/stores.ts";
import { until } from "../support/until.ts";

/**
 * `ludus serve --cluster 2`, as a person tries a cluster on one machine: one port for everything, two server
 * processes behind it. Bots through that port meet whichever process they land on; a browser's room socket, opened
 * on that port, reaches the process that plays its match wherever the matchmaking request went. A process killed
 * outright is started again by the supervisor, as a new life of its node; SIGTERM stops them all. Refusals come with
 * what is missing.
 */

interface ClusterView {
  self: { node: string; epoch: number };
  nodes: { node: string; epoch: number; live: boolean; url: string; matches: number }[];
}

/** GET on a connection of its own (fetch would reuse one, and the balancer spreads connections, not requests). */
const freshConnection = (url: string): Promise<unknown> =>
  new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      res.on("end", () => resolve(JSON.parse(body)));
    }).on("error", reject);
  });

/** The processes `pid` started that still run (`ps` answers 1 when there are none). */
function children(pid: number): number[] {
  try {
    const listed = execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" });
    return listed.trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

const { ready, suite } = needs(["postgres", "redis"], "ludus serve --cluster");

describe.skipIf(!ready)(suite, () => {
  const dataDir = mkdtempSync(join(tmpdir(), "ludus-cluster-"));
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let cluster: ServerProcess | undefined;
  const view = async () => await (await fetch(`${cluster!.url}/cluster`)).json() as ClusterView;

  beforeAll(async () => {
    db = await freshDatabase();
    cluster = await startServerProcess(
      ["--cluster", "2", "--data-dir", dataDir, "--database-url", db.url, "--lease", "2", "--fill-after", "0"],
      { REDIS_URL: serviceUrl("redis")! },
    );
  }, 180_000);

  afterAll(async () => {
    if (cluster?.child.exitCode === null) {
      for (const pid of children(cluster.child.pid!)) process.kill(pid, "SIGKILL");
      cluster.child.kill("SIGKILL");
    }
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("serves two processes of one cluster on one port", async () => {
    expect(cluster!.stderr()).toMatch(/a cluster of 2 processes: \S+\.1 at http:\/\/\S+, \S+\.2 at http:\/\/\S+/);
    const nodes = (await view()).nodes;
    expect(nodes).toHaveLength(2);
    expect(nodes.every((n) => n.live)).toBe(true);
    // Connections through the one port are spread over both (each request on a connection of its own).
    const seen = new Set<string>();
    await until("both processes to answer through the port", async () => {
      seen.add((await freshConnection(`${cluster!.url}/cluster`) as ClusterView).self.node);
      return seen.size === 2;
    });
  });

  it("bots and a browser through the one port play each other, whichever process plays the match", async () => {
    const [a, b] = await createTokens({ dataDir, databaseUrl: db.url }, ["one", "two"]);
    const first = await RawBot.connect(cluster!.wsUrl, a);
    const second = await RawBot.connect(cluster!.wsUrl, b);
    for (const bot of [first, second]) {
      bot.play(() => ({ type: "cooperate" }));
      bot.send({ type: "queue", game: "ipd" });
    }
    const ends = await Promise.all([first.next("match_end"), second.next("match_end")]);
    expect(ends.map((e) => e.reason)).toEqual(["completed", "completed"]);

    // Four matches with a person in a browser room: their rooms are on either process, their sockets on the one port.
    const client = new Client(cluster!.url);
    for (let i = 0; i < 4; i++) {
      first.send({ type: "create", game: "ipd", config: { rounds: 3 }, opponents: { 1: "open" } });
      const created = await first.next("created");
      const room: Room = await client.joinOrCreate("ipd", { matchId: created.match, invite: created.invite });
      const frames: ServerFrame[] = [];
      room.onMessage("*", (_type: unknown, message: unknown) => frames.push(message as ServerFrame));
      let answered = 0;
      const end = await until("the person's match to end", () => {
        const turn = frames.filter((f): f is TurnFrame => f.type === "turn")[answered];
        if (turn) {
          room.send("act", { seq: turn.seq, action: "defect" });
          answered++;
        }
        return frames.find((f): f is MatchEndFrame => f.type === "match_end");
      });
      expect(end).toMatchObject({ match: created.match, reason: "completed" });
      await room.leave();
    }
    first.close();
    second.close();
  });

  it("starts a process killed outright again, as a new life of its node", async () => {
    const before = (await view()).nodes;
    const [victim] = children(cluster!.child.pid!);
    process.kill(victim, "SIGKILL");
    await until(
      "the supervisor to start it again",
      () => /exited \(SIGKILL\); starting it again/.test(cluster!.stderr()),
    );
    await until("it to listen again", () => cluster!.stderr().match(/replay store:/g)!.length === 3);
    await until("the node to be back, one epoch on", async () => {
      const after = (await view()).nodes;
      return after.every((n) => n.live) &&
        after.some((n) => n.epoch === before.find((b) => b.node === n.node)!.epoch + 1);
    });
  });

  it("stops every process on SIGTERM", async () => {
    const pids = children(cluster!.child.pid!);
    expect(pids).toHaveLength(2);
    cluster!.child.kill("SIGTERM");
    await cluster!.exited;
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    expect(cluster!.stderr()).toMatch(/SIGTERM: stopping the cluster's 2 processes/);
  });

  it("stops the older of two processes started with one node id, once the newer has taken its matches", async () => {
    const same = await freshDatabase();
    const dirs = [1, 2].map((i) => mkdtempSync(join(tmpdir(), `ludus-twin-${i}-`)));
    const args = (dir: string) => ["--data-dir", dir, "--database-url", same.url, "--node", "twin", "--lease", "2"];
    const env = { REDIS_URL: serviceUrl("redis")! };
    try {
      const older = await startServerProcess(args(dirs[0]), env);
      const [token] = await createTokens({ dataDir: dirs[0], databaseUrl: same.url }, ["twin-bot"]);
      const bot = await RawBot.connect(older.wsUrl, token);
      bot.send({ type: "create", game: "ipd", opponents: { 1: "strategy:tit-for-tat" } });
      const { match } = await bot.next("created");
      const newer = await startServerProcess(args(dirs[1]), env);
      expect(newer.stderr()).toMatch(/node twin \(epoch 2\)/);
      expect(await older.exited).toBe(1);
      expect(older.stderr()).toMatch(
        /another server process joined as node twin: each process needs a node id of its own/,
      );
      // The newer plays the match on.
      const again = await RawBot.connect(newer.wsUrl, token);
      expect((await again.next("welcome", () => true, { from: 0 })).matches).toEqual([match]);
      again.send({ type: "resume", match });
      expect((await again.next("match_start")).resumed).toBe(true);
      again.close();
      newer.child.kill("SIGKILL");
      await newer.exited;
    } finally {
      await same.drop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses a cluster without PostgreSQL and Redis, saying what is missing", async () => {
    const alone = await runLudus(["serve", "--cluster", "2", "--data-dir", dataDir], { REDIS_URL: "" });
    expect(alone.code).toBe(2);
    expect(alone.err).toMatch(/give --database-url and --redis-url \(or DATABASE_URL, REDIS_URL\)/);
    const embedded = await runLudus(["serve", "--redis-url", "redis://127.0.0.1:6379", "--data-dir", dataDir]);
    expect(embedded.code).toBe(2);
    expect(embedded.err).toMatch(/--redis-url is for processes sharing a PostgreSQL store/);
  });
});
