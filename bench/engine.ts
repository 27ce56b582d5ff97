/**
 * Engine throughput: how fast each game runs under random strategies on one core, in-process
 * (policies/simulate.ts) and through the CLI (`ludus simulate --json` in a fresh process); and, for Kuhn
 * and Leduc poker, hands per second through the Episode with every decision's tensor and mask built.
 * The same-run baseline is a bare loop per game that does the game's arithmetic on plain arrays
 * with the same RNG and no game contract; `ratio` = engine / bare loop.
 *
 *   deno task bench [--seconds 2] [--cli-matches 20000]
 * Prints one JSON object on stdout.
 */
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";
import type { Action } from "../games/core/action.ts";
import { configure } from "../games/core/config.ts";
import { Episode } from "../games/core/episode.ts";
import { shapeSize } from "../games/core/numeric.ts";
import { Rng } from "../games/core/rng.ts";
import { getGame } from "../games/registry.ts";
import { createStrategy } from "../policies/baselines/index.ts";
import { matchSeed, playMatch } from "../policies/simulate.ts";
import { rate } from "./rate.ts";

const { values } = parseArgs({
  options: { seconds: { type: "string", default: "2" }, "cli-matches": { type: "string", default: "20000" } },
});
const SECONDS = Number(values.seconds);
const CLI_MATCHES = Number(values["cli-matches"]);

interface Case {
  game: string;
  /** What one unit of work is, e.g. "moves". */
  unit: string;
  /** Units of work in one match, given its outcome. */
  units(outcome: { steps: number; actions: number }): number;
  /** The bare loop: plays `matches` matches' worth of the same work; returns the units done. */
  bare(matches: number, rng: Rng): number;
}

const cases: Case[] = [
  {
    game: "ipd",
    unit: "moves",
    units: (o) => o.actions,
    bare(matches, rng) {
      const pay = [3, 0, 5, 1];
      let sink = 0;
      for (let m = 0; m < matches; m++) {
        let t0 = 0, t1 = 0;
        for (let r = 0; r < 10; r++) {
          const a = rng.int(2), b = rng.int(2);
          t0 += pay[2 * a + b];
          t1 += pay[2 * b + a];
        }
        sink += t0 - t1;
      }
      return sink === Infinity ? 0 : matches * 20;
    },
  },
  {
    game: "donor-game",
    unit: "donations",
    units: (o) => o.actions,
    bare(matches, rng) {
      const n = 12, half = n / 2;
      const res = new Float64Array(n);
      for (let m = 0; m < matches; m++) {
        for (let game = 0; game < 2; game++) {
          res.fill(10);
          for (let round = 0; round < n; round++) {
            for (let k = 0; k < half; k++) {
              const donor = round % 2 ? half + ((k + round) % half) : k;
              const recipient = round % 2 ? k : half + ((k + round) % half);
              const x = rng.float() * res[donor];
              res[donor] -= x;
              res[recipient] += 2 * x;
            }
          }
        }
      }
      return matches * 2 * n * half;
    },
  },
  {
    game: "trust-and-split",
    unit: "rounds",
    units: (o) => o.steps / 3, // two messages and one split per round
    bare(matches, rng) {
      let sink = 0;
      for (let m = 0; m < matches; m++) {
        for (let r = 0; r < 10; r++) {
          const h0 = rng.int(3), h1 = (h0 + 1 + rng.int(2)) % 3;
          const v0 = (h0 - h1 + 3) % 3 === 1 ? 10 : 1, v1 = v0 === 10 ? 1 : 10;
          const c0 = rng.int(11), c1 = rng.int(11);
          const d = Math.max(10, c0 + c1);
          sink += (10 * c0 / d) * v0 - (10 * c1 / d) * v1;
        }
      }
      return sink === Infinity ? 0 : matches * 10;
    },
  },
];

function engineRate(c: Case): { stepsPerSecond: number; unitsPerSecond: number } {
  const game = getGame(c.game);
  const { config } = configure(game, {});
  const seats = game.seatCount(config);
  const strategies = new Array(seats).fill(0).map(() => createStrategy(c.game, "random"));
  let steps = 0;
  let total = 0;
  let next = 0;
  const unitsPerSecond = rate((batch) => {
    let units = 0;
    for (let i = 0; i < batch; i++) {
      const outcome = playMatch(game, config, strategies, matchSeed(1, next++));
      steps += outcome.steps;
      units += c.units(outcome);
    }
    total += units;
    return units;
  }, SECONDS);
  return { stepsPerSecond: unitsPerSecond * (steps / total), unitsPerSecond };
}

function cliRate(c: Case): { stepsPerSecond: number; wallSeconds: number; unitsPerSecondWall: number } {
  const deno = Deno.execPath();
  const started = performance.now();
  const run = spawnSync(deno, [
    "run",
    "--quiet",
    "--allow-all",
    new URL("../cli/main.ts", import.meta.url).pathname,
    "simulate",
    "--game",
    c.game,
    "--seats",
    "random",
    "--matches",
    String(CLI_MATCHES),
    "--json",
  ], { encoding: "utf8" });
  const wallSeconds = (performance.now() - started) / 1000;
  if (run.status !== 0) throw new Error(`ludus simulate failed: ${run.stderr}`);
  const summary = JSON.parse(run.stdout);
  const units = c.units({ steps: summary.steps, actions: summary.actions });
  return { stepsPerSecond: summary.stepsPerSecond, wallSeconds, unitsPerSecondWall: units / wallSeconds };
}

/**
 * The episode engine with a learner's work on every decision: the seat's observation encoded to its
 * tensor and its legal mask filled, then a uniformly random legal id played. Matches of the default
 * variant (one hand of Kuhn or Leduc) per second, as a ratio to a bare loop of the same game.
 */
function episodeRate(gameId: string): { matchesPerSecond: number; stepsPerSecond: number } {
  const game = getGame(gameId);
  const { config } = configure(game, {});
  const tensor = new Float32Array(shapeSize(game.observationShape(config)));
  const mask = new Uint8Array(game.actionCount(config));
  const ids = new Int32Array(mask.length);
  const picker = new Rng(7);
  // Packed, and cleared seat by seat: fill() on a holey array costs a third of a Kuhn hand.
  const moves: (Action | undefined)[] = Array.from({ length: game.seatCount(config) }, () => undefined);
  let steps = 0;
  let next = 0;
  const matchesPerSecond = rate((batch) => {
    for (let i = 0; i < batch; i++) {
      const episode = new Episode(game, config, next++);
      while (!episode.over) {
        const toAct = episode.toAct;
        for (let k = 0; k < toAct.length; k++) {
          const seat = toAct[k];
          episode.encode(seat, tensor);
          episode.legalMask(seat, mask);
          let n = 0;
          for (let id = 0; id < mask.length; id++) if (mask[id]) ids[n++] = id;
          moves[seat] = episode.actionOf(ids[picker.int(n)], seat) as Action;
        }
        episode.step(moves);
        for (let k = 0; k < toAct.length; k++) moves[toAct[k]] = undefined;
        steps++;
      }
    }
    return batch;
  }, SECONDS);
  return { matchesPerSecond, stepsPerSecond: matchesPerSecond * (steps / next) };
}

/** One hand of Kuhn poker on integers: a deal, random checks and bets, the payoff. */
function bareKuhn(matches: number, rng: Rng): number {
  let sink = 0;
  for (let m = 0; m < matches; m++) {
    const deal = rng.int(6);
    const c0 = deal >> 1, c1 = (c0 + 1 + (deal & 1)) % 3;
    const first = rng.int(2);
    if (first === 0) { // check
      if (rng.int(2) === 0) sink += c0 > c1 ? 1 : -1; // check: showdown
      else sink += rng.int(2) === 0 ? -1 : (c0 > c1 ? 2 : -2); // bet: fold or call
    } else sink += rng.int(2) === 0 ? 1 : (c0 > c1 ? 2 : -2); // bet: fold or call
  }
  return sink === Infinity ? 0 : matches;
}

/** One hand of Leduc poker on integers: two rounds of random betting with at most two raises each. */
function bareLeduc(matches: number, rng: Rng): number {
  let sink = 0;
  for (let m = 0; m < matches; m++) {
    const c0 = rng.int(6);
    let c1 = rng.int(5);
    if (c1 >= c0) c1++;
    const put = [1, 1];
    let folded = -1;
    let board = -1;
    for (let round = 0; round < 2 && folded < 0; round++) {
      if (round === 1) {
        board = rng.int(4);
      }
      const size = round === 0 ? 2 : 4;
      let raises = 0, acted = 0, player = 0;
      while (folded < 0) {
        const facing = put[player] < put[1 - player];
        const choice = rng.int(raises < 2 ? 3 : 2);
        if (choice === 0 && facing) folded = player;
        else if (choice === 2 && raises < 2) {
          put[player] = put[1 - player] + size;
          raises++;
        } else {
          put[player] = put[1 - player];
          if (acted > 0) break;
        }
        acted++;
        player = 1 - player;
      }
    }
    const pair0 = board >= 0 && c0 >> 1 === board >> 1, pair1 = board >= 0 && c1 >> 1 === board >> 1;
    const winner = folded >= 0
      ? 1 - folded
      : pair0 !== pair1
      ? (pair0 ? 0 : 1)
      : c0 >> 1 === c1 >> 1
      ? -1
      : c0 > c1
      ? 0
      : 1;
    sink += winner === 0 ? put[1] : winner === 1 ? -put[0] : 0;
  }
  return sink === Infinity ? 0 : matches;
}

const episodes = [["kuhn-poker", bareKuhn], ["leduc-poker", bareLeduc]] as const;
const episodeResults = episodes.map(([gameId, bare]) => {
  const baseline = rate((batch) => bare(batch, new Rng(batch)), SECONDS);
  const engine = episodeRate(gameId);
  return {
    game: gameId,
    unit: "hands",
    episode: { handsPerSecond: Math.round(engine.matchesPerSecond), stepsPerSecond: Math.round(engine.stepsPerSecond) },
    baseline: { handsPerSecond: Math.round(baseline) },
    ratio: Number((engine.matchesPerSecond / baseline).toFixed(3)),
  };
});

const results = cases.map((c) => {
  const bare = rate((batch) => c.bare(batch, new Rng(batch)), SECONDS);
  const engine = engineRate(c);
  const cli = cliRate(c);
  return {
    game: c.game,
    unit: c.unit,
    engine: {
      [`${c.unit}PerSecond`]: Math.round(engine.unitsPerSecond),
      stepsPerSecond: Math.round(engine.stepsPerSecond),
    },
    baseline: { [`${c.unit}PerSecond`]: Math.round(bare) },
    ratio: Number((engine.unitsPerSecond / bare).toFixed(3)),
    cli: {
      matches: CLI_MATCHES,
      stepsPerSecond: Math.round(cli.stepsPerSecond),
      wallSeconds: Number(cli.wallSeconds.toFixed(3)),
      [`${c.unit}PerSecondIncludingStartup`]: Math.round(cli.unitsPerSecondWall),
    },
  };
});

console.log(
  JSON.stringify(
    { bench: "engine", seconds: SECONDS, deno: Deno.version.deno, results, episodes: episodeResults },
    null,
    2,
  ),
);
