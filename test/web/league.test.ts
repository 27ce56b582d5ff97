/// <reference lib="dom" />
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { checkTournament, runTournament } from "../../server/league/tournament/run.ts";
import { checkEvolution, runEvolution } from "../../server/league/evolution.ts";
import { PAGE_WAIT_MS, screenshot, useBrowser, type WatchedPage } from "../support/browser.ts";
import { useTestServer } from "../support/server.ts";

/**
 * The league's pages in a real browser against a real server: a tournament played on it, its standings (live while
 * it runs, then final), the game's leaderboard, and a player's rating chart drawn by uPlot. Screenshots go to
 * artifacts/web/.
 */

const TEST_MS = 240_000;
const browser = useBrowser();
const server = useTestServer();

async function open(path: string, size?: { width: number; height: number }): Promise<WatchedPage> {
  const watched = await browser.open(size);
  await watched.page.goto(`${server.url}${path}`);
  return watched;
}

/** The x ticks a chart drew (its box lists them: the canvas holds no text). */
async function xTicks(page: Page, chart: string): Promise<number[]> {
  const box = page.locator(`${chart}[data-x-ticks]`);
  await box.waitFor();
  return (await box.getAttribute("data-x-ticks"))!.split(" ").map(Number);
}

const tournament = async (players: string[], matches: number, concurrency = 64) => {
  const { store, matches: live } = server.server;
  const t = await store.league.createTournament(
    checkTournament({ game: "kuhn-poker", format: "round-robin", players, matches, seed: "web" }, live),
  );
  return { t, done: runTournament(store, live, t, { concurrency }) };
};

describe("the league's pages", () => {
  it("show a tournament's standings, the leaderboard and a player's rating chart", async () => {
    const { t, done } = await tournament(["nash", "always-call", "always-raise", "random"], 200);
    await done;

    const { page, errors, requests } = await open("/league?game=kuhn-poker");
    const rows = page.locator("table.leaderboard tbody tr");
    await rows.nth(3).waitFor();
    expect(await rows.count()).toBe(4);
    expect(await page.locator("table.leaderboard tr.provisional").count()).toBe(0); // 600 matches each
    expect(await rows.first().getAttribute("data-player")).toBe("builtin:nash");
    // Both scales named and explained where they are shown, the online one with its own rank and what ± means.
    const scales = page.locator(".league dl.scales");
    expect(await scales.locator("dt").allInnerTexts()).toEqual(["Rating", "Online"]);
    expect(await scales.locator("dd").nth(1).innerText()).toMatch(/OpenSkill's μ ± 3σ \(± 3σ spans about 99\.7 %/);
    expect(await page.locator("table.leaderboard th").last().innerText()).toBe("Online (rank, μ ± 3σ)");
    const onlineRanks = await rows.locator(".online-rank").allInnerTexts();
    expect(onlineRanks.toSorted()).toEqual(["#1", "#2", "#3", "#4"]);
    await screenshot(page, "league-leaderboard");
    await page.locator("select").first().selectOption("pooled");
    // The game's rows stay until the pooled board arrives: wait for the pooled board's own words.
    await page.locator(".league", { hasText: "each game counting alike" }).waitFor();
    await page.locator("table.leaderboard tbody tr").nth(3).waitFor();
    await page.goBack();
    await rows.nth(3).waitFor();

    await page.locator(`tr[data-tournament="${t.id}"] a`).click();
    const standings = page.locator("table.standings tbody tr");
    await standings.nth(3).waitFor();
    expect(await page.locator(".tournament").getAttribute("data-live")).toBe("false");
    expect(await standings.first().getAttribute("data-player")).toBe("nash");
    // Titled by what it is; the id is there, but second.
    const heading = await page.locator(".tournament h1").innerText();
    expect(heading).toMatch(/^Kuhn poker round-robin · 4 players · \d+ \w+ \d{4}, \d\d:\d\d$/);
    expect(await page.locator(".tournament > p").first().innerText()).toContain(`tournament ${t.id}`);
    expect(await page.locator(".progress-line").innerText()).toContain("1200 of 1200 matches");
    expect(await page.locator("table.payoff-matrix tbody tr").count()).toBe(4);
    expect(await page.locator(".interval-bar").count()).toBe(4);
    await screenshot(page, "league-tournament");

    await standings.first().locator("a").click();
    await page.locator(".player[data-player='builtin:nash'] .rating-chart canvas").waitFor();
    expect(await page.locator(".player").innerText()).toContain("600 rated match(es)");
    await screenshot(page, "league-player");

    expect(errors).toEqual([]);
    expect(requests.filter((url) => !url.startsWith(server.url))).toEqual([]);
  }, TEST_MS);

  it("numbers a player's chart by the player's own matches when it shows only the last 2,000", async () => {
    const { done } = await tournament(["always-fold", "always-call"], 2100);
    await done;
    const { page, errors } = await open("/league/players/builtin%3Aalways-fold?game=kuhn-poker");
    const caption = page.locator(".player .chart-caption");
    await caption.waitFor();
    expect(await caption.innerText()).toMatch(
      /^2100 rated match\(es\) of Kuhn poker \(the chart shows the last 2000\)/,
    );
    // Its x axis spans matches 101 to 2,100, not 1 to 2,000.
    const chart = page.locator(".player-chart[role=img]");
    expect(await chart.getAttribute("aria-label")).toMatch(/, rated match 101 to 2100$/);
    const ticks = await xTicks(page, ".player-chart");
    for (const tick of ticks) expect(tick >= 101 && tick <= 2100 && Number.isInteger(tick), `tick ${tick}`).toBe(true);
    expect(errors).toEqual([]);
  }, TEST_MS);

  it("follows a tournament live until it ends, and says so when one does not exist", async () => {
    // One match at a time: the page is open while it plays.
    const { t, done } = await tournament(["nash", "random"], 2000, 1);
    const { page, errors } = await open(`/league/tournaments/${t.id}`);
    await page.locator(".tournament[data-live='true']").waitFor();
    await screenshot(page, "league-tournament-live");
    await done;
    await page.locator(".tournament[data-live='false']").waitFor({ timeout: PAGE_WAIT_MS });
    expect(await page.locator(".progress-line").innerText()).toContain("2000 of 2000 matches");
    expect(errors).toEqual([]);

    const missing = await open("/league/tournaments/t_nothere");
    await missing.page.locator("[role=alert]").waitFor();
    expect(await missing.page.locator("[role=alert]").innerText()).toContain("no tournament `t_nothere`");
  }, TEST_MS);

  it("draws a Donor Game evolution's curve, generation by generation", async () => {
    const { store, matches } = server.server;
    const e = await store.league.createEvolution(checkEvolution({ seeds: 2, generations: 10, seed: "web" }, matches));
    await runEvolution(store, matches, e);
    const { page, errors } = await open("/league");
    await page.locator(`tr[data-evolution="${e.id}"] a`).click();
    await page.locator(".evolution[data-live='false'] .evolution-chart canvas").waitFor();
    expect(await page.locator("table.evolution-table tbody tr").count()).toBe(20);
    expect(await page.locator(".evolution h1").innerText()).toMatch(
      /^Donor Game evolution · 10 generations × 2 run\(s\) · \d+ \w+ \d{4}, \d\d:\d\d$/,
    );
    expect(await page.locator(".evolution > p").first().innerText()).toContain(`evolution ${e.id}`);
    await screenshot(page, "league-evolution");
    expect(errors).toEqual([]);
    // Generations are counted: every tick a whole one, however wide the chart.
    for (const width of [1280, 390]) {
      const { page } = await open(`/league/evolutions/${e.id}`, { width, height: 844 });
      const ticks = await xTicks(page, ".evolution-chart");
      expect(ticks.length, `${width} px`).toBeGreaterThanOrEqual(2);
      for (const tick of ticks) expect(Number.isInteger(tick), `tick ${tick} at ${width} px`).toBe(true);
    }
  }, TEST_MS);

  it("lists everyone who has played, and shows a player's details, ratings and latest matches", async () => {
    const { done } = await tournament(["nash", "always-call"], 20);
    await done;
    await server.token("web-bot"); // a token makes its player before it ever plays
    const { page, errors, requests } = await open("/league");
    await page.getByRole("link", { name: "Everyone who has played" }).click();
    const rows = page.locator("table.player-list tbody tr");
    await page.locator("tr[data-player='builtin:nash']").waitFor();
    // The evolution's mutants and the unused token have no rated match: left out until asked for.
    const rated = await rows.evaluateAll((trs) => trs.map((tr) => Number(tr.children[2].textContent)));
    for (const n of rated) expect(n).toBeGreaterThan(0);
    expect(await page.locator("tr[data-player='bot:web-bot']").count()).toBe(0);
    await screenshot(page, "league-players");
    await page.getByLabel("Also players without a rated match").check();
    await page.waitForURL(/all=1/);
    await page.locator("tr[data-player='bot:web-bot']").waitFor();
    expect(await page.locator("tr[data-player^='builtin:donate:']").count()).toBeGreaterThan(0);
    await page.locator("select").first().selectOption("builtin");
    await page.waitForURL(/kind=builtin/);
    await page.locator("tr[data-player='bot:web-bot']").waitFor({ state: "detached" });
    for (const kind of await rows.locator(".tag").allInnerTexts()) expect(kind).toBe("builtin");
    await page.locator("input[type=search]").fill("CALL");
    await page.getByRole("button", { name: "Find" }).click();
    await page.locator("tr[data-player='builtin:nash']").waitFor({ state: "detached" });
    expect(await rows.count()).toBe(1);

    await rows.first().locator("a").click();
    const player = page.locator(".player[data-player='builtin:always-call']");
    await player.locator(".rating-chart canvas").waitFor();
    expect(await player.locator(".player-details").innerText()).toMatch(
      /strategy always-call · first seen .* rated match/,
    );
    expect(await player.locator("table.player-ratings tbody tr").first().innerText()).toContain("Kuhn poker");
    await player.locator(".recent-matches li").nth(9).waitFor();
    expect(await player.locator(".recent-matches li").count()).toBe(10);
    await screenshot(page, "league-player-matches");
    await player.locator("a.all-matches").click();
    await page.waitForURL(/\/replays\?player=builtin%3Aalways-call/);
    await page.locator(".replay-list tbody tr").nth(10).waitFor(); // more than the player's page lists
    expect(await page.locator(".player-filter").innerText()).toContain("builtin:always-call");
    expect(errors).toEqual([]);
    expect(requests.filter((url) => !url.startsWith(server.url))).toEqual([]);

    const unknown = await open("/league/players/bot%3Anobody");
    await unknown.page.locator("[role=alert]").waitFor();
    expect(await unknown.page.locator("[role=alert]").innerText()).toContain("no player `bot:nobody`");
  }, TEST_MS);

  it("lists a person's own matches from the replays page", async () => {
    const { page } = await open("/replays");
    const me = await page.locator("#display-name").inputValue();
    // A match this person played, with a bot: a seat of its name.
    const match = server.server.matches.create({
      game: "kuhn-poker",
      seats: [{ kind: "human", name: me }, { strategy: "random" }],
    });
    await page.getByRole("button", { name: "My matches" }).click();
    await page.waitForURL(new RegExp(`participant=${encodeURIComponent(me)}`));
    await page.locator(`.replay-list tr[data-match="${match.id}"]`).waitFor();
    expect(await page.locator(".replay-list tbody tr").count()).toBe(1);
    expect(await page.getByRole("button", { name: "My matches" }).getAttribute("aria-pressed")).toBe("true");
  }, TEST_MS);

  it("fits a phone's width", async () => {
    const { t, done } = await tournament(["nash", "always-raise", "random"], 20);
    await done;
    const pages = {
      board: "/league?game=kuhn-poker",
      tournament: `/league/tournaments/${t.id}`,
      players: "/league/players",
    };
    for (const [name, path] of Object.entries(pages)) {
      const { page } = await open(path, { width: 390, height: 844 });
      await page.locator("table tbody tr").first().waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
      expect(overflow, `${path} scrolls sideways at phone width`).toBeLessThanOrEqual(0);
      await screenshot(page, `league-phone-${name}`);
      if (name === "board") {
        // Every column inside the screen: none hidden in the table's own sideways scroll.
        const outside = await page.locator("table.leaderboard th").evaluateAll((ths) =>
          ths.filter((th) => th.getBoundingClientRect().right > innerWidth).map((th) => th.textContent)
        );
        expect(outside, "columns beyond the screen's edge").toEqual([]);
      }
    }
  }, TEST_MS);
});
