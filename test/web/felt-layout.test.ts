import type { CDPSession } from "playwright-core";
import { describe, expect, it } from "vitest";
import { nextTurn, useBrowser, type WatchedPage } from "../support/browser.ts";
import { useTestServer } from "../support/server.ts";

/**
 * The poker felt's box over many fresh loads of a table, at phone and laptop width, with the page's CPU throttled
 * too (CDP's Emulation.setCPUThrottlingRate): a slow or busy machine lays the page out in other orders and at other
 * moments, and the felt must come out the same size every time. Its wrapper is a size container: its size must come
 * from outside it, never from the felt it contains.
 */

const LOADS_PER_WIDTH = 15;
const WIDTHS = [{ width: 390, height: 844 }, { width: 1280, height: 860 }];
const GAMES = ["kuhn-poker", "leduc-poker", "holdem"];

const browser = useBrowser();
const server = useTestServer({ roomCreatesPerSecond: 100 });

/** The felt's box and its wrapper's, once the table is set and the page has drawn two frames since. */
async function feltBox(watched: WatchedPage) {
  await nextTurn(watched.page);
  return await watched.page.evaluate(async () => {
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    const box = (selector: string) => {
      const r = document.querySelector(selector)!.getBoundingClientRect();
      return { width: Math.round(r.width), height: Math.round(r.height) };
    };
    return { felt: box(".felt"), wrap: box(".felt-wrap"), cards: document.querySelectorAll(".felt .pcard").length };
  });
}

describe("the poker felt", () => {
  it(`has its full size on each of ${LOADS_PER_WIDTH * WIDTHS.length} fresh loads, throttled or not`, async () => {
    const seen: string[] = [];
    for (const size of WIDTHS) {
      for (let load = 0; load < LOADS_PER_WIDTH; load++) {
        // A new browser context each time: nothing cached, nothing compiled yet, as on a first visit.
        const watched = await browser.open(size);
        const cdp: CDPSession = await watched.context.newCDPSession(watched.page);
        try {
          // Every other load on a CPU ten times slower, as on a machine busy with other work.
          await cdp.send("Emulation.setCPUThrottlingRate", { rate: load % 2 ? 10 : 1 });
          const game = GAMES[load % GAMES.length];
          await watched.page.goto(`${server.url}/play/new/${game}?vs=always-call`);
          const { felt, wrap, cards } = await feltBox(watched);
          const what = `${game} at ${size.width} px, load ${load}: felt ${felt.width}×${felt.height}`;
          seen.push(what);
          expect(felt.width, what).toBe(wrap.width);
          expect(felt.width, what).toBeGreaterThan(size.width / 2);
          expect(felt.height, what).toBeGreaterThan(200);
          expect(cards, what).toBeGreaterThan(0);
        } finally {
          await watched.context.close();
        }
      }
    }
    expect(seen).toHaveLength(LOADS_PER_WIDTH * WIDTHS.length);
  }, 600_000);
});
