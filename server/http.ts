import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { games } from "../games/registry.ts";
import { catalog } from "./catalog.ts";
import { VERSION } from "./version.ts";

/** The HTTP API: health and the game registry. Websockets share the port (see server/app.ts). */

export interface ServeOptions {
  readonly port: number;
  readonly host: string;
}

/** What the rest of the server adds to the HTTP API. */
export interface HttpExtensions {
  /** Tried before the API's own routes (e.g. the rooms' matchmaking); true when it answered. */
  readonly before?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** Extra fields for GET /health. */
  readonly health?: () => Record<string, unknown>;
}

export interface RunningServer {
  /** e.g. http://127.0.0.1:2567 */
  readonly url: string;
  readonly port: number;
  /** The node:http server, for websocket upgrades. */
  readonly http: Server;
  close(): Promise<void>;
}

/** A start-up failure a person can act on (port taken, address not available). */
export class ServeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ServeError";
  }
}

const ROUTES = "GET /health, GET /games, GET /games/:id";

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(res.req.method === "HEAD" ? undefined : text);
}

function error(res: ServerResponse, status: number, code: string, message: string, headers?: Record<string, string>) {
  send(res, status, { error: { code, message } }, headers);
}

function route(req: IncomingMessage, res: ServerResponse, startedAt: number, extensions: HttpExtensions): void {
  if (extensions.before?.(req, res)) return;
  const path = new URL(req.url ?? "/", "http://localhost").pathname.replace(/\/+$/, "") || "/";
  if (req.method !== "GET" && req.method !== "HEAD") {
    return error(res, 405, "method_not_allowed", `${req.method} is not supported; routes: ${ROUTES}`, {
      allow: "GET, HEAD",
    });
  }
  if (path === "/health") {
    return send(res, 200, {
      status: "ok",
      name: "ludus",
      version: VERSION,
      games: games.length,
      uptimeSeconds: Math.round((performance.now() - startedAt) / 1000),
      ...extensions.health?.(),
    });
  }
  if (path === "/games") return send(res, 200, { games: catalog() });
  const one = /^\/games\/([^/]+)$/.exec(path);
  if (one) {
    const id = decodeURIComponent(one[1]);
    const game = catalog().find((g) => g.id === id);
    if (game) return send(res, 200, game);
    return error(res, 404, "unknown_game", `no game \`${id}\`; games: ${games.map((g) => g.id).join(", ")}`);
  }
  error(res, 404, "not_found", `no route ${req.method} ${path}; routes: ${ROUTES}`);
}

export function startHttpServer(options: ServeOptions, extensions: HttpExtensions = {}): Promise<RunningServer> {
  const startedAt = performance.now();
  const server = createServer((req, res) => {
    try {
      route(req, res, startedAt, extensions);
    } catch (cause) {
      // A bug in one request must not take the server down; the client still gets an answer.
      console.error("ludus: request failed:", cause);
      if (!res.headersSent) error(res, 500, "internal_error", "the server failed to answer this request");
      else res.destroy();
    }
  });
  return new Promise((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) => {
      const where = `${options.host}:${options.port}`;
      if (err.code === "EADDRINUSE") {
        reject(new ServeError(`port ${options.port} is already in use on ${options.host}; choose another with --port`));
      } else if (err.code === "EADDRNOTAVAIL" || err.code === "ENOTFOUND") {
        reject(new ServeError(`cannot listen on ${where}: no such local address; check --host`));
      } else if (err.code === "EACCES") {
        reject(new ServeError(`not allowed to listen on ${where}; ports below 1024 need privileges`));
      } else {
        reject(new ServeError(`cannot listen on ${where}: ${err.message}`));
      }
    });
    server.listen(options.port, options.host, () => {
      const { port } = server.address() as AddressInfo;
      const host = options.host.includes(":") ? `[${options.host}]` : options.host;
      resolve({
        url: `http://${host}:${port}`,
        port,
        http: server,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
