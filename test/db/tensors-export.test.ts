import * as arrow from "apache-arrow";
import * as parquet from "parquet-wasm";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportDataset, type ExportFormat, type ExportOptions } from "../../db/export/index.ts";
import { QueryError } from "../../db/query.ts";
import type { ReplayStore } from "../../db/store.ts";
import { Episode } from "../../games/core/episode.ts";
import { getGame } from "../../games/registry.ts";
import { playRecorded, writeRecorded } from "../support/recorded-matches.ts";
import { needs } from "../support/services.ts";
import { BACKENDS, openTestStore, type TestStore } from "../support/stores.ts";
import { until } from "../support/until.ts";

/** What learners read: exports in the order matches end in, and the tensors dataset. */

const T0 = Date.parse("2026-05-01T00:00:00Z");
const at = (minute: number) => new Date(T0 + minute * 60_000);

async function bytesOf(store: ReplayStore, format: ExportFormat, options: Partial<ExportOptions> = {}) {
  const chunks: Uint8Array[] = [];
  let cursor: string | null = null;
  for await (
    const chunk of exportDataset(store, format, {
      filter: {},
      onProgress: (p) => (cursor = p.cursor),
      ...options,
    })
  ) chunks.push(chunk);
  const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  chunks.reduce((offset, c) => (bytes.set(c, offset), offset + c.length), 0);
  return { bytes, cursor: cursor as string | null };
}

const matchIds = (bytes: Uint8Array) =>
  new TextDecoder().decode(bytes).trim().split("\n").filter(Boolean).map((line) => JSON.parse(line).match_id);

const tableOf = (bytes: Uint8Array) => arrow.tableFromIPC(parquet.readParquet(bytes).intoIPCStream());

describe.each(BACKENDS)("exports for learners (%s)", (backend) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(backend);
  });
  afterAll(() => t.close());

  it("resumes in the order matches end: a long match created before a cursor and ended after it comes next", async () => {
    const long = playRecorded({
      id: "long",
      game: "ipd",
      config: { rounds: 5 },
      strategies: ["random"],
      createdAt: at(0),
    });
    const short = playRecorded({
      id: "short",
      game: "ipd",
      config: { rounds: 2 },
      strategies: ["random"],
      createdAt: at(1),
    });
    // The long match is still running when the short one (created after it) ends and is exported.
    await writeRecorded(t.store, [
      { match: { ...long.match, endedAt: null, endReason: null, returns: null }, steps: long.steps.slice(0, 2) },
      short,
    ]);
    const first = await bytesOf(t.store, "episodes.jsonl", { filter: { game: "ipd" } });
    expect(matchIds(first.bytes)).toEqual(["short"]);
    await writeRecorded(t.store, [{ match: long.match, steps: long.steps.slice(2) }]);
    const next = await bytesOf(t.store, "episodes.jsonl", { filter: { game: "ipd" }, cursor: first.cursor! });
    expect(matchIds(next.bytes)).toEqual(["long"]);
    const after = await bytesOf(t.store, "episodes.jsonl", { filter: { game: "ipd" }, cursor: next.cursor! });
    expect(after.bytes.length).toBe(0);
    expect((await t.store.match("long"))!.endSeq).toBeGreaterThan((await t.store.match("short"))!.endSeq!);
  });

  it("writes tensors.parquet: fixed-size observation and mask columns, action ids, rewards and who sat", async () => {
    const matches = Array.from({ length: 6 }, (_, i) =>
      playRecorded({
        id: `kuhn-${i}`,
        game: "kuhn-poker",
        strategies: ["random"],
        createdAt: at(10 + i),
        ...(i === 0
          ? {
            seats: [{ kind: "bot", name: "alice", tokenId: "tok-a" }, {
              kind: "builtin",
              name: "random",
              strategy: "random",
            }],
          }
          : {}),
      }));
    const grouped = matches.map((m, i) => (i < 2 ? { ...m, match: { ...m.match, group: "g1" } } : m));
    await writeRecorded(t.store, grouped);
    const { bytes } = await bytesOf(t.store, "tensors.parquet", { filter: { game: "kuhn-poker" } });
    const table = tableOf(bytes);
    const metadata = table.schema.metadata;
    expect(metadata.get("ludus.observation_shape")).toBe("[11]");
    expect(metadata.get("ludus.action_count")).toBe("2");
    expect(metadata.get("ludus.state_shape")).toBe("[2,11]");
    const observation = table.schema.fields.find((f) => f.name === "observation")!;
    expect(observation.type).toBeInstanceOf(arrow.FixedSizeList);
    expect((observation.type as arrow.FixedSizeList).listSize).toBe(11);
    const decisions = matches.flatMap((m) => m.steps);
    expect(table.numRows).toBe(decisions.length);

    const kuhn = getGame("kuhn-poker");
    const rows = table.toArray().map((r) => r.toJSON() as Record<string, unknown>);
    for (const m of matches) {
      const episode = new Episode(kuhn, m.match.config, m.match.seed);
      const mine = rows.filter((r) => r.match_id === m.match.id);
      expect(mine.map((r) => r.seq)).toEqual(m.steps.map((s) => s.seq));
      mine.forEach((row, k) => {
        const step = m.steps[k];
        const tensor = episode.encode(step.seat, new Float32Array(11));
        const mask = episode.legalMask(step.seat, new Uint8Array(2));
        expect(Array.from(row.observation as arrow.Vector)).toEqual(Array.from(tensor));
        // The state: both seats' tensors at this decision, seat 0's first (both cards, the whole history).
        const state = [0, 1].flatMap((seat) => Array.from(episode.encode(seat, new Float32Array(11))));
        expect(Array.from(row.state as arrow.Vector)).toEqual(state);
        expect(Array.from(row.legal_mask as arrow.Vector)).toEqual(Array.from(mask));
        expect(row.action_id).toBe(episode.actionId(step.action as never, step.seat));
        expect(row.reward).toBe(step.rewards?.[step.seat] ?? 0);
        expect(row.done).toBe(k >= mine.length - 2); // each seat's last decision (every hand has two)
        expect(row.return).toBe(m.match.returns![step.seat]);
        expect(row.seed).toBe(m.match.seed);
        episode.step(Array.from({ length: 2 }, (_, s) => (s === step.seat ? step.action : undefined)) as never);
      });
    }
    expect(rows.filter((r) => r.group === "g1").map((r) => r.match_id)).toEqual(
      rows.filter((r) => ["kuhn-0", "kuhn-1"].includes(r.match_id as string)).map((r) => r.match_id),
    );
    const alice = rows.find((r) => r.match_id === "kuhn-0" && r.seat === 0)!;
    expect(alice).toMatchObject({ participant_kind: "bot", participant_name: "alice", participant_token: "tok-a" });
    expect(rows.find((r) => r.match_id === "kuhn-1")!.participant_strategy).toBe("random");
  });

  it("refuses tensors without a game, for an unknown version or variant, and names what exists", () => {
    const attempt = (filter: Record<string, unknown>) => () => exportDataset(t.store, "tensors.parquet", { filter });
    expect(attempt({})).toThrow(QueryError);
    expect(attempt({})).toThrow(/needs `game`/);
    expect(attempt({ game: "kuhn-poker", version: 7 })).toThrow(
      "kuhn-poker version 7 is not in this build (versions: 1)",
    );
    expect(attempt({ game: "kuhn-poker", variant: "nope" })).toThrow(/variants: standard, textarena/);
  });
});

const writers = needs(["postgres"], "exports with several writers on one PostgreSQL store");

describe.skipIf(!writers.ready)(writers.suite, () => {
  let t: TestStore;
  let writers: postgres.Sql[] = [];
  beforeAll(async () => {
    t = await openTestStore("postgres");
  });
  afterAll(async () => {
    await Promise.all(writers.map((w) => w.end()));
    await t.close();
  });

  it("never skips a match whose end commits after a later-numbered one was read", async () => {
    const running = (id: string, minute: number) => {
      const { match } = playRecorded({
        id,
        game: "ipd",
        config: { rounds: 2 },
        strategies: ["random"],
        createdAt: at(minute),
      });
      return { match: { ...match, endedAt: null, endReason: null, returns: null }, steps: [] };
    };
    await writeRecorded(t.store, [running("first", 0), running("second", 1)]);
    // Two writers (two servers of a cluster) end a match each; the first holds its transaction open. A third
    // connection watches.
    writers = [0, 1, 2].map(() => postgres(t.databaseUrl!, { max: 1, onnotice: () => {} }));
    const end = (sql: postgres.TransactionSql, id: string) =>
      sql`UPDATE matches SET ended_at = now(), end_reason = 'completed' WHERE id = ${id}`;
    const firstEnded = Promise.withResolvers<void>();
    const firstCommits = Promise.withResolvers<void>();
    const first = writers[0].begin(async (sql) => {
      await end(sql, "first");
      firstEnded.resolve();
      await firstCommits.promise;
    });
    await firstEnded.promise;
    const [{ pid }] = await writers[1]`SELECT pg_backend_pid() AS pid`;
    let secondDone = false;
    const second = writers[1].begin((sql) => end(sql, "second")).then(() => (secondDone = true));
    // The second writer has committed, or waits for the first (as the store makes it).
    await until("the second writer to commit or wait", async () => {
      const [row] = await writers[2].unsafe("SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1", [pid]);
      return secondDone || row?.wait_event_type === "Lock";
    });
    const before = await bytesOf(t.store, "episodes.jsonl", { filter: { game: "ipd" } });
    firstCommits.resolve();
    await Promise.all([first, second]);
    const after = await bytesOf(t.store, "episodes.jsonl", {
      filter: { game: "ipd" },
      ...(before.cursor === null ? {} : { cursor: before.cursor }),
    });
    // Every match is read exactly once, whatever the reader saw in between.
    expect([...matchIds(before.bytes), ...matchIds(after.bytes)].sort()).toEqual(["first", "second"]);
  });
});
