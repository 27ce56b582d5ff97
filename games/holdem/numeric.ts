/**
 * Hold'em's numeric face: the bet abstraction behind its action ids, and the information-state tensor.
 *
 * Action ids, after OpenSpiel universal_poker's `fcpa` abstraction (fold, check/call, pot, all-in):
 * - limit (3 ids): 0 fold, 1 check or call, 2 raise (the round's fixed raise).
 * - no-limit (6 ids): 0 fold, 1 check or call, 2 raise half the pot, 3 raise the pot, 4 raise twice the
 *   pot, 5 all-in. "The pot" is the pot after calling, as universal_poker sizes its pot bet: raise-to =
 *   bet + f × (pot + to call), rounded down, then clipped to the legal raise-to range. Where two ids give
 *   the same raise-to (a clip, or the pot raise being all-in), only the lowest is legal, so each legal
 *   id stands for a different action and a raise-to maps back to one id; a raise-to that no id gives
 *   (say the minimum raise) has no id (-1).
 * Fold is legal only when chips are owed (ACPC refuses a free fold); check/call whenever the seat acts.
 *
 * The tensor (shape [n], fixed by the config) encodes an observation, so it holds only what that viewer
 * saw: the current hand with perfect recall (every card and action) plus the match's progress, score
 * and the outcomes of the finished hands the observation lists. D is the deck size (ranks × suits), B
 * the rounds that deal board cards, R the rounds, K = min(RECENT_HANDS, hands − 1). Chip amounts are
 * divided by the largest starting stack (100 × the biggest blind, at least 1, when no stack is limited).
 * Blocks in order, indexed by seat where they say "by seat" (a public observation has no seat bit):
 * - 2: the viewer's seat, one-hot.
 * - 2: each seat's ACPC position this hand (0 or 1).
 * - 2 × D: hole cards shown, by seat: the viewer's own, and the other's after a showdown; one-hot over
 *   the deck (card index rank × suits + suit, ranks and suits from the lowest, as the deck is built).
 * - B × D: the board cards dealt in each round that deals some, one-hot over the deck.
 * - R: the betting round, one-hot.
 * - 2: the seat to act, one-hot (none once the match is over).
 * - 2: the seat to act may raise; the match is over.
 * - 12 chip amounts: pot; committed by seat; behind by seat (0 without a stack limit); blinds by seat;
 *   to call; minimum and maximum raise-to (0 when no raise is allowed); chips won so far by seat.
 * - 2: no stack limit, by seat.
 * - 2: hand progress, (hand − 1) / hands; this is the last hand.
 * - R × 64 × 6: the hand's actions, round by round, up to ACPC's 64 a round (so none is ever cut):
 *   fold, check, call, raise one-hot; 1 when seat 1 acted; the actor's total put in after it.
 * - K × 5: the finished hands, newest first: present; showdown; folded by seat one-hot; seat 0's winnings.
 */

import { type Betting, currentPlayer, MAX_ACTIONS } from "./betting.ts";
import { RANK_CHARS, SUIT_CHARS } from "./cards.ts";
import type { Gamedef } from "./gamedef.ts";
import type { HoldemObservation } from "./game.ts";

export const FOLD_ID = 0;
export const CHECK_CALL_ID = 1;
/** The limit raise, and the first no-limit raise id (half the pot). */
export const RAISE_ID = 2;
export const ALL_IN_ID = 5;
/** The pot after calling that no-limit ids 2, 3 and 4 raise by, in halves. */
const POT_HALVES = [1, 2, 4];

export function actionCountOf(def: Gamedef): number {
  return def.betting === "nolimit" ? ALL_IN_ID + 1 : RAISE_ID + 1;
}

/**
 * The raise-to of no-limit raise id `id` (RAISE_ID to ALL_IN_ID) for the position to act, within the
 * legal raise-to range [min, max].
 */
export function gridRaiseTo(b: Betting, def: Gamedef, id: number, min: number, max: number): number {
  if (id === ALL_IN_ID) return max;
  const potAfterCall = b.spent[0] + b.spent[1] + b.maxSpent - b.spent[currentPlayer(b, def)];
  const target = b.maxSpent + Math.floor((potAfterCall * POT_HALVES[id - RAISE_ID]) / 2);
  return Math.min(max, Math.max(min, target));
}

/** The lowest no-limit raise id whose raise-to is `amount`, or -1. */
export function gridRaiseId(b: Betting, def: Gamedef, amount: number, min: number, max: number): number {
  for (let id = RAISE_ID; id <= ALL_IN_ID; id++) if (gridRaiseTo(b, def, id, min, max) === amount) return id;
  return -1;
}

const ACTION_FEATURES = 6;
const RECENT_FEATURES = 5;
/** Blocks whose size no config changes: seat, positions, to act, flags, chips, stack limits, progress. */
const FIXED_FEATURES = 2 + 2 + 2 + 2 + 12 + 2 + 2;
const HISTORY_TYPES = ["fold", "check", "call", "raise"];

/** The tensor's length for a deck of `deck` cards, `boardRounds` rounds dealing board cards, and so on. */
function tensorSize(deck: number, boardRounds: number, rounds: number, recent: number): number {
  return FIXED_FEATURES + (2 + boardRounds) * deck + rounds * (1 + MAX_ACTIONS * ACTION_FEATURES) +
    recent * RECENT_FEATURES;
}

function boardRoundsOf(boardCards: readonly number[]): number {
  let n = 0;
  for (const cards of boardCards) if (cards > 0) n++;
  return n;
}

/** The tensor's shape for a game definition, with `recent` finished-hand slots. */
export function tensorShape(def: Gamedef, recent: number): number[] {
  return [
    tensorSize(def.numRanks * def.numSuits, boardRoundsOf(def.numBoardCards), def.numRounds, recent),
  ];
}

/** Rank and suit by character code (-1 elsewhere), to read card text without allocating. */
const RANK_OF = new Int8Array(128).fill(-1);
const SUIT_OF = new Int8Array(128).fill(-1);
for (let r = 0; r < RANK_CHARS.length; r++) RANK_OF[RANK_CHARS.charCodeAt(r)] = r;
for (let s = 0; s < SUIT_CHARS.length; s++) SUIT_OF[SUIT_CHARS.charCodeAt(s)] = s;

/** Sets the deck entry of each card in `cards` (card text) in the block at `at`. */
function markCards(out: Float32Array, at: number, cards: readonly string[] | null, suits: number): void {
  if (cards === null) return;
  for (let i = 0; i < cards.length; i++) {
    const card = cards[i];
    out[at + RANK_OF[card.charCodeAt(0)] * suits + SUIT_OF[card.charCodeAt(1)]] = 1;
  }
}

/** The chips that amounts are divided by: the largest starting stack, or 100 big blinds without a limit. */
function chipScale(obs: HoldemObservation): number {
  let stack = 0;
  for (let s = 0; s < 2; s++) {
    const behind = obs.stacks[s];
    if (behind !== null) stack = Math.max(stack, behind + obs.committed[s]);
  }
  return stack > 0 ? stack : 100 * Math.max(1, obs.blinds[0], obs.blinds[1]);
}

/** Writes the tensor of `obs` into `out` (see the layout above); `recent` is the config's slot count. */
export function encodeObservation(obs: HoldemObservation, out: Float32Array, recent: number): void {
  const { structure } = obs;
  const suits = structure.suits.length;
  const deck = structure.ranks.length * suits;
  const boardCards = structure.boardCards;
  const rounds = boardCards.length;
  const size = tensorSize(deck, boardRoundsOf(boardCards), rounds, recent);
  if (out.length !== size) throw new RangeError(`a holdem tensor here has ${size} entries, not ${out.length}`);
  out.fill(0);
  const scale = chipScale(obs);
  let at = 0;
  if (obs.seat !== "public") out[at + obs.seat] = 1;
  at += 2;
  out[at] = obs.positions[0];
  out[at + 1] = obs.positions[1];
  at += 2;
  for (let s = 0; s < 2; s++, at += deck) markCards(out, at, obs.shownCards[s], suits);
  // The board lists its cards in dealing order, round by round.
  let card = 0;
  for (let r = 0; r < rounds; r++) {
    if (boardCards[r] === 0) continue;
    for (let i = 0; i < boardCards[r] && card < obs.board.length; i++, card++) {
      const text = obs.board[card];
      out[at + RANK_OF[text.charCodeAt(0)] * suits + SUIT_OF[text.charCodeAt(1)]] = 1;
    }
    at += deck;
  }
  out[at + obs.round] = 1;
  at += rounds;
  if (obs.toAct !== null) out[at + obs.toAct] = 1;
  at += 2;
  out[at++] = obs.minRaiseTo === null ? 0 : 1;
  out[at++] = obs.phase === "over" ? 1 : 0;
  out[at++] = obs.pot / scale;
  out[at++] = obs.committed[0] / scale;
  out[at++] = obs.committed[1] / scale;
  out[at++] = (obs.stacks[0] ?? 0) / scale;
  out[at++] = (obs.stacks[1] ?? 0) / scale;
  out[at++] = obs.blinds[0] / scale;
  out[at++] = obs.blinds[1] / scale;
  out[at++] = (obs.toCall ?? 0) / scale;
  out[at++] = (obs.minRaiseTo ?? 0) / scale;
  out[at++] = (obs.maxRaiseTo ?? 0) / scale;
  out[at++] = obs.totals[0] / scale;
  out[at++] = obs.totals[1] / scale;
  out[at++] = obs.stacks[0] === null ? 1 : 0;
  out[at++] = obs.stacks[1] === null ? 1 : 0;
  out[at++] = (obs.hand - 1) / obs.hands;
  out[at++] = obs.hand === obs.hands ? 1 : 0;
  // Actions come in order, so each round's n-th action has slot n of that round's block.
  const history = at;
  let round = -1;
  let slot = 0;
  for (const action of obs.actions) {
    if (action.round !== round) {
      round = action.round;
      slot = 0;
    }
    const base = history + (round * MAX_ACTIONS + slot++) * ACTION_FEATURES;
    out[base + HISTORY_TYPES.indexOf(action.type)] = 1;
    out[base + 4] = action.seat;
    out[base + 5] = action.to / scale;
  }
  at += rounds * MAX_ACTIONS * ACTION_FEATURES;
  const hands = obs.recentHands;
  for (let k = 0; k < recent && k < hands.length; k++, at += RECENT_FEATURES) {
    const summary = hands[hands.length - 1 - k];
    out[at] = 1;
    out[at + 1] = summary.showdown ? 1 : 0;
    if (summary.folded !== null) out[at + 2 + summary.folded] = 1;
    out[at + 4] = summary.winnings[0] / scale;
  }
}
