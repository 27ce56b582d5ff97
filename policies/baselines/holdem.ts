import type { ActionForm, ActionSpace, AmountForm } from "../../games/core/action.ts";
import type { Rng } from "../../games/core/rng.ts";
import { makeCard, parseCards, RANK_CHARS } from "../../games/holdem/cards.ts";
import { evaluate, evaluate7 } from "../../games/holdem/evaluator.ts";
import type { HoldemAction, HoldemObservation } from "../../games/holdem/game.ts";
import type { Strategy, StrategyContext, StrategyDef } from "../strategy.ts";

/** Simple hold'em baselines: a calling station, a min-raiser, and a hand-strength player. */

type HoldemContext = StrategyContext<HoldemAction, HoldemObservation>;

const CHECK: HoldemAction = { type: "check" };
const CALL: HoldemAction = { type: "call" };

function fixedOf(legal: ActionSpace<HoldemAction>, type: string): HoldemAction | undefined {
  const form = legal.find((f) => f.kind === "fixed" && f.action.type === type);
  return form?.kind === "fixed" ? form.action : undefined;
}

/** Check when free, else call. */
function passive(legal: ActionSpace<HoldemAction>): HoldemAction {
  return fixedOf(legal, "check") ?? CALL;
}

function raiseForm(legal: ActionSpace<HoldemAction>): ActionForm<HoldemAction> | undefined {
  return legal.find((f) => (f.kind === "fixed" ? f.action.type : f.type) === "raise");
}

/** A raise to `target` (clamped to the legal range), or the fixed limit raise. */
function raiseTo(form: ActionForm<HoldemAction>, target: number): HoldemAction {
  if (form.kind === "fixed") return form.action;
  const { min, max } = form as AmountForm;
  return { type: "raise", amount: Math.min(max, Math.max(min, Math.round(target))) };
}

/**
 * Chen's preflop score of two hole cards (about −1 for 7-2 offsuit to 20 for aces): the high
 * card's points (A 10, K 8, Q 7, J 6, else half its rank), doubled for a pair (at least 5), +2
 * suited, minus 1, 2, 4 or 5 for gaps of 1, 2, 3 or more, +1 for close cards below a queen.
 */
export function chenScore(a: number, b: number): number {
  const hi = Math.max(a >> 2, b >> 2);
  const lo = Math.min(a >> 2, b >> 2);
  const points = (r: number) => (r === 12 ? 10 : r === 11 ? 8 : r === 10 ? 7 : r === 9 ? 6 : (r + 2) / 2);
  if (hi === lo) return Math.ceil(Math.max(5, 2 * points(hi)));
  const gap = hi - lo - 1;
  let score = points(hi) + ((a & 3) === (b & 3) ? 2 : 0) - [0, 1, 2, 4, 5][Math.min(gap, 4)];
  if (gap <= 1 && hi < 10) score += 1;
  return Math.ceil(score);
}

/**
 * The chance of beating one random hand by the showdown (ties count half), by Monte Carlo: deal
 * the other's hole cards and the rest of the board `samples` times from the unseen cards.
 */
export function equity(obs: HoldemObservation, rng: Rng, samples: number): number {
  const own = parseCards(obs.holeCards!.join(""));
  const board = parseCards(obs.board.join(""));
  const { holeCards, boardCards } = obs.structure;
  const boardTotal = boardCards.reduce((a, b) => a + b, 0);
  const seen = new Set([...own, ...board]);
  const unseen: number[] = [];
  for (let rank = 0; rank < obs.structure.ranks.length; rank++) {
    for (let suit = 0; suit < obs.structure.suits.length; suit++) {
      const card = makeCard(rank, suit);
      if (!seen.has(card)) unseen.push(card);
    }
  }
  const draw = holeCards + boardTotal - board.length;
  // Both hands laid out for the evaluator: [own hole, board], then [other hole, board].
  const size = holeCards + boardTotal;
  const mine = new Uint8Array(size);
  const theirs = new Uint8Array(size);
  mine.set(own);
  mine.set(board, holeCards);
  theirs.set(board, holeCards);
  let score = 0;
  for (let s = 0; s < samples; s++) {
    for (let i = 0; i < draw; i++) {
      // A multiply-shift draw: its bias (under 1e-8) does not matter to an estimate, and it is
      // several times cheaper than Rng.int's rejection sampling.
      const j = i + Math.floor((rng.next() * (unseen.length - i)) / 4294967296);
      const card = unseen[j];
      unseen[j] = unseen[i];
      unseen[i] = card;
    }
    for (let i = 0; i < holeCards; i++) theirs[i] = unseen[i];
    for (let i = holeCards; i < draw; i++) mine[board.length + i] = theirs[board.length + i] = unseen[i];
    const a = size === 7 ? evaluate7(mine[0], mine[1], mine[2], mine[3], mine[4], mine[5], mine[6]) : evaluate(mine);
    const b = size === 7
      ? evaluate7(theirs[0], theirs[1], theirs[2], theirs[3], theirs[4], theirs[5], theirs[6])
      : evaluate(theirs);
    score += a > b ? 1 : a === b ? 0.5 : 0;
  }
  return score / samples;
}

const SAMPLES = 200;
/** Raise with at least this strength (an equity against one random hand). */
const RAISE_AT = 0.7;
/** At most this many raises of its own per round, so two of them do not raise each other forever. */
const MAX_OWN_RAISES = 3;

/**
 * Preflop with two hole cards, a Chen score mapped onto a rough equity (aces 0.8, 7-2 offsuit
 * 0.28); otherwise the Monte-Carlo equity against one random hand.
 */
function strength(obs: HoldemObservation, rng: Rng): number {
  const full = obs.structure.ranks === RANK_CHARS;
  if (obs.round === 0 && obs.holeCards!.length === 2 && full) {
    const [a, b] = parseCards(obs.holeCards!.join(""));
    return 0.3 + 0.025 * chenScore(a, b);
  }
  return equity(obs, rng, SAMPLES);
}

function handStrength(ctx: HoldemContext): HoldemAction {
  const obs = ctx.observation();
  const s = strength(obs, ctx.rng);
  const raise = raiseForm(ctx.legal);
  const ownRaises =
    obs.actions.filter((a) => a.round === obs.round && a.seat === ctx.seat && a.type === "raise").length;
  if (raise && s >= RAISE_AT && ownRaises < MAX_OWN_RAISES) {
    // A pot-sized raise: call, then add the pot as it then stands.
    const bet = Math.max(...obs.committed);
    return raiseTo(raise, bet + obs.pot + obs.toCall!);
  }
  const toCall = obs.toCall!;
  if (toCall === 0) return CHECK;
  // Call when the chance of winning pays for the price of calling.
  return s >= toCall / (obs.pot + toCall) ? CALL : { type: "fold" };
}

export const holdemStrategies: readonly StrategyDef[] = [
  {
    name: "always-call",
    game: "holdem",
    description: "checks when it can, calls otherwise; never folds or raises",
    create: () => ({ name: "always-call", act: (ctx) => passive(ctx.legal as ActionSpace<HoldemAction>) }) as Strategy,
  },
  {
    name: "always-raise",
    game: "holdem",
    description:
      "makes the smallest legal raise whenever it may raise (the fixed raise in limit), else checks or calls",
    create: () =>
      ({
        name: "always-raise",
        act: (ctx) => {
          const legal = ctx.legal as ActionSpace<HoldemAction>;
          const raise = raiseForm(legal);
          return raise ? raiseTo(raise, 0) : passive(legal);
        },
      }) as Strategy,
  },
  {
    name: "hand-strength",
    game: "holdem",
    description: "bets by hand strength: preflop by Chen's score, later by Monte-Carlo equity against a random " +
      "hand (200 deals); raises the pot with 70% or more, calls when the equity beats the pot odds, else folds",
    create: () => ({ name: "hand-strength", act: (ctx) => handStrength(ctx as HoldemContext) }) as Strategy,
  },
];
