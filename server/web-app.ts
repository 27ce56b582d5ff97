import { readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
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
      // Revalidated on every load so a rebuilt app is picked up at once; unchanged files answer 304 unread.
      const etag = `"${size.toString(36)}-${modified.getTime().toString(36)}"`;
      const headers: Record<string, string> = {
        "content-type": TYPES[extname(file)],
        "cache-control": "no-cache",
        etag,
        "x-content-type-options": "nosniff",
      };
      if (file === "index.html") headers["content-security-policy"] = contentSecurityPolicy(peers());
      if (req.headers["if-none-match"] === etag) {
        res.writeHead(304, headers).end();
        return true;
      }
      const body = readFileSync(full);
      res.writeHead(200, { ...headers, "content-length": body.length });
      res.end(req.method === "HEAD" ? undefined : body);
      return true;
    },
  };
}
