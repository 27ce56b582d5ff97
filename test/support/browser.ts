import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll } from "vitest";

/**
 * A real browser for the web app's tests: Debian's chromium driven by playwright-core (never a downloaded
 * browser; `.ci/run` installs chromium). Screenshots land in artifacts/web/ to be looked at.
 */

export const CHROMIUM = process.env.LUDUS_CHROMIUM ?? "/usr/bin/chromium";
export const ARTIFACTS = join(import.meta.dirname!, "..", "..", "artifacts", "web");

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

/** A test file's browser (see `useBrowser`). */
export interface TestBrowser {
  /** A page in a fresh context (a first visit: nothing cached), closed after the test that opened it. */
  open(options?: { width?: number; height?: number }): Promise<WatchedPage>;
}

/** The browser of one test file: chromium launched before its tests, closed after them (global-setup.ts built the app). */
export function useBrowser(): TestBrowser {
  let browser: Browser | undefined;
  const opened: WatchedPage[] = [];
  beforeAll(async () => {
    browser = await launchBrowser();
  }, 180_000);
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((w) => w.context.close().catch(() => {})));
  });
  afterAll(async () => {
    await browser?.close();
  });
  return {
    async open(options) {
      const watched = await openPage(browser!, options);
      opened.push(watched);
      return watched;
    },
  };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** The match id of the table a page shows (once it shows one other than `not`). */
export async function matchIdOf(page: Page, not?: string): Promise<string> {
  const table = page.locator(`.table-page[data-match]${not ? `:not([data-match="${not}"])` : ""}`);
  await table.waitFor();
  return (await table.getAttribute("data-match"))!;
}

/** Waits until it is the page's turn (returns its seq) or the match is over (null). */
export async function nextTurn(page: Page, after = ""): Promise<string | null> {
  const turn = `.board-area[data-turn-seq]:not([data-turn-seq=""]):not([data-turn-seq="${after}"])`;
  // One selector for both, so that no wait is left running once the other has come.
  await page.locator(`${turn}, [data-result]`).first().waitFor();
  if (await page.locator("[data-result]").count()) return null;
  return await page.locator(".board-area").getAttribute("data-turn-seq");
}

/** Makes some legal move with whatever controls the table offers, as a person would. */
export async function playAMove(page: Page, move: number): Promise<void> {
  const cells = page.locator(".ttt-cell.open");
  if (await cells.count()) return await cells.first().click();
  const fixed = page.locator(".fixed-actions button.action");
  const text = page.locator(".text-control textarea");
  if (await text.count()) {
    await text.fill(`hello from move ${move}`);
    return await page.locator(".text-control button[type=submit]").click();
  }
  const count = await fixed.count();
  if (count) return await fixed.nth(move % count).click();
  const exchange = page.locator(".exchange-control");
  if (await exchange.count()) {
    await exchange.locator(".exchange-side").nth(0).locator("button[aria-label^='more']").first().click();
    await exchange.locator(".exchange-side").nth(1).locator("button[aria-label^='more']").first().click();
    return await exchange.locator("button[type=submit]").click();
  }
  const form = page.locator(".amount-control, .split-control").first();
  await form.locator("button[type=submit]").click();
}

/** Plays until the match ends (by clicking); returns how many moves the page made. */
export async function playToEnd(page: Page, maxMoves = 400): Promise<number> {
  let seq: string | null = "";
  let moves = 0;
  while ((seq = await nextTurn(page, seq ?? "")) !== null) {
    if (moves >= maxMoves) throw new Error(`still playing after ${maxMoves} moves`);
    await playAMove(page, moves++);
  }
  return moves;
}
