import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";

/**
 * A real browser for the web app's tests: Debian's chromium driven by playwright-core (never a downloaded
 * browser; `.ci/run` installs chromium). Screenshots land in artifacts/web/ to be looked at.
 */

export const CHROMIUM = process.env.LUDUS_CHROMIUM ?? "/usr/bin/chromium";
export const ARTIFACTS = join(import.meta.dirname!, "..", "..", "artifacts", "web");

/** Bundles web/src into web/dist/app.js, as `npm start` does, so the tests never run a stale page. */
export function buildWebApp(): void {
  const result = spawnSync(process.execPath, ["task", "--quiet", "build:web"], {
    cwd: join(import.meta.dirname!, "..", ".."),
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`deno task build:web failed:\n${result.stderr}${result.stdout}`);
}

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no chromium at ${CHROMIUM}: install Debian's (apt-get install -y --no-install-recommends chromium ` +
        `fonts-liberation; .ci/run does this) or point LUDUS_CHROMIUM at one`,
    );
  }
  mkdirSync(ARTIFACTS, { recursive: true });
  return await chromium.launch({
    executablePath: CHROMIUM,
    // This machine has no internet: without these, chromium keeps dialling Google's services.
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/**
 * How long any wait on a page may take (a locator's `waitFor`, a click): generous, so that the suite
 * passes on a machine several times slower than a laptop, under load.
 */
export const PAGE_WAIT_MS = 60_000;

/** A page that records what it fetched and any script error, for the "nothing from elsewhere" and "no crash" checks. */
export interface WatchedPage {
  readonly page: Page;
  readonly context: BrowserContext;
  readonly requests: string[];
  readonly errors: string[];
  /** Text of every websocket frame the page received (binary frames as latin1). */
  readonly frames: string[];
}

/** Records what `page` fetched, said, and received; also for the other tabs a test opens in its context. */
export function watch(page: Page, context: BrowserContext): WatchedPage {
  const watched: WatchedPage = { page, context, requests: [], errors: [], frames: [] };
  page.on("request", (r) => watched.requests.push(r.url()));
  page.on("pageerror", (e) => watched.errors.push(String(e)));
  page.on("console", (m) => m.type() === "error" && watched.errors.push(m.text()));
  page.on("websocket", (ws) => {
    watched.requests.push(ws.url());
    ws.on("framereceived", (f) => {
      watched.frames.push(typeof f.payload === "string" ? f.payload : Buffer.from(f.payload).toString("latin1"));
    });
  });
  return watched;
}

export async function openPage(
  browser: Browser,
  options: { width?: number; height?: number } = {},
): Promise<WatchedPage> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 860 },
  });
  context.setDefaultTimeout(PAGE_WAIT_MS);
  return watch(await context.newPage(), context);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}
