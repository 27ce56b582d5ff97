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
  /** More GET routes (the replay store's), tried after the built-in ones. */
  readonly routes?: readonly ApiRoute[];
}

/** A group of GET routes: `handle` answers (and returns true) when the path is one of its own. */
export interface ApiRoute {
  /** The routes, for the list a 404 or 405 answer gives, e.g. "GET /matches". */
  readonly describe: string;
  handle(req: IncomingMessage, res: ServerResponse, url: URL): boolean;
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

export function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(res.req.method === "HEAD" ? undefined : text);
}

export function error(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers?: Record<string, string>,
) {
  send(res, status, { error: { code, message } }, headers);
}

function route(req: IncomingMessage, res: ServerResponse, startedAt: number, extensions: HttpExtensions): void {
  if (extensions.before?.(req, res)) return;
  const url = new URL(req.url ?? "/", "http://localhost");
  const path = url.pathname.replace(/\/+$/, "") || "/";
  const routes = [ROUTES, ...(extensions.routes ?? []).map((r) => r.describe)].join(", ");
  if (req.method !== "GET" && req.method !== "HEAD") {
    return error(res, 405, "method_not_allowed", `${req.method} is not supported; routes: ${routes}`, {
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
  for (const extra of extensions.routes ?? []) if (extra.handle(req, res, url)) return;
  error(res, 404, "not_found", `no route ${req.method} ${path}; routes: ${routes}`);
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
