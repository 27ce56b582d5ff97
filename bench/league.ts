/**
 * The league's capacity: rated matches a second through a tournament, and the batch refit of a large board.
 *
 * 1. A Kuhn round robin of built-ins run by the tournament runner (the same path as `ludus tournament`): every
 *    match recorded in the store, counted once durable, and rated online in its own transaction. Baseline, same
 *    run: the same matches played by the headless simulator (no store, no rating) — `vsSimulator` is the share of
 *    the engine's own speed a rated, durable match keeps.
 * 1b. The league scheduler keeping 64 matches of 15 Kuhn built-ins running (PFSP, every match rated), the same
 *    baseline.
 * 2. Batch Bradley–Terry for 100 players × 100,000 matches (synthetic results of known strengths): the fit, and the
 *    fit with 200 bootstrap resamples; with the largest error against the strengths that generated the results.
 * 3. Duplicate deals against plain matches: a hold'em gauntlet of the same players and number of matches, both ways,
 *    and the mean width of the players' rating intervals (`duplicateWidthRatio` < 1: duplicate is tighter).
 *
 *   deno task bench:league [--matches 600] [--database-url URL]
 * Prints one JSON object on stdout.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { configure } from "../games/core/config.ts";
import { Rng } from "../games/core/rng.ts";
import { getGame } from "../games/registry.ts";
import { ReplayStore } from "../db/store.ts";
import { createStrategy } from "../policies/baselines/index.ts";
import { playMatch } from "../policies/simulate.ts";
import { LiveMatches } from "../server/match/live-matches.ts";
import { OnlineRatings } from "../server/league/online-ratings.ts";
import { bootstrapBradleyTerry, type Comparison, fitBradleyTerry } from "../server/league/ratings/bradley-terry.ts";
import { checkTournament, runTournament } from "../server/league/tournament/run.ts";
import { LeagueScheduler } from "../server/league/scheduler.ts";
import { fixedPairings, slotsOf } from "../server/league/tournament/schedule.ts";
import type { Standings } from "../server/league/tournament/standings.ts";
import { report } from "./report.ts";
import { round3 } from "./selfplay/histogram.ts";

const { values } = parseArgs({
  options: {
    matches: { type: "string", default: "600" },
    "database-url": { type: "string" },
  },
});
const MATCHES = Number(values.matches);
if (!(Number.isInteger(MATCHES) && MATCHES >= 2 && MATCHES % 2 === 0)) {
  throw new Error(`--matches must be an even whole number ≥ 2, got ${values.matches}`);
}
const log = (text: string) => console.error(`bench:league: ${text}`);
const dataDir = mkdtempSync(join(tmpdir(), "ludus-bench-league-"));
let store: ReplayStore | undefined;

const KUHN_PLAYERS = ["nash", "always-call", "always-raise", "random"];

/** The same matches the tournament plays (its seeds and seatings), through the simulator alone. */
function simulatorRate(standings: Standings): number {
  const game = getGame("kuhn-poker");
  const { config } = configure(game, {}, undefined);
  const t = standings.tournament;
  const started = performance.now();
  let played = 0;
  for (const slot of slotsOf(fixedPairings("round-robin", t.players.length), { ...t, round: 0, firstSlot: 0 })) {
    playMatch(game, config, slot.seats.map((p) => createStrategy(game.id, t.players[p])), slot.seed);
    played++;
  }
  return played / ((performance.now() - started) / 1000);
}

async function tournament(live: LiveMatches, request: Parameters<typeof checkTournament>[0]) {
  const t = await store!.league.createTournament(checkTournament(request, live));
  const started = performance.now();
  const standings = await runTournament(store!, live, t);
  return { standings, seconds: (performance.now() - started) / 1000 };
}

function refit() {
  const players = 100, matches = 100_000;
  const rng = new Rng(11, 0);
  const theta = Array.from({ length: players }, () => rng.uniform(-2, 2));
  const comparisons: Comparison[] = Array.from({ length: matches }, () => {
    const a = rng.int(players);
    const b = (a + 1 + rng.int(players - 1)) % players;
    return { a, b, score: rng.float() < 1 / (1 + Math.exp(theta[b] - theta[a])) ? 1 : 0 };
  });
  const mean = theta.reduce((s, t) => s + t, 0) / players;
  let started = performance.now();
  const fitted = fitBradleyTerry(players, comparisons, { prior: 0.01 });
  const fitMs = performance.now() - started;
  started = performance.now();
  const boot = bootstrapBradleyTerry(players, comparisons.map((c) => [c]), { prior: 0.01, samples: 200 });
  const bootstrapMs = performance.now() - started;
  const covered = theta.filter((t, i) => t - mean >= boot.low[i] && t - mean <= boot.high[i]).length / players;
  return {
    players,
    matches,
    fitMs: round3(fitMs),
    bootstrap200Ms: round3(bootstrapMs),
    maxErrorVsTruth: round3(Math.max(...fitted.map((t, i) => Math.abs(t - (theta[i] - mean))))),
    intervalCoverage: round3(covered),
  };
}

async function bench() {
  store = await ReplayStore.open({ dataDir, databaseUrl: values["database-url"] });
  const live = new LiveMatches({ store, lingerMs: 0, ratings: new OnlineRatings(store) });
  log(`Kuhn round robin, ${MATCHES} matches a pairing, on ${store.backend}`);
  const kuhn = await tournament(live, {
    game: "kuhn-poker",
    format: "round-robin",
    players: KUHN_PLAYERS,
    matches: MATCHES,
    seed: "bench",
  });
  const rated = kuhn.standings.slots.completed / kuhn.seconds;
  const simulated = simulatorRate(kuhn.standings);
  log("the league scheduler, 15 Kuhn built-ins");
  const population = [
    "random",
    "always-call",
    "always-raise",
    "always-fold",
    ...Array.from({ length: 11 }, (_, i) => `nash:${(i / 30).toFixed(4)}`),
  ];
  const scheduled = 20 * MATCHES;
  const league = new LeagueScheduler(live, {
    game: "kuhn-poker",
    members: population.map((player) => ({ player, role: "main" as const })),
    live: 64,
    matches: scheduled,
    seed: "bench",
  });
  const started = performance.now();
  league.start();
  await league.finished();
  await live.ratings!.flush();
  const schedulerRate = league.rated / ((performance.now() - started) / 1000);
  log("batch refit, 100 players × 100k matches");
  const board = refit();
  log("hold'em gauntlet, plain and duplicate");
  const gauntlet = (duplicate: boolean) =>
    tournament(live, {
      game: "holdem",
      format: "gauntlet",
      duplicate,
      players: ["hand-strength", "random", "always-call", "always-raise"],
      matches: MATCHES,
      seed: "bench",
    });
  const width = (s: Standings) => s.standings.reduce((w, r) => w + r.ci[1] - r.ci[0], 0) / s.standings.length;
  const plain = await gauntlet(false);
  const duplicate = await gauntlet(true);
  return {
    bench: "league",
    store: store.backend,
    deno: Deno.version.deno,
    cores: navigator.hardwareConcurrency,
    tournament: {
      game: "kuhn-poker",
      matches: kuhn.standings.slots.completed,
      ratedMatchesPerSecond: round3(rated),
      simulatorMatchesPerSecond: round3(simulated),
      vsSimulator: round3(rated / simulated),
      first: kuhn.standings.standings[0].player,
    },
    scheduler: {
      game: "kuhn-poker",
      members: population.length,
      matches: league.ended,
      ratedMatchesPerSecond: round3(schedulerRate),
      vsSimulator: round3(schedulerRate / simulated),
    },
    refit: board,
    duplicate: {
      game: "holdem",
      matchesEach: plain.standings.slots.completed,
      plainMeanIntervalWidth: round3(width(plain.standings)),
      duplicateMeanIntervalWidth: round3(width(duplicate.standings)),
      duplicateWidthRatio: round3(width(duplicate.standings) / width(plain.standings)),
    },
  };
}

await report(bench, async () => {
  await store?.close();
  rmSync(dataDir, { recursive: true, force: true });
});
