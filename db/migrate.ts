import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Sql } from "./sql.ts";

/** A store this code cannot use: its schema is newer, or it is not a Ludus store at all. */
export class StoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreError";
  }
}

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

const DIR = fileURLToPath(new URL("./migrations/", import.meta.url));

/** The migrations this code knows, in order: `NNNN_name.sql` files in db/migrations. */
export function migrations(): Migration[] {
  return readdirSync(DIR)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      sql: readFileSync(DIR + file, "utf8"),
    }));
}

/** The schema version this code writes. */
export const SCHEMA_VERSION = Math.max(...migrations().map((m) => m.version));

/**
 * Brings the store's schema up to this code's version, all in one transaction, each migration recording
 * its version in `ludus_schema`. Idempotent; safe when several servers start at once (an advisory lock
 * serialises them). Refuses a store whose schema is newer than this code, or a database that already
 * holds tables but is not a Ludus store.
 */
export async function migrate(sql: Sql): Promise<{ from: number; to: number }> {
  return await sql.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(7415281)");
    const [{ known }] = await tx.query<{ known: boolean }>(
      "SELECT to_regclass('ludus_schema') IS NOT NULL AS known",
    );
    if (!known) {
      const [{ foreign }] = await tx.query<{ foreign: boolean }>(
        "SELECT to_regclass('matches') IS NOT NULL OR to_regclass('steps') IS NOT NULL AS foreign",
      );
      if (foreign) {
        throw new StoreError(
          `${sql.where} is not a Ludus store: it has tables named matches/steps but no ludus_schema; use an empty database or data directory`,
        );
      }
      await tx.exec(
        "CREATE TABLE ludus_schema (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
      );
    }
    const [{ version }] = await tx.query<{ version: number | null }>(
      "SELECT max(version) AS version FROM ludus_schema",
    );
    const from = version ?? 0;
    if (from > SCHEMA_VERSION) {
      throw new StoreError(
        `the store at ${sql.where} has schema version ${from}, newer than this Ludus knows (${SCHEMA_VERSION}); upgrade Ludus or use another store`,
      );
    }
    for (const migration of migrations()) {
      if (migration.version <= from) continue;
      await tx.exec(migration.sql);
      await tx.query("INSERT INTO ludus_schema (version, name) VALUES ($1, $2)", [migration.version, migration.name]);
    }
    return { from, to: SCHEMA_VERSION };
  });
}
