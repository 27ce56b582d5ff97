import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import postgres from "postgres";
import { ReplayStore, type StoreOptions } from "../../db/store.ts";
import { migratedDataDir } from "./data-dirs.ts";

/** What migration 9 (browser seats' keys) adds, removed. */
const UNDO_SEAT_KEYS_SCHEMA = `
  ALTER TABLE matches DROP COLUMN seat_keys;
  DELETE FROM ludus_schema WHERE version = 9;`;

/** Migration 8 only replaces the end-sequence trigger's function, so forgetting it is enough: it is applied again. */
const UNDO_END_SEQ_SCHEMA = `${UNDO_SEAT_KEYS_SCHEMA}
  DELETE FROM ludus_schema WHERE version = 8;`;

/** What migrations 7 (the cluster's nodes and match owners) and later add, removed: back to schema 6. */
export const UNDO_CLUSTER_SCHEMA = `${UNDO_END_SEQ_SCHEMA}
  DROP TABLE nodes, cluster;
  DROP INDEX matches_by_invite;
  ALTER TABLE matches DROP COLUMN owner, DROP COLUMN owner_epoch;
  DELETE FROM ludus_schema WHERE version = 7;`;

/** What migrations 6 (players and tokens) and later add, removed: back to schema 5. */
export const UNDO_PLAYERS_SCHEMA = `${UNDO_CLUSTER_SCHEMA}
  DROP TABLE players, tokens;
  DELETE FROM ludus_schema WHERE version = 6;`;

/** What migrations 5 (the league) and later add, removed: for the tests that take a store back to an earlier schema. */
export const UNDO_LEAGUE_SCHEMA = `${UNDO_PLAYERS_SCHEMA}
  DROP TABLE tournaments, tournament_slots, ratings, rating_history, rated_matches, evolutions, evolution_generations;
  ALTER TABLE matches DROP COLUMN rated;
  DELETE FROM ludus_schema WHERE version = 5;`;

/** Every store test runs on PGlite, and again on PostgreSQL when DATABASE_URL is set (as .ci/run does). */
export type Backend = "pglite" | "postgres";
export const BACKENDS: readonly Backend[] = process.env.DATABASE_URL ? ["pglite", "postgres"] : ["pglite"];

export interface TestStore {
  readonly store: ReplayStore;
  /** The server data directory (the embedded store lives in `<dataDir>/replay`). */
  readonly dataDir: string;
  /** A PostgreSQL URL of a database of its own, for the postgres backend. */
  readonly databaseUrl?: string;
  /** What `ReplayStore.open` or `startServer` need to reopen this store. */
  readonly options: StoreOptions;
  close(): Promise<void>;
}

/** A fresh, empty database on the PostgreSQL server of `base` (DATABASE_URL's); dropped by the returned function. */
export async function freshDatabase(
  base = process.env.DATABASE_URL!,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `ludus_t_${Math.random().toString(36).slice(2, 10)}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const admin = postgres(base, { max: 1, onnotice: () => {} });
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/** Options for a new, empty store of `backend` (a temporary data directory, and a fresh database). */
export async function emptyStoreOptions(
  backend: Backend,
): Promise<{ options: StoreOptions; cleanup: () => Promise<void> }> {
  const dataDir = backend === "pglite"
    ? await migratedDataDir("ludus-store-")
    : mkdtempSync(join(tmpdir(), "ludus-store-"));
  const removeDir = () => rmSync(dataDir, { recursive: true, force: true });
  if (backend === "pglite") return { options: { dataDir }, cleanup: () => Promise.resolve(removeDir()) };
  const db = await freshDatabase();
  return {
    options: { dataDir, databaseUrl: db.url },
    cleanup: async () => {
      await db.drop();
      removeDir();
    },
  };
}

/** An open, empty store of `backend`; `close` closes it and removes its data. */
export async function openTestStore(
  backend: Backend,
  extra: Partial<StoreOptions> = {},
): Promise<TestStore> {
  const { options, cleanup } = await emptyStoreOptions(backend);
  const all = { ...options, ...extra };
  const store = await ReplayStore.open(all);
  return {
    store,
    dataDir: options.dataDir,
    databaseUrl: options.databaseUrl,
    options: all,
    close: async () => {
      await store.close().catch(() => {});
      await cleanup();
    },
  };
}
