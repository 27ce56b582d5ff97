import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
