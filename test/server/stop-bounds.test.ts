import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServerProcess } from "../support/server-process.ts";
import { needs } from "../support/services.ts";
import { freshDatabase } from "../support/stores.ts";

/**
 * A SIGTERM ends the process even when a step of the stop can never finish: here its node's row in PostgreSQL is
 * locked by another session that never lets go, so giving up the lease (and the lease renewal in flight) waits for
 * ever. The stop says which step it left behind and exits.
 */
const { ready, suite } = needs(["postgres"], "a stop on PostgreSQL whose node row is locked by another session");

describe.skipIf(!ready)(suite, () => {
  const dataDir = mkdtempSync(join(tmpdir(), "ludus-stop-"));
  let server: ServerProcess | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  afterAll(async () => {
    server?.child.kill("SIGKILL");
    await cleanup?.();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("still exits on SIGTERM, saying which step did not finish", async () => {
    const db = await freshDatabase();
    server = await startServerProcess(["--data-dir", dataDir, "--database-url", db.url, "--node", "stuck"]);
    const other = postgres(db.url, { max: 1, onnotice: () => {} });
    const session = await other.reserve();
    cleanup = async () => {
      session.release();
      await other.end({ timeout: 1 });
      await db.drop();
    };
    await session.unsafe("BEGIN");
    const [row] = await session.unsafe("SELECT id FROM nodes WHERE id = 'stuck' FOR NO KEY UPDATE");
    expect(row).toMatchObject({ id: "stuck" });

    server.child.kill("SIGTERM");
    await server.exited;
    expect(server.stderr()).toMatch(/ludus: stopping: giving up its lease did not finish within \d+ s/);
    expect(server.stderr()).toMatch(/ludus: stopped; 0 live matches are kept/);
    server = undefined;
  }, 120_000);
});
