import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate, migrations } from "../../db/migrate.ts";
import { openPglite } from "../../db/sql.ts";

/**
 * Data directories for tests, each holding an embedded store that is already migrated. Making an embedded store
 * runs PostgreSQL's initdb and every migration: 4–8 s on a loaded machine, for each of the suite's hundreds of
 * stores. So one store is made per set of migrations and copied (well under a second), shared by every worker
 * and test process of a run and by later runs, while the migrations and PGlite stay the same.
 */

function templatePath(): string {
  const hash = createHash("sha256");
  // PGlite's version too: another PostgreSQL build may not read this one's files.
  hash.update(readFileSync(new URL("../../node_modules/@electric-sql/pglite/package.json", import.meta.url)));
  for (const m of migrations()) hash.update(`${m.version}\n${m.sql}\n`);
  return join(tmpdir(), `ludus-test-store-${hash.digest("hex").slice(0, 16)}`);
}

let template: Promise<string> | undefined;

/** The migrated template's `replay` directory, made on first use (by whichever process gets there first). */
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const path = templatePath();
    if (!existsSync(join(path, "PG_VERSION"))) {
      const staging = mkdtempSync(`${path}-making-`);
      const dir = join(staging, "replay");
      const sql = await openPglite(dir);
      try {
        await migrate(sql);
      } finally {
        await sql.close();
      }
      try {
        renameSync(dir, path);
      } catch (error) {
        // Another process made it meanwhile: theirs is as good.
        if (!existsSync(join(path, "PG_VERSION"))) throw error;
      } finally {
        rmSync(staging, { recursive: true, force: true });
      }
    }
    return path;
  })();
  return template;
}

/** A new, private data directory whose embedded store is empty and migrated; the caller removes it. */
export async function migratedDataDir(prefix = "ludus-test-"): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  cpSync(await migratedTemplate(), join(dataDir, "replay"), { recursive: true });
  return dataDir;
}
