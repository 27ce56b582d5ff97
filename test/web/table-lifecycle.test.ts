import type { CDPSession } from "playwright-core";
import { describe, expect, it } from "vitest";
import { matchIdOf, playToEnd, useBrowser, type WatchedPage } from "../support/browser.ts";
import { useTestServer } from "../support/server.ts";
import { until } from "../support/until.ts";

/**
 * A tab's life over many matches: the result after a reload of a finished match, and the page's event listeners,
 * counted by Chromium itself (CDP's DOMDebugger.getEventListeners), staying flat as one tab plays match after match.
 */

const browser = useBrowser();
const server = useTestServer({ roomCreatesPerSecond: 100 });

async function open(path: string): Promise<WatchedPage> {
  const watched = await browser.open();
  await watched.page.goto(`${server.url}${path}`);
  return watched;
}

/**
 * Every event listener of the page: the window's, those of every node of the document, and those of every websocket
 * the page's heap still holds (a match's connection kept past its match holds its own).
 */
async function listeners(cdp: CDPSession): Promise<number> {
  await cdp.send("HeapProfiler.collectGarbage");
  const objects: string[] = [];
  for (const expression of ["window", "document"]) {
    objects.push((await cdp.send("Runtime.evaluate", { expression })).result.objectId!);
  }
  const prototype = (await cdp.send("Runtime.evaluate", { expression: "WebSocket.prototype" })).result.objectId!;
  const { objects: sockets } = await cdp.send("Runtime.queryObjects", { prototypeObjectId: prototype });
  const { result } = await cdp.send("Runtime.getProperties", { objectId: sockets.objectId!, ownProperties: true });
  for (const p of result) if (/^\d+$/.test(p.name) && p.value?.objectId) objects.push(p.value.objectId);
  let count = 0;
  for (const [i, objectId] of objects.entries()) {
    // The document with all its nodes; the others by themselves.
    const found = await cdp.send("DOMDebugger.getEventListeners", { objectId, depth: i === 1 ? -1 : 0, pierce: true });
    count += found.listeners.length;
  }
  await cdp.send("Runtime.releaseObjectGroup", { objectGroup: "" }).catch(() => {});
  return count;
}

describe("a tab's life over matches", () => {
  it("a reload of a finished match shows its result, in the seat's words, and links its replay", async () => {
    const { page, errors } = await open("/play/new/tic-tac-toe?vs=random");
    const id = await matchIdOf(page);
    await playToEnd(page);
    const shown = await page.locator("[data-result]").innerText();
    await until(`match ${id} to be stored as ended`, async () => (await server.server.store.match(id))?.endedAt);
    for (let reload = 0; reload < 3; reload++) {
      await page.reload();
      const result = page.locator("[data-result]");
      // Whichever the page says first: the result, or that this browser has no seat here.
      await page.locator("[data-result], h1:text('No seat of yours here')").first().waitFor();
      expect(await page.locator("main").innerText()).not.toMatch(/No seat of yours here/);
      expect(await result.innerText()).toBe(shown);
      const stored = (await server.server.store.match(id))!.returns;
      const returns = await result.locator("[data-return]").evaluateAll((els) =>
        els.map((e) => Number(e.getAttribute("data-return")))
      );
      expect(returns).toEqual(stored);
      expect(await page.locator(`a[href="/replays/${id}?seat=0"]`).count()).toBe(1);
    }
    expect(errors).toEqual([]);
  }, 240_000);

  it("one tab playing match after match keeps as many event listeners as after its first", async () => {
    const { page, context } = await open("/");
    const cdp = await context.newCDPSession(page);
    const counts: number[] = [];
    for (let match = 0; match < 6; match++) {
      // From the lobby, as a person does: the card's "play now", the match, the top bar's LUDUS back to the lobby.
      const card = page.locator('article[data-game="tic-tac-toe"]');
      await card.locator("select[id$=-vs]").selectOption("random");
      await card.locator("a[data-action=vs-builtin]").click();
      await matchIdOf(page);
      await playToEnd(page);
      await page.locator("a.brand").click();
      await page.locator("article.game-card").first().waitFor();
      // A connection the page has just left closes a moment later: the count must come back to the first match's.
      let count = await listeners(cdp);
      if (counts.length) {
        count = await until(`the listeners to come back to ${counts[0]} (at ${count})`, async () => {
          const now = await listeners(cdp);
          return now === counts[0] && now;
        }, 20_000).catch(() => count);
      }
      counts.push(count);
    }
    expect(counts.every((c) => c === counts[0]), `listeners after each match: ${counts.join(", ")}`).toBe(true);
  }, 300_000);
});
