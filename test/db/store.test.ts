import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { GroupCommit, SequenceConflictError } from "../../db/group-commit.ts";
import { SCHEMA_VERSION } from "../../db/migrate.ts";
import type { MatchRecord, StepRecordRow } from "../../db/records.ts";
import type { Sql } from "../../db/sql.ts";
import { ReplayStore, StoreError } from "../../db/store.ts";
import { seedStore } from "../support/seed-store.ts";
import { BACKENDS, emptyStoreOptions, openTestStore, type TestStore, UNDO_LEAGUE_SCHEMA } from "../support/stores.ts";
import { matchHeader, stepRow as step } from "../support/match-header.ts";

const header = (id: string, createdAt = new Date()): MatchRecord => matchHeader(id, { createdAt });

for (const backend of BACKENDS) {
  describe(`the replay store (${backend})`, () => {
    const open: TestStore[] = [];
    const fresh = async () => {
      const store = await openTestStore(backend);
      open.push(store);
      return store;
    };
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close();
    });

    it("migrates once, records its schema version, and reopens without migrating again", async () => {
      const { store, options } = await fresh();
      const versions = await store.sql.query<{ version: number }>("SELECT version FROM ludus_schema");
      expect(versions.map((v) => v.version)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
      await store.close();
      const again = await ReplayStore.open(options);
      expect(await again.sql.query("SELECT version FROM ludus_schema")).toHaveLength(SCHEMA_VERSION);
      await again.close();
    });

    it("numbers the ended matches of a store made before end sequences in the order they ended", async () => {
      const { store, options } = await fresh();
      // Back to schema 2: what migrations 3 to 6 add, removed.
      await store.sql.exec(`
        ${UNDO_LEAGUE_SCHEMA}
        DROP TABLE policies;
        DROP TRIGGER matches_end_seq ON matches; DROP FUNCTION matches_end_seq(); DROP SEQUENCE match_end_seq CASCADE;
        ALTER TABLE matches DROP COLUMN end_seq, DROP COLUMN group_id;
        ALTER TABLE steps DROP COLUMN offered, DROP COLUMN legal_ids, DROP COLUMN prompt;
        DELETE FROM ludus_schema WHERE version >= 3;`);
      const insert = (id: string, created: string, ended: string | null) =>
        store.sql.query(
          `INSERT INTO matches (id, game, game_version, variant, config, seed, seats, conduct, statuses, created_at, ended_at)
           VALUES ($1, 'ipd', 1, 'classic', '{}', '1', '[]', '{}', '[]', $2, $3)`,
          [id, created, ended],
        );
      await insert("early-long", "2026-01-01T00:00:00Z", "2026-01-01T05:00:00Z");
      await insert("late-short", "2026-01-01T01:00:00Z", "2026-01-01T01:30:00Z");
      await insert("running", "2026-01-01T02:00:00Z", null);
      await store.close();
      const upgraded = await ReplayStore.open(options);
      try {
        const rows = await upgraded.sql.query<{ id: string; end_seq: number | null }>(
          "SELECT id, end_seq FROM matches ORDER BY id",
        );
        expect(rows.map((r) => [r.id, r.end_seq === null ? null : Number(r.end_seq)])).toEqual([
          ["early-long", 2],
          ["late-short", 1],
          ["running", null],
        ]);
        // The next match to end comes after them.
        await upgraded.writer.writeMatch({ ...header("next"), endedAt: new Date() });
        expect((await upgraded.match("next"))!.endSeq).toBeGreaterThan(2);
      } finally {
        await upgraded.close();
      }
    });

    it("refuses a store whose schema is newer than this code", async () => {
      const { store, options } = await fresh();
      await store.sql.query("INSERT INTO ludus_schema (version, name) VALUES ($1, 'from_the_future')", [
        SCHEMA_VERSION + 1,
      ]);
      await store.close();
      await expect(ReplayStore.open(options)).rejects.toThrow(
        new RegExp(`schema version ${SCHEMA_VERSION + 1}, newer than this Ludus knows \\(${SCHEMA_VERSION}\\)`),
      );
    });

    it("refuses a database that holds other tables of these names", async () => {
      const { options, cleanup } = await emptyStoreOptions(backend);
      try {
        const plain = await ReplayStore.open(options);
        await plain.sql.exec("DROP TABLE ludus_schema");
        await plain.close();
        await expect(ReplayStore.open(options)).rejects.toThrow(/is not a Ludus store/);
      } finally {
        await cleanup();
      }
    });

    it("fails only the match whose record the database refuses, not the others of its batch", async () => {
      const { store } = await fresh();
      const ids = ["clean-1", "poisoned", "clean-2"];
      // All in one batch: written before the event loop turns. NUL is what PostgreSQL refuses in text/JSON.
      const writes = ids.map((id) =>
        Promise.allSettled([
          store.writer.writeMatch(header(id)),
          store.writer.appendStep(step(id, 1, id === "poisoned" ? { type: "message", text: "a\u0000b" } : undefined)),
        ])
      );
      const [clean1, poisoned, clean2] = await Promise.all(writes);
      expect(clean1.map((r) => r.status)).toEqual(["fulfilled", "fulfilled"]);
      expect(clean2.map((r) => r.status)).toEqual(["fulfilled", "fulfilled"]);
      expect(poisoned.map((r) => r.status)).toContain("rejected");
      expect((await store.steps("clean-1")).map((s) => s.seq)).toEqual([1]);
      expect((await store.steps("clean-2")).map((s) => s.seq)).toEqual([1]);
      expect(await store.steps("poisoned")).toEqual([]);
      // The store goes on writing.
      await store.writer.appendStep(step("clean-1", 2));
      expect((await store.steps("clean-1")).map((s) => s.seq)).toEqual([1, 2]);
    });

    it("fails a match's decisions queued behind its refused one, so its log keeps no hole", async () => {
      const { store } = await fresh();
      // The first write is held until the next decisions are queued behind it.
      const writing = Promise.withResolvers<void>(), queued = Promise.withResolvers<void>();
      let held = false;
      const hold = async () => {
        if (held) return;
        held = true;
        writing.resolve();
        await queued.promise;
      };
      const sql: Sql = {
        ...store.sql,
        prepared: async (text, params) => (await hold(), store.sql.prepared(text, params)),
        ...(store.sql.copyIn && {
          copyIn: async (...args: Parameters<NonNullable<Sql["copyIn"]>>) => (await hold(), store.sql.copyIn!(...args)),
        }),
      };
      const writer = new GroupCommit(sql, store.writerId);
      const refused = writer.appendStep(step("poisoned", 1, { type: "message", text: "a\u0000b" }));
      await writing.promise;
      const behind = writer.appendStep(step("poisoned", 2));
      const other = writer.appendStep(step("clean", 1));
      queued.resolve();
      await expect(refused).rejects.toThrow();
      await expect(behind).rejects.toThrow();
      await expect(other).resolves.toBeUndefined();
      await writer.close();
      expect(await store.steps("poisoned")).toEqual([]);
      expect((await store.steps("clean")).map((s) => s.seq)).toEqual([1]);
    });

    it("makes a batch of writes from many matches durable together, in order, with their records", async () => {
      const { store } = await fresh();
      const ids = Array.from({ length: 20 }, (_, i) => `m${i}`);
      await Promise.all(ids.map((id) => store.writer.writeMatch(header(id))));
      await Promise.all(
        ids.flatMap((id) => Array.from({ length: 30 }, (_, i) => store.writer.appendStep(step(id, i + 1)))),
      );
      const all = await store.stepsOf(ids);
      for (const id of ids) expect(all.get(id)!.map((s) => s.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      expect(store.writer.buffered).toBe(0);
    });

    it("writes a second batch beside the first when asked to, never with records of a match still in flight", async () => {
      const { store } = await fresh();
      // The store's connection, watched: which matches each write holds, and how many writes are out at once.
      const writing = new Set<string>();
      let most = 0, overlapped = false;
      const secondStarted = Promise.withResolvers<void>();
      const firstStarted = Promise.withResolvers<void>();
      let writes = 0;
      const watched = async <T>(ids: string[], write: () => Promise<T>): Promise<T> => {
        if (ids.some((id) => writing.has(id))) overlapped = true;
        ids.forEach((id) => writing.add(id));
        most = Math.max(most, ++writes);
        if (writes === 2) secondStarted.resolve();
        firstStarted.resolve();
        // The first write waits until the second has started: the two are surely side by side.
        if (ids.includes("a") && writes === 1) await secondStarted.promise;
        try {
          return await write();
        } finally {
          writes--;
          ids.forEach((id) => writing.delete(id));
        }
      };
      // The batch statement's match rows and step rows (its third parameter, new players, names no match).
      const idsIn = (params: readonly unknown[] = []) =>
        params.slice(0, 2).flatMap((p) =>
          typeof p === "string" && p.startsWith("[")
            ? (JSON.parse(p) as { id?: string; match_id?: string }[]).map((r) => r.id ?? r.match_id!)
            : []
        );
      const sql: Sql = {
        ...store.sql,
        prepared: (text, params) => watched(idsIn(params), () => store.sql.prepared(text, params)),
        ...(store.sql.copyIn && {
          copyIn: (...args: Parameters<NonNullable<Sql["copyIn"]>>) =>
            watched(
              [
                ...args[1].split("\n").filter(Boolean).map((line) => line.split("\t")[0]),
                ...idsIn(args[2]?.params),
              ],
              () => store.sql.copyIn!(...args),
            ),
        }),
      };
      const writer = new GroupCommit(sql, store.writerId, { maxInFlight: 2 });
      const first = Promise.all([writer.writeMatch(header("a")), writer.appendStep(step("a", 1))]);
      await firstStarted.promise;
      // Written while "a" is in flight: "b" may go at once, "a"'s next decision only after its first.
      await Promise.all([
        first,
        writer.writeMatch(header("b")),
        writer.appendStep(step("b", 1)),
        writer.appendStep(step("a", 2)),
      ]);
      await writer.close();
      expect(overlapped).toBe(false);
      expect(most).toBe(2);
      const all = await store.stepsOf(["a", "b"]);
      expect(all.get("a")!.map((s) => s.seq)).toEqual([1, 2]);
      expect(all.get("b")!.map((s) => s.seq)).toEqual([1]);
    });

    it("writes a match's decisions in bulk with COPY: text kept exactly, a retried batch not doubled", async () => {
      const { store } = await fresh();
      // Tabs, newlines, backslashes and quotes in every kind of column COPY's text format must escape.
      const awkward = 'a\tb\nc\\d "e" \r f';
      const rows = [1, 2, 3].map((seq): StepRecordRow => ({
        ...step("bulk", seq, { type: "message", text: awkward }),
        meta: { response: awkward },
        prompt: awkward,
        offered: [{ kind: "text", type: "message", maxLength: 100 }],
        legalIds: [0, 2],
      }));
      await store.writer.appendStep(rows);
      const stored = await store.steps("bulk");
      expect(stored.map((r) => [r.seq, r.action, r.meta, r.prompt, r.offered, r.legalIds])).toEqual(
        rows.map((r) => [r.seq, r.action, r.meta, r.prompt, r.offered, r.legalIds]),
      );
      // The same rows again and two more (a retry after a lost reply, with what followed): COPY refuses them all,
      // and the batch statement skips the three already there and writes the two that are not.
      await store.writer.appendStep([...rows, step("bulk", 4), step("bulk", 5)]);
      expect((await store.steps("bulk")).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    });

    it("counts bulk decisions against the buffer, and holds in-process play back once they fill half of it", async () => {
      const t = await openTestStore(backend, { groupCommit: { maxBuffer: 10 } });
      open.push(t);
      const bulk = Array.from({ length: 6 }, (_, i) => step("long-run", i + 1));
      const written = t.store.writer.appendStep(bulk);
      expect(t.store.writer.buffered).toBe(6);
      expect(t.store.writer.full).toBe(false);
      expect(t.store.writer.behind).toBe(true);
      const caughtUp = t.store.writer.caughtUp();
      const singles = Array.from({ length: 4 }, (_, i) => t.store.writer.appendStep(step("played", i + 1)));
      expect(t.store.writer.full).toBe(true);
      await Promise.all([written, ...singles, caughtUp]);
      expect(t.store.writer.full).toBe(false);
      expect(t.store.writer.behind).toBe(false);
    });

    it("never lets a second writer rewrite or extend a match's sequence behind the first one's back", async () => {
      const first = await fresh();
      const second = await ReplayStore.open(first.options).catch((e) => e);
      if (second instanceof StoreError) {
        // The embedded store admits one process (one writer) at a time.
        expect(second.message).toMatch(/in use by process/);
        return;
      }
      try {
        await first.store.writer.writeMatch(header("shared"));
        await first.store.writer.appendStep(step("shared", 1, { type: "cooperate" }));
        await expect(second.writer.appendStep(step("shared", 1, { type: "defect" }))).rejects.toThrow(
          SequenceConflictError,
        );
        // Racing appends of the same sequence numbers: each number is taken once, by one writer.
        const results = await Promise.allSettled(
          [first.store, second].flatMap((s) => [2, 3, 4].map((seq) => s.writer.appendStep(step("shared", seq)))),
        );
        expect(results.filter((r) => r.status === "fulfilled").length).toBeGreaterThanOrEqual(3);
        const stored = await first.store.steps("shared");
        expect(stored.map((s) => s.seq)).toEqual([1, 2, 3, 4]);
        expect(stored[0].action).toEqual({ type: "cooperate" });
      } finally {
        await second.close();
      }
    });

    it("lists matches by game, participant and time, in a stable order", async () => {
      const { store } = await fresh();
      const ipd = await seedStore(store, { game: "ipd", matches: 3 });
      const kuhn = await seedStore(store, { game: "kuhn-poker", matches: 2 });
      expect((await store.matches({ game: "kuhn-poker" }, 10)).map((m) => m.id).sort()).toEqual([...kuhn].sort());
      expect(await store.matches({ participant: "random" }, 10)).toHaveLength(5);
      expect(await store.matches({ participant: "nobody" }, 10)).toHaveLength(0);
      expect(await store.matches({ from: new Date(Date.now() + 60_000) }, 10)).toHaveLength(0);
      const page = await store.matches({}, 2);
      const rest = await store.matches({}, 10, { createdAt: page[1].createdAt.toISOString(), id: page[1].id });
      expect([...page, ...rest].map((m) => m.id).sort()).toEqual([...ipd, ...kuhn].sort());
    });
  });
}

describe("the embedded store's data directory", () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "ludus-dir-"));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it("is locked while a server holds it, and taken over when that process died", async () => {
    const dataDir = tempDir();
    const store = await ReplayStore.open({ dataDir });
    await expect(ReplayStore.open({ dataDir })).rejects.toThrow(/in use by process \d+/);
    await store.close();
    writeFileSync(join(dataDir, "replay.lock"), "2147483646"); // a process that does not exist
    const again = await ReplayStore.open({ dataDir });
    await again.close();
  });

  it("refuses a directory that is not a Ludus store, and a file given as the data directory", async () => {
    const dataDir = tempDir();
    mkdirSync(join(dataDir, "replay"));
    writeFileSync(join(dataDir, "replay", "notes.txt"), "not a database");
    await expect(ReplayStore.open({ dataDir })).rejects.toThrow(/is not a Ludus store \(no PG_VERSION\)/);
    const file = join(tempDir(), "file");
    writeFileSync(file, "");
    await expect(ReplayStore.open({ dataDir: file })).rejects.toThrow(/is a file, not a directory/);
  });
});
