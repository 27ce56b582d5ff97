import { afterAll, beforeAll } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migratedDataDir } from "./data-dirs.ts";
import { type LudusServer, type ServerOptions, startServer } from "../../server/app.ts";
import type { TokenKind } from "../../db/tokens.ts";
import { GATEWAY_PATH } from "../../protocol/frames.ts";

export interface TestServer {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  /** ws://127.0.0.1:PORT/bot */
  readonly wsUrl: string;
  readonly server: LudusServer;
  readonly dataDir: string;
  /** Creates a bot token and returns it. */
  token(name?: string, kind?: TokenKind, maxMatches?: number): Promise<string>;
  close(): Promise<void>;
}

let tokens = 0;

/** A real server on a free loopback port with its own data directory; built-ins never fill seats unless asked. */
export async function startTestServer(options: Partial<ServerOptions> = {}): Promise<TestServer> {
  const dataDir = options.databaseUrl ? mkdtempSync(join(tmpdir(), "ludus-test-")) : await migratedDataDir();
  const server = await startServer({ port: 0, host: "127.0.0.1", dataDir, fillAfterMs: null, ...options });
  return {
    url: server.url,
    wsUrl: `${server.url.replace(/^http/, "ws")}${GATEWAY_PATH}`,
    server,
    dataDir,
    token: async (name = `bot-${++tokens}`, kind = "bot", maxMatches) =>
      (await server.tokens.create(name, kind, maxMatches)).token,
    close: async () => {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The server of the tests of one file (or `describe`): started before them, closed after. Used inside tests and
 * hooks like the TestServer it stands for.
 */
export function useTestServer(options: Partial<ServerOptions> = {}): TestServer {
  let started: TestServer | undefined;
  beforeAll(async () => {
    started = await startTestServer(options);
  }, 180_000);
  afterAll(async () => {
    await started?.close();
  });
  const live = (): TestServer => {
    if (!started) throw new Error("the test server starts before the tests: use it inside a test or a later hook");
    return started;
  };
  return {
    get url() {
      return live().url;
    },
    get wsUrl() {
      return live().wsUrl;
    },
    get server() {
      return live().server;
    },
    get dataDir() {
      return live().dataDir;
    },
    token: (...args) => live().token(...args),
    close: () => live().close(),
  };
}
