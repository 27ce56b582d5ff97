import { statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { extname, join } from "node:path";
import type { IncomingMessage, ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import { type ApiRoute, error } from "./http.ts";

/**
 * Serves the browser app (web/): its page for every app path, so that links to a table, a replay or an
 * invite open directly, and its bundle, which `deno task build:web` writes to web/dist (`npm start` and
 * `npm test` build it first). Everything the page needs comes from here: it fetches nothing elsewhere.
 */

export const WEB_ROOT = fileURLToPath(new URL("../web/", import.meta.url));

/** Paths the app routes itself: each answers with index.html. */
const PAGES = /^\/(?:|lobby|play\/.+|watch\/.+|invite\/.+|replays(?:\/.+)?|league(?:\/.+)?)$/;
/** The game tables' style sheets (web/styles/<name>.css). */
const STYLES = /^\/styles\/[a-z0-9-]+\.css$/;
const FILES: Readonly<Record<string, string>> = {
  "/style.css": "style.css",
  "/favicon.svg": "favicon.svg",
  "/app.js": "dist/app.js",
  "/app.js.map": "dist/app.js.map",
  // uPlot's own style sheet, served as it ships (the league's rating charts).
  "/uplot.css": "../node_modules/uplot/dist/uPlot.min.css",
};
const TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
};

/** A file's bytes as served, each encoding made once per version of the file (not per request). */
interface Encoded {
  readonly identity: Buffer;
  readonly br: Buffer;
  readonly gzip: Buffer;
}
type Encoding = "br" | "gzip" | "identity";

/**
 * The app's files by path: as many as FILES and web/styles have, each held in its latest version only. Compressing
 * runs on libuv's threads, so a bundle rebuilt while the server runs holds up no match.
 */
const encoded = new Map<string, { readonly version: string; readonly bodies: Promise<Encoded> }>();
const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

function encode(full: string, version: string): Promise<Encoded> {
  const known = encoded.get(full);
  if (known?.version === version) return known.bodies;
  const bodies = readFile(full).then(async (identity) => {
    const [br, gzip] = await Promise.all([
      brotli(identity, {
        params: { [constants.BROTLI_PARAM_QUALITY]: 10, [constants.BROTLI_PARAM_SIZE_HINT]: identity.length },
      }),
      gzipped(identity, { level: 9 }),
    ]);
    return { identity, br, gzip };
  });
  encoded.set(full, { version, bodies });
  bodies.catch(() => encoded.get(full)?.bodies === bodies && encoded.delete(full));
  return bodies;
}

/** The best encoding `accept` (an Accept-Encoding header) allows: brotli, then gzip, else none. */
function chooseEncoding(accept: string | undefined): Encoding {
  const allowed = new Map<string, number>();
  for (const part of (accept ?? "").split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    if (name) allowed.set(name, q === undefined ? 1 : Number(q));
  }
  const weight = (name: string) => allowed.get(name) ?? allowed.get("*") ?? 0;
  if (weight("br") > 0) return "br";
  if (weight("gzip") > 0) return "gzip";
  return "identity";
}

/**
 * The browser itself refuses anything from elsewhere (fonts, scripts, sockets), but for the sockets of the cluster's
 * processes, where the rooms of matches played by another process are.
 */
function contentSecurityPolicy(peers: readonly string[]): string {
  const sockets = peers.flatMap((url) => {
    const host = url.replace(/^https?:\/\//, "");
    return [`ws://${host}`, `wss://${host}`];
  });
  return `default-src 'self'; connect-src ${["'self'", ...sockets].join(" ")}; img-src 'self' data:; ` +
    "style-src 'self' 'unsafe-inline'";
}

/** `peers`: where the other processes of the cluster are reached (http URLs), for the page's sockets. */
export function webAppRoutes(root = WEB_ROOT, peers: () => readonly string[] = () => []): ApiRoute {
  return {
    describe: "GET / (the web app)",
    handle(req, res, url) {
      const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, "") : url.pathname;
      const file = PAGES.test(path) ? "index.html" : STYLES.test(path) ? path.slice(1) : FILES[path];
      if (file === undefined) return false;
      const full = join(root, file);
      let modified: Date;
      let size: number;
      try {
        ({ mtime: modified, size } = statSync(full));
      } catch {
        if (STYLES.test(path)) {
          // A style sheet the app does not have: not found, whether or not the bundle is built.
          error(res, 404, "not_found", `no style sheet ${path}`);
          return true;
        }
        error(
          res,
          503,
          "app_not_built",
          `the web app's ${file} is missing: build it with \`deno task build:web\` (\`npm start\` does this)`,
        );
        return true;
      }
      const version = `${size.toString(36)}-${modified.getTime().toString(36)}`;
      encode(full, version).then(
        (bodies) => send(req, res, file, version, bodies, file === "index.html" ? peers() : undefined),
        (e: Error) => error(res, 500, "unreadable", `the web app's ${file} could not be read: ${e.message}`),
      );
      return true;
    },
  };
}

/**
 * Answers with `file` in the encoding the request allows. Revalidated on every load so that a rebuilt app is picked
 * up at once; an unchanged file answers 304, unsent. Each encoding is its own representation, with its own ETag.
 * `peers`: for the page, the cluster's processes its sockets may reach.
 */
function send(
  req: IncomingMessage,
  res: ServerResponse,
  file: string,
  version: string,
  bodies: Encoded,
  peers?: readonly string[],
): void {
  let encoding = chooseEncoding(req.headers["accept-encoding"]);
  // A file too small to gain from it (the favicon) goes as it is.
  if (encoding !== "identity" && bodies[encoding].length >= bodies.identity.length) encoding = "identity";
  const etag = `"${version}${encoding === "identity" ? "" : `-${encoding}`}"`;
  const headers: Record<string, string> = {
    "content-type": TYPES[extname(file)],
    "cache-control": "no-cache",
    etag,
    vary: "accept-encoding",
    "x-content-type-options": "nosniff",
  };
  if (encoding !== "identity") headers["content-encoding"] = encoding;
  if (peers) headers["content-security-policy"] = contentSecurityPolicy(peers);
  const known = (req.headers["if-none-match"] ?? "").split(",").map((tag) => tag.trim().replace(/^W\//, ""));
  if (known.includes(etag)) return void res.writeHead(304, headers).end();
  const body = bodies[encoding];
  res.writeHead(200, { ...headers, "content-length": body.length });
  res.end(req.method === "HEAD" ? undefined : body);
}
