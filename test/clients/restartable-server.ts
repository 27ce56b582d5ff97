import { rmSync } from "node:fs";
import { type LudusServer, startServer, type Stopped } from "../../server/app.ts";
import { migratedDataDir } from "../support/data-dirs.ts";

/** A server that can be stopped and started again on the same port and data, as an operator restarts one. */
export interface RestartableServer {
  /** ws://127.0.0.1:PORT/bot, the same across restarts. */
  readonly wsUrl: string;
  /** Where its tokens and embedded store live. */
  readonly dataDir: string;
  /** The running server (a new one after each restart). */
  readonly server: LudusServer;
  token(name: string): Promise<string>;
  /** Stops (bots are closed with 1012, live matches kept in the store). */
  stop(): Promise<Stopped>;
  /** Starts again on the same port and data directory: the kept matches are restored. */
  start(): Promise<void>;
  /** Stops for good and removes the data directory. */
  close(): Promise<void>;
}

export async function startRestartableServer(): Promise<RestartableServer> {
  const dataDir = await migratedDataDir("ludus-restart-");
  const options = { port: 0, host: "127.0.0.1", dataDir, fillAfterMs: null };
  let server = await startServer(options);
  const port = Number(new URL(server.url).port);
  let running = true;
  return {
    wsUrl: `ws://127.0.0.1:${port}/bot`,
    dataDir,
    get server() {
      return server;
    },
    token: async (name) => (await server.tokens.create(name, "bot")).token,
    stop: () => {
      running = false;
      return server.close();
    },
    start: async () => {
      server = await startServer({ ...options, port });
      running = true;
    },
    close: async () => {
      if (running) await server.close();
      running = false;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
