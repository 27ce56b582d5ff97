import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Bot } from "../../clients/sdk/index.ts";
import { games } from "../../games/registry.ts";
import { buildWebApp, launchBrowser, openPage, screenshot, type WatchedPage } from "../support/browser.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * The web app in a real browser (Debian chromium via playwright-core) against a real server: people play
 * by clicking, reload mid-match, spectate, and step through replays. Screenshots go to artifacts/web/.
 */

let server: TestServer;
let browser: Browser;
const opened: WatchedPage[] = [];

beforeAll(async () => {
  buildWebApp();
  server = await startTestServer({ fillAfterMs: 1000, fillStrategy: "random" });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function open(path: string, size?: { width: number; height: number }): Promise<WatchedPage> {
  const watched = await openPage(browser, size);
  opened.push(watched);
  await watched.page.goto(`${server.url}${path}`);
  return watched;
}

/** The match id of the table a page shows. */
async function matchIdOf(page: Page): Promise<string> {
  const table = page.locator(".table-page[data-match]");
  await table.waitFor();
  return (await table.getAttribute("data-match"))!;
}

/** Waits until it is the page's turn (returns its seq) or the match is over (null). */
async function nextTurn(page: Page, after = ""): Promise<string | null> {
  const turn = page.locator(`.board-area[data-turn-seq]:not([data-turn-seq=""]):not([data-turn-seq="${after}"])`);
  const result = page.locator("[data-result]");
  await Promise.race([turn.waitFor({ timeout: 30_000 }), result.waitFor({ timeout: 30_000 })]);
  if (await result.count()) return null;
  return await page.locator(".board-area").getAttribute("data-turn-seq");
}

/** Makes some legal move with whatever controls the table offers, as a person would. */
async function playAMove(page: Page, move: number): Promise<void> {
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
async function playToEnd(page: Page, maxMoves = 400): Promise<number> {
  let seq: string | null = "";
  let moves = 0;
  while ((seq = await nextTurn(page, seq ?? "")) !== null) {
    if (moves >= maxMoves) throw new Error(`still playing after ${maxMoves} moves`);
    await playAMove(page, moves++);
  }
  return moves;
}

async function storedReturns(id: string): Promise<readonly number[] | null> {
  for (let i = 0; i < 50; i++) {
    const record = await server.server.store.match(id);
    if (record?.endedAt) return record.returns;
    await new Promise((r) => setTimeout(r, 100));
  }
  return null;
}

async function shownReturns(page: Page): Promise<number[]> {
  const spans = page.locator("[data-result] [data-return]");
  return (await spans.evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-return")))));
}

describe("web app", () => {
  it("serves the lobby with every registered game, and fetches nothing from elsewhere", async () => {
    const { page, requests, errors } = await open("/");
    await page.locator("article.game-card").first().waitFor();
    expect(await page.locator("article.game-card").count()).toBe(games.length);
    for (const game of games) {
      const card = page.locator(`article[data-game="${game.id}"]`);
      await expect(card.locator("h2").textContent()).resolves.toBe(game.title);
      await expect(card.locator(".summary").textContent()).resolves.toBe(game.summary);
    }
    await screenshot(page, "lobby");
    expect(errors, errors.join("\n")).toEqual([]);
    expect(requests.filter((url) => !url.startsWith(server.url) && !url.startsWith(server.url.replace("http", "ws"))))
      .toEqual([]);
    const csp = (await fetch(`${server.url}/`)).headers.get("content-security-policy");
    expect(csp).toContain("default-src 'self'");
  });

  it("a person plays a whole Kuhn poker match against a built-in bot by clicking; the result is the stored one", async () => {
    const { page, errors } = await open("/");
    const card = page.locator('article[data-game="kuhn-poker"]');
    await card.locator("select[id$=-vs]").selectOption("always-call");
    await card.locator("a[data-action=vs-builtin]").click();
    const id = await matchIdOf(page);
    expect(page.url()).toBe(`${server.url}/play/${id}`);
    await nextTurn(page);
    await screenshot(page, "kuhn-table");
    const moves = await playToEnd(page);
    expect(moves).toBeGreaterThan(0);
    await screenshot(page, "kuhn-result");
    const stored = await storedReturns(id);
    expect(stored).not.toBeNull();
    expect(await shownReturns(page)).toEqual(stored);
    expect(errors).toEqual([]);
  });

  it("refuses an action from a tampered page with the server's message, and the match goes on", async () => {
    const { page } = await open("/play/new/kuhn-poker?vs=always-call");
    const id = await matchIdOf(page);
    await nextTurn(page);
    const button = page.locator(".fixed-actions button.action").first();
    await button.evaluate((b) => (b as HTMLButtonElement).value = JSON.stringify({ type: "raise", amount: 99 }));
    await button.click();
    const notice = page.locator("[data-notice]");
    await notice.waitFor();
    expect(await notice.textContent()).toMatch(/not a legal action/);
    await screenshot(page, "tampered-action");
    const stepsBefore = (await server.server.store.steps(id)).length;
    await playToEnd(page);
    expect((await server.server.store.steps(id)).length).toBeGreaterThan(stepsBefore);
    expect(await shownReturns(page)).toEqual(await storedReturns(id));
  });

  it("a reload mid-match takes the seat back and the match finishes", async () => {
    const { page } = await open("/play/new/ipd?vs=tit-for-tat");
    const id = await matchIdOf(page);
    let seq = await nextTurn(page);
    await playAMove(page, 0);
    seq = await nextTurn(page, seq!);
    await page.reload();
    expect(await matchIdOf(page)).toBe(id);
    seq = await nextTurn(page);
    expect(seq).not.toBeNull();
    await screenshot(page, "ipd-after-reload");
    await playToEnd(page);
    const record = await server.server.store.match(id);
    expect(record?.statuses).toEqual(["DONE", "DONE"]);
    expect(await shownReturns(page)).toEqual(await storedReturns(id));
    // Nobody's moves were played for them: every human decision is the person's own.
    const steps = await server.server.store.steps(id);
    expect(steps.filter((s) => s.seat === 0 && s.defaulted !== null)).toEqual([]);
  });

  it("a Trust-and-Split round with a chat message and a claim against a remote gateway bot", async () => {
    const heard: string[] = [];
    const bot = await Bot.connect({ url: server.wsUrl, token: server.token("split-bot") });
    const botMatch = bot.play({
      game: "trust-and-split",
      variant: "rps",
      policy: (observation, legal) => {
        const obs = observation as { chat: { seat: number; text: string }[] };
        heard.push(...obs.chat.map((m) => m.text));
        const form = legal[0];
        if (form.kind === "text") return { type: form.type, text: "I value the coins low; take most." };
        if (form.kind === "split") return { type: form.type, take: form.max.map((m) => Math.floor(m / 2)) };
        return form.kind === "fixed" ? form.action : undefined;
      },
    });
    const { page } = await open("/play/queue/trust-and-split?variant=rps");
    const id = await matchIdOf(page);
    // The first round: a message, then a claim of 7 coins.
    let seq = await nextTurn(page);
    const textarea = page.locator(".text-control textarea");
    if (!(await textarea.count())) seq = await nextTurn(page, seq!);
    await page.locator(".text-control textarea").fill("Shall we split the coins evenly?");
    await page.keyboard.press("Enter");
    seq = await nextTurn(page, seq!);
    await page.locator(".chat-log").getByText("I value the coins low").waitFor();
    await screenshot(page, "trust-and-split-chat");
    const split = page.locator(".split-control");
    await split.waitFor();
    const more = split.locator("button[aria-label^='more']").first();
    for (let i = 0; i < 7; i++) await more.click();
    await screenshot(page, "trust-and-split-claim");
    await split.locator("button[type=submit]").click();
    await nextTurn(page, seq!);
    await playToEnd(page);
    await screenshot(page, "trust-and-split-result");
    await botMatch;
    await bot.close();
    expect(heard).toContain("Shall we split the coins evenly?");
    const person = (await server.server.store.match(id))!.seats.findIndex((seat) => seat?.kind === "human");
    const mine = (await server.server.store.steps(id)).filter((step) => step.seat === person);
    expect(mine.some((s) => JSON.stringify(s.action).includes("Shall we split the coins evenly?"))).toBe(true);
    expect(mine.some((s) => (s.action as { take?: number[] } | null)?.take?.[0] === 7)).toBe(true);
    expect(await shownReturns(page)).toEqual(await storedReturns(id));
  });

  it("a spectator sees the public view and never a private card before the showdown", async () => {
    const player = await open("/play/new/kuhn-poker?vs=always-call");
    const id = await matchIdOf(player.page);
    await nextTurn(player.page);
    const spectator = await open("/");
    await spectator.page.locator(`.live tr[data-match="${id}"] a`).click();
    await spectator.page.locator(`.table-page[data-match="${id}"]`).waitFor();
    await spectator.page.locator(".board-area .kuhn").waitFor();
    await screenshot(spectator.page, "spectator");
    // Neither the page nor anything it received holds a private card while the hand is on.
    const privateCard = /"card":"[JQK]"/;
    expect(spectator.frames.some((f) => privateCard.test(f))).toBe(false);
    expect(await player.page.locator(".board-area .pcard.face").count()).toBeGreaterThan(0);
    expect(await spectator.page.locator(".board-area .pcard.back").count()).toBe(2);
    expect(await spectator.page.locator(".board-area .pcard.face").count()).toBe(0);
    expect(await spectator.page.locator(".action-bar").count()).toBe(0);
    await playToEnd(player.page);
    await spectator.page.locator(".table-page[data-phase=ended]").waitFor();
    await screenshot(spectator.page, "spectator-end");
    expect(spectator.frames.some((f) => privateCard.test(f))).toBe(false);
  });

  it("two people play tic-tac-toe through an invite link", async () => {
    const host = await open("/");
    const card = host.page.locator('article[data-game="tic-tac-toe"]');
    await card.locator("a[data-action=private]").click();
    const link = host.page.locator("input[aria-label='Invite link']");
    await link.waitFor();
    await screenshot(host.page, "invite-waiting");
    const guest = await open(new URL(await link.inputValue()).pathname);
    await guest.page.getByRole("button", { name: /Take a seat/ }).click();
    const id = await matchIdOf(guest.page);
    expect(await matchIdOf(host.page)).toBe(id);
    let hostSeq: string | null = "";
    let guestSeq: string | null = "";
    for (let turn = 0; turn < 9; turn++) {
      const page = turn % 2 === 0 ? host.page : guest.page;
      const seq = await nextTurn(page, turn % 2 === 0 ? hostSeq! : guestSeq!);
      if (seq === null) break;
      if (turn % 2 === 0) hostSeq = seq;
      else guestSeq = seq;
      await page.locator(".ttt-cell.open").first().click();
    }
    await host.page.locator("[data-result]").waitFor();
    await screenshot(host.page, "tic-tac-toe-result");
    expect(await shownReturns(host.page)).toEqual(await storedReturns(id));
  });

  it("the replay viewer steps through a stored match from a seat's view and the full view", async () => {
    const player = await open("/play/new/leduc-poker?vs=always-call");
    const id = await matchIdOf(player.page);
    await playToEnd(player.page);
    const { page, errors } = await open("/replays?game=leduc-poker");
    await page.locator(`.replay-list tr[data-match="${id}"] a`).click();
    await page.locator(".replay-viewer").waitFor();
    await screenshot(page, "replay-full-view");
    const counter = page.locator(".turn-counter");
    expect(await counter.getAttribute("data-turn")).toBe("0");
    expect(await page.locator(".seat-view").count()).toBe(2);
    await page.keyboard.press("ArrowRight");
    expect(await counter.getAttribute("data-turn")).toBe("1");
    await page.getByRole("button", { name: "Next turn" }).click();
    expect(await counter.getAttribute("data-turn")).toBe("2");
    await page.locator(".replay-controls select").selectOption("0");
    // The full view's two boards stay until seat 0's view has loaded; then one board shows.
    await expect.poll(() => page.locator(".seat-view").count(), { timeout: 10_000 }).toBe(0);
    await page.locator(".replay-viewer .leduc").waitFor();
    expect(page.url()).toContain("seat=0");
    await page.keyboard.press("End");
    await page.locator(".replay-viewer .result").waitFor();
    await screenshot(page, "replay-seat-end");
    const stored = await storedReturns(id);
    const finals = await page.locator(".replay-viewer .result [data-seat]").allTextContents();
    expect(finals.map((t) => Number(t.split(": ").at(-1)))).toEqual(stored);
    expect(errors).toEqual([]);
  });

  it("every registered game has a table a person can play to the end, at laptop and phone width", async () => {
    for (const game of games) {
      const phone = game.id === "holdem" || game.id === "trust-and-split";
      const size = phone ? { width: 390, height: 844 } : undefined;
      const { page, errors } = await open(`/play/new/${game.id}?vs=random`, size);
      const id = await matchIdOf(page);
      await nextTurn(page);
      await screenshot(page, `table-${game.id}${phone ? "-phone" : ""}`);
      const board = await page.locator(".board-area").innerText();
      expect(board, `${game.id}'s table shows raw JSON`).not.toMatch(/[{[]"\w+":/);
      if (phone) {
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
        expect(overflow, `${game.id} scrolls sideways at phone width`).toBeLessThanOrEqual(0);
      }
      await playToEnd(page, 2000);
      await screenshot(page, `table-${game.id}-end${phone ? "-phone" : ""}`);
      expect(await shownReturns(page)).toEqual(await storedReturns(id));
      expect(errors, game.id).toEqual([]);
      await page.context().close();
    }
  }, 600_000);
});
