/**
 * Poker and solver throughput on one core. Kuhn and Leduc hands per second under random play
 * through playMatch, with one hand per match and with 200-hand matches (which spread the
 * per-match setup, two seeded Rngs, over many hands), each against a same-run bare loop that
 * deals and bets at random on plain numbers with the same Rng (`ratio` = engine / bare loop);
 * and CFR+ iterations per second on Leduc's full 936-set tree.
 *
 *   deno run bench/solver.ts [--seconds 2]
 * Prints one JSON object on stdout.
 */
import { parseArgs } from "node:util";
import { CfrPlus } from "../games/analysis/cfr.ts";
import { buildTree } from "../games/analysis/tree.ts";
import { configure } from "../games/core/config.ts";
import type { AnyGame } from "../games/core/game.ts";
import { Rng } from "../games/core/rng.ts";
import { kuhnPoker } from "../games/kuhn-poker/game.ts";
import { leducPoker } from "../games/leduc-poker/game.ts";
import { random } from "../policies/baselines/random.ts";
import { playMatch } from "../policies/simulate.ts";
import { rate } from "./rate.ts";

const { values } = parseArgs({ options: { seconds: { type: "string", default: "2" } } });
const SECONDS = Number(values.seconds);

/** Hands per second through playMatch with `hands` hands a match. */
function engineRate(game: AnyGame, raw: Record<string, unknown>, hands: number): number {
  const { config } = configure(game, raw);
  const strategies = [random.create(undefined), random.create(undefined)];
  let seed = 0;
  return rate((batch) => {
    const matches = Math.max(1, Math.round(batch / hands));
    for (let i = 0; i < matches; i++) playMatch(game, config, strategies, seed++);
    return matches * hands;
  }, SECONDS);
}

/** Kuhn by hand: a deal, then uniform choices between the two legal actions until the hand ends. */
function bareKuhn(hands: number, rng: Rng): number {
  let total = 0;
  for (let h = 0; h < hands; h++) {
    const k = rng.int(6);
    const c0 = k >> 1;
    const c1 = (c0 + 1 + (k & 1)) % 3;
    const win = c0 > c1 ? 1 : -1;
    if (rng.int(2) === 1) {
      total += rng.int(2) === 1 ? 2 * win : 1; // bet: call or fold
    } else if (rng.int(2) === 0) {
      total += win; // check, check
    } else {
      total += rng.int(2) === 1 ? 2 * win : -1; // check, bet: call or fold
    }
  }
  return total === Infinity ? 0 : hands;
}

/** Leduc by hand: deals, two betting rounds with uniform legal choices, showdown. */
function bareLeduc(hands: number, rng: Rng): number {
  const put = [0, 0];
  let total = 0;
  for (let h = 0; h < hands; h++) {
    const k = rng.int(30);
    const c0 = (k / 5) | 0;
    const r = k % 5;
    const c1 = r >= c0 ? r + 1 : r;
    put[0] = put[1] = 1;
    let stakes = 1;
    let folded = -1;
    let board = -1;
    for (let round = 0; round < 2 && folded < 0; round++) {
      if (round === 1) {
        let left = rng.int(4);
        for (let c = 0; c < 6; c++) if (c !== c0 && c !== c1 && left-- === 0) board = c;
      }
      let player = 0;
      let raises = 0;
      let calls = 0;
      for (;;) {
        const facing = stakes > put[player];
        const options = raises < 2 ? (facing ? 3 : 2) : 2;
        let choice = rng.int(options) + (facing ? 0 : 1); // 0 fold, 1 call, 2 raise
        if (raises >= 2 && choice === 2) choice = 1;
        if (choice === 0) {
          folded = player;
          break;
        }
        if (choice === 2) {
          stakes += round === 0 ? 2 : 4;
          put[player] = stakes;
          raises++;
          calls = 0;
        } else {
          put[player] = stakes;
          calls++;
          if (raises === 0 ? calls === 2 : calls === 1) break;
        }
        player = 1 - player;
      }
    }
    if (folded >= 0) total += folded === 0 ? -put[0] : put[1];
    else {
      const s0 = c0 >> 1 === board >> 1 ? 10 : c0 >> 1;
      const s1 = c1 >> 1 === board >> 1 ? 10 : c1 >> 1;
      total += s0 > s1 ? put[1] : s0 < s1 ? -put[0] : 0;
    }
  }
  return total === Infinity ? 0 : hands;
}

/** Hands in a long match: the most Leduc's config allows (Kuhn's allows 300). */
const LONG_MATCH = 200;

function pokerCase(name: string, game: AnyGame, handsKey: string, bare: (n: number, rng: Rng) => number) {
  const baseline = rate((batch) => bare(batch, new Rng(batch)), SECONDS);
  const oneHand = engineRate(game, {}, 1);
  const longMatch = engineRate(game, { [handsKey]: LONG_MATCH }, LONG_MATCH);
  return {
    game: name,
    engine: { handsPerSecondOneHandMatches: Math.round(oneHand), handsPerSecond200HandMatches: Math.round(longMatch) },
    baseline: { handsPerSecond: Math.round(baseline) },
    ratio: Number((longMatch / baseline).toFixed(3)),
    ratioOneHandMatches: Number((oneHand / baseline).toFixed(3)),
  };
}

const results = [
  pokerCase("kuhn-poker", kuhnPoker, "rounds", bareKuhn),
  pokerCase("leduc-poker", leducPoker, "hands", bareLeduc),
];

const builtAt = performance.now();
const tree = buildTree(leducPoker, configure(leducPoker, {}).config);
const buildSeconds = (performance.now() - builtAt) / 1000;
const solver = new CfrPlus(tree);
const iterationsPerSecond = rate((batch) => {
  const n = Math.max(1, Math.round(batch / 50));
  solver.run(n);
  return n;
}, SECONDS);

console.log(JSON.stringify(
  {
    bench: "solver",
    seconds: SECONDS,
    deno: Deno.version.deno,
    results,
    cfr: {
      game: "leduc-poker",
      infoSets: tree.infosets.length,
      nodes: tree.kind.length,
      treeBuildSeconds: Number(buildSeconds.toFixed(3)),
      iterationsPerSecond: Math.round(iterationsPerSecond),
    },
  },
  null,
  2,
));
