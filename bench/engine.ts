/**
 * Engine throughput: how fast each game runs under random strategies on one core, in-process
 * (policies/simulate.ts) and through the CLI (`ludus simulate --json` in a fresh process).
 * The same-run baseline is a bare loop per game that does the game's arithmetic on plain arrays
 * with the same RNG and no game contract; `ratio` = engine / bare loop.
 *
 *   deno task bench [--seconds 2] [--cli-matches 20000]
 * Prints one JSON object on stdout.
 */
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";
import { configure } from "../games/core/config.ts";
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

console.log(JSON.stringify({ bench: "engine", seconds: SECONDS, deno: Deno.version.deno, results }, null, 2));
