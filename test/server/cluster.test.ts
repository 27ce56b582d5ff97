import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { afterAll, describe, expect, it } from "vitest";
import { ReplayStore } from "../../db/store.ts";
import type { ClientFrame } from "../../protocol/frames.ts";
import { createTokens } from "../support/tokens.ts";
import { DocsBot } from "../support/docs-bot.ts";
import { runLudus, type ServerProcess, startServerProcess } from "../support/server-process.ts";
import { freshDatabase } from "../support/stores.ts";

/**
 * Three real `ludus serve` processes sharing one PostgreSQL store (docs/cluster.md), bots written from the docs
 * playing on each. One process is killed with SIGKILL mid-run: a peer takes its matches over once its lease
 * lapses, the bots that played there reconnect to the survivors and resume, and every match finishes. Nothing
 * acknowledged is lost, no match is played by two processes, and a node restarted while its peers run takes
 * back nothing of theirs.
 */

const LEASE_S = 2;

const VS_BUILTINS: { name: string; lanes: number; frame: ClientFrame }[] = [
  {
    name: "ipd",
    lanes: 2,
    frame: { type: "create", game: "ipd", config: { rounds: 30 }, opponents: { 1: "strategy:tit-for-tat" } },
  },
  {
    name: "kuhn",
    lanes: 2,
    frame: { type: "create", game: "kuhn-poker", config: { rounds: 8 }, opponents: { 1: "strategy:random" } },
  },
  {
    name: "leduc",
    lanes: 1,
    frame: { type: "create", game: "leduc-poker", config: { hands: 3 }, opponents: { 1: "strategy:random" } },
  },
];

interface Node {
  readonly id: string;
  readonly dataDir: string;
  server?: ServerProcess;
}

async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url);
  return await response.json() as T;
}

describe.skipIf(!process.env.DATABASE_URL)("three server processes sharing one PostgreSQL store", () => {
  const nodes: Node[] = ["n1", "n2", "n3"].map((id) => ({ id, dataDir: mkdtempSync(join(tmpdir(), `ludus-${id}-`)) }));
  let dropDatabase: (() => Promise<void>) | undefined;
  afterAll(async () => {
    for (const node of nodes) node.server?.child.kill("SIGKILL");
    await dropDatabase?.();
    for (const node of nodes) rmSync(node.dataDir, { recursive: true, force: true });
  });

  it(
    "takes a killed process's matches over on a peer, where its bots resume and finish them, losing nothing acknowledged",
    async () => {
      const db = await freshDatabase();
      dropDatabase = db.drop;
      const start = (node: Node) =>
        startServerProcess([
          "--data-dir",
          node.dataDir,
          "--database-url",
          db.url,
          "--node",
          node.id,
          "--lease",
          String(LEASE_S),
          "--hold",
          "300",
        ]);
      for (const node of nodes) node.server = await start(node);
      const cluster = await getJson<{ nodes: { node: string; live: boolean; url: string }[] }>(
        `${nodes[1].server!.url}/cluster`,
      );
      expect(cluster.nodes.map((n) => [n.node, n.live])).toEqual([["n1", true], ["n2", true], ["n3", true]]);
      expect(cluster.nodes.map((n) => n.url)).toEqual(nodes.map((n) => n.server!.url));

      // Each bot starts on a process of its own; after a drop it tries the live processes in turn.
      const plans = nodes.flatMap((_, home) => VS_BUILTINS.map((plan) => ({ ...plan, home })));
      const tokens = await createTokens(
        { dataDir: nodes[0].dataDir, databaseUrl: db.url },
        plans.map((p, i) => `${p.name}-${i}`),
      );
      const bots = plans.map(({ lanes, frame, home }, i) => {
        let planned = 0;
        let tries = 0;
        const url = () => {
          const live = nodes.filter((n) => n.server && !n.server.child.killed && n.server.child.exitCode === null);
          return (live.includes(nodes[home]) ? nodes[home] : live[tries++ % live.length]).server!.wsUrl;
        };
        return new DocsBot(url, tokens[i], { lanes, plan: () => (planned++ < 4 ? frame : undefined) });
      });
      bots.forEach((bot) => bot.start());
      const acks = () => bots.reduce((n, bot) => n + bot.ackCount, 0);
      await Promise.race(bots.map((bot) => bot.until(() => acks() >= 150, "150 acknowledged decisions", 120_000)));

      // SIGKILL the first process mid-run.
      const killed = nodes[0];
      const before = await getJson<{ nodes: { node: string; matches: number }[] }>(`${nodes[1].server!.url}/cluster`);
      const orphans = before.nodes.find((n) => n.node === killed.id)!.matches;
      killed.server!.child.kill("SIGKILL");
      await killed.server!.exited;

      await Promise.all(bots.map((bot, i) => bot.until(() => bot.done, `bot ${i} to finish its matches`, 180_000)));
      const taken = nodes.slice(1).map((n) => n.server!.stderr()).join("").match(/took over (\d+) matches/g) ?? [];
      console.info(
        `cluster: ${orphans} live matches on the killed process, takeovers: ${taken.join(", ") || "none"}; ` +
          `${acks()} acknowledged decisions`,
      );

      // The killed node comes back while its peers run: it takes back nothing of theirs.
      killed.server = await start(killed);
      expect(killed.server.stderr()).not.toMatch(/restored \d+ unfinished matches/);
      expect(killed.server.stderr()).toMatch(/node n1 \(epoch 2\)/);

      bots.forEach((bot) => bot.stop());
      for (const node of nodes) {
        node.server!.child.kill("SIGTERM");
        await node.server!.exited;
      }

      for (const bot of bots) {
        const why = bot.errors.slice(0, 2).map((e) => `${JSON.stringify(e)}\n${bot.trace.get(e.match!)?.join("\n")}`);
        expect(bot.errors, why.join("\n")).toEqual([]);
      }
      const store = await ReplayStore.open({ dataDir: nodes[0].dataDir, databaseUrl: db.url });
      try {
        expect((await store.unfinished()).map((m) => m.id)).toEqual([]);
        for (const bot of bots) {
          for (const [match, seqs] of bot.acked) {
            const stored = new Map((await store.steps(match)).map((s) => [s.seq, s.action]));
            for (const [seq, action] of seqs) expect(stored.get(seq), `${match} seq ${seq}`).toEqual(action);
          }
          for (const [match, ends] of bot.ends) {
            const record = (await store.match(match))!;
            expect(record.endReason, `${match}: ${record.error}`).toBe("completed");
            for (const end of ends.values()) expect(end.returns).toEqual(record.returns);
          }
        }
        // Who finished what: the killed node's matches ended on a survivor.
        const owners = await store.sql.query<{ owner: string; n: number }>(
          "SELECT owner, count(*)::integer AS n FROM matches GROUP BY owner ORDER BY owner",
        );
        expect(owners.map((o) => o.owner)).toEqual(expect.arrayContaining(["n2", "n3"]));
        if (orphans > 0) expect(taken.length).toBeGreaterThan(0);
      } finally {
        await store.close();
      }
      const verify = await runLudus([
        "replay",
        "verify",
        "--all",
        "--data-dir",
        nodes[0].dataDir,
        "--database-url",
        db.url,
      ]);
      expect(verify.out + verify.err).toMatch(/: 0 differences in 0 matches/);
      expect(verify.code).toBe(0);
    },
    10 * 60_000,
  );
});
