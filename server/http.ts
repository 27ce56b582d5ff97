import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { QueryError } from "../db/query.ts";
import { games } from "../games/registry.ts";
import { catalog } from "./catalog.ts";
import { VERSION } from "./version.ts";

/** The HTTP API: health and the game registry. Websockets share the port (see server/app.ts). */

export interface ServeOptions {
  readonly port: number;
  readonly host: string;
  /** How long an HTTP connection may stay silent before it is closed (default IDLE_MS). */
  readonly idleMs?: number;
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

/**
 * A group of routes: `handle` answers (and returns true) when the path is one of its own. GET and HEAD
 * only, unless `methods` names others it takes (POST, DELETE).
 */
export interface ApiRoute {
  /** The routes, for the list a 404 or 405 answer gives, e.g. "GET /matches". */
  readonly describe: string;
  readonly methods?: readonly string[];
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

/** How long an HTTP connection may stay silent. */
export const IDLE_MS = 30_000;

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

/**
 * Answers 405 naming the methods `url` takes when the request's is not one of them (HEAD counts as GET); true when
 * it did.
 */
export function refuseMethod(req: IncomingMessage, res: ServerResponse, url: URL, allowed: readonly string[]): boolean {
  const method = req.method === "HEAD" ? "GET" : req.method!;
  if (allowed.includes(method)) return false;
  error(res, 405, "method_not_allowed", `${req.method} ${url.pathname} is not supported; use ${allowed.join(" or ")}`, {
    allow: allowed.join(", "),
  });
  return true;
}

/** A request's body, refused with `tooLarge()` past `limit` bytes without reading the rest. */
export function readBody(req: IncomingMessage, limit: number, tooLarge: () => Error): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    if (Number(req.headers["content-length"] ?? 0) > limit) return reject(tooLarge());
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.destroy();
        return reject(tooLarge());
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(new Uint8Array(Buffer.concat(chunks))));
    req.on("error", reject);
  });
}

/** An expected refusal of a request: its status, code and message. */
export interface Refusal {
  readonly status: number;
  readonly code: string;
  readonly message: string;
}

/**
 * Answers with what `answer` resolves to (200 and its JSON; undefined when it answered itself), or with the
 * refusal `refuse` makes of its error (a bad query → 400), or 500 for anything unexpected.
 */
export function respond(
  res: ServerResponse,
  answer: () => Promise<unknown>,
  refuse: (cause: unknown) => Refusal | undefined = () => undefined,
): void {
  answer().then(
    (body) => {
      if (body !== undefined) send(res, 200, body);
    },
    (cause) => {
      if (res.headersSent) return void res.destroy();
      const refusal = cause instanceof QueryError
        ? { status: 400, code: "bad_query", message: cause.message }
        : refuse(cause);
      if (refusal) return error(res, refusal.status, refusal.code, refusal.message);
      console.error(`ludus: ${res.req.method} ${res.req.url} failed:`, cause);
      error(res, 500, "internal_error", `the server could not answer: ${(cause as Error)?.message ?? cause}`);
    },
  );
}

/** Each connection's idle limit, so that an answer the server is still working on can suspend it. */
const idleLimits = new WeakMap<Socket, number>();

/**
 * `work` (the server preparing the next bytes of an answer: a long export's next page) with the connection's idle
 * limit suspended: the limit is for a client that goes silent, and here the client is waiting on the server. It is
 * back as soon as `work` settles, so a client that stops reading is still cut off.
 */
export async function whileWorking<T>(res: ServerResponse, work: Promise<T>): Promise<T> {
  const socket = res.socket;
  const limit = socket ? idleLimits.get(socket) : undefined;
  if (!socket || limit === undefined) return await work;
  socket.setTimeout(0);
  try {
    return await work;
  } finally {
    if (!socket.destroyed) socket.setTimeout(limit);
  }
}

/** A path segment as text, or undefined after answering 400 (`%ff` is not valid percent-encoding). */
export function pathSegment(res: ServerResponse, raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    error(res, 400, "bad_path", `\`${raw.slice(0, 64)}\` is not valid percent-encoded UTF-8`);
    return undefined;
  }
}

function route(req: IncomingMessage, res: ServerResponse, startedAt: number, extensions: HttpExtensions): void {
  // A NUL is in no name, id or value the server takes, and PostgreSQL refuses it in text: every route says so alike.
  if (/%00|\0/.test(req.url ?? "")) {
    return error(res, 400, "bad_path", "the path or query holds a NUL character (%00), which no route accepts");
  }
  if (extensions.before?.(req, res)) return;
  const url = new URL(req.url ?? "/", "http://localhost");
  const path = url.pathname.replace(/\/+$/, "") || "/";
  const routes = [ROUTES, ...(extensions.routes ?? []).map((r) => r.describe)].join(", ");
  if (req.method !== "GET" && req.method !== "HEAD") {
    for (const extra of extensions.routes ?? []) {
      if (extra.methods?.includes(req.method!) && extra.handle(req, res, url)) return;
    }
    return error(res, 405, "method_not_allowed", `${req.method} is not supported here; routes: ${routes}`, {
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
    const id = pathSegment(res, one[1]);
    if (id === undefined) return;
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
  // A connection that sends nothing (or idles between requests) holds a file descriptor for nothing: it
  // gets IDLE_MS. A websocket, once upgraded, is left to its own rules (the gateway's auth timeout, pings).
  const idleMs = options.idleMs ?? IDLE_MS;
  server.on("connection", (socket: Socket) => {
    idleLimits.set(socket, idleMs);
    socket.setTimeout(idleMs, () => socket.destroy());
  });
  server.on("upgrade", (_req: IncomingMessage, socket: Socket) => socket.setTimeout(0));
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
      const watchdog = keepAccepting(server, options.host, port);
      resolve({
        url: `http://${host}:${port}`,
        port,
        http: server,
        close: () =>
          new Promise<void>((done) => {
            clearInterval(watchdog);
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

/** How often the listener is checked, and how long its check waits for the probe to be accepted. */
const PROBE_EVERY_MS = 5_000;
const PROBE_WAIT_MS = 2_000;

/**
 * Deno's listener stops accepting for good once an accept fails (the process at its open-file limit):
 * the port stays bound, the kernel queues connections, nothing answers, even after every socket closes.
 * So the server connects to itself now and then; when its own probe is not accepted in time, it listens
 * again, and says so.
 */
function keepAccepting(server: Server, host: string, port: number): ReturnType<typeof setInterval> {
  const self = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  let probing = false;
  let failures = 0;
  const probe = () =>
    new Promise<boolean | undefined>((answer) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let done = false;
      const finish = (result: boolean | undefined) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        server.off("connection", accepted);
        socket.destroy();
        answer(result);
      };
      // Any connection accepted while the probe waits proves the listener alive (the probe's own among them).
      const accepted = () => finish(true);
      server.once("connection", accepted);
      const socket: Socket = connect(port, self);
      socket.once("connect", () => done || (timer = setTimeout(() => finish(false), PROBE_WAIT_MS)));
      socket.once("error", () => finish(undefined)); // our own side could not connect: no verdict
    });
  const timer = setInterval(async () => {
    if (probing || !server.listening) return;
    probing = true;
    try {
      const verdict = await probe();
      // Twice in a row, so that a merely busy event loop is not taken for a dead listener.
      failures = verdict === false ? failures + 1 : verdict === true ? 0 : failures;
      if (failures < 2) return;
      failures = 0;
      console.error(
        `ludus: the server stopped accepting connections (most likely at its open-file limit: raise it with ` +
          `\`ulimit -n\`); listening on ${host}:${port} again`,
      );
      server.close();
      server.listen(port, host);
    } finally {
      probing = false;
    }
  }, PROBE_EVERY_MS);
  Deno.unrefTimer(timer);
  return timer;
}
