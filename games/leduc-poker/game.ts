import { z } from "zod";
import { checkFullHistory, checkHistory, firstListedHand, historyKey } from "../core/config.ts";
import { ActionError, type ActionSpace, describeSpace, parseInput } from "../core/action.ts";
import { defineGame, type Game, type Viewer } from "../core/game.ts";
import { idProblem } from "../core/numeric.ts";
import { grouped, requestedType, seatName, signed } from "../core/text.ts";

/**
 * Leduc hold'em (Southey et al., 2005) with OpenSpiel's rules: a six-card deck (two suits of J, Q,
 * K), one private card each, two betting rounds with a public card between them, fixed raises of 2
 * then 4, and at most two raises a round. A match may be several hands.
 */

/**
 * Every decision's observation lists every finished hand by default, so a match's stored observations grow
 * with hands²: past this many hands a match must bound the list (`history`).
 */
const FULL_HISTORY_HANDS = 200;
/** The longest match: a long run between programs, whose observations list at most `history` hands. */
const MAX_HANDS = 100_000;

export const leducConfig = z.strictObject({
  hands: z.int().min(1).max(MAX_HANDS).default(1)
    .describe(
      `hands per match, at most ${grouped(MAX_HANDS)}; the seat that acts first alternates from hand to hand`,
    ),
  firstPlayer: z.int().min(0).max(1).default(0)
    .describe("the seat that acts first in both betting rounds of hand 1 (OpenSpiel's starting_player)"),
  history: historyKey(FULL_HISTORY_HANDS),
}).check((ctx) => checkHistory(ctx, ctx.value.hands, FULL_HISTORY_HANDS));
export type LeducConfig = z.infer<typeof leducConfig>;

/** The deck by OpenSpiel's card numbers: rank = card >> 1. */
export const CARDS = ["J1", "J2", "Q1", "Q2", "K1", "K2"] as const;
export type Card = (typeof CARDS)[number];
const RANKS = ["J", "Q", "K"] as const;
const RANK_NAMES = ["jack", "queen", "king"] as const;

/**
 * OpenSpiel's three actions. `call` is also the check when nothing is owed, as in OpenSpiel; the
 * parser reads `check` (and `bet`, for raise) when nothing is owed.
 */
export type LeducActionType = "fold" | "call" | "raise";
export interface LeducAction {
  readonly type: LeducActionType;
}

/** OpenSpiel's action numbers, as its information-state strings write them, and the numeric face's ids. */
const FOLD_ID = 0;
const CALL_ID = 1;
const RAISE_ID = 2;
const ACTION_COUNT = 3;
const ANTE = 1;
const RAISE_SIZES = [2, 4];
const MAX_RAISES = 2;
/** Actions a betting round can have: check, raise, raise, call. */
const ROUND_SLOTS = 4;
/** OpenSpiel's starting money, which its information-state strings show. */
const MONEY = 100;

const HAND_SIZE = 6 + 2 * ROUND_SLOTS;
const BOARD = 2;
/** Then one count per round. */
const COUNTS = 3;
const RESULT = 5;
/** Then ROUND_SLOTS action ids per round. */
const ACTIONS = 6;

/** What chance deals next. */
const NO_DEAL = 0;
const PRIVATE_DEAL = 1;
const PUBLIC_DEAL = 2;

export interface LeducState {
  readonly config: LeducConfig;
  /** The hand in play, 0-based (`hands` once the match is over). */
  hand: number;
  /** What chance must deal before play goes on: NO_DEAL, PRIVATE_DEAL or PUBLIC_DEAL. */
  pending: number;
  /**
   * Every hand's record, HAND_SIZE numbers from HAND_SIZE * hand: the private cards of seats 0
   * and 1, the public card (-1 until dealt), the number of actions in each round, seat 0's result,
   * then each round's OpenSpiel action ids in ROUND_SLOTS slots. One plain array: allocating typed
   * arrays would cost more than playing a short match.
   */
  readonly log: number[];
  /** The betting round in play: 0 or 1. */
  round: number;
  /** The seat to act. */
  player: number;
  /** What each seat must have put in to stay in the hand. */
  stakes: number;
  /** Chips each seat has put in the hand in play. */
  readonly contributions: [number, number];
  /** Raises and calls in the round in play (a call after a raise closes it; two calls close it otherwise). */
  raises: number;
  calls: number;
  readonly totals: [number, number];
}

/** A finished hand as a viewer saw it. Pairs are by seat. */
export interface LeducHandSummary {
  readonly first: number;
  /** Private cards, null where the viewer never saw them (a fold shows nothing). */
  readonly cards: [Card | null, Card | null];
  /** The public card, null when the hand ended before it was dealt. */
  readonly publicCard: Card | null;
  /** Betting letters: c (call or check), r (raise), f (fold), the rounds separated by `/`. */
  readonly betting: string;
  readonly showdown: boolean;
  /** The winning seat, or null for a split pot. */
  readonly winner: number | null;
  readonly rewards: [number, number];
}

export interface LeducObservation {
  readonly game: "leduc-poker";
  readonly seat: number | "public";
  /** 1-based hand in play (`hands` + 1 once over). */
  readonly hand: number;
  readonly hands: number;
  readonly phase: "betting" | "over";
  /** 1-based betting round (null once over). */
  readonly round: number | null;
  /** The seat that acts first in both rounds of this hand (null once over). */
  readonly first: number | null;
  readonly toAct: number | null;
  /** The viewer's private card (null for the public and once over). */
  readonly card: Card | null;
  readonly publicCard: Card | null;
  /** This hand's betting letters: c (call or check), r (raise), f (fold); `/` once round 2 begins. */
  readonly betting: string;
  readonly pot: number;
  readonly contributions: [number, number];
  /** Chips the seat to act must add to call. */
  readonly owed: number;
  /** Raises made in this round, at most `maxRaises`. */
  readonly raises: number;
  readonly maxRaises: number;
  /** The size of a raise this round. */
  readonly raiseSize: number;
  readonly legal: LeducActionType[];
  /** OpenSpiel's information-state string of this hand (null for the public and once over). */
  readonly infoState: string | null;
  readonly history: LeducHandSummary[];
  readonly totals: [number, number];
}

const FOLD: LeducAction = Object.freeze({ type: "fold" });
const CALL: LeducAction = Object.freeze({ type: "call" });
const RAISE: LeducAction = Object.freeze({ type: "raise" });
/** The actions by OpenSpiel's id. */
const ID_ACTIONS: readonly LeducAction[] = Object.freeze([FOLD, CALL, RAISE]);
const form = (action: LeducAction) => Object.freeze({ kind: "fixed" as const, action });
// OpenSpiel's order, so "the first action" is fold where it is legal.
const CALL_RAISE: ActionSpace<LeducAction> = Object.freeze([form(CALL), form(RAISE)]);
const FOLD_CALL_RAISE: ActionSpace<LeducAction> = Object.freeze([form(FOLD), form(CALL), form(RAISE)]);
const FOLD_CALL: ActionSpace<LeducAction> = Object.freeze([form(FOLD), form(CALL)]);
const NOTHING: ActionSpace<LeducAction> = Object.freeze([]);
const SEAT = [Object.freeze([0]), Object.freeze([1])];
const NOBODY: readonly number[] = Object.freeze([]);
const LETTERS = ["f", "c", "r"];
const ACTION_TYPES: readonly LeducActionType[] = ["fold", "call", "raise"];

/** The most a hand can move: the ante and two raises in each round. */
const MAX_RESULT = ANTE + MAX_RAISES * (RAISE_SIZES[0] + RAISE_SIZES[1]);
/** Seat 0's reward r as a frozen pair, for r in [-13, 13]: finished hands allocate nothing. */
const REWARDS: readonly (readonly number[])[] = Array.from(
  { length: 2 * MAX_RESULT + 1 },
  (_, i) => Object.freeze([i - MAX_RESULT, i === MAX_RESULT ? 0 : MAX_RESULT - i]),
);
const NO_REWARD = REWARDS[MAX_RESULT];

/** The 30 private deals as (seat 0's card, seat 1's card), each with probability 1/30. */
export const DEALS: readonly (readonly [number, number])[] = Object.freeze(
  CARDS.flatMap((_, a) => CARDS.map((_, b) => [a, b] as const).filter(([x, y]) => x !== y)).map((d) =>
    Object.freeze(d)
  ),
);
const DEAL_ODDS: readonly number[] = Object.freeze(DEALS.map(() => 1 / DEALS.length));
/** The public card is one of the four cards left, each with probability 1/4. */
const PUBLIC_ODDS: readonly number[] = Object.freeze([0.25, 0.25, 0.25, 0.25]);
const NO_CHANCE: readonly number[] = Object.freeze([]);

/** A match before its first deal. */
export function start(config: LeducConfig): LeducState {
  return {
    config,
    hand: 0,
    pending: PRIVATE_DEAL,
    log: new Array<number>(HAND_SIZE * config.hands).fill(0),
    round: 0,
    player: config.firstPlayer,
    stakes: ANTE,
    contributions: [ANTE, ANTE],
    raises: 0,
    calls: 0,
    totals: [0, 0],
  };
}

function firstOf(state: LeducState, hand: number): number {
  return (state.config.firstPlayer + hand) & 1;
}

/** Deals the private cards of the hand in play (OpenSpiel's card numbers, distinct) and opens its betting. */
export function deal(state: LeducState, c0: number, c1: number): void {
  if (state.pending !== PRIVATE_DEAL) throw new RangeError("no hand is waiting for its private cards");
  if (c0 === c1 || CARDS[c0] === undefined || CARDS[c1] === undefined) {
    throw new RangeError(`Leduc private cards are two distinct of 0..5; got ${c0}, ${c1}`);
  }
  const at = HAND_SIZE * state.hand;
  state.log[at] = c0;
  state.log[at + 1] = c1;
  state.log[at + BOARD] = -1;
  state.pending = NO_DEAL;
  state.round = 0;
  state.player = firstOf(state, state.hand);
  state.stakes = ANTE;
  state.contributions[0] = ANTE;
  state.contributions[1] = ANTE;
  state.raises = 0;
  state.calls = 0;
}

/** Deals the public card (one not in either hand) and opens the second betting round. */
export function revealPublic(state: LeducState, card: number): void {
  const at = HAND_SIZE * state.hand;
  if (state.pending !== PUBLIC_DEAL) throw new RangeError("no hand is waiting for its public card");
  if (CARDS[card] === undefined || card === state.log[at] || card === state.log[at + 1]) {
    throw new RangeError(`the public card must be one of 0..5 that neither player holds; got ${card}`);
  }
  state.log[at + BOARD] = card;
  state.pending = NO_DEAL;
}

/** Resolves the pending chance event: DEALS[outcome], or the outcome-th card left (in deck order). */
function resolveChance(state: LeducState, outcome: number): void {
  if (state.pending === PRIVATE_DEAL) {
    const cards = DEALS[outcome];
    deal(state, cards[0], cards[1]);
    return;
  }
  const at = HAND_SIZE * state.hand;
  let left = outcome;
  for (let card = 0; card < CARDS.length; card++) {
    if (card === state.log[at] || card === state.log[at + 1]) continue;
    if (left-- === 0) return revealPublic(state, card);
  }
  throw new RangeError(`no public card ${outcome}: four cards are left`);
}

/** The strength of a two-card hand: a pair beats any single card, else the higher rank wins. */
function strength(card: number, board: number): number {
  return card >> 1 === board >> 1 ? 10 + (card >> 1) : card >> 1;
}

function over(state: LeducState): boolean {
  return state.hand >= state.config.hands || state.pending !== NO_DEAL;
}

/** Ends the hand in play with seat 0's result; the next hand waits for its deal. */
function finish(state: LeducState, r0: number): readonly number[] {
  state.log[HAND_SIZE * state.hand + RESULT] = r0;
  state.totals[0] += r0;
  state.totals[1] -= r0;
  state.hand++;
  if (state.hand < state.config.hands) state.pending = PRIVATE_DEAL;
  return REWARDS[r0 + MAX_RESULT];
}

/** OpenSpiel's id of an action. */
function idOf(action: LeducAction): number {
  return action.type === "call" ? CALL_ID : action.type === "raise" ? RAISE_ID : FOLD_ID;
}

/**
 * Applies the action of the seat to act as OpenSpiel does, never dealing: the second round waits
 * for its public card, and a finished hand for the next deal. Returns the step's rewards by seat.
 */
function act(state: LeducState, action: LeducAction): readonly number[] {
  const seat = state.player;
  const id = idOf(action);
  const at = HAND_SIZE * state.hand;
  const count = state.log[at + COUNTS + state.round];
  state.log[at + ACTIONS + ROUND_SLOTS * state.round + count] = id;
  state.log[at + COUNTS + state.round] = count + 1;
  const put = state.contributions;
  if (id === FOLD_ID) {
    // The other seat takes the pot: it gains what the folder put in.
    return finish(state, seat === 0 ? -put[0] : put[1]);
  }
  if (id === RAISE_ID) {
    state.stakes += RAISE_SIZES[state.round];
    put[seat] = state.stakes;
    state.raises++;
    state.calls = 0;
    state.player = 1 - seat;
    return NO_REWARD;
  }
  put[seat] = state.stakes;
  state.calls++;
  const closed = state.raises === 0 ? state.calls === 2 : state.calls === 1;
  if (!closed) {
    state.player = 1 - seat;
    return NO_REWARD;
  }
  if (state.round === 0) {
    state.round = 1;
    state.raises = 0;
    state.calls = 0;
    state.player = firstOf(state, state.hand);
    state.pending = PUBLIC_DEAL;
    return NO_REWARD;
  }
  const s0 = strength(state.log[at], state.log[at + BOARD]);
  const s1 = strength(state.log[at + 1], state.log[at + BOARD]);
  return finish(state, s0 > s1 ? put[1] : s0 < s1 ? -put[0] : 0);
}

/** OpenSpiel's action ids of one round of a hand. */
function roundActions(state: LeducState, hand: number, round: number): number[] {
  const at = HAND_SIZE * hand;
  const from = at + ACTIONS + ROUND_SLOTS * round;
  return state.log.slice(from, from + state.log[at + COUNTS + round]);
}

function roundLetters(state: LeducState, hand: number, round: number): string {
  let s = "";
  for (const id of roundActions(state, hand, round)) s += LETTERS[id];
  return s;
}

/** Betting letters of a hand: round 1, then `/` and round 2 once it has begun. */
function betting(state: LeducState, hand: number): string {
  const second = state.log[HAND_SIZE * hand + BOARD] >= 0;
  return roundLetters(state, hand, 0) + (second ? "/" + roundLetters(state, hand, 1) : "");
}

/**
 * OpenSpiel's information-state string of the hand in play, e.g.
 * `[Observer: 0][Private: 5][Round 1][Player: 1][Pot: 4][Money: 97 99][Round1: 2][Round2: ]`.
 */
function handInfoState(state: LeducState, seat: number): string {
  const at = HAND_SIZE * state.hand;
  const put = state.contributions;
  const board = state.log[at + BOARD];
  const ids = (round: number) => roundActions(state, state.hand, round).join(" ");
  return `[Observer: ${seat}][Private: ${state.log[at + seat]}][Round ${state.round + 1}]` +
    `[Player: ${state.player}][Pot: ${put[0] + put[1]}][Money: ${MONEY - put[0]} ${MONEY - put[1]}]` +
    (board >= 0 ? `[Public: ${board}]` : "") + `[Round1: ${ids(0)}][Round2: ${ids(1)}]`;
}

/**
 * What `seat` knows over the whole match: each finished hand (own card, public card, betting, the
 * other card when shown), then the hand in play. With one hand it is OpenSpiel's string.
 */
function matchInfoState(state: LeducState, seat: number): string {
  let key = "";
  for (let h = 0; h < state.hand; h++) {
    const at = HAND_SIZE * h;
    const other = showdownOf(state, h) ? ":" + state.log[at + 1 - seat] : "";
    key += `${state.log[at + seat]}:${state.log[at + BOARD]}:${betting(state, h)}${other}|`;
  }
  return state.hand < state.config.hands ? key + handInfoState(state, seat) : key;
}

/**
 * What a seat knows of the hand in play with suits dropped: its rank, the public rank, and the
 * betting, e.g. `K:rc/Q:r`. Suits never matter in Leduc, so this loses nothing a policy can use;
 * it keys the shipped equilibrium, and the nash strategy computes the same key from an observation.
 */
export function rankKey(card: Card, publicCard: Card | null, bets: string): string {
  const slash = bets.indexOf("/");
  return slash < 0
    ? `${card[0]}:${bets}`
    : `${card[0]}:${bets.slice(0, slash)}/${publicCard![0]}:${bets.slice(slash + 1)}`;
}

function showdownOf(state: LeducState, hand: number): boolean {
  const last = roundActions(state, hand, 1);
  return last.length > 0 && last[last.length - 1] !== FOLD_ID;
}

function summary(state: LeducState, h: number, viewer: Viewer): LeducHandSummary {
  const at = HAND_SIZE * h;
  const showdown = showdownOf(state, h);
  const r0 = state.log[at + RESULT];
  const seen = (seat: number) => (showdown || viewer === seat ? CARDS[state.log[at + seat]] : null);
  const board = state.log[at + BOARD];
  return {
    first: firstOf(state, h),
    cards: [seen(0), seen(1)],
    publicCard: board >= 0 ? CARDS[board] : null,
    betting: betting(state, h),
    showdown,
    winner: r0 > 0 ? 0 : r0 < 0 ? 1 : null,
    rewards: [r0, r0 === 0 ? 0 : -r0],
  };
}

function legalSpace(state: LeducState): ActionSpace<LeducAction> {
  const facing = state.stakes > state.contributions[state.player];
  if (state.raises >= MAX_RAISES) return FOLD_CALL;
  return facing ? FOLD_CALL_RAISE : CALL_RAISE;
}

/** `<FOLD>` `<CALL>` `<RAISE>` (MARS) and `[fold]`-style tokens; the first one found decides. */
const TOKEN = /<\s*(fold|call|raise)\s*>|\[\s*(fold|call|raise|check|bet)\s*\]/i;

/** Action words and ACPC letters (a Map: the key is the sender's text). */
const WORDS: ReadonlyMap<string, string> = new Map([
  ["c", "call"],
  ["r", "raise"],
  ["f", "fold"],
  ["check", "check"],
  ["bet", "bet"],
]);

/**
 * The action an input names, with `check` and `bet` read as call and raise (checked against what
 * is owed by the caller), and ACPC letters c, r, f.
 */
function named(text: string): string | undefined {
  const token = TOKEN.exec(text);
  if (token) return (token[1] ?? token[2]).toLowerCase();
  return WORDS.get(text.trim().toLowerCase().replace(/[.!]$/, ""));
}

function cardName(card: Card): string {
  return `${RANK_NAMES[RANKS.indexOf(card[0] as (typeof RANKS)[number])]} (${card})`;
}

const PAST: Record<string, string> = { c: "called", r: "raised", f: "folded" };

/** A hand's betting in words, e.g. `you checked, the other player raised`. */
function bettingWords(bets: string, first: number, me: number | null): string {
  return bets.split("/").map((round) => {
    let toCall = false;
    return [...round].map((letter, k) => {
      const word = letter === "c" && !toCall ? "checked" : PAST[letter];
      toCall = letter === "r";
      return `${seatName(first ^ (k & 1), me ?? "public")} ${word}`;
    }).join(", ");
  }).map((words, i) => `round ${i + 1}: ${words || "no action yet"}`).join("; ");
}

/**
 * The numeric face. Action ids are OpenSpiel's: 0 Fold, 1 Call (also the check when nothing is owed), 2
 * Raise, for every config. The information-state tensor of a one-hand match is OpenSpiel's leduc_poker
 * InformationStateTensor, 30 numbers:
 *
 *   [0, 2)    the observing seat, one-hot (all 0 for the public)
 *   [2, 8)    its private card, one-hot by OpenSpiel's card number (J1 J2 Q1 Q2 K1 K2)
 *   [8, 14)   the public card, one-hot likewise (all 0 before it is dealt)
 *   [14, 30)  the betting: 2 rounds × 4 actions × 2, each action in order [1, 0] Call, [0, 1] Raise,
 *             [0, 0] Fold
 *
 * for the hand in play, or once the match is over for its last hand (as OpenSpiel's terminal tensor). A
 * match of H > 1 hands appends what the seat recalls of the match, for a shape of [32 + 36H]:
 *
 *   [30, 32)  the seat that acts first in the hand in play, one-hot (all 0 once the match is over)
 *   then H blocks of 36, block h for hand h, all 0 until that hand is over: the seat's private card (6),
 *             the other seat's (6, only after a showdown), the public card (6, 0 if the hand ended before
 *             it), the betting (16, as above) and the seat that acted first (2). For the public, seat 0's
 *             card comes first, and private cards only after a showdown.
 */
const DECK = CARDS.length;
const PRIVATE_AT = 2;
const PUBLIC_AT = PRIVATE_AT + DECK;
const BETTING_AT = PUBLIC_AT + DECK;
const BETTING_SIZE = 2 * ROUND_SLOTS * 2;
const HAND_TENSOR = BETTING_AT + BETTING_SIZE;
const FIRST_AT = HAND_TENSOR;
const PAST_AT = FIRST_AT + 2;
const PAST_SIZE = 3 * DECK + BETTING_SIZE + 2;
const ONE_HAND_SHAPE: readonly number[] = Object.freeze([HAND_TENSOR]);
/** Scratch for `actionOf`, filled and read within one call. */
const SCRATCH_MASK = new Uint8Array(ACTION_COUNT);
const CARD_INDEX = Object.fromEntries(CARDS.map((card, i) => [card, i])) as Readonly<Record<Card, number>>;
const SLASH = "/".charCodeAt(0);
/** Per betting letter, the entry of its action's pair that is set: c → 0, r → 1, f → none. */
const LETTER_BIT: Readonly<Record<string, number>> = { c: 0, r: 1, f: -1 };

function writeCard(out: Float32Array, at: number, card: Card | null): void {
  if (card !== null) out[at + CARD_INDEX[card]] = 1;
}

/** Betting letters (`crr/c`) as rounds × slots × [call, raise]. */
function writeBetting(out: Float32Array, at: number, betting: string): void {
  let slot = at;
  for (let k = 0; k < betting.length; k++) {
    if (betting.charCodeAt(k) === SLASH) {
      slot = at + 2 * ROUND_SLOTS;
      continue;
    }
    const bit = LETTER_BIT[betting[k]];
    if (bit >= 0) out[slot + bit] = 1;
    slot += 2;
  }
}

function encode(obs: LeducObservation, out: Float32Array): void {
  out.fill(0);
  const seat = obs.seat === "public" ? -1 : obs.seat;
  if (seat >= 0) out[seat] = 1;
  const history = obs.history;
  if (obs.phase === "betting") {
    writeCard(out, PRIVATE_AT, obs.card);
    writeCard(out, PUBLIC_AT, obs.publicCard);
    writeBetting(out, BETTING_AT, obs.betting);
  } else if (history.length > 0) {
    const last = history[history.length - 1];
    if (seat >= 0) writeCard(out, PRIVATE_AT, last.cards[seat]);
    writeCard(out, PUBLIC_AT, last.publicCard);
    writeBetting(out, BETTING_AT, last.betting);
  }
  if (obs.hands === 1) return;
  if (obs.first !== null) out[FIRST_AT + obs.first] = 1;
  const own = seat >= 0 ? seat : 0;
  for (let h = 0; h < history.length; h++) {
    const past = history[h];
    const at = PAST_AT + PAST_SIZE * h;
    writeCard(out, at, past.cards[own]);
    writeCard(out, at + DECK, past.cards[1 - own]);
    writeCard(out, at + 2 * DECK, past.publicCard);
    writeBetting(out, at + 3 * DECK, past.betting);
    out[at + PAST_SIZE - 2 + past.first] = 1;
  }
}

export const leducPoker: Game<LeducState, LeducAction, LeducConfig, LeducObservation> = defineGame({
  id: "leduc-poker",
  version: 1,
  title: "Leduc hold'em",
  summary: "A small poker with two betting rounds: six cards (two each of jack, queen and king), one private " +
    "card each and a public card dealt after the first round. Raises are fixed at 2 chips, then 4, with at " +
    "most two a round. A pair with the public card wins, else the higher card; equal ranks split the pot. " +
    "Large enough to need real strategy, small enough to solve exactly.",
  utility: "zero-sum",
  chanceMode: "explicit-stochastic",
  information: "imperfect",
  dynamics: "sequential",
  answerExample: "raise",
  // A match past 200 hands must bound the hands its observations list (`history`): a long run between programs,
  // stored at a few hundred bytes a decision rather than within caps.test.ts's bound.
  caps: { hands: 100_000, history: 200 },
  seats: { min: 2, max: 2 },
  schema: leducConfig,
  variants: {
    standard: {
      description: "OpenSpiel's leduc_poker: one hand, player 0 acts first in both rounds",
      config: {},
    },
  },
  defaultVariant: "standard",

  seatCount: () => 2,
  // Nothing in the config is private.
  publicConfig: (config) => config,

  rules(config) {
    const hands = config.hands === 1
      ? `one hand; player ${config.firstPlayer} acts first in both betting rounds`
      : `${config.hands} hands; player ${config.firstPlayer} acts first in both betting rounds of hand 1, and ` +
        "the first move passes to the other player every hand";
    return `Leduc hold'em for two players, ${hands}. The deck has six cards: two jacks, two queens and two ` +
      "kings (J < Q < K; suits never matter). Each player antes 1 chip and is dealt one private card. In " +
      "the first betting round the first player checks or raises; a player who owes chips calls (matches " +
      "the bet), raises (matches it and adds a raise), or folds (gives up the hand and everything put in). " +
      "Raises are 2 chips in the first round and 4 in the second, with at most two raises a round. A round " +
      "ends when both players have checked or a raise has been called. Then one public card is dealt from " +
      "the four left and the second round is played the same way. At showdown a player whose card pairs " +
      "the public card wins; otherwise the higher card wins, and equal ranks split the pot. You win what " +
      "the other player put in, or lose what you put in. Your score is the sum of your net chips over all hands.";
  },

  start,

  chance(state) {
    return state.pending === PRIVATE_DEAL ? DEAL_ODDS : state.pending === PUBLIC_DEAL ? PUBLIC_ODDS : NO_CHANCE;
  },

  resolve: resolveChance,

  // Every chance event's outcomes are equally likely: one draw, without scanning the odds.
  sample: (state, rng) => rng.int(state.pending === PRIVATE_DEAL ? DEALS.length : PUBLIC_ODDS.length),

  toAct(state) {
    return over(state) ? NOBODY : SEAT[state.player];
  },

  legal(state, seat) {
    return over(state) || seat !== state.player ? NOTHING : legalSpace(state);
  },

  play: (state, moves) => act(state, moves[state.player]!),

  returns: (state) => [state.totals[0], state.totals[1]],

  observe(state, viewer) {
    if (viewer !== "public" && viewer !== 0 && viewer !== 1) throw new RangeError(`no seat ${viewer} in leduc-poker`);
    const history: LeducHandSummary[] = [];
    const first = firstListedHand(state.hand, state.config.history);
    for (let h = first; h < state.hand; h++) history.push(summary(state, h, viewer));
    const playing = !over(state);
    const h = state.hand;
    const at = HAND_SIZE * h;
    const put = state.contributions;
    const own = playing && viewer !== "public";
    const board = playing ? state.log[at + BOARD] : -1;
    return {
      game: "leduc-poker",
      seat: viewer,
      hand: h + 1,
      hands: state.config.hands,
      phase: playing ? "betting" : "over",
      round: playing ? state.round + 1 : null,
      first: playing ? firstOf(state, h) : null,
      toAct: playing ? state.player : null,
      card: own ? CARDS[state.log[at + viewer]] : null,
      publicCard: board >= 0 ? CARDS[board] : null,
      betting: playing ? betting(state, h) : "",
      pot: playing ? put[0] + put[1] : 0,
      contributions: playing ? [put[0], put[1]] : [0, 0],
      owed: playing ? state.stakes - put[state.player] : 0,
      raises: playing ? state.raises : 0,
      maxRaises: MAX_RAISES,
      raiseSize: RAISE_SIZES[playing ? state.round : 0],
      legal: playing && viewer === state.player
        ? legalSpace(state).map((f) => (f as { action: LeducAction }).action.type)
        : [],
      infoState: own ? handInfoState(state, viewer) : null,
      history,
      totals: [state.totals[0], state.totals[1]],
    };
  },

  infoState: matchInfoState,

  describe(obs) {
    const me = obs.seat === "public" ? null : obs.seat;
    const who = (seat: number) => seatName(seat, obs.seat);
    const lines: string[] = [];
    lines.push(
      obs.phase === "over"
        ? `Leduc hold'em: the match is over after ${obs.hands} hand(s).`
        : `Leduc hold'em, hand ${obs.hand} of ${obs.hands}, betting round ${obs.round} of 2.`,
    );
    lines.push(me === null ? "You are watching players 0 and 1." : `You are player ${me}.`);
    obs.history.forEach((past, i) => {
      const order = me === null ? [0, 1] : [me, 1 - me];
      const cards = order.map((s) => `${who(s)} had ${past.cards[s] ? cardName(past.cards[s]!) : "an unseen card"}`);
      const board = past.publicCard ? `public card ${cardName(past.publicCard)}; ` : "";
      const end = past.showdown
        ? past.winner === null ? "showdown, split pot" : `showdown, ${who(past.winner)} won`
        : "no showdown";
      lines.push(
        `- Hand ${obs.hand - obs.history.length + i}: ${cards.join(", ")}; ${board}${
          bettingWords(past.betting, past.first, me)
        }; ${end} ` +
          `(${order.map((s) => `${who(s)} ${signed(past.rewards[s])}`).join(", ")}).`,
      );
    });
    const totals = me === null
      ? `Totals: player 0 ${signed(obs.totals[0])}, player 1 ${signed(obs.totals[1])}.`
      : `Your total is ${signed(obs.totals[me])}; the other player's is ${signed(obs.totals[1 - me])}.`;
    if (obs.phase === "over") {
      lines.push(totals);
      return lines.join("\n");
    }
    if (obs.card) lines.push(`Your card is the ${cardName(obs.card)}.`);
    lines.push(
      obs.publicCard
        ? `The public card is the ${cardName(obs.publicCard)}.`
        : "The public card comes after this round.",
    );
    const first = who(obs.first!).replace(/^./, (c) => c.toUpperCase());
    lines.push(
      `${first} ${obs.first === me ? "act" : "acts"} first in both rounds. So far, ${
        bettingWords(obs.betting, obs.first!, me)
      }.`,
    );
    lines.push(
      `The pot holds ${obs.pot} chips (${who(0)} put in ${obs.contributions[0]}, ${who(1)} ${obs.contributions[1]}); ` +
        `${obs.raises} of ${obs.maxRaises} raises made this round, each ${obs.raiseSize} chips.`,
    );
    lines.push(totals);
    if (me !== null) {
      if (obs.legal.length === 0) {
        lines.push("Wait for the other player's move.");
      } else {
        const options = obs.legal.map((a) =>
          a === "call"
            ? (obs.owed > 0 ? `call (add ${obs.owed})` : "call (check: add nothing)")
            : a === "raise"
            ? `raise (add ${obs.owed + obs.raiseSize})`
            : "fold"
        );
        lines.push(
          `Your move: ${options.join(", ")}. Answer with ${obs.legal.map((a) => `<${a.toUpperCase()}>`).join(" or ")}` +
            ` (or JSON {"type":"${obs.legal[0]}"}).`,
        );
      }
    }
    return lines.join("\n");
  },

  parse(input, state, seat): LeducAction | ActionError {
    const space = leducPoker.legal(state, seat);
    if (space.length === 0) {
      const reason = over(state) ? "the match is over" : `it is player ${state.player}'s turn`;
      return new ActionError("not_your_turn", reason, "");
    }
    const owed = state.stakes - state.contributions[seat];
    const wanted = requestedType(input, named);
    let given = input;
    if (wanted === "check" || wanted === "bet") {
      if (owed > 0) {
        return new ActionError(
          "illegal_action",
          `you owe ${owed} chip(s), so you cannot ${wanted}`,
          describeSpace(space),
        );
      }
      // With nothing owed, check is OpenSpiel's call and bet its raise.
      const type = wanted === "check" ? "call" : "raise";
      if (typeof input === "string") given = type;
      else if (typeof input === "object" && input !== null && Object.keys(input).length === 1) given = { type };
    }
    const result = parseInput(space, given, (text) => {
      const name = named(text);
      return name !== undefined && (ACTION_TYPES as string[]).includes(name)
        ? { type: name as LeducActionType }
        : undefined;
    });
    if (result instanceof ActionError && result.code === "illegal_action") {
      // Explain in poker terms, also for text like `raise now` that names the action loosely.
      const asked = wanted ?? (typeof input === "string" ? input.trim().toLowerCase().split(/\s+/)[0] : undefined);
      if (asked === "fold" && owed === 0) {
        return new ActionError(
          "illegal_action",
          "nothing is owed, so there is nothing to fold: calling is a free check",
          describeSpace(space),
        );
      }
      if ((asked === "raise" || asked === "bet") && state.raises >= MAX_RAISES) {
        return new ActionError(
          "illegal_action",
          `this betting round has had its ${MAX_RAISES} raises, the most allowed`,
          describeSpace(space),
        );
      }
    }
    return result;
  },

  clone(state) {
    return {
      config: state.config,
      hand: state.hand,
      pending: state.pending,
      log: state.log.slice(),
      round: state.round,
      player: state.player,
      stakes: state.stakes,
      contributions: [state.contributions[0], state.contributions[1]],
      raises: state.raises,
      calls: state.calls,
      totals: [state.totals[0], state.totals[1]],
    };
  },

  actionCount(config) {
    checkFullHistory("leduc-poker", config.hands, config.history);
    return ACTION_COUNT;
  },
  actionId: idOf,

  actionOf(id, state, seat) {
    leducPoker.legalMask(state, seat, SCRATCH_MASK);
    return idProblem(id, SCRATCH_MASK) ?? ID_ACTIONS[id];
  },

  legalMask(state, seat, out) {
    // legalSpace's forms, read off the state without building them.
    out.fill(0);
    if (over(state) || seat !== state.player) return;
    out[CALL_ID] = 1;
    if (state.raises >= MAX_RAISES || state.stakes > state.contributions[state.player]) out[FOLD_ID] = 1;
    if (state.raises < MAX_RAISES) out[RAISE_ID] = 1;
  },

  observationShape(config) {
    checkFullHistory("leduc-poker", config.hands, config.history);
    return config.hands === 1 ? ONE_HAND_SHAPE : [PAST_AT + PAST_SIZE * config.hands];
  },
  encode,

  encodeState(state, seat, out) {
    // A one-hand match in play or over; anything else (a deal under way, several hands) through its observation.
    const ended = state.hand >= state.config.hands;
    if (state.config.hands !== 1 || (!ended && state.pending !== NO_DEAL)) {
      return encode(leducPoker.observe(state, seat), out);
    }
    out.fill(0);
    out[seat] = 1;
    const log = state.log;
    out[PRIVATE_AT + log[seat]] = 1;
    if (log[BOARD] >= 0) out[PUBLIC_AT + log[BOARD]] = 1;
    for (let round = 0; round < 2; round++) {
      const from = ACTIONS + ROUND_SLOTS * round;
      for (let k = 0; k < log[COUNTS + round]; k++) {
        const id = log[from + k];
        if (id !== FOLD_ID) out[BETTING_AT + 2 * (ROUND_SLOTS * round + k) + (id === RAISE_ID ? 1 : 0)] = 1;
      }
    }
  },
});
