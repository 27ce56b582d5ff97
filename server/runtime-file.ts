import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * `<dataDir>/server.json`: where the server holding an embedded store answers, and an admin token that lives only as
 * long as the process (never stored). An embedded store is its server's alone, so the CLI's store commands (`ludus
 * token`, `ludus policy`) go through the server instead when they find the store locked; reading the file takes the
 * same access to the data directory as opening the store would.
 */
export const RUNTIME_FILE = "server.json";

export interface RuntimeFile {
  /** The server's HTTP address, e.g. http://127.0.0.1:2567 */
  readonly url: string;
  readonly pid: number;
  /** An admin token valid while this process runs. */
  readonly token: string;
}

export function writeRuntimeFile(dataDir: string, runtime: RuntimeFile): void {
  const path = join(dataDir, RUNTIME_FILE);
  writeFileSync(path, JSON.stringify(runtime) + "\n", { mode: 0o600 });
  chmodSync(path, 0o600); // an existing file keeps its mode otherwise
}

export function removeRuntimeFile(dataDir: string): void {
  rmSync(join(dataDir, RUNTIME_FILE), { force: true });
}

/** The running server's address and admin token, if the data directory names one. */
export function readRuntimeFile(dataDir: string): RuntimeFile | undefined {
  try {
    const parsed = JSON.parse(readFileSync(join(dataDir, RUNTIME_FILE), "utf8"));
    return typeof parsed?.url === "string" && typeof parsed?.token === "string" ? parsed : undefined;
  } catch {
    return undefined;
  }
}
