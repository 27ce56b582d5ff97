import { matchMaker } from "@colyseus/core";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Bot } from "../../clients/sdk/index.ts";
import type { MatchRecord } from "../../db/records.ts";
import { verifyMatch } from "../../db/verify.ts";
import { games } from "../../games/registry.ts";
import { strategiesFor } from "../../policies/baselines/index.ts";
import type { ParticipantView } from "../../protocol/frames.ts";
import type { ServerOptions } from "../../server/app.ts";
import {
  matchIdOf,
  nextTurn,
  PAGE_WAIT_MS,
  playAMove,
  playToEnd,
  screenshot,
  useBrowser,
  watch,
  type WatchedPage,
} from "../support/browser.ts";
import { mlpModel } from "../support/onnx-models.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { until } from "../support/until.ts";

/**
 * The web app in a real browser (Debian chromium via playwright-core) against a real server: people play
 * by clicking, reload mid-match, close tabs and go offline at the wrong moment, spectate, and step through
 * replays. Screenshots go to artifacts/web/. Every wait is bounded generously (PAGE_WAIT_MS, TEST_MS) and
 * waits for an event, never for a fixed time: the suite must pass on a machine several times slower than
 * a laptop, under load.
 */

/** What one test may take: a match or two played by clicking, on a slow machine. */
const TEST_MS = 240_000;
const PHONE = { width: 390, height: 844 };

let server: TestServer;
const browser = useBrowser();

/** A server for the tests of one `describe`: the browser rooms are process-wide, so one at a time. */
function serve(options: Partial<ServerOptions> = {}): void {
  beforeAll(async () => {
    server = await startTestServer(options);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  }, 120_000);
}

async function open(path: string, size?: { width: number; height: number }): Promise<WatchedPage> {
  const watched = await browser.open(size);
  await watched.page.goto(`${server.url}${path}`);
  return watched;
}

/** Another tab of the same browser (its localStorage included), opened on `path`. */
async function openTab(of: WatchedPage, path: string): Promise<WatchedPage> {
  const tab = watch(await of.context.newPage(), of.context);
  await tab.page.goto(`${server.url}${path}`);
  return tab;
}

/** The match's record, once the store has it as ended. */
function storedEnd(id: string): Promise<MatchRecord> {
  return until(`match ${id} to be stored as ended`, async () => {
    const record = await server.server.store.match(id);
    return record?.endedAt ? record : null;
  }, PAGE_WAIT_MS);
}

async function storedReturns(id: string): Promise<readonly number[] | null> {
  return (await storedEnd(id)).returns;
}

async function shownReturns(page: Page): Promise<number[]> {
  const spans = page.locator("[data-result] [data-return]");
  return (await spans.evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-return")))));
}

/** Waits until the live match shows `seat` as `what` says (`test` of its participant view). */
function seatIs(id: string, seat: number, what: string, test: (p: ParticipantView) => boolean): Promise<true> {
  return until(`seat ${seat} of ${id} to be ${what}`, () => {
    const participant = server.server.matches.get(id)?.participants()[seat];
    return participant !== undefined && test(participant);
  }, PAGE_WAIT_MS);
}

const released = (p: ParticipantView) => p.status === "DISCONNECTED";

/** The reasons of the decisions the server played for `seat` (none when the person made every move). */
async function defaultedFor(id: string, seat: number): Promise<(string | null)[]> {
  const steps = await server.server.store.steps(id);
  return steps.filter((s) => s.seat === seat && s.defaulted !== null).map((s) => s.defaulted);
}

/** Cuts a match room's websockets at the server, as a failing network does: the browser sees 1006. */
function cutConnections(id: string): void {
  for (const client of matchMaker.getLocalRoomById(id).clients) {
    (client.ref as unknown as { terminate(): void }).terminate();
  }
}

/** Records every value the table's `data-connection` takes from now on, for `connectionWentThrough`. */
async function watchConnection(page: Page): Promise<void> {
  await page.locator(".table-page").evaluate((table) => {
    const seen = [table.getAttribute("data-connection")];
    (globalThis as unknown as { ludusSeen: unknown }).ludusSeen = seen;
    new MutationObserver(() => seen.push(table.getAttribute("data-connection"))).observe(table, {
      attributeFilter: ["data-connection"],
    });
  });
}

/** Waits until the table's connection has been through `states` in this order, and is in the last of them. */
async function connectionWentThrough(page: Page, states: readonly string[]): Promise<void> {
  await page.waitForFunction((states) => {
    const seen = (globalThis as unknown as { ludusSeen: string[] }).ludusSeen;
    let at = 0;
    for (const state of seen) if (state === states[at]) at++;
    return at === states.length && seen.at(-1) === states.at(-1);
  }, states);
}

async function noSidewaysScroll(page: Page, what: string): Promise<void> {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
  expect(overflow, `${what} scrolls sideways at phone width`).toBeLessThanOrEqual(0);
}

/** Opens a private match of `game` from the lobby with the other seat left open; returns the host and the invite. */
async function privateMatch(game: string, name?: string): Promise<{ host: WatchedPage; id: string; invite: string }> {
  const host = await open("/");
  if (name) {
    await host.page.locator("#display-name").fill(name);
    await host.page.locator("#display-name").press("Enter");
  }
  await host.page.locator(`article[data-game="${game}"] a[data-action=private]`).click();
  const link = host.page.locator("input[aria-label='Invite link']");
  await link.waitFor();
  return { host, id: await matchIdOf(host.page), invite: new URL(await link.inputValue()).pathname };
}

/** A second person takes the open seat through the invite. */
async function takeInvite(invite: string, size?: { width: number; height: number }): Promise<WatchedPage> {
  const guest = await open(invite, size);
  await guest.page.getByRole("button", { name: /Take a seat/ }).click();
  await guest.page.locator(".table-page[data-phase=playing]").waitFor();
  return guest;
}

describe("web app", () => {
  // Nobody is filled in from the queue: the gateway bot and the person queueing for Trust-and-Split
  // meet each other however slowly the page loads.
  serve();

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
  }, TEST_MS);

  it(
    "a person plays a whole Kuhn poker match against a built-in bot by clicking; the result is the stored one",
    async () => {
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
    },
    TEST_MS,
  );

  it(
    "shows retries only once an action was refused; a tampered action gets the server's message and the match goes on",
    async () => {
      const { page } = await open("/play/new/kuhn-poker?vs=always-call");
      const id = await matchIdOf(page);
      await nextTurn(page);
      const banner = page.locator(".turn-banner");
      expect(await banner.textContent()).toBe("Your turn");
      const button = page.locator(".fixed-actions button.action").first();
      await button.evaluate((b) => (b as HTMLButtonElement).value = JSON.stringify({ type: "raise", amount: 99 }));
      await button.click();
      const notice = page.locator("[data-notice]");
      await notice.waitFor();
      expect(await notice.textContent()).toMatch(/not a legal action/);
      expect(await banner.textContent()).toBe("Your turn · 1 retry left");
      await screenshot(page, "tampered-action");
      const stepsBefore = (await server.server.store.steps(id)).length;
      await playToEnd(page);
      expect((await server.server.store.steps(id)).length).toBeGreaterThan(stepsBefore);
      expect(await shownReturns(page)).toEqual(await storedReturns(id));
    },
    TEST_MS,
  );

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
    expect((await storedEnd(id)).statuses).toEqual(["DONE", "DONE"]);
    expect(await shownReturns(page)).toEqual(await storedReturns(id));
    // Nobody's moves were played for them: every human decision is the person's own.
    expect(await defaultedFor(id, 0)).toEqual([]);
  }, TEST_MS);

  it(
    "a closed tab reopened within the hold takes the seat back; a second tab takes it over from the first",
    async () => {
      const first = await open("/play/new/ipd?vs=tit-for-tat");
      const id = await matchIdOf(first.page);
      const seq = await nextTurn(first.page);
      await playAMove(first.page, 0);
      await nextTurn(first.page, seq!);

      // The same match in a second tab: the newest tab plays, the first says where its seat went.
      const second = await openTab(first, `/play/${id}`);
      expect(await nextTurn(second.page)).not.toBeNull();
      await first.page.locator('[data-seat-lost="elsewhere"]').waitFor();
      expect(await first.page.locator(".fixed-actions button.action").count()).toBe(0);
      await screenshot(first.page, "seat-taken-by-another-tab");

      // Both tabs closed at once, the match reopened from the browser's history: the seat comes back.
      await first.page.close();
      await second.page.close();
      await seatIs(id, 0, "away", (p) => !p.connected);
      const third = await openTab(first, `/play/${id}`);
      expect(await nextTurn(third.page)).not.toBeNull();
      await playToEnd(third.page);
      expect((await storedEnd(id)).statuses).toEqual(["DONE", "DONE"]);
      expect(await defaultedFor(id, 0)).toEqual([]);
      // The match over, the browser remembers only that its seat 0 ended (a reload shows the result): no credential of
      // the seat is left behind.
      const kept = await third.page.evaluate((key) => localStorage.getItem(key), `ludus.seat.${id}`);
      expect(Object.keys(JSON.parse(kept!)).sort()).toEqual(["ended", "savedAt", "seat"]);
      expect(JSON.parse(kept!)).toMatchObject({ ended: true, seat: 0 });
      expect(third.errors).toEqual([]);
    },
    TEST_MS,
  );

  it("a connection dropped in its first seconds reconnects by itself and the match goes on", async () => {
    const { page } = await open("/play/new/ipd?vs=tit-for-tat");
    const id = await matchIdOf(page);
    await nextTurn(page);
    await watchConnection(page);
    cutConnections(id);
    await connectionWentThrough(page, ["reconnecting", "connected"]);
    expect(await page.locator("[data-notice]").count()).toBe(0);
    expect(await nextTurn(page)).not.toBeNull();
    await playToEnd(page);
    expect((await storedEnd(id)).statuses).toEqual(["DONE", "DONE"]);
    expect(await defaultedFor(id, 0)).toEqual([]);
  }, TEST_MS);

  it("offline, the table says so, stops the clocks and takes no action; back online it plays on", async () => {
    const { page, context } = await open("/play/new/ipd?vs=tit-for-tat", PHONE);
    const id = await matchIdOf(page);
    await nextTurn(page);
    await context.setOffline(true);
    const banner = page.locator("[data-reconnecting]");
    await banner.waitFor();
    expect(await banner.textContent()).toMatch(/offline/);
    expect(await page.locator(".turn-banner").count()).toBe(1); // no "Your turn" beside it
    expect(await page.locator(".clock.running").count()).toBe(0);
    const cooperate = page.locator(".fixed-actions button.action").first();
    expect(await cooperate.isDisabled()).toBe(true);
    await page.keyboard.press("1");
    // The seat's clocks stand still while the hold counts down (the banner says how long the seat is held).
    const clocks = await page.locator(".seat-card .clock").allTextContents();
    const held = async () => Number(/for (\d+) s more/.exec((await banner.textContent()) ?? "")?.[1]);
    const heldAtFirst = await held();
    await until(
      "the seat's hold to count down two seconds",
      async () => (await held()) <= heldAtFirst - 2,
      PAGE_WAIT_MS,
    );
    expect(await page.locator(".seat-card .clock").allTextContents()).toEqual(clocks);
    await screenshot(page, "offline-phone");
    await noSidewaysScroll(page, "the offline table");
    expect((await server.server.store.steps(id)).filter((s) => s.seat === 0)).toEqual([]);

    await context.setOffline(false);
    expect(await nextTurn(page)).not.toBeNull();
    expect(await cooperate.isDisabled()).toBe(false);
    await playToEnd(page);
    expect((await storedEnd(id)).statuses).toEqual(["DONE", "DONE"]);
    expect(await defaultedFor(id, 0)).toEqual([]);
  }, TEST_MS);

  it("two people in a simultaneous game: a player who moved waits, and each sees when the other is away", async () => {
    const { host, id, invite } = await privateMatch("ipd");
    const guest = await takeInvite(invite);
    const hostName = await host.page.locator("#display-name").inputValue();
    const guestName = await guest.page.locator("#display-name").inputValue();
    const hostSeq = await nextTurn(host.page);
    await nextTurn(guest.page);

    await host.page.locator(".fixed-actions button.action").first().click();
    const waiting = host.page.locator(".turn-banner[data-moved=true]");
    await waiting.waitFor();
    expect(await waiting.textContent()).toBe(`Your move is in. Waiting for ${guestName}…`);
    const mine = host.page.locator(".seat-card.mine");
    await host.page.locator(".seat-card.mine:not(.to-act)").waitFor();
    expect(await mine.locator(".clock.running").count()).toBe(0);
    expect(await host.page.locator(".seat-card.to-act").getAttribute("data-seat")).toBe("1");
    expect(await host.page.locator(".seat-card.to-act .clock.running").count()).toBe(1);
    // The other player sees it too: the seat that moved is no longer to act, its clock stopped.
    await guest.page.locator('.seat-card[data-seat="0"]:not(.to-act)').waitFor();
    expect(await guest.page.locator('.seat-card[data-seat="0"] .clock.running').count()).toBe(0);
    await screenshot(host.page, "ipd-moved-waiting");

    // The guest closes the tab: the host sees them away while the server holds the seat.
    await guest.page.close();
    const guestCard = host.page.locator('.seat-card[data-seat="1"]');
    await host.page.locator('.seat-card[data-seat="1"][data-connected=false]').waitFor();
    expect(await guestCard.locator(".presence").textContent()).toBe(" · away · seat held");
    await screenshot(host.page, "ipd-partner-away");
    const back = await openTab(guest, `/play/${id}`);
    await host.page.locator('.seat-card[data-seat="1"][data-connected=true]').waitFor();
    expect(await guestCard.locator(".presence").count()).toBe(0);
    expect(await host.page.locator(".seat-card.mine .name").textContent()).toBe(hostName);

    await Promise.all([
      playToEnd(back.page),
      (async () => {
        await nextTurn(host.page, hostSeq!);
        await playToEnd(host.page);
      })(),
    ]);
    expect((await storedEnd(id)).statuses).toEqual(["DONE", "DONE"]);
    expect(await defaultedFor(id, 0)).toEqual([]);
    expect(await defaultedFor(id, 1)).toEqual([]);
  }, TEST_MS);

  it("a Trust-and-Split round with a chat message and a claim against a remote gateway bot", async () => {
    const heard: string[] = [];
    const bot = await Bot.connect({ url: server.wsUrl, token: await server.token("split-bot") });
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
    const person = (await storedEnd(id)).seats.findIndex((seat) => seat?.kind === "human");
    const mine = (await server.server.store.steps(id)).filter((step) => step.seat === person);
    expect(mine.some((s) => JSON.stringify(s.action).includes("Shall we split the coins evenly?"))).toBe(true);
    expect(mine.some((s) => (s.action as { take?: number[] } | null)?.take?.[0] === 7)).toBe(true);
    expect(await shownReturns(page)).toEqual(await storedReturns(id));
  }, TEST_MS);

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
  }, TEST_MS);

  it("two people play tic-tac-toe through an invite link; the moves read as a list", async () => {
    const { host, id, invite } = await privateMatch("tic-tac-toe");
    await screenshot(host.page, "invite-waiting");
    const guest = await takeInvite(invite);
    expect(await matchIdOf(guest.page)).toBe(id);
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
    // One entry per move, each its own line: number, mark, place and cell, in the order played.
    const moves = (await server.server.store.steps(id)).map((s) => (s.action as { cell: number }).cell);
    const items = await host.page.locator(".move-list li").allInnerTexts();
    expect(items).toHaveLength(moves.length);
    items.forEach((item, i) =>
      expect(item.replace(/\s+/g, " ")).toMatch(new RegExp(`^${i + 1}\\. [OX] .+ \\(${moves[i]}\\)$`))
    );
    const tops = await host.page.locator(".move-list li").evaluateAll((lis) =>
      lis.map((li) => li.getBoundingClientRect())
    );
    for (let i = 1; i < tops.length; i++) {
      const [a, b] = [tops[i - 1], tops[i]];
      expect(b.top >= a.bottom || b.left >= a.right, `move ${i + 1} runs into move ${i}`).toBe(true);
    }
  }, TEST_MS);

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
    await expect.poll(() => page.locator(".seat-view").count(), { timeout: PAGE_WAIT_MS }).toBe(0);
    await page.locator(".replay-viewer .leduc").waitFor();
    expect(page.url()).toContain("seat=0");
    await page.keyboard.press("End");
    await page.locator(".replay-viewer .result").waitFor();
    await screenshot(page, "replay-seat-end");
    const stored = await storedReturns(id);
    const finals = await page.locator(".replay-viewer .result [data-seat]").allTextContents();
    expect(finals.map((t) => Number(t.split(": ").at(-1)))).toEqual(stored);
    expect(errors).toEqual([]);
  }, TEST_MS);

  it(
    "the replays say why a match cannot be shown: still being played, unknown, refused, or the server unreachable",
    async () => {
      const player = await open("/play/new/kuhn-poker?vs=always-call");
      const id = await matchIdOf(player.page);
      await nextTurn(player.page);

      const { page, context } = await open("/replays?game=kuhn-poker", PHONE);
      const row = page.locator(`.replay-list tr[data-match="${id}"]`);
      await row.getByText("in play").waitFor();
      await row.locator("a").click();
      const refused = page.locator('.replay-refused[data-refused="match_live"]');
      await refused.waitFor();
      expect(await refused.locator("[role=alert]").textContent()).toMatch(/still being played/);
      await screenshot(page, "replay-live-refused-phone");
      await noSidewaysScroll(page, "a live match's replay");
      await refused.getByRole("link", { name: "Open the public view" }).click();
      await page.locator(`.replay-viewer[data-match="${id}"]`).waitFor();
      expect(await page.locator("[data-summary]").textContent()).toMatch(/still being played/);
      await screenshot(page, "replay-live-public-phone");
      await noSidewaysScroll(page, "a live match's public replay");

      await page.goto(`${server.url}/replays/no-such-match`);
      expect(await page.locator('.replay-refused[data-refused="unknown_match"] [role=alert]').textContent())
        .toMatch(/no match `no-such-match`/);
      await page.goto(`${server.url}/replays?game=no-such-game`);
      expect(await page.locator(".replays [role=alert]").textContent()).toMatch(/no game `no-such-game`/);

      // Offline, the list says the server cannot be reached instead of loading for ever.
      await context.setOffline(true);
      await page.getByRole("link", { name: "Replays" }).click();
      // Waits for the new alert: the previous page's (no such game) may still be on screen for a moment.
      await page.locator(".replays [role=alert]", { hasText: /could not be reached/ }).waitFor();
      await context.setOffline(false);
    },
    TEST_MS,
  );

  it("every registered game has a table a person can play to the end, at laptop and phone width", async () => {
    for (const game of games) {
      const phone = game.id === "holdem" || game.id === "trust-and-split";
      const { page, errors } = await open(`/play/new/${game.id}?vs=random`, phone ? PHONE : undefined);
      const id = await matchIdOf(page);
      await nextTurn(page);
      await screenshot(page, `table-${game.id}${phone ? "-phone" : ""}`);
      const board = await page.locator(".board-area").innerText();
      expect(board, `${game.id}'s table shows raw JSON`).not.toMatch(/[{[]"\w+":/);
      if (phone) await noSidewaysScroll(page, game.id);
      await playToEnd(page, 2000);
      await screenshot(page, `table-${game.id}-end${phone ? "-phone" : ""}`);
      expect(await shownReturns(page)).toEqual(await storedReturns(id));
      expect(errors, game.id).toEqual([]);
      await page.context().close();
    }
  }, 900_000);
});

describe("web app, when the server's hold on a seat runs out", () => {
  const HOLD_MS = 1500;
  serve({ conduct: { holdMs: HOLD_MS } });

  it(
    "a private match whose creator left before anyone came shows in the replays: list, pages, filter, viewer",
    async () => {
      const creator = "Ada Abandons";
      const { host, id } = await privateMatch("tic-tac-toe", creator);
      await host.page.close();
      const record = await storedEnd(id);
      expect(record).toMatchObject({ endReason: "aborted", steps: 0, returns: [0, 0] });
      expect(record.seats[1]).toBeNull();
      // Enough newer matches that it is on the second page of the list (newest first, 50 a page).
      let last = "";
      for (let i = 0; i < 55; i++) {
        last = server.server.matches.create({
          game: "tic-tac-toe",
          seats: [{ strategy: "random" }, { strategy: "random" }],
        }).id;
      }
      await storedEnd(last);

      const { page, errors } = await open("/replays");
      await page.locator(".filters select").selectOption("tic-tac-toe");
      await page.waitForURL(/game=tic-tac-toe/);
      const rows = page.locator(".replay-list tbody tr");
      await expect.poll(() => rows.count(), { timeout: PAGE_WAIT_MS }).toBe(50);
      const row = page.locator(`.replay-list tr[data-match="${id}"]`);
      expect(await row.count()).toBe(0);
      await page.getByRole("button", { name: "More matches" }).click();
      await row.waitFor();
      expect(await rows.count()).toBeGreaterThan(55);
      expect(await row.innerText()).toContain(`${creator} · (open seat)`);
      expect(await row.locator(".tag.ending").textContent()).toBe(`aborted before any move: ${creator} left`);
      await screenshot(page, "replays-aborted-second-page");

      await page.locator(".filters input").fill(creator);
      await page.getByRole("button", { name: "Filter" }).click();
      await page.waitForURL(/participant=/);
      await expect.poll(() => rows.count(), { timeout: PAGE_WAIT_MS }).toBe(1);
      expect(await rows.first().getAttribute("data-match")).toBe(id);

      await row.getByRole("link").click();
      const viewer = page.locator(`.replay-viewer[data-match="${id}"]`);
      await viewer.waitFor();
      expect(await viewer.locator("[data-summary]").textContent()).toMatch(
        new RegExp(`^${creator} · \\(open seat\\) — final 0 : 0 — aborted before any move: ${creator} left$`),
      );
      expect(await viewer.locator(".turn-counter").textContent()).toBe("No turn was played");
      await screenshot(page, "replay-aborted");
      // Nobody sat in seat 1, yet its view of the unplayed board can be shown.
      await viewer.locator(".replay-controls select").selectOption("1");
      await expect.poll(() => viewer.locator(".seat-view").count(), { timeout: PAGE_WAIT_MS }).toBe(0);
      expect(await viewer.locator(".tic-tac-toe .status-line").textContent()).toBe(`${creator}'s move (O).`);
      expect(page.url()).toContain("seat=1");
      expect(errors).toEqual([]);

      const phone = await open(`/replays/${id}`, PHONE);
      await phone.page.locator(".replay-viewer").waitFor();
      await screenshot(phone.page, "replay-aborted-phone");
      await noSidewaysScroll(phone.page, "an aborted match's replay");
      await phone.page.goto(`${server.url}/replays?participant=${encodeURIComponent(creator)}`);
      await phone.page.locator(`.replay-list tr[data-match="${id}"]`).waitFor();
      await screenshot(phone.page, "replays-phone");
      await noSidewaysScroll(phone.page, "the replays list");
    },
    TEST_MS,
  );

  it("a tab reopened after the hold, or a page back online after it, says what became of its seat", async () => {
    const { host, id, invite } = await privateMatch("ipd");
    const guest = await takeInvite(invite, PHONE);
    await nextTurn(host.page);

    // The guest's tab closes; the host plays on, so the server plays the guest's seat by its default moves.
    await guest.page.close();
    await seatIs(id, 1, "released", released);
    const reopened = await openTab(guest, `/play/${id}`);
    const gone = reopened.page.locator('[data-seat-lost="released"]');
    await gone.waitFor();
    expect(await gone.textContent()).toMatch(/Your seat was released/);
    await expect.poll(() => gone.textContent(), { timeout: PAGE_WAIT_MS })
      .toMatch(/The match goes on: the server plays your seat with its default moves/);
    await reopened.page.getByRole("link", { name: "Watch the match" }).waitFor();
    await screenshot(reopened.page, "seat-released-reopened-phone");
    await noSidewaysScroll(reopened.page, "a released seat's page");

    // The host goes offline past the hold too: with nobody left to play, the server aborts the match.
    await host.context.setOffline(true);
    await seatIs(id, 0, "released", released);
    await host.context.setOffline(false);
    const lost = host.page.locator('[data-seat-lost="released"]');
    await lost.waitFor();
    await expect.poll(() => lost.textContent(), { timeout: PAGE_WAIT_MS }).toMatch(/The match was aborted/);
    expect(await host.page.locator(".fixed-actions button.action").count()).toBe(0);
    await screenshot(host.page, "seat-released");
    const record = await storedEnd(id);
    expect(record).toMatchObject({ endReason: "aborted", statuses: ["DISCONNECTED", "DISCONNECTED"] });
    const guestDefaults = await defaultedFor(id, 1);
    expect(guestDefaults.length).toBeGreaterThan(0);
    expect(guestDefaults.every((why) => why === "released")).toBe(true);
  }, TEST_MS);

  it("a partner who left shows as left while their seat plays on", async () => {
    const { host, id, invite } = await privateMatch("ipd");
    const guest = await takeInvite(invite);
    await nextTurn(host.page);
    await guest.page.close();
    const left = host.page.locator('.seat-card[data-seat="1"][data-status="DISCONNECTED"]');
    await left.waitFor();
    expect(await left.locator(".presence").textContent()).toBe(" · left · plays default moves");
    await screenshot(host.page, "ipd-partner-left");
    await playToEnd(host.page);
    expect((await storedEnd(id)).statuses).toEqual(["DONE", "DISCONNECTED"]);
  }, TEST_MS);
});

describe("web app, with a registered Kuhn poker policy", () => {
  serve();
  const NAME = "kuhn-mlp";

  /** Registers the next version of NAME as an admin does, over HTTP; returns its id. */
  async function register(seed: number): Promise<string> {
    const res = await fetch(`${server.url}/policies?name=${NAME}&game=kuhn-poker`, {
      method: "POST",
      headers: { authorization: `Bearer ${(await server.token(`admin-${seed}`, "admin"))}` },
      body: mlpModel(11, 16, 2, seed) as Uint8Array<ArrayBuffer>,
    });
    expect(res.status, await res.clone().text()).toBe(201);
    return ((await res.json()) as { id: string }).id;
  }

  /** The policies a game's card offers once it has asked the server for them. */
  async function offered(page: Page, game: string): Promise<string[]> {
    const select = page.locator(`article[data-game="${game}"] select[id$=-vs]`);
    await page.locator(`article[data-game="${game}"] select[data-policies=listed]`).waitFor();
    return await select.locator("option[value^='policy:']").allTextContents();
  }

  it(
    "a person picks the policy as Kuhn's opponent in the lobby and plays it to the end; the record names its version",
    async () => {
      const policyId = await register(7);
      const { page, errors } = await open("/");
      // Offered for its own game only: by version, and as the name's latest.
      expect(await offered(page, "kuhn-poker")).toEqual([`${NAME} (latest)`, `${NAME}@1 (policy)`]);
      expect(await offered(page, "ipd")).toEqual([]);
      const card = page.locator('article[data-game="kuhn-poker"]');
      await card.locator("select[id$=-vs]").selectOption({ label: `${NAME}@1 (policy)` });
      const play = card.locator("a[data-action=vs-builtin]");
      expect(await play.textContent()).toBe(`Play vs ${NAME}@1 (policy)`);
      await screenshot(page, "lobby-policy-opponent");
      await play.click();
      const id = await matchIdOf(page);

      // The policy's seat: its exact version by name, its kind, and no clock (the server plays it).
      const seat = page.locator('.seat-card[data-seat="1"]');
      expect(await seat.locator(".name").textContent()).toBe(`policy:${NAME}@1`);
      expect(await seat.locator(".meta").textContent()).toMatch(/^policy/);
      expect(await seat.locator(".clock").textContent()).toBe("");
      await nextTurn(page);
      await screenshot(page, "kuhn-vs-policy");
      expect(await playToEnd(page)).toBeGreaterThan(0);

      const record = await storedEnd(id);
      expect(record.seats[0]).toMatchObject({ kind: "human" });
      expect(record.seats[1]).toMatchObject({ kind: "policy", name: `policy:${NAME}@1`, policyId, policyVersion: 1 });
      expect(record.statuses).toEqual(["DONE", "DONE"]);
      const steps = await server.server.store.steps(id);
      // The network made the policy seat's moves: none was played for it by default.
      const policyMoves = steps.filter((s) => s.seat === 1);
      expect(policyMoves.length).toBeGreaterThan(0);
      expect(policyMoves.filter((s) => s.defaulted !== null)).toEqual([]);
      expect(verifyMatch(record, steps)).toMatchObject({ ok: true, stepsChecked: steps.length });
      expect(await shownReturns(page)).toEqual(record.returns);
      expect(errors).toEqual([]);
    },
    TEST_MS,
  );

  it(
    "the latest entry seats the newest version; a lobby that cannot list policies still offers the built-ins",
    async () => {
      const policyId = await register(8);
      const { page } = await open("/");
      expect(await offered(page, "kuhn-poker")).toEqual([
        `${NAME} (latest)`,
        `${NAME}@2 (policy)`,
        `${NAME}@1 (policy)`,
      ]);
      const card = page.locator('article[data-game="kuhn-poker"]');
      await card.locator("select[id$=-vs]").selectOption({ label: `${NAME} (latest)` });
      await card.locator("a[data-action=vs-builtin]").click();
      const id = await matchIdOf(page);
      expect(await page.locator('.seat-card[data-seat="1"] .name').textContent()).toBe(`policy:${NAME}@2`);
      await playToEnd(page);
      expect((await storedEnd(id)).seats[1]).toMatchObject({ name: `policy:${NAME}@2`, policyId, policyVersion: 2 });

      // The registry does not answer: the card says so and every built-in strategy is still there to play.
      const failing = await browser.open();
      await failing.page.route((url) => url.pathname === "/policies", (route) => route.abort());
      await failing.page.goto(`${server.url}/`);
      const kuhn = failing.page.locator('article[data-game="kuhn-poker"]');
      await kuhn.locator("select[data-policies=unlisted]").waitFor();
      expect(await kuhn.locator(".policy-note").textContent()).toBe("Policies could not be listed.");
      expect(await kuhn.locator("select[id$=-vs] option").count()).toBe(strategiesFor("kuhn-poker").length);
      await screenshot(failing.page, "lobby-policies-unlisted");
      await kuhn.locator("select[id$=-vs]").selectOption("always-call");
      await kuhn.locator("a[data-action=vs-builtin]").click();
      const builtin = await matchIdOf(failing.page);
      expect(await failing.page.locator('.seat-card[data-seat="1"] .name').textContent()).toBe("always-call");
      await playToEnd(failing.page);
      expect((await storedEnd(builtin)).seats[1]).toMatchObject({ kind: "builtin", name: "always-call" });
    },
    TEST_MS,
  );
});
