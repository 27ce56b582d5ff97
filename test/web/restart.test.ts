import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import type { MatchRecord } from "../../db/records.ts";
import { ReplayStore } from "../../db/store.ts";
import {
  matchIdOf,
  nextTurn,
  PAGE_WAIT_MS,
  playAMove,
  playToEnd,
  screenshot,
  useBrowser,
  type WatchedPage,
} from "../support/browser.ts";
import { freePort, type ServerProcess, startServerProcess } from "../support/server-process.ts";
import { until } from "../support/until.ts";

/**
 * A person's seat through a restart of the server: a real `ludus serve` process stopped with SIGTERM mid-match (as a
 * service manager does) and started again on the same data directory and port. The server restores the match with the
 * seat held; the page must take the seat back by itself, or when reloaded, and the person finish the match.
 */

const TEST_MS = 300_000;

const browser = useBrowser();
let dataDir: string;
let port: number;
let server: ServerProcess | undefined;

afterEach(async () => {
  server?.child.kill("SIGKILL");
  await server?.exited;
  server = undefined;
  rmSync(dataDir, { recursive: true, force: true });
});

/** `ludus serve` on this test's data directory and port (a later `--port` wins over the helper's own). */
async function start(): Promise<ServerProcess> {
  return server = await startServerProcess(["--data-dir", dataDir, "--port", String(port)]);
}

/** SIGTERM, as a service manager stops it; resolves once the process is gone, having stopped cleanly. */
async function stop(): Promise<void> {
  server!.child.kill("SIGTERM");
  await server!.exited;
  expect(server!.stderr()).toMatch(/ludus: stopped; \d+ live match/);
  server = undefined;
}

/** The match as the running server's store has it, once it has ended. */
function storedEnd(id: string): Promise<MatchRecord> {
  return until(`match ${id} to be stored as ended`, async () => {
    const response = await fetch(`${server!.url}/matches/${id}`);
    const { match } = response.ok ? await response.json() as { match: MatchRecord } : { match: null };
    return match?.endedAt ? match : null;
  }, PAGE_WAIT_MS);
}

async function shownReturns(page: Page): Promise<number[]> {
  const spans = page.locator("[data-result] [data-return]");
  return await spans.evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-return"))));
}

/** What the page reported as errors, less the refused requests of the restart itself (the server was away). */
const realErrors = (errors: readonly string[]) =>
  errors.filter((e) => !/Failed to load resource|ERR_CONNECTION_REFUSED|WebSocket connection to .* failed/.test(e));

/** A person in a match against a built-in, two moves in, with the server's restart to come. */
async function midMatch(): Promise<{ watched: WatchedPage; id: string; seq: string }> {
  dataDir = mkdtempSync(join(tmpdir(), "ludus-web-restart-"));
  port = await freePort();
  await start();
  const watched = await browser.open();
  const { page } = watched;
  await page.goto(`${server!.url}/play/new/ipd?vs=tit-for-tat`);
  const id = await matchIdOf(page);
  let seq = await nextTurn(page);
  await playAMove(page, 0);
  seq = await nextTurn(page, seq!);
  await playAMove(page, 1);
  seq = await nextTurn(page, seq!);
  return { watched, id, seq: seq! };
}

/** Plays the match to its end from where the page is, and checks it ended as the store says, every move the person's. */
async function finishes(watched: WatchedPage, id: string): Promise<void> {
  const { page } = watched;
  await playToEnd(page);
  const end = await storedEnd(id);
  expect(end.statuses).toEqual(["DONE", "DONE"]);
  expect(end.endReason).toBe("completed");
  expect(await shownReturns(page)).toEqual(end.returns);
  expect(realErrors(watched.errors)).toEqual([]);
  // Nobody's moves were played for the person (they were never away past the hold): read in the store, the server
  // stopped (it holds the embedded store while it runs).
  await stop();
  const store = await ReplayStore.open({ dataDir });
  try {
    const steps = await store.steps(id);
    expect(steps.filter((s) => s.seat === 0).length).toBeGreaterThan(0);
    expect(steps.filter((s) => s.seat === 0 && s.defaulted !== null)).toEqual([]);
  } finally {
    await store.close();
  }
}

describe("the web table through a server restart", () => {
  it(
    "a page whose server restarts mid-match takes its seat back by itself, and the person finishes the match",
    async () => {
      const { watched, id } = await midMatch();
      const { page } = watched;
      await stop();
      // The page says the server is restarting and waits for it, seat kept.
      await page.locator(".table-page[data-connection=reconnecting] [data-reconnecting]").waitFor();
      expect(await page.locator("[data-reconnecting]").innerText()).toMatch(/restarting/);
      await screenshot(page, "server-restarting");
      await start();
      await page.locator(".table-page[data-connection=connected]").waitFor();
      expect(await nextTurn(page)).not.toBeNull();
      expect(await page.locator("[data-seat-lost], [data-notice]").count()).toBe(0);
      await finishes(watched, id);
    },
    TEST_MS,
  );

  it(
    "a page reloaded after the restart takes its seat back with the key it kept, and again on a reload after that",
    async () => {
      const { watched, id } = await midMatch();
      const { page } = watched;
      await stop();
      await page.locator("[data-reconnecting]").waitFor();
      // The page does not get its seat back by itself this time: its requests for rooms fail until it is reloaded, and
      // the reloaded page's until it has asked once, so that it is the reload that takes the seat back, with the key
      // (the reconnection token it kept died with the server's process).
      await page.route("**/matchmake/**", (route) => route.abort());
      await start();
      await page.reload();
      await page.locator("text=Connecting to the match").waitFor();
      await page.unroute("**/matchmake/**");
      expect(await matchIdOf(page)).toBe(id);
      expect(await nextTurn(page)).not.toBeNull();
      // And a reload once the page plays on the restarted server.
      await page.reload();
      expect(await matchIdOf(page)).toBe(id);
      expect(await nextTurn(page)).not.toBeNull();
      expect(await page.locator("[data-seat-lost]").count()).toBe(0);
      await finishes(watched, id);
    },
    TEST_MS,
  );

  it("a tab closed before the restart and opened again after it takes its seat back", async () => {
    const { watched, id } = await midMatch();
    await watched.page.close();
    await stop();
    await start();
    const tab = await watched.context.newPage();
    const again: WatchedPage = { ...watched, page: tab, errors: [] };
    tab.on("pageerror", (e) => again.errors.push(String(e)));
    await tab.goto(`${server!.url}/play/${id}`);
    expect(await matchIdOf(tab)).toBe(id);
    expect(await nextTurn(tab)).not.toBeNull();
    await finishes(again, id);
  }, TEST_MS);
});
