import { chmodSync, mkdirSync, statSync } from "node:fs";
import process from "node:process";

/**
 * Makes the data directory private to the user the server runs as (0700), or takes others' access away from one that
 * exists: it holds the replay store, the node's id and, while a server runs, its runtime file with a live admin token,
 * none of which anyone else on the machine should read. Files inside keep the modes their writers give them (PGlite
 * writes 0644): the directory's mode is what keeps them private. A directory owned by someone else is left as it is.
 */
export function makeDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const { mode, uid } = statSync(dataDir);
  if ((mode & 0o077) !== 0 && uid === process.getuid?.()) chmodSync(dataDir, mode & 0o700);
}
