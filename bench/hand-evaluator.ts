/**
 * Hand evaluator and hold'em throughput on one core.
 *
 * - evaluate7 and the general evaluate over a pool of random seven-card hands, against a same-run
 *   baseline that reads the same hands and sums their cards without evaluating (`ratio` =
 *   evaluations / baseline hands per second);
 * - whole hands of hold'em per second under playMatch, for random and built-in strategies;
 * - with --enumerate, every one of the 133,784,560 seven-card hands, counted by category and
 *   checked against the known counts.
 *
 *   deno run bench/hand-evaluator.ts [--seconds 2] [--pool 1048576] [--enumerate]
 * Prints one JSON object on stdout.
 */
import { parseArgs } from "node:util";
import { configure } from "../games/core/config.ts";
import type { AnyGame } from "../games/core/game.ts";
import { Rng } from "../games/core/rng.ts";
import { rate } from "./rate.ts";

// The evaluator builds its tables when first imported; nothing above imports it, so this times the build.
const started = performance.now();
const { CATEGORIES, countSevenCardHands, evaluate, evaluate7, SEVEN_CARD_CATEGORY_COUNTS } = await import(
  "../games/holdem/evaluator.ts"
);
const loadMs = performance.now() - started;
const { holdem } = await import("../games/holdem/game.ts");
const { holdemStrategies } = await import("../policies/baselines/holdem.ts");
const { random } = await import("../policies/baselines/random.ts");
const { matchSeed, playMatch } = await import("../policies/simulate.ts");

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "2" },
    pool: { type: "string", default: String(1 << 20) },
    enumerate: { type: "boolean", default: false },
  },
});
const SECONDS = Number(values.seconds);
const POOL = Number(values.pool);

/** Units per second of `work()`, one pass at a time, through the benchmarks' shared timing loop. */
function passRate(work: () => number, seconds: number): number {
  return rate((batch) => {
    let units = 0;
    for (let k = 0; k < Math.ceil(batch / 50); k++) units += work();
    return units;
  }, seconds);
}

/** `count` random seven-card hands, back to back. */
function randomHands(count: number, rng: Rng): Uint8Array {
  const hands = new Uint8Array(count * 7);
  const deck = Array.from({ length: 52 }, (_, i) => i);
  for (let h = 0; h < count; h++) {
    for (let i = 0; i < 7; i++) {
      const j = i + rng.int(52 - i);
      const card = deck[j];
      deck[j] = deck[i];
      deck[i] = card;
      hands[7 * h + i] = card;
    }
  }
  return hands;
}

// Sums keep the loops' results alive, so the JIT cannot drop the work.
let sink = 0;

const pool = randomHands(POOL, new Rng("hand-evaluator"));
const fast = passRate(() => {
  let sum = 0;
  for (let i = 0; i < pool.length; i += 7) {
    sum += evaluate7(pool[i], pool[i + 1], pool[i + 2], pool[i + 3], pool[i + 4], pool[i + 5], pool[i + 6]);
  }
  sink += sum;
  return POOL;
}, SECONDS);
const general = passRate(() => {
  let sum = 0;
  for (let i = 0; i < pool.length; i += 7) sum += evaluate(pool, 7, i);
  sink += sum;
  return POOL;
}, SECONDS);
const baseline = passRate(() => {
  let sum = 0;
  for (let i = 0; i < pool.length; i += 7) {
    sum += pool[i] + pool[i + 1] + pool[i + 2] + pool[i + 3] + pool[i + 4] + pool[i + 5] + pool[i + 6];
  }
  sink += sum;
  return POOL;
}, SECONDS);

/** Hold'em hands per second for one variant and pair of strategies, over whole matches of 100 hands. */
function handsPerSecond(variant: string, names: [string, string]): number {
  const game = holdem as unknown as AnyGame;
  const { config } = configure(game, { hands: 100 }, variant);
  const defs = [random, ...holdemStrategies];
  const strategies = names.map((name) => defs.find((d) => d.name === name)!.create(undefined));
  let next = 0;
  return passRate(() => {
    playMatch(game, config, strategies, matchSeed(1, next++));
    return 100;
  }, SECONDS);
}

const play = [
  { variant: "hunl", seats: ["random", "random"] as [string, string] },
  { variant: "hulhe", seats: ["random", "random"] as [string, string] },
  { variant: "hunl", seats: ["always-call", "always-call"] as [string, string] },
  { variant: "hunl", seats: ["hand-strength", "always-call"] as [string, string] },
].map((c) => ({ ...c, handsPerSecond: Math.round(handsPerSecond(c.variant, c.seats)) }));

function enumerateAll() {
  const start = performance.now();
  const counts = countSevenCardHands();
  const seconds = (performance.now() - start) / 1000;
  const hands = counts.reduce((x, y) => x + y, 0);
  return {
    hands,
    seconds: Number(seconds.toFixed(3)),
    evaluationsPerSecond: Math.round(hands / seconds),
    counts: Object.fromEntries(CATEGORIES.map((name, i) => [name, counts[i]])),
    matchesKnownCounts: counts.every((n, i) => n === SEVEN_CARD_CATEGORY_COUNTS[i]),
  };
}

console.log(JSON.stringify(
  {
    bench: "hand-evaluator",
    seconds: SECONDS,
    deno: Deno.version.deno,
    moduleLoadMs: Number(loadMs.toFixed(1)),
    pool: POOL,
    evaluate7PerSecond: Math.round(fast),
    evaluatePerSecond: Math.round(general),
    baseline: { what: "read the same hands and sum their cards", handsPerSecond: Math.round(baseline) },
    ratio: Number((fast / baseline).toFixed(3)),
    play,
    ...(values.enumerate ? { enumerate: enumerateAll() } : {}),
    sink: sink % 1000,
  },
  null,
  2,
));
