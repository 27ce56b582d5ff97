import { z } from "zod";
import { checkFullHistory, checkHistory, firstListedHand, historyKey } from "../core/config.ts";
import { ActionError, type ActionSpace, describeSpace, parseInput } from "../core/action.ts";
import { defineGame, type Game, type Viewer } from "../core/game.ts";
import { idProblem } from "../core/numeric.ts";
import { grouped, requestedType, seatName, signed } from "../core/text.ts";

/**
 * Kuhn poker (Kuhn 1950), as OpenSpiel plays it: a three-card deck, one card each, an ante of one
 * chip, and at most one bet of one chip per hand. A match may be several hands, the first move
 * passing from seat to seat.
 */

/**
 * Every decision's observation lists every finished hand by default, so a match's stored observations grow
 * with hands²: past this many hands a match must bound the list (`history`).
 */
const FULL_HISTORY_HANDS = 300;
/** The longest match: a long run between programs, whose observations list at most `history` hands. */
const MAX_HANDS = 100_000;

export const kuhnConfig = z.strictObject({
  rounds: z.int().min(1).max(MAX_HANDS).default(1)
    .describe(
      `hands per match, at most ${grouped(MAX_HANDS)}; the seat that acts first alternates from hand to hand`,
    ),
  firstPlayer: z.int().min(0).max(1).default(0).describe("the seat that acts first in hand 1"),
  fixedPot: z.boolean().default(false).describe(
    "false: bets and calls add a chip to the pot, so a hand is worth ±1 or ±2 (OpenSpiel); true: the pot " +
      "stays at the two antes, so the winner of a hand nets +1 and the loser −1 whatever was bet (TextArena)",
  ),
  history: historyKey(FULL_HISTORY_HANDS),
}).check((ctx) => checkHistory(ctx, ctx.value.rounds, FULL_HISTORY_HANDS));
export type KuhnConfig = z.infer<typeof kuhnConfig>;

export const CARDS = ["J", "Q", "K"] as const;
export type Card = (typeof CARDS)[number];

export type KuhnActionType = "check" | "bet" | "call" | "fold";
export interface KuhnAction {
  readonly type: KuhnActionType;
}

export interface KuhnState {
  readonly config: KuhnConfig;
  /** The hand in play, 0-based (`rounds` once the match is over). */
  hand: number;
  /** Whether the hand in play has its cards; false only between a hand's end and the next deal. */
  dealt: boolean;
  /**
   * Every hand's record, HAND_SIZE numbers from HAND_SIZE * hand: the cards of seats 0 and 1 (0 J,
   * 1 Q, 2 K), the betting bits (bit k set when the k-th action put a chip in, a bet or a call),
   * the number of actions, and seat 0's result. One plain array: allocating typed arrays would
   * cost more than playing a short match.
   */
  readonly log: number[];
  readonly totals: [number, number];
}

const HAND_SIZE = 5;
const BETS = 2;
const LENGTH = 3;
const RESULT = 4;

/** A finished hand as a viewer saw it. Pairs are by seat. */
export interface KuhnHandSummary {
  /** The seat that acted first. */
  readonly first: number;
  /** Both cards, with null for any the viewer never saw (a fold reveals nothing). */
  readonly cards: [Card | null, Card | null];
  /** OpenSpiel's betting letters: p (check or fold), b (bet or call). */
  readonly betting: string;
  readonly actions: KuhnActionType[];
  readonly showdown: boolean;
  readonly winner: number;
  readonly rewards: [number, number];
}

export interface KuhnObservation {
  readonly game: "kuhn-poker";
  /** The viewer's seat, or "public". */
  readonly seat: number | "public";
  /** 1-based hand in play (`hands` + 1 once over). */
  readonly hand: number;
  readonly hands: number;
  readonly phase: "betting" | "over";
  readonly fixedPot: boolean;
  /** The seat that acts first this hand (null once over). */
  readonly first: number | null;
  readonly toAct: number | null;
  /** The viewer's card this hand (null for the public and once over). */
  readonly card: Card | null;
  /**
   * OpenSpiel's information-state string for this hand: the viewer's card digit (0 J, 1 Q, 2 K)
   * and the betting letters, e.g. "0pb" (null for the public and once over).
   */
  readonly infoState: string | null;
  /** This hand's betting letters, p (check or fold) and b (bet or call). */
  readonly betting: string;
  readonly actions: KuhnActionType[];
  readonly pot: number;
  readonly contributions: [number, number];
  /** What the viewer may do now. */
  readonly legal: KuhnActionType[];
  readonly history: KuhnHandSummary[];
  readonly totals: [number, number];
}

const CHECK: KuhnAction = Object.freeze({ type: "check" });
const BET: KuhnAction = Object.freeze({ type: "bet" });
const CALL: KuhnAction = Object.freeze({ type: "call" });
const FOLD: KuhnAction = Object.freeze({ type: "fold" });
/** OpenSpiel's action ids: Pass (check, or fold facing a bet) and Bet (bet, or call facing a bet). */
const PASS_ID = 0;
const BET_ID = 1;
const ACTION_COUNT = 2;
/** The actions by id, with no bet out and facing one. */
const OPEN_ACTIONS: readonly KuhnAction[] = Object.freeze([CHECK, BET]);
const FACING_ACTIONS: readonly KuhnAction[] = Object.freeze([FOLD, CALL]);
const fixed = (action: KuhnAction) => Object.freeze({ kind: "fixed" as const, action });
// In id order, so "the first action" is check or fold, as in OpenSpiel.
const OPEN: ActionSpace<KuhnAction> = Object.freeze(OPEN_ACTIONS.map(fixed));
const FACING: ActionSpace<KuhnAction> = Object.freeze(FACING_ACTIONS.map(fixed));
const NOTHING: ActionSpace<KuhnAction> = Object.freeze([]);
const SEAT = [Object.freeze([0]), Object.freeze([1])];
const NOBODY: readonly number[] = Object.freeze([]);

/** Seat 0's reward r as a frozen pair, for r in [-2, 2]: finished hands allocate nothing. */
const REWARDS: readonly (readonly number[])[] = [-2, -1, 0, 1, 2].map((r) => Object.freeze([r, r === 0 ? 0 : -r]));
const NO_REWARD = REWARDS[2];

/**
 * How a hand stands after its betting, indexed by (length << 3 | bets): 0 still open, 1 showdown
 * for the antes, 2 showdown after a bet and a call, 3 the second player folded, 4 the first did.
 */
const OUTCOME = new Int8Array(32);
OUTCOME[(2 << 3) | 0b00] = 1; // pp
OUTCOME[(2 << 3) | 0b11] = 2; // bb
OUTCOME[(2 << 3) | 0b01] = 3; // bp
OUTCOME[(3 << 3) | 0b010] = 4; // pbp
OUTCOME[(3 << 3) | 0b110] = 2; // pbb

/** The six deals as (seat 0's card, seat 1's card), each with probability 1/6. */
export const DEALS: readonly (readonly [number, number])[] = Object.freeze(
  [[0, 1], [0, 2], [1, 0], [1, 2], [2, 0], [2, 1]].map((d) => Object.freeze(d as [number, number])),
);
const DEAL_ODDS: readonly number[] = Object.freeze(DEALS.map(() => 1 / DEALS.length));
const NO_CHANCE: readonly number[] = Object.freeze([]);

/** A match before its first deal. */
export function start(config: KuhnConfig): KuhnState {
  return {
    config,
    hand: 0,
    dealt: false,
    log: new Array<number>(HAND_SIZE * config.rounds).fill(0),
    totals: [0, 0],
  };
}

/** Deals the hand in play: `c0` to seat 0 and `c1` to seat 1 (0 J, 1 Q, 2 K, distinct). */
export function deal(state: KuhnState, c0: number, c1: number): void {
  if (state.dealt || state.hand >= state.config.rounds) throw new RangeError("no hand is waiting for its cards");
  if (c0 === c1 || CARDS[c0] === undefined || CARDS[c1] === undefined) {
    throw new RangeError(`Kuhn cards are two distinct of 0 (J), 1 (Q), 2 (K); got ${c0}, ${c1}`);
  }
  state.log[HAND_SIZE * state.hand] = c0;
  state.log[HAND_SIZE * state.hand + 1] = c1;
  state.dealt = true;
}

/** The seat that acts first in hand `hand`. */
function firstOf(state: KuhnState, hand: number): number {
  return (state.config.firstPlayer + hand) & 1;
}

/** OpenSpiel's id of an action: 1 (Bet) for the actions that put a chip in, else 0 (Pass). */
function idOf(action: KuhnAction): number {
  return action.type === "bet" || action.type === "call" ? BET_ID : PASS_ID;
}

function over(state: KuhnState): boolean {
  return state.hand >= state.config.rounds || !state.dealt;
}

/** Whether the seat to act faces a bet. */
function facing(state: KuhnState): boolean {
  const at = HAND_SIZE * state.hand;
  const n = state.log[at + LENGTH];
  return n > 0 && ((state.log[at + BETS] >> (n - 1)) & 1) === 1;
}

/** The seat to act in the hand in play. */
function actor(state: KuhnState): number {
  return firstOf(state, state.hand) ^ (state.log[HAND_SIZE * state.hand + LENGTH] & 1);
}

/**
 * Applies the action of the seat to act and settles the hand when it ends; never deals. Returns
 * the step's rewards by seat.
 */
function act(state: KuhnState, action: KuhnAction): readonly number[] {
  const h = state.hand;
  const log = state.log;
  const at = HAND_SIZE * h;
  const n = log[at + LENGTH];
  // Bet is the id of the actions that put a chip in.
  const chip = idOf(action);
  const bets = log[at + BETS] | (chip << n);
  log[at + BETS] = bets;
  log[at + LENGTH] = n + 1;
  const outcome = OUTCOME[((n + 1) << 3) | bets];
  if (outcome === 0) return NO_REWARD;
  const first = firstOf(state, h);
  let won: number; // for the first player
  if (outcome === 3) won = 1;
  else if (outcome === 4) won = -1;
  else {
    const stake = state.config.fixedPot ? 1 : outcome;
    won = log[at + first] > log[at + 1 - first] ? stake : -stake;
  }
  const r0 = first === 0 ? won : -won;
  log[at + RESULT] = r0;
  state.totals[0] += r0;
  state.totals[1] -= r0;
  state.hand = h + 1;
  state.dealt = false;
  return REWARDS[r0 + 2];
}

/** The words of a hand's actions, from its betting bits. */
function actionWords(bets: number, length: number): KuhnActionType[] {
  const words: KuhnActionType[] = [];
  for (let k = 0; k < length; k++) {
    const chip = (bets >> k) & 1;
    const facingBet = k > 0 && ((bets >> (k - 1)) & 1) === 1;
    words.push(chip ? (facingBet ? "call" : "bet") : (facingBet ? "fold" : "check"));
  }
  return words;
}

function letters(bets: number, length: number): string {
  let s = "";
  for (let k = 0; k < length; k++) s += (bets >> k) & 1 ? "b" : "p";
  return s;
}

/** Chips each seat has put in the hand in play. */
function contributions(state: KuhnState): [number, number] {
  const put: [number, number] = [1, 1];
  if (state.config.fixedPot || over(state)) return put;
  const first = firstOf(state, state.hand);
  const at = HAND_SIZE * state.hand;
  const bets = state.log[at + BETS];
  for (let k = 0; k < state.log[at + LENGTH]; k++) put[first ^ (k & 1)] += (bets >> k) & 1;
  return put;
}

/** OpenSpiel's information-state string of the hand in play: card digit, then betting letters. */
function handInfoState(state: KuhnState, seat: number): string {
  const at = HAND_SIZE * state.hand;
  return `${state.log[at + seat]}${letters(state.log[at + BETS], state.log[at + LENGTH])}`;
}

/**
 * What `seat` knows over the whole match: each finished hand (own card, betting, the other card
 * when shown), then the hand in play. With one hand it is OpenSpiel's string.
 */
function matchInfoState(state: KuhnState, seat: number): string {
  let key = "";
  for (let h = 0; h < state.hand; h++) {
    const at = HAND_SIZE * h;
    const bets = state.log[at + BETS];
    const length = state.log[at + LENGTH];
    const other = OUTCOME[(length << 3) | bets] <= 2 ? String(state.log[at + 1 - seat]) : "";
    key += `${state.log[at + seat]}${letters(bets, length)}${other}|`;
  }
  return state.hand < state.config.rounds ? key + handInfoState(state, seat) : key;
}

function summary(state: KuhnState, h: number, viewer: Viewer): KuhnHandSummary {
  const at = HAND_SIZE * h;
  const bets = state.log[at + BETS];
  const length = state.log[at + LENGTH];
  const showdown = OUTCOME[(length << 3) | bets] <= 2;
  const r0 = state.log[at + RESULT];
  const seen = (seat: number) => showdown || viewer === seat ? CARDS[state.log[at + seat]] : null;
  return {
    first: firstOf(state, h),
    cards: [seen(0), seen(1)],
    betting: letters(bets, length),
    actions: actionWords(bets, length),
    showdown,
    winner: r0 > 0 ? 0 : 1,
    rewards: [r0, r0 === 0 ? 0 : -r0],
  };
}

const PAST: Record<KuhnActionType, string> = { check: "checked", bet: "bet", call: "called", fold: "folded" };

/** `[check]`-style tokens (TextArena); the first one found decides. */
const BRACKET = /\[\s*(check|bet|call|fold)\s*\]/i;
/** `<PASS>` / `<BET>` (MARS), also inside `<answer>…</answer>`. */
const ANGLE = /<\s*(pass|bet)\s*>/i;

/**
 * Text aliases: `[check]` `[bet]` `[call]` `[fold]` (TextArena), `<PASS>` `<BET>` (MARS) and `Pass` /
 * `Bet` as OpenSpiel writes them, where Pass checks or folds and Bet bets or calls as the situation
 * allows, and ACPC letters `c` (check or call), `r` (bet), `f` (fold). A lowercase `bet` is the plain
 * action word, so facing a bet it is refused rather than read as a call.
 */
function alias(text: string, facingBet: boolean): KuhnAction | undefined {
  const bracket = BRACKET.exec(text);
  if (bracket) return { type: bracket[1].toLowerCase() as KuhnActionType };
  const angle = ANGLE.exec(text);
  const raw = angle ? angle[1].toUpperCase() : text.trim().replace(/[.!]$/, "");
  // Pass and the one-letter forms in any case; bet only as OpenSpiel and MARS write it.
  const word = raw.length === 1 || raw.toLowerCase() === "pass" ? raw.toLowerCase() : raw;
  switch (word) {
    case "pass":
      return facingBet ? FOLD : CHECK;
    case "BET":
    case "Bet":
      return facingBet ? CALL : BET;
    case "c":
      return facingBet ? CALL : CHECK;
    case "r":
      return BET;
    case "f":
      return FOLD;
  }
  return undefined;
}

/** Why an action that is not legal now is not, in poker terms (Maps: the key is the sender's word). */
const WHY: Record<"open" | "facing", ReadonlyMap<string, string>> = {
  open: new Map([
    ["call", "there is no bet to call"],
    ["fold", "there is no bet to fold to, and checking costs nothing"],
  ]),
  facing: new Map([
    ["check", "you face a bet, so you cannot check"],
    ["bet", "there is already a bet, and a hand allows only one"],
  ]),
};

/**
 * The numeric face. Action ids are OpenSpiel's: 0 Pass (check, or fold facing a bet) and 1 Bet (bet, or
 * call facing a bet), for every config. The information-state tensor of a one-hand match is OpenSpiel's
 * kuhn_poker InformationStateTensor, 11 numbers:
 *
 *   [0, 2)   the observing seat, one-hot (all 0 for the public)
 *   [2, 5)   its card, one-hot J, Q, K
 *   [5, 11)  the betting, one row of 2 per action in order: [1, 0] Pass, [0, 1] Bet
 *
 * for the hand in play, or once the match is over for its last hand (as OpenSpiel's terminal tensor). A
 * match of R > 1 hands appends what the seat recalls of the match, for a shape of [13 + 14R]:
 *
 *   [11, 13)  the seat that acts first in the hand in play, one-hot (all 0 once the match is over)
 *   then R blocks of 14, block h for hand h, all 0 until that hand is over: the seat's card (3), the other
 *            seat's card (3, only after a showdown), the betting (3 × 2, as above) and the seat that acted
 *            first (2). For the public, seat 0's card comes first, and cards only after a showdown.
 */
const DECK = CARDS.length;
/** A hand has at most three actions (check, bet, then fold or call): OpenSpiel's betting rows. */
const BETTING_ROWS = 3;
const CARD_AT = 2;
const BETTING_AT = CARD_AT + DECK;
const HAND_TENSOR = BETTING_AT + 2 * BETTING_ROWS;
const FIRST_AT = HAND_TENSOR;
const PAST_AT = FIRST_AT + 2;
const PAST_SIZE = 2 * DECK + 2 * BETTING_ROWS + 2;
const ONE_HAND_SHAPE: readonly number[] = Object.freeze([HAND_TENSOR]);
/** Scratch for `actionOf`, filled and read within one call. */
const SCRATCH_MASK = new Uint8Array(ACTION_COUNT);
const CARD_INDEX = Object.fromEntries(CARDS.map((card, i) => [card, i])) as Readonly<Record<Card, number>>;
const B = "b".charCodeAt(0);

function writeCard(out: Float32Array, at: number, card: Card | null): void {
  if (card !== null) out[at + CARD_INDEX[card]] = 1;
}

/** One row of 2 per betting letter: p → [1, 0], b → [0, 1]. */
function writeBetting(out: Float32Array, at: number, betting: string): void {
  for (let k = 0; k < betting.length; k++) out[at + 2 * k + (betting.charCodeAt(k) === B ? BET_ID : PASS_ID)] = 1;
}

function encode(obs: KuhnObservation, out: Float32Array): void {
  out.fill(0);
  const seat = obs.seat === "public" ? -1 : obs.seat;
  if (seat >= 0) out[seat] = 1;
  const history = obs.history;
  if (obs.phase === "betting") {
    writeCard(out, CARD_AT, obs.card);
    writeBetting(out, BETTING_AT, obs.betting);
  } else if (history.length > 0) {
    const last = history[history.length - 1];
    if (seat >= 0) writeCard(out, CARD_AT, last.cards[seat]);
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
    writeBetting(out, at + 2 * DECK, past.betting);
    out[at + PAST_SIZE - 2 + past.first] = 1;
  }
}

export const kuhnPoker: Game<KuhnState, KuhnAction, KuhnConfig, KuhnObservation> = defineGame({
  id: "kuhn-poker",
  version: 1,
  title: "Kuhn poker",
  summary: "The smallest real poker: a deck of a jack, a queen and a king, one card each, an ante of one chip " +
    "and at most one bet of one chip. The player who acts first checks or bets; facing a bet, a player calls or " +
    "folds. The higher card takes the pot at showdown. A classic testbed for equilibrium play, with known exact " +
    "values; matches may run several hands with the first move alternating.",
  utility: "zero-sum",
  chanceMode: "explicit-stochastic",
  information: "imperfect",
  dynamics: "sequential",
  answerExample: "bet",
  // A match past 300 hands must bound the hands its observations list (`history`): a long run between programs,
  // stored at a few hundred bytes a decision rather than within caps.test.ts's bound.
  caps: { rounds: 100_000, history: 300 },
  seats: { min: 2, max: 2 },
  schema: kuhnConfig,
  variants: {
    standard: {
      description: "OpenSpiel's rules: one hand, player 0 acts first, bets grow the pot (hands worth ±1 or ±2)",
      config: {},
    },
    textarena: {
      description: "TextArena's KuhnPoker-v0: three hands, player 1 acts first in hand 1 and the first move " +
        "alternates, and the pot stays at the two antes, so every hand is worth exactly ±1",
      config: { rounds: 3, firstPlayer: 1, fixedPot: true },
    },
  },
  defaultVariant: "standard",

  seatCount: () => 2,
  // Nothing in the config is private.
  publicConfig: (config) => config,

  rules(config) {
    const hands = config.rounds === 1
      ? `one hand; player ${config.firstPlayer} acts first`
      : `${config.rounds} hands; player ${config.firstPlayer} acts first in hand 1, and the first move passes ` +
        "to the other player every hand";
    const pot = config.fixedPot
      ? "Bets and calls do not change the pot in this variant: it stays at the two antes, so the winner of a " +
        "hand gains exactly 1 chip and the loser loses 1, whatever was bet; betting matters only because a " +
        "player who folds loses the hand."
      : "Bets and calls go into the pot: a hand that ends without a bet is worth 1 chip, one with a bet and a " +
        "call 2 chips, and a fold loses the 1 chip already in.";
    return `Kuhn poker for two players, ${hands}. The deck has three cards, jack (J) < queen (Q) < king (K). ` +
      "At the start of every hand each player puts 1 chip (the ante) into the pot and is dealt one card at " +
      "random; the third card stays face down, and you see only your own card. The first player checks or " +
      "bets 1 chip. After a check, the second player checks (showdown) or bets; after a bet, the other player " +
      "calls (puts in 1 chip too, then showdown) or folds (gives up the pot; no cards are shown). At showdown " +
      `the higher card wins the pot. ${pot} Your score is the sum of your net chips over all hands.`;
  },

  start,

  chance(state) {
    return state.dealt || state.hand >= state.config.rounds ? NO_CHANCE : DEAL_ODDS;
  },

  resolve(state, outcome) {
    const cards = DEALS[outcome];
    deal(state, cards[0], cards[1]);
  },

  // The deals are equally likely: one draw, without scanning the odds.
  sample: (_, rng) => rng.int(DEALS.length),

  toAct(state) {
    return over(state) ? NOBODY : SEAT[actor(state)];
  },

  legal(state, seat) {
    if (over(state) || seat !== actor(state)) return NOTHING;
    return facing(state) ? FACING : OPEN;
  },

  play: (state, moves) => act(state, moves[actor(state)]!),

  returns: (state) => [state.totals[0], state.totals[1]],

  observe(state, viewer) {
    if (viewer !== "public" && viewer !== 0 && viewer !== 1) throw new RangeError(`no seat ${viewer} in kuhn-poker`);
    const { config } = state;
    const history: KuhnHandSummary[] = [];
    const first = firstListedHand(state.hand, state.config.history);
    for (let h = first; h < state.hand; h++) history.push(summary(state, h, viewer));
    const playing = !over(state);
    const h = state.hand;
    const bets = playing ? state.log[HAND_SIZE * h + BETS] : 0;
    const length = playing ? state.log[HAND_SIZE * h + LENGTH] : 0;
    const toAct = playing ? actor(state) : null;
    const put = contributions(state);
    const own = playing && viewer !== "public";
    return {
      game: "kuhn-poker",
      seat: viewer,
      hand: h + 1,
      hands: config.rounds,
      phase: playing ? "betting" : "over",
      fixedPot: config.fixedPot,
      first: playing ? firstOf(state, h) : null,
      toAct,
      card: own ? CARDS[state.log[HAND_SIZE * h + viewer]] : null,
      infoState: own ? handInfoState(state, viewer) : null,
      betting: letters(bets, length),
      actions: actionWords(bets, length),
      pot: playing ? put[0] + put[1] : 0,
      contributions: playing ? put : [0, 0],
      legal: toAct !== null && toAct === viewer ? (facing(state) ? ["fold", "call"] : ["check", "bet"]) : [],
      history,
      totals: [state.totals[0], state.totals[1]],
    };
  },

  infoState: matchInfoState,

  describe(obs) {
    const me = obs.seat === "public" ? null : obs.seat;
    const who = (seat: number) => seatName(seat, obs.seat);
    const Who = (seat: number) => who(seat).replace(/^./, (c) => c.toUpperCase());
    const lines: string[] = [];
    lines.push(
      obs.phase === "over"
        ? `Kuhn poker: the match is over after ${obs.hands} hand(s).`
        : `Kuhn poker, hand ${obs.hand} of ${obs.hands}.`,
    );
    lines.push(me === null ? "You are watching players 0 and 1." : `You are player ${me}.`);
    obs.history.forEach((past, i) => {
      const order = me === null ? [0, 1] : [me, 1 - me];
      const cards = order.map((s) => `${who(s)} had ${past.cards[s] ?? "an unseen card"}`);
      const moves = past.actions.map((a, k) => `${who(past.first ^ (k & 1))} ${PAST[a]}`).join(", ");
      const end = past.showdown ? `showdown, ${who(past.winner)} won` : "no showdown";
      lines.push(
        `- Hand ${obs.hand - obs.history.length + i}: ${cards.join(", ")}; ${moves}; ${end} ` +
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
    if (obs.card) lines.push(`Your card is ${obs.card} (J < Q < K).`);
    lines.push(`${Who(obs.first!)} ${me === obs.first ? "act" : "acts"} first this hand.`);
    lines.push(
      obs.actions.length === 0
        ? "No one has acted yet."
        : `So far: ${obs.actions.map((a, k) => `${who(obs.first! ^ (k & 1))} ${PAST[a]}`).join(", ")}.`,
    );
    lines.push(
      obs.fixedPot
        ? "The pot holds the two antes and stays at 2 chips: the winner of this hand gains 1, the loser loses 1."
        : `The pot holds ${obs.pot} chips (${who(0)} put in ${obs.contributions[0]}, ${who(1)} ${
          obs.contributions[1]
        }).`,
    );
    lines.push(totals);
    if (me !== null) {
      lines.push(
        obs.legal.length > 0
          ? `Your move: ${obs.legal.join(" or ")}. Answer with ${obs.legal.map((a) => `[${a}]`).join(" or ")} ` +
            `(or JSON {"type":"${obs.legal[0]}"}).`
          : "Wait for the other player's move.",
      );
    }
    return lines.join("\n");
  },

  parse(input, state, seat): KuhnAction | ActionError {
    const space = kuhnPoker.legal(state, seat);
    if (space.length === 0) {
      const reason = over(state) ? "the match is over" : `it is player ${kuhnPoker.toAct(state)[0]}'s turn`;
      return new ActionError("not_your_turn", reason, "");
    }
    const facingBet = facing(state);
    const result = parseInput(space, input, (text) => alias(text, facingBet));
    if (result instanceof ActionError && result.code === "illegal_action") {
      const why = WHY[facingBet ? "facing" : "open"].get(
        requestedType(input, (text) => alias(text, facingBet)?.type ?? text.toLowerCase().split(/\s+/)[0]) ?? "",
      );
      if (why) {
        return new ActionError("illegal_action", why, describeSpace(space));
      }
    }
    return result;
  },

  clone(state) {
    return {
      config: state.config,
      hand: state.hand,
      dealt: state.dealt,
      log: state.log.slice(),
      totals: [state.totals[0], state.totals[1]],
    };
  },

  actionCount(config) {
    checkFullHistory("kuhn-poker", config.rounds, config.history);
    return ACTION_COUNT;
  },
  actionId: idOf,

  actionOf(id, state, seat) {
    kuhnPoker.legalMask(state, seat, SCRATCH_MASK);
    return idProblem(id, SCRATCH_MASK) ?? (facing(state) ? FACING_ACTIONS : OPEN_ACTIONS)[id];
  },

  legalMask(state, seat, out) {
    // Both ids are legal whenever the seat is to act: Pass and Bet always mean something.
    const legal = over(state) || seat !== actor(state) ? 0 : 1;
    out[PASS_ID] = legal;
    out[BET_ID] = legal;
  },

  observationShape(config) {
    checkFullHistory("kuhn-poker", config.rounds, config.history);
    return config.rounds === 1 ? ONE_HAND_SHAPE : [PAST_AT + PAST_SIZE * config.rounds];
  },
  encode,

  encodeState(state, seat, out) {
    // A one-hand match in play or over; anything else through its observation.
    const ended = state.hand >= state.config.rounds;
    if (state.config.rounds !== 1 || (!ended && !state.dealt)) return encode(kuhnPoker.observe(state, seat), out);
    out.fill(0);
    out[seat] = 1;
    const at = 0; // the one hand's record
    out[CARD_AT + state.log[at + seat]] = 1;
    const bets = state.log[at + BETS];
    for (let k = 0; k < state.log[at + LENGTH]; k++) out[BETTING_AT + 2 * k + ((bets >> k) & 1)] = 1;
  },
});
