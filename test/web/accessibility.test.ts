/// <reference lib="dom" />
import { beforeAll, describe, expect, it } from "vitest";
import { checkTournament, runTournament } from "../../server/league/tournament/run.ts";
import { checkEvolution, runEvolution } from "../../server/league/evolution.ts";
import { seriousViolations, smallTargets } from "../support/accessibility.ts";
import { screenshot, useBrowser } from "../support/browser.ts";
import { useTestServer } from "../support/server.ts";

/**
 * Every page of the web app, at a phone's and a laptop's width, as axe-core judges it (no serious or critical
 * violation) and as a thumb meets it: every target at least 24 × 24 px, WCAG 2.2's target size (minimum), links
 * inside a sentence excepted as it allows. 24 px rather than 44 everywhere: the league's and replays' lists would
 * double in length at 44 px a row; the controls a person presses turn after turn are 44 px on a phone (the Donor
 * Game's test checks them).
 */

const TEST_MS = 240_000;
const SIZES = { phone: { width: 390, height: 844 }, laptop: { width: 1280, height: 860 } };
const browser = useBrowser();
const server = useTestServer();
/** Each page's path, and what shows it has drawn what it fetched. */
let pages: Record<string, { path: string; ready: string }>;

beforeAll(async () => {
  const { store, matches } = server.server;
  const t = await store.league.createTournament(
    checkTournament(
      { game: "kuhn-poker", format: "round-robin", players: ["nash", "random"], matches: 20, seed: "a" },
      matches,
    ),
  );
  await runTournament(store, matches, t, { concurrency: 8 });
  const e = await store.league.createEvolution(checkEvolution({ seeds: 1, generations: 3, seed: "a" }, matches));
  await runEvolution(store, matches, e);
  const [stored] = await store.matches({ game: "kuhn-poker" }, 1);
  pages = {
    lobby: { path: "/", ready: ".game-card select[data-policies='listed']" },
    table: { path: "/play/new/donor-game?vs=reciprocator", ready: ".action-bar button.action-donate" },
    board: { path: "/league?game=kuhn-poker", ready: "table.leaderboard tbody tr" },
    pooled: { path: "/league", ready: "table.evolution-list tbody tr" },
    tournament: { path: `/league/tournaments/${t.id}`, ready: "table.payoff-matrix tbody tr" },
    evolution: { path: `/league/evolutions/${e.id}`, ready: ".evolution-chart canvas" },
    players: { path: "/league/players", ready: "table.player-list tbody tr" },
    player: { path: "/league/players/builtin%3Anash", ready: ".recent-matches li" },
    replays: { path: "/replays", ready: ".replay-list tbody tr" },
    replay: { path: `/replays/${stored.id}`, ready: ".replay-controls" },
  };
}, 180_000);

describe("every page", () => {
  for (const [size, viewport] of Object.entries(SIZES)) {
    it(`has no serious accessibility violation and no target under 24 px (${size})`, async () => {
      const found: Record<string, { violations: string[]; small: string[] }> = {};
      for (const [name, { path, ready }] of Object.entries(pages)) {
        const watched = await browser.open(viewport);
        await watched.page.goto(`${server.url}${path}`);
        await watched.page.locator(ready).first().waitFor();
        found[name] = {
          violations: await seriousViolations(watched.page),
          small: await smallTargets(watched.page, 24),
        };
        if (found[name].violations.length || found[name].small.length) {
          await screenshot(watched.page, `a11y-${name}-${size}`);
        }
        expect(watched.errors, name).toEqual([]);
      }
      expect(found).toEqual(
        Object.fromEntries(Object.keys(pages).map((name) => [name, { violations: [], small: [] }])),
      );
    }, TEST_MS);
  }
});
