import { mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { type IncomingHttpHeaders, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startHttpServer } from "../../server/http.ts";
import { webAppRoutes } from "../../server/web-app.ts";

/** How the server hands out the web app's files (the app itself is tested in a browser in test/web/). */
describe("the web app's files", () => {
  let root: string;
  let server: RunningServer;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "ludus-web-"));
    mkdirSync(join(root, "styles"));
    writeFileSync(join(root, "index.html"), "<!doctype html><title>Ludus</title>");
    writeFileSync(join(root, "style.css"), "body{}");
    writeFileSync(join(root, "styles", "poker.css"), ".poker{}");
    server = await startHttpServer({ port: 0, host: "127.0.0.1" }, { routes: [webAppRoutes(root)] });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("answers every app path with the page, under a policy that allows nothing from elsewhere", async () => {
    for (const path of ["/", "/lobby", "/play/abc", "/watch/abc/", "/invite/xyz", "/replays", "/replays/abc?seat=0"]) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
      expect(await res.text()).toContain("<title>Ludus</title>");
    }
  });

  it("serves style sheets with their types and answers 304 to a known ETag", async () => {
    const res = await fetch(`${server.url}/styles/poker.css`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(await res.text()).toBe(".poker{}");
    const again = await fetch(`${server.url}/styles/poker.css`, {
      headers: { "if-none-match": res.headers.get("etag")! },
    });
    expect(again.status).toBe(304);
  });

  it("says how to build the app when its bundle is missing, and leaves other paths to the API", async () => {
    const res = await fetch(`${server.url}/app.js`);
    expect(res.status).toBe(503);
    expect((await res.json()).error).toMatchObject({
      code: "app_not_built",
      message: expect.stringMatching(/deno task build:web/),
    });
    for (const path of ["/styles/../index.html", "/play", "/nothing", "/styles/x.js"]) {
      expect((await fetch(`${server.url}${path}`)).status, path).toBe(404);
    }
  });
});

/** One GET over plain HTTP, bytes as sent (no decoding on the way), for what the server put on the wire. */
function get(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    }).on("error", reject).end();
  });
}

describe("the web app's files, compressed", () => {
  let root: string;
  let server: RunningServer;
  // A bundle-like file: text that compresses well, as app.js does.
  const bundle = Array.from({ length: 4000 }, (_, i) => `export function f${i}(a){return a+${i}}\n`).join("");
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "ludus-web-"));
    mkdirSync(join(root, "dist"));
    writeFileSync(join(root, "index.html"), "<!doctype html><title>Ludus</title>");
    writeFileSync(join(root, "dist", "app.js"), bundle);
    server = await startHttpServer({ port: 0, host: "127.0.0.1" }, { routes: [webAppRoutes(root)] });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("sends brotli or gzip as the browser accepts, each with its own ETag that revalidates to 304", async () => {
    const url = `${server.url}/app.js`;
    const br = await get(url, { "accept-encoding": "gzip, deflate, br, zstd" });
    expect(br.status).toBe(200);
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers.vary).toBe("accept-encoding");
    expect(br.headers["cache-control"]).toBe("no-cache");
    expect(Number(br.headers["content-length"])).toBe(br.body.length);
    expect(br.body.length).toBeLessThan(bundle.length / 5);
    expect(brotliDecompressSync(br.body).toString()).toBe(bundle);

    const gz = await get(url, { "accept-encoding": "gzip" });
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(gz.body).toString()).toBe(bundle);
    expect(gz.headers.etag).not.toBe(br.headers.etag);

    for (const accept of [undefined, "identity", "br;q=0, gzip;q=0", "deflate"]) {
      const plain = await get(url, accept === undefined ? {} : { "accept-encoding": accept });
      expect(plain.headers["content-encoding"], accept).toBeUndefined();
      expect(plain.body.toString(), accept).toBe(bundle);
    }

    const again = await get(url, { "accept-encoding": "br", "if-none-match": br.headers.etag! });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    // The brotli ETag is no proof of holding the gzip bytes.
    expect((await get(url, { "accept-encoding": "gzip", "if-none-match": br.headers.etag! })).status).toBe(200);
    // The page itself too.
    expect((await get(`${server.url}/`, { "accept-encoding": "gzip" })).headers["content-encoding"]).toBeUndefined();
  });

  it("compresses a file once per version: the same file answers from memory, a rebuilt one anew", async () => {
    const url = `${server.url}/app.js`;
    const first = await get(url, { "accept-encoding": "br" });
    // Other bytes of the same size and time: a server that compressed per request would send these.
    const file = join(root, "dist", "app.js");
    const { mtime } = statSync(file);
    writeFileSync(file, bundle.replaceAll("return", "RETURN"));
    utimesSync(file, mtime, mtime);
    const second = await get(url, { "accept-encoding": "br" });
    expect(second.headers.etag).toBe(first.headers.etag);
    expect(second.body.equals(first.body)).toBe(true);

    const rebuilt = bundle.replaceAll("return", "return ");
    writeFileSync(file, rebuilt);
    const fresh = await get(url, { "accept-encoding": "br" });
    expect(fresh.headers.etag).not.toBe(first.headers.etag);
    expect(brotliDecompressSync(fresh.body).toString()).toBe(rebuilt);
  });
});
