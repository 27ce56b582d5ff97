import { z } from "zod";
import {
  ActionError,
  type ActionForm,
  type ActionSpace,
  type AmountForm,
  describeSpace,
  type FixedForm,
  parseInput,
  parseJsonAction,
} from "../core/action.ts";
import { defineGame, type Viewer } from "../core/game.ts";
import { idProblem } from "../core/numeric.ts";
import {
  act,
  type Betting,
  CALL,
  CHECK,
  copyBetting,
  currentPlayer,
  FOLD,
  handResult,
  isShowdown,
  MAX_ACTIONS,
  maxRaiseTo,
  mayFold,
  minRaiseTo,
  newBetting,
  RAISE,
  raiseBlocker,
  startBetting,
} from "./betting.ts";
import { cardText, deckOf, parseCards, RANK_CHARS, SUIT_CHARS } from "./cards.ts";
import { describeHand, evaluate, evaluate7 } from "./evaluator.ts";
import {
  type Gamedef,
  GamedefError,
  HULHE_GAMEDEF,
  HUNL_GAMEDEF,
  parseGamedef,
  renderGamedef,
  SMALL_GAMEDEF,
  UNLIMITED_STACK,
} from "./gamedef.ts";
import {
  type AcpcAction,
  bettingText,
  MatchStateError,
  matchStateText,
  parseAcpcAction,
  parseReply,
  renderMatchState,
} from "./matchstate.ts";
import {
  actionCountOf,
  ALL_IN_ID,
  CHECK_CALL_ID,
  encodeObservation,
  FOLD_ID,
  gridRaiseId,
  gridRaiseTo,
  RAISE_ID,
  tensorShape,
} from "./numeric.ts";
import { seatName, signed } from "../core/text.ts";

/**
 * Heads-up hold'em with the ACPC dealer's rules: any structure an ACPC game definition gives
 * (no-limit or limit, blinds, stacks, rounds, board cards, deck), played for one or more hands.
 * Seats keep their number for the match; ACPC positions (which blind a seat posts, who acts first)
 * swap every hand, as the dealer rotates them, and stacks start full every hand.
 */

/** Observations show only the last RECENT_HANDS hands, so a match's stored observations grow with its hands. */
const MAX_HANDS = 1000;

export const holdemConfig = z.strictObject({
  gamedef: z.string().max(20_000).default(HUNL_GAMEDEF).describe(
    "the game's structure as an ACPC game definition of at most 20,000 characters (the text the ACPC dealer " +
      "reads: limit or nolimit, numPlayers = 2, numRounds, stack, blind, raiseSize, firstPlayer, maxRaises, " +
      "numSuits, numRanks, numHoleCards, numBoardCards); it replaces the variant's",
  ),
  hands: z.int().min(1).max(MAX_HANDS).default(1).describe(
    `hands per match, at most ${MAX_HANDS}: the seats swap positions every hand, as the ACPC dealer rotates ` +
      "them, and every hand starts with full stacks (Doyle's game, as in the ACPC competitions); the returns add " +
      "up the chips won",
  ),
}).check((ctx) => {
  try {
    parseGamedef(ctx.value.gamedef);
  } catch (e) {
    if (!(e instanceof GamedefError)) throw e;
    ctx.issues.push({ code: "custom", input: ctx.value.gamedef, path: [], message: `\`gamedef\` ${e.message}` });
  }
});
export type HoldemConfig = z.infer<typeof holdemConfig>;

export type HoldemAction =
  | { readonly type: "fold" }
  | { readonly type: "check" }
  | { readonly type: "call" }
  | { readonly type: "raise"; readonly amount: number };

/** How many finished hands observations show. */
export const RECENT_HANDS = 10;

/** One finished hand, kept for observations. */
interface HandRecord {
  /** 0-based. */
  readonly hand: number;
  /** The betting as ACPC text, and the round it reached. */
  readonly betting: string;
  readonly round: number;
  /** The position that folded, or -1 at a showdown. */
  readonly folder: number;
  readonly cards: Uint8Array;
  /** Hand values by position at a showdown (0 otherwise). */
  readonly values: readonly [number, number];
  /** Chips won by seat. */
  readonly winnings: readonly [number, number];
  /** Each viewer's summary (seat 0, seat 1, public), built on first use; observations get copies. */
  readonly views: (HoldemHandSummary | undefined)[];
}

export interface HoldemState {
  readonly config: HoldemConfig;
  readonly def: Gamedef;
  /** 0-based hand being played (the last one once the match is over). */
  hand: number;
  over: boolean;
  readonly betting: Betting;
  /** This hand's cards: each position's hole cards (position 0 first), then the whole board. */
  readonly cards: Uint8Array;
  /** How many of `cards` are dealt: each hand opens with one chance event per card, until all are. */
  dealt: number;
  /** The deck, reshuffled in part for every deal. */
  readonly deck: Uint8Array;
  readonly totals: [number, number];
  /** The last finished hands, at most RECENT_HANDS, oldest first. */
  readonly recent: HandRecord[];
  /** The legal actions of the player to act, built on first use after each action. */
  space: ActionSpace<HoldemAction> | null;
}

/** One action of the current hand. */
export interface HoldemActionRecord {
  readonly seat: number;
  /** 0-based betting round. */
  readonly round: number;
  readonly type: "fold" | "check" | "call" | "raise";
  /** The seat's total put in this hand after the action. */
  readonly to: number;
}

/** A finished hand as one viewer may see it. */
export interface HoldemHandSummary {
  /** 1-based. */
  readonly hand: number;
  /** ACPC position of each seat. */
  readonly positions: [number, number];
  /** The hand's actions in ACPC form, e.g. `cr300c/r600f`. */
  readonly betting: string;
  readonly board: string[];
  /** Hole cards by seat as far as this viewer may see them: its own, and both after a showdown. */
  readonly shownCards: [string[] | null, string[] | null];
  readonly showdown: boolean;
  /** The seat that folded, if one did. */
  readonly folded: number | null;
  /** Each seat's best hand at a showdown, in words. */
  readonly bestHands: [string, string] | null;
  readonly winnings: [number, number];
  /** The hand's last MATCHSTATE line for this viewer (null for the public). */
  readonly matchstate: string | null;
}

export interface HoldemObservation {
  readonly game: "holdem";
  /** The viewer's seat, or "public". */
  readonly seat: number | "public";
  readonly betting: "no-limit" | "limit";
  /** 1-based hand being played (the last one once the match is over). */
  readonly hand: number;
  readonly hands: number;
  readonly phase: "playing" | "over";
  /** The deck and the deal: ranks and suits in play, hole cards per player, board cards per round. */
  readonly structure: {
    readonly ranks: string;
    readonly suits: string;
    readonly holeCards: number;
    readonly boardCards: number[];
    /** Limit betting: the raise size of each round. */
    readonly raiseSizes: number[];
  };
  /** This hand's ACPC position of each seat. */
  readonly positions: [number, number];
  /** Blinds posted this hand, by seat. */
  readonly blinds: [number, number];
  /** 0-based betting round and its name (`preflop`, `flop`, `turn`, `river` in standard hold'em). */
  readonly round: number;
  readonly roundName: string;
  /** The viewer's hole cards (null for the public). */
  readonly holeCards: string[] | null;
  /** Hole cards by seat as far as the viewer may see them: its own, and both after a showdown. */
  readonly shownCards: [string[] | null, string[] | null];
  readonly board: string[];
  readonly pot: number;
  /** Chips each seat has put in this hand. */
  readonly committed: [number, number];
  /** Chips each seat has behind (null: no stack limit). */
  readonly stacks: [number | null, number | null];
  /** The seat to act (null once the match is over). */
  readonly toAct: number | null;
  /** What the seat to act must add to call (0: it may check). */
  readonly toCall: number | null;
  /** The raise-to range of the seat to act (null when it may not raise). */
  readonly minRaiseTo: number | null;
  readonly maxRaiseTo: number | null;
  readonly actions: HoldemActionRecord[];
  /** The viewer's ACPC MATCHSTATE line now (null for the public). */
  readonly matchstate: string | null;
  /** The last finished hands (at most RECENT_HANDS), oldest first; `totals` covers them all. */
  readonly recentHands: HoldemHandSummary[];
  /** Chips won so far, by seat. */
  readonly totals: [number, number];
}

const FOLD_ACTION = Object.freeze({ type: "fold" as const });
const CHECK_ACTION = Object.freeze({ type: "check" as const });
const CALL_ACTION = Object.freeze({ type: "call" as const });
const FOLD_FORM = Object.freeze({ kind: "fixed" as const, action: FOLD_ACTION });
const CHECK_FORM = Object.freeze({ kind: "fixed" as const, action: CHECK_ACTION });
const CALL_FORM = Object.freeze({ kind: "fixed" as const, action: CALL_ACTION });
const NOTHING: ActionSpace<HoldemAction> = Object.freeze([]);
const SEAT = [Object.freeze([0]), Object.freeze([1])];
const NOBODY: readonly number[] = Object.freeze([]);
const NO_REWARD = Object.freeze([0, 0]);
const NO_ODDS: readonly number[] = Object.freeze([]);
const ACTION_NAMES = ["fold", "call", "raise", "check"] as const;

// A config's game definition never changes, so each config reads it once.
const gamedefs = new WeakMap<HoldemConfig, Gamedef>();

export function gamedefOf(config: HoldemConfig): Gamedef {
  let def = gamedefs.get(config);
  if (def === undefined) {
    def = parseGamedef(config.gamedef);
    gamedefs.set(config, def);
  }
  return def;
}

/** A seat's ACPC position in hand `hand` (0-based): they swap every hand, as the ACPC dealer rotates seats. */
export function positionOf(seat: number, hand: number): number {
  return (seat + hand) & 1;
}

function boardTotal(def: Gamedef): number {
  return def.numBoardCards.reduce((a, b) => a + b, 0);
}

/** Board cards dealt through round `round`. */
function boardThrough(def: Gamedef, round: number): number {
  let n = 0;
  for (let r = 0; r <= round; r++) n += def.numBoardCards[r];
  return n;
}

/** `preflop`, `flop`, `turn`, `river` when the board comes as in hold'em (0, 3, 1, 1 cards), else `round N`. */
function roundName(boardCards: readonly number[], round: number): string {
  return boardCards.join(" ") === "0 3 1 1" ? ["preflop", "flop", "turn", "river"][round] : `round ${round + 1}`;
}

/** A new hand: blinds posted, its cards still to deal. */
function startHand(state: HoldemState): void {
  startBetting(state.betting, state.def);
  state.dealt = 0;
  state.space = null;
}

/** The odds of dealing a card, by the number of cards left in the deck: each equally likely. */
const DEAL_ODDS: readonly (readonly number[])[] = Array.from(
  { length: 53 },
  (_, n) => Object.freeze(new Array<number>(n).fill(1 / n)),
);

/**
 * Deals the hand's next card: a step of a partial Fisher–Yates shuffle of the deck (swap in the
 * `outcome`-th undealt card), which every hand deals in full before anyone acts, so a match draws its
 * chance exactly as it always has.
 */
function dealCard(state: HoldemState, outcome: number): void {
  const { deck, cards } = state;
  const i = state.dealt++;
  const j = i + outcome;
  const card = deck[j];
  deck[j] = deck[i];
  deck[i] = card;
  cards[i] = card;
}

/** This hand's cards dealt so far (all of them once a seat is to act). */
function dealtCards(state: HoldemState): Uint8Array {
  return state.dealt < state.cards.length ? state.cards.subarray(0, state.dealt) : state.cards;
}

/** The value of position `p`'s best hand with the whole board dealt so far. */
function handValue(state: HoldemState, p: number): number {
  const { def, cards } = state;
  const h = def.numHoleCards;
  const board = 2 * h;
  const shown = boardThrough(def, state.betting.round);
  if (h === 2 && shown === 5) {
    const o = 2 * p;
    return evaluate7(
      cards[o],
      cards[o + 1],
      cards[board],
      cards[board + 1],
      cards[board + 2],
      cards[board + 3],
      cards[board + 4],
    );
  }
  const hand = new Uint8Array(h + shown);
  hand.set(cards.subarray(p * h, p * h + h));
  hand.set(cards.subarray(board, board + shown), h);
  return evaluate(hand);
}

/** Settles a finished hand: records it, pays both seats, and starts the next hand or ends the match. */
function finishHand(state: HoldemState): readonly number[] {
  const b = state.betting;
  const showdown = isShowdown(b);
  const v0 = showdown ? handValue(state, 0) : 0;
  const v1 = showdown ? handValue(state, 1) : 0;
  const p0 = positionOf(0, state.hand);
  const rewards: [number, number] = [handResult(b, p0, v0, v1), handResult(b, 1 - p0, v0, v1)];
  state.totals[0] += rewards[0];
  state.totals[1] += rewards[1];
  if (state.recent.length === RECENT_HANDS) state.recent.shift();
  state.recent.push(Object.freeze({
    hand: state.hand,
    betting: bettingText(b, state.def),
    round: b.round,
    folder: b.folded[0] ? 0 : b.folded[1] ? 1 : -1,
    cards: state.cards.slice(),
    values: [v0, v1] as const,
    winnings: rewards,
    views: [],
  }));
  if (state.hand + 1 < state.config.hands) {
    state.hand++;
    startHand(state);
  } else {
    state.over = true;
  }
  return rewards;
}

function buildSpace(state: HoldemState): ActionSpace<HoldemAction> {
  const { betting: b, def } = state;
  const p = currentPlayer(b, def);
  const forms: ActionForm<HoldemAction>[] = b.spent[p] < b.maxSpent ? [FOLD_FORM, CALL_FORM] : [CHECK_FORM];
  if (raiseBlocker(b, def) === null) {
    const max = maxRaiseTo(b, def);
    forms.push(
      def.betting === "nolimit"
        ? Object.freeze({ kind: "amount", type: "raise", min: minRaiseTo(b, def), max, integer: true })
        : Object.freeze({ kind: "fixed", action: Object.freeze({ type: "raise" as const, amount: max }) }),
    );
  }
  return Object.freeze(forms);
}

/** The seat to act, or -1 while cards are being dealt and once the match is over. */
function seatToAct(state: HoldemState): number {
  return state.over || state.dealt < state.cards.length
    ? -1
    : (currentPlayer(state.betting, state.def) + state.hand) & 1;
}

function toCallOf(b: Betting, def: Gamedef, p: number): number {
  return Math.min(b.maxSpent, def.stack[p]) - b.spent[p];
}

// ---------------------------------------------------------------------------------------------
// Parsing

type Json = Record<string, unknown>;

function isPlainObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function notYourTurn(state: HoldemState, seat: number): ActionError {
  if (state.over) return new ActionError("not_your_turn", "the match is over", "");
  if (state.dealt < state.cards.length) return new ActionError("not_your_turn", "the cards are being dealt", "");
  const turn = seatToAct(state);
  return new ActionError("not_your_turn", `it is player ${turn}'s turn, not player ${seat}'s`, "");
}

/**
 * Checks the intent of a JSON action against the poker rules, with errors that say why, and
 * turns aliases into the canonical action: `call` with nothing to call is `check`, `bet` is
 * `raise`, and a limit raise may leave out its (fixed) amount. The shape is then checked against
 * the legal forms.
 */
function normalize(input: Json, state: HoldemState, space: ActionSpace<HoldemAction>): Json | ActionError {
  const { betting: b, def } = state;
  const p = currentPlayer(b, def);
  const owed = toCallOf(b, def, p);
  const illegal = (reason: string) => new ActionError("illegal_action", reason, describeSpace(space));
  switch (input.type) {
    case "check":
      return owed > 0 ? illegal(`you cannot check: ${owed} to call`) : input;
    case "call":
      return owed > 0 ? input : { ...input, type: "check" };
    case "fold":
      return owed > 0 ? input : illegal("there is nothing to call, so folding is not allowed: check instead");
    case "bet":
    case "raise": {
      const raise = input.type === "bet" ? { ...input, type: "raise" } : input;
      const blocker = raiseBlocker(b, def);
      if (blocker) return illegal(`no raise is allowed: ${blocker}`);
      const min = minRaiseTo(b, def);
      const max = maxRaiseTo(b, def);
      if (def.betting === "limit") {
        if (!Object.hasOwn(raise, "amount")) return { ...raise, amount: max };
        return raise.amount === max
          ? raise
          : illegal(`in limit betting a raise is to exactly ${max}, not ${raise.amount}`);
      }
      const amount = raise.amount;
      if (typeof amount !== "number" || !Number.isInteger(amount) || (amount >= min && amount <= max)) return raise;
      if (min === max) return illegal(`your stack is short of a full raise: the only raise is all-in, to ${max}`);
      return illegal(
        amount > max
          ? `a raise can be to at most ${max}, all your chips`
          : `a raise must be to at least ${min} (amounts are totals: the chips you have put in this hand after raising)`,
      );
    }
    default:
      return input;
  }
}

function allIn(state: HoldemState, space: ActionSpace<HoldemAction>): Json | ActionError {
  const { betting: b, def } = state;
  const p = currentPlayer(b, def);
  if (def.betting === "limit") {
    return new ActionError("illegal_action", "there is no all-in in limit betting", describeSpace(space));
  }
  if (raiseBlocker(b, def) === null) return { type: "raise", amount: def.stack[p] };
  // When calling takes every chip, all-in is a call.
  if (b.maxSpent >= def.stack[p]) return { type: "call" };
  return new ActionError(
    "illegal_action",
    `all-in is not possible: no raise is allowed (${raiseBlocker(b, def)})`,
    describeSpace(space),
  );
}

/** An ACPC action as a JSON intent (still to be checked by `normalize`). */
function intentOf(action: AcpcAction, def: Gamedef): Json {
  if (action.type === FOLD) return { type: "fold" };
  if (action.type === CALL) return { type: "call" };
  return def.betting === "nolimit" ? { type: "raise", amount: action.size } : { type: "raise" };
}

const WORDS = /^(fold|check|call|raise|bet)(?:\s+to)?\s*:?\s*(\d+)?\s*[.!]?$/;

/**
 * Text aliases: ACPC actions (`f`, `c`, `k`, `r300`), the words `fold`, `check`, `call`,
 * `raise 300`, `raise to 300`, `bet 300`, `all-in`, and a bot's whole ACPC reply
 * (`MATCHSTATE:1:3:cr300:|Ks8d:r900`), whose state must be the seat's current one.
 */
function textIntent(
  text: string,
  state: HoldemState,
  seat: number,
  space: ActionSpace<HoldemAction>,
): Json | ActionError | undefined {
  const trimmed = text.trim();
  const lower = trimmed.toLowerCase();
  if (lower.startsWith("matchstate:")) {
    let reply;
    try {
      reply = parseReply(trimmed, state.def);
    } catch (e) {
      if (!(e instanceof MatchStateError)) throw e;
      return new ActionError("malformed_action", e.message, describeSpace(space));
    }
    const current = matchStateLine(state, seat);
    if (renderMatchState(state.def, reply.state) !== current) {
      return new ActionError(
        "illegal_action",
        `the reply answers another state; the current one is ${current}`,
        describeSpace(space),
      );
    }
    return intentOf(reply.action, state.def);
  }
  // An ACPC letter alone or with a number (and anything after it, which the ACPC reader refuses).
  if (/^[fckrb](\d\S*)?$/.test(lower)) {
    const action = parseAcpcAction(lower, state.def);
    return typeof action === "string"
      ? new ActionError("malformed_action", action, describeSpace(space))
      : intentOf(action, state.def);
  }
  if (/^all[\s-]?in[.!]?$/.test(lower)) return allIn(state, space);
  const m = WORDS.exec(lower);
  if (!m) return undefined;
  return m[2] === undefined ? { type: m[1] } : { type: m[1], amount: Number(m[2]) };
}

// ---------------------------------------------------------------------------------------------
// Views

/** The cards in [from, to) that `cards` holds (fewer while a deal is under way). */
function cardList(cards: ArrayLike<number>, from: number, to: number): string[] {
  const list: string[] = [];
  for (let i = from; i < to && i < cards.length; i++) list.push(cardText(cards[i]));
  return list;
}

/** Hole cards by position that a viewer at `viewerPosition` (null: the public) may see. */
function visibleHoles(
  def: Gamedef,
  showdown: boolean,
  cards: ArrayLike<number>,
  viewerPosition: number | null,
): [number[] | null, number[] | null] {
  const h = def.numHoleCards;
  const hole = (p: number) => (showdown || p === viewerPosition ? Array.from(cards).slice(p * h, p * h + h) : null);
  return [hole(0), hole(1)];
}

/** The MATCHSTATE line of position `position` for a hand with this betting (ACPC text) and cards. */
function matchStateOf(
  def: Gamedef,
  betting: string,
  round: number,
  showdown: boolean,
  cards: ArrayLike<number>,
  hand: number,
  position: number,
): string {
  const board = 2 * def.numHoleCards;
  return matchStateText(
    def,
    position,
    hand,
    betting,
    round,
    visibleHoles(def, showdown, cards, position),
    Array.from(cards).slice(board, board + boardThrough(def, round)),
  );
}

/** The seat's MATCHSTATE line for the current hand. */
export function matchStateLine(state: HoldemState, seat: number): string {
  const { def, betting: b } = state;
  return matchStateOf(
    def,
    bettingText(b, def),
    b.round,
    isShowdown(b),
    dealtCards(state),
    state.hand,
    positionOf(seat, state.hand),
  );
}

function bySeat<T>(hand: number, byPosition: readonly [T, T]): [T, T] {
  return [byPosition[positionOf(0, hand)], byPosition[positionOf(1, hand)]];
}

function shownBySeat(
  def: Gamedef,
  showdown: boolean,
  cards: ArrayLike<number>,
  hand: number,
  viewer: Viewer,
): [string[] | null, string[] | null] {
  const holes = visibleHoles(def, showdown, cards, viewer === "public" ? null : positionOf(viewer, hand));
  return bySeat(hand, [holes[0]?.map(cardText) ?? null, holes[1]?.map(cardText) ?? null]);
}

function summary(def: Gamedef, record: HandRecord, viewer: Viewer): HoldemHandSummary {
  const showdown = record.folder < 0;
  const board = 2 * def.numHoleCards;
  const index = record.hand;
  return {
    hand: index + 1,
    positions: [positionOf(0, index), positionOf(1, index)],
    betting: record.betting,
    board: cardList(record.cards, board, board + boardThrough(def, record.round)),
    shownCards: shownBySeat(def, showdown, record.cards, index, viewer),
    showdown,
    folded: showdown ? null : (record.folder + index) & 1,
    bestHands: showdown ? bySeat(index, [describeHand(record.values[0]), describeHand(record.values[1])]) : null,
    winnings: [record.winnings[0], record.winnings[1]],
    matchstate: viewer === "public"
      ? null
      : matchStateOf(def, record.betting, record.round, showdown, record.cards, index, positionOf(viewer, index)),
  };
}

/** A fresh copy of a summary (they hold only strings, numbers and arrays of them). */
function copySummary(s: HoldemHandSummary): HoldemHandSummary {
  const pair = <T>(p: readonly [T, T]): [T, T] => [p[0], p[1]];
  return {
    ...s,
    positions: pair(s.positions),
    board: [...s.board],
    shownCards: [s.shownCards[0] && [...s.shownCards[0]], s.shownCards[1] && [...s.shownCards[1]]],
    bestHands: s.bestHands && pair(s.bestHands),
    winnings: pair(s.winnings),
  };
}

function recentSummaries(state: HoldemState, viewer: Viewer): HoldemHandSummary[] {
  const slot = viewer === "public" ? 2 : viewer;
  return state.recent.map((record) => copySummary(record.views[slot] ??= summary(state.def, record, viewer)));
}

function actionsOf(state: HoldemState): HoldemActionRecord[] {
  const b = state.betting;
  const list: HoldemActionRecord[] = [];
  for (let r = 0; r <= b.round; r++) {
    for (let i = 0; i < b.numActions[r]; i++) {
      const at = r * MAX_ACTIONS + i;
      list.push({ seat: (b.actor[at] + state.hand) & 1, round: r, type: ACTION_NAMES[b.type[at]], to: b.to[at] });
    }
  }
  return list;
}

function stackText(stack: number): string {
  return stack === UNLIMITED_STACK ? "unlimited" : String(stack);
}

function structureText(def: Gamedef): string {
  const blinds = def.blind[0] === def.blind[1]
    ? `Both positions post a blind of ${def.blind[0]}.`
    : `Position 0 posts a blind of ${def.blind[0]} and position 1 a blind of ${def.blind[1]}.`;
  const [s0, s1] = def.stack;
  const stacks = s0 === UNLIMITED_STACK && s1 === UNLIMITED_STACK
    ? "There is no stack limit."
    : s0 === s1
    ? `Each position starts every hand with ${s0} chips.`
    : `Every hand position 0 starts with ${stackText(s0)} chips and position 1 with ${stackText(s1)}.`;
  const deck = `The deck has ${def.numRanks * def.numSuits} cards: ranks ${RANK_CHARS.slice(0, def.numRanks)} ` +
    `(lowest to highest) in suits ${SUIT_CHARS.slice(0, def.numSuits)}.`;
  const rounds = def.numBoardCards.map((n, r) => {
    const cards = n === 0 ? "no board cards" : `${n} board card${n > 1 ? "s" : ""}`;
    return `${roundName(def.numBoardCards, r)}: ${cards}, position ${def.firstPlayer[r]} acts first`;
  }).join("; ");
  const betting = def.betting === "nolimit"
    ? "No-limit betting: a raise may be to any whole number from the minimum up to all your chips. " +
      "Amounts are raise-to totals, the chips you have put in this hand after the raise. The smallest " +
      "raise-to is the current bet plus the last raise in the round; before any raise in the hand it is " +
      "twice the biggest blind, and when a new round starts it is the bet plus the biggest blind (at least " +
      "1 chip). When your stack is short of the minimum but above the bet, the only raise is all-in."
    : `Limit betting: every raise adds a fixed amount to the bet (${def.raiseSize.join(", ")} in rounds ` +
      `1 to ${def.numRounds}), with at most ${def.maxRaises.join(", ")} raises in those rounds.`;
  return `Each player gets ${def.numHoleCards} hole card${def.numHoleCards > 1 ? "s" : ""}. ${deck} ${blinds} ` +
    `${stacks} Betting rounds: ${rounds}. ${betting}`;
}

function bestHandText(def: Gamedef): string {
  const cards = def.numHoleCards + boardTotal(def);
  return cards >= 5
    ? `Each player's hand is the best five of its ${cards} cards (hole plus board), ranked from high card, ` +
      "pair, two pair, three of a kind, straight (A-2-3-4-5 is the lowest), flush, full house and four of " +
      "a kind up to straight flush."
    : `Each player's hand is its ${cards} card(s), hole plus board: pairs beat high cards, then ranks decide.`;
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** One action in words; a first raise after the opening round is a bet. */
function actionText(a: HoldemActionRecord, viewer: Viewer, firstRaise: boolean): string {
  const who = seatName(a.seat, viewer);
  switch (a.type) {
    case "fold":
      return `${who} folded`;
    case "check":
      return `${who} checked`;
    case "call":
      return `${who} called (to ${a.to})`;
    default:
      return `${who} ${firstRaise && a.round > 0 ? "bet" : "raised"} to ${a.to}`;
  }
}

function summaryText(s: HoldemHandSummary, viewer: Viewer): string {
  const order = viewer === "public" ? [0, 1] : [viewer, 1 - viewer];
  const won = viewer === "public"
    ? `player 0 ${signed(s.winnings[0])}, player 1 ${signed(s.winnings[1])}`
    : `you ${signed(s.winnings[viewer])}`;
  const how = s.showdown
    ? `showdown, board ${s.board.join(" ") || "none"}: ` +
      order.map((seat) => `${seatName(seat, viewer)} ${s.shownCards[seat]!.join(" ")} (${s.bestHands![seat]})`)
        .join(", ")
    : `${seatName(s.folded!, viewer)} folded`;
  return `hand ${s.hand} (${s.betting || "no actions"}): ${how}; ${won}`;
}

export const holdem = defineGame<HoldemState, HoldemAction, HoldemConfig, HoldemObservation>({
  id: "holdem",
  version: 1,
  title: "Heads-up hold'em (ACPC)",
  summary: "Two-player Texas hold'em with the rules of the Annual Computer Poker Competition's dealer: " +
    "no-limit with 50/100 blinds and 20,000-chip stacks, limit, or any structure an ACPC game definition " +
    "gives. Players get hole cards, bet over the rounds as board cards are dealt, and the best five-card " +
    "hand wins at the showdown. Raises are raise-to totals, and every seat sees the ACPC MATCHSTATE line, " +
    "so ACPC bots can take part. Several hands per match swap the blinds each hand; returns are chips won.",
  utility: "zero-sum",
  chanceMode: "explicit-stochastic",
  information: "imperfect",
  dynamics: "sequential",
  answerExample: "raise 400",
  caps: { hands: 1000, gamedef: 20_000 },
  seats: { min: 2, max: 2 },
  schema: holdemConfig,
  variants: {
    hunl: {
      description: "heads-up no-limit hold'em as ACPC and OpenSpiel define it: blinds 50/100, 20,000-chip stacks",
      config: {},
    },
    hulhe: {
      description: "heads-up limit hold'em as ACPC defines it: blinds 5/10, raises of 10 then 20, at most 3 raises " +
        "preflop and 4 after, no stack limit",
      config: { gamedef: HULHE_GAMEDEF },
    },
    small: {
      description: "OpenSpiel universal_poker's default test game: no-limit, one hole card, one board card, " +
        "a 24-card deck (2 to 7), blinds of 100 each, 1,200-chip stacks",
      config: { gamedef: SMALL_GAMEDEF },
    },
  },
  defaultVariant: "hunl",

  seatCount: () => 2,
  // Nothing in the config is private.
  publicConfig: (config) => config,

  rules(config) {
    const def = gamedefOf(config);
    const hands = config.hands === 1
      ? "The match is one hand; player 0 takes position 0."
      : `The match is ${config.hands} hands. Player 0 takes position 0 in the first hand, and the players ` +
        "swap positions every hand; every hand starts with full stacks, and your score is the sum of the chips " +
        "you win over all hands.";
    return `Heads-up ${def.betting === "nolimit" ? "no-limit" : "limit"} hold'em for two players, with the ` +
      `rules of the ACPC poker dealer. ${structureText(def)} ${hands} ` +
      "In each round the players act in turn: fold (give up the hand and the chips you put in; only when you " +
      "owe chips), check (when nothing is owed), call (match the bet, or put in all your chips if you have " +
      "fewer), or raise. A round ends when both players have acted and the bets are equal; a player who is " +
      "all-in acts no more, and the rest of the board is dealt. If a player folds, the other wins what the " +
      `folder put in. Otherwise the hands are shown after the last round. ${bestHandText(def)} The better ` +
      "hand wins the chips both players matched; a tie returns them. Your reward for a hand is the chips you " +
      'win (negative when you lose). Actions: JSON {"type":"fold"}, {"type":"check"}, ' +
      '{"type":"call"}, {"type":"raise","amount":N} with N the raise-to total, or text: fold, check, ' +
      "call, raise N, bet N, all-in, or ACPC actions (f, c, k, rN). " +
      `The game as an ACPC game definition:\n${renderGamedef(def)}`;
  },

  start(config) {
    const def = gamedefOf(config);
    const state: HoldemState = {
      config,
      def,
      hand: 0,
      over: false,
      betting: newBetting(),
      cards: new Uint8Array(2 * def.numHoleCards + boardTotal(def)),
      dealt: 0,
      deck: Uint8Array.from(deckOf(def.numRanks, def.numSuits)),
      totals: [0, 0],
      recent: [],
      space: null,
    };
    startHand(state);
    return state;
  },

  chance(state) {
    return state.over || state.dealt === state.cards.length ? NO_ODDS : DEAL_ODDS[state.deck.length - state.dealt];
  },

  resolve: dealCard,

  sample: (state, rng) => rng.int(state.deck.length - state.dealt),

  toAct(state) {
    const seat = seatToAct(state);
    return seat < 0 ? NOBODY : SEAT[seat];
  },

  legal(state, seat) {
    if (state.over || seat !== seatToAct(state)) return NOTHING;
    return (state.space ??= buildSpace(state));
  },

  play(state, moves) {
    const b = state.betting;
    const move = moves[seatToAct(state)]!;
    const type = move.type === "raise" ? RAISE : move.type === "fold" ? FOLD : move.type === "check" ? CHECK : CALL;
    act(b, state.def, type, type === RAISE ? (move as { amount: number }).amount : 0);
    state.space = null;
    return b.finished ? finishHand(state) : NO_REWARD;
  },

  returns: (state) => [state.totals[0], state.totals[1]],

  observe(state, viewer: Viewer) {
    if (viewer !== "public" && viewer !== 0 && viewer !== 1) throw new RangeError(`no seat ${viewer} in holdem`);
    const { def, betting: b, hand } = state;
    const cards = dealtCards(state);
    const p0 = positionOf(0, hand);
    const turn = seatToAct(state);
    const acting = turn >= 0 ? currentPlayer(b, def) : -1;
    const canRaise = turn >= 0 && raiseBlocker(b, def) === null;
    const board = 2 * def.numHoleCards;
    const own = viewer === "public" ? null : positionOf(viewer, hand);
    const stack = (p: number) => (def.stack[p] === UNLIMITED_STACK ? null : def.stack[p] - b.spent[p]);
    return {
      game: "holdem",
      seat: viewer,
      betting: def.betting === "nolimit" ? "no-limit" : "limit",
      hand: hand + 1,
      hands: state.config.hands,
      phase: state.over ? "over" : "playing",
      structure: {
        ranks: RANK_CHARS.slice(0, def.numRanks),
        suits: SUIT_CHARS.slice(0, def.numSuits),
        holeCards: def.numHoleCards,
        boardCards: [...def.numBoardCards],
        raiseSizes: [...def.raiseSize],
      },
      positions: [p0, 1 - p0],
      blinds: [def.blind[p0], def.blind[1 - p0]],
      round: b.round,
      roundName: roundName(def.numBoardCards, b.round),
      holeCards: own === null ? null : cardList(cards, own * def.numHoleCards, (own + 1) * def.numHoleCards),
      shownCards: shownBySeat(def, isShowdown(b), cards, hand, viewer),
      board: cardList(cards, board, board + boardThrough(def, b.round)),
      pot: b.spent[0] + b.spent[1],
      committed: [b.spent[p0], b.spent[1 - p0]],
      stacks: [stack(p0), stack(1 - p0)],
      toAct: turn >= 0 ? turn : null,
      toCall: turn >= 0 ? toCallOf(b, def, acting) : null,
      minRaiseTo: canRaise ? minRaiseTo(b, def) : null,
      maxRaiseTo: canRaise ? maxRaiseTo(b, def) : null,
      actions: actionsOf(state),
      matchstate: viewer === "public" ? null : matchStateLine(state, viewer),
      recentHands: recentSummaries(state, viewer),
      totals: [state.totals[0], state.totals[1]],
    };
  },

  describe(obs) {
    const viewer: Viewer = obs.seat;
    const spectator = viewer === "public";
    const lines: string[] = [];
    const kind = obs.betting === "no-limit" ? "no-limit" : "limit";
    lines.push(
      `Heads-up ${kind} hold'em, hand ${obs.hand} of ${obs.hands}` +
        (obs.phase === "over" ? " (the match is over)." : "."),
    );
    lines.push(spectator ? "You are watching players 0 and 1." : `You are player ${viewer}.`);
    const seats = spectator ? [0, 1] : [viewer as number, 1 - (viewer as number)];
    lines.push(
      "Positions and blinds this hand: " +
        seats.map((s) => `${seatName(s, viewer)} position ${obs.positions[s]}, blind ${obs.blinds[s]}`).join("; ") +
        ".",
    );
    if (obs.holeCards) lines.push(`Your hole cards: ${obs.holeCards.join(" ")}.`);
    const other = spectator ? null : 1 - (viewer as number);
    if (other !== null && obs.shownCards[other]) {
      lines.push(`The other player's hole cards: ${obs.shownCards[other]!.join(" ")}.`);
    }
    if (spectator && obs.shownCards[0] && obs.shownCards[1]) {
      lines.push(`Hole cards: player 0 ${obs.shownCards[0].join(" ")}, player 1 ${obs.shownCards[1].join(" ")}.`);
    }
    lines.push(`Board: ${obs.board.length > 0 ? obs.board.join(" ") : "no cards yet"} (${obs.roundName}).`);
    lines.push(
      `Pot ${obs.pot}: ` +
        seats.map((s) => {
          const behind = obs.stacks[s] === null ? "" : ` with ${obs.stacks[s]} behind`;
          return `${seatName(s, viewer)} ${s === viewer ? "have" : "has"} put in ${obs.committed[s]}${behind}`;
        }).join("; ") + ".",
    );
    if (obs.actions.length > 0) {
      const rounds: string[] = [];
      for (let r = 0; r <= obs.round; r++) {
        const here = obs.actions.filter((a) => a.round === r);
        if (here.length === 0) continue;
        let raised = false;
        const said = here.map((a) => {
          const text = actionText(a, viewer, !raised);
          raised ||= a.type === "raise";
          return text;
        });
        rounds.push(`${roundName(obs.structure.boardCards, r)}: ${said.join(", ")}`);
      }
      lines.push(`This hand so far: ${rounds.join("; ")}.`);
    }
    if (obs.phase === "playing") {
      if (spectator || obs.toAct !== viewer) {
        lines.push(spectator ? `Player ${obs.toAct} is to act.` : "Waiting for the other player to act.");
      } else {
        const options: string[] = obs.toCall! > 0 ? [`fold`, `call ${obs.toCall}`] : ["check"];
        if (obs.minRaiseTo !== null) {
          options.push(
            obs.betting === "limit" || obs.minRaiseTo === obs.maxRaiseTo
              ? `raise to ${obs.maxRaiseTo}`
              : `raise to any total from ${obs.minRaiseTo} to ${obs.maxRaiseTo}`,
          );
        }
        lines.push(
          `Your turn: ${obs.toCall! > 0 ? `${obs.toCall} to call` : "nothing to call"}. You may ${
            options.join(", or ")
          }.`,
        );
        const limit = obs.betting === "limit";
        const example = obs.minRaiseTo ?? 0;
        lines.push(
          "Answer with JSON such as " +
            (obs.toCall! > 0 ? '{"type":"call"}' : '{"type":"check"}') +
            (obs.minRaiseTo === null
              ? ""
              : limit
              ? ' or {"type":"raise"}'
              : ` or {"type":"raise","amount":${example}}`) +
            (limit
              ? ", or text: fold, check, call, raise, or an ACPC action (f, c, r)."
              : `, or text: fold, check, call, raise N, all-in, or an ACPC action (f, c, r${example}). ` +
                "Raise amounts are totals for the hand, not increments."),
        );
      }
    }
    const recent = obs.recentHands;
    if (recent.length > 0) {
      const earlier = (obs.phase === "over" ? obs.hand : obs.hand - 1) - recent.length;
      lines.push(
        `Finished hands${earlier > 0 ? ` (the last ${recent.length}; ${earlier} earlier)` : ""}:`,
        ...recent.map((s) => `- ${capitalized(summaryText(s, viewer))}.`),
      );
    }
    lines.push(
      spectator
        ? `Chips won so far: player 0 ${signed(obs.totals[0])}, player 1 ${signed(obs.totals[1])}.`
        : `Chips won so far: you ${signed(obs.totals[viewer as number])}, the other player ` +
          `${signed(obs.totals[1 - (viewer as number)])}.`,
    );
    return lines.join("\n");
  },

  parse(input, state, seat): HoldemAction | ActionError {
    const space = holdem.legal(state, seat);
    if (space.length === 0) return notYourTurn(state, seat);
    let value = input;
    if (typeof value === "string" && value.trim().startsWith("{")) {
      try {
        value = JSON.parse(value);
      } catch {
        return parseInput(space, input);
      }
    }
    if (isPlainObject(value)) {
      const intent = normalize(value, state, space);
      return intent instanceof ActionError ? intent : parseJsonAction(space, intent);
    }
    return parseInput(space, value, (text) => {
      const intent = textIntent(text, state, seat, space);
      if (intent === undefined || intent instanceof ActionError) return intent;
      const normal = normalize(intent, state, space);
      return normal instanceof ActionError ? normal : (normal as HoldemAction);
    });
  },

  clone(state) {
    return {
      config: state.config,
      def: state.def,
      hand: state.hand,
      over: state.over,
      betting: copyBetting(state.betting),
      cards: state.cards.slice(),
      dealt: state.dealt,
      deck: state.deck.slice(),
      totals: [state.totals[0], state.totals[1]],
      // Records never change once made (their view cache only fills in), so copies may share them.
      recent: state.recent.slice(),
      space: state.space,
    };
  },

  actionCount: (config) => actionCountOf(gamedefOf(config)),

  actionId(action, state, seat) {
    if (seat !== seatToAct(state)) return -1;
    switch (action.type) {
      case "fold":
        return FOLD_ID;
      case "check":
      case "call":
        return CHECK_CALL_ID;
      default: {
        if (state.def.betting === "limit") return RAISE_ID;
        const form = raiseFormOf(state);
        return form?.kind === "amount" ? gridRaiseId(state.betting, state.def, action.amount, form.min, form.max) : -1;
      }
    }
  },

  actionOf(id, state, seat) {
    const mask = MASKS[state.def.betting];
    holdem.legalMask(state, seat, mask);
    const problem = idProblem(id, mask);
    if (problem) return problem;
    if (id === FOLD_ID) return FOLD_ACTION;
    if (id === CHECK_CALL_ID) return mayFold(state.betting, state.def) ? CALL_ACTION : CHECK_ACTION;
    const form = raiseFormOf(state)!;
    return form.kind === "fixed"
      ? form.action
      : { type: "raise", amount: gridRaiseTo(state.betting, state.def, id, form.min, form.max) };
  },

  legalMask(state, seat, out) {
    out.fill(0);
    if (seat !== seatToAct(state)) return;
    const { betting: b, def } = state;
    if (mayFold(b, def)) out[FOLD_ID] = 1;
    out[CHECK_CALL_ID] = 1;
    const form = raiseFormOf(state);
    if (!form) return;
    if (form.kind === "fixed") {
      out[RAISE_ID] = 1;
      return;
    }
    // Each raise-to gets one id, the lowest that gives it.
    for (let id = RAISE_ID; id <= ALL_IN_ID; id++) {
      const amount = gridRaiseTo(b, def, id, form.min, form.max);
      if (gridRaiseId(b, def, amount, form.min, form.max) === id) out[id] = 1;
    }
  },

  observationShape: (config) => tensorShape(gamedefOf(config), recentSlots(config.hands)),

  encode: (observation, out) => encodeObservation(observation, out, recentSlots(observation.hands)),
});

/** Scratch masks for `actionOf`, one per action count. */
const MASKS = { limit: new Uint8Array(RAISE_ID + 1), nolimit: new Uint8Array(ALL_IN_ID + 1) };

/** The raise form of the seat to act (the last of its legal forms), or undefined when it may not raise. */
function raiseFormOf(state: HoldemState): FixedForm<HoldemAction> | AmountForm | undefined {
  const space = (state.space ??= buildSpace(state));
  const last = space[space.length - 1];
  return last.kind === "amount" || (last.kind === "fixed" && last.action.type === "raise") ? last : undefined;
}

/** Finished hands a tensor has room for: those an observation lists, and no more than a match can have. */
function recentSlots(hands: number): number {
  return Math.min(RECENT_HANDS, hands - 1);
}

/**
 * Sets the current hand's cards, for tests that need a known deal: each seat's hole cards and the
 * whole board, as card text (`["AhKd", "7c7d"]`, `"Qs7h2cTd3s"`). Throws a RangeError when a card
 * is repeated, outside the deck, or the counts are wrong.
 */
export function setCards(state: HoldemState, holes: readonly [string, string], board: string): void {
  const { def } = state;
  const bySeat = holes.map(parseCards);
  const boardCards = parseCards(board);
  bySeat.forEach((h, seat) => {
    if (h.length !== def.numHoleCards) {
      throw new RangeError(`player ${seat} needs ${def.numHoleCards} hole card(s), got ${h.length}`);
    }
  });
  if (boardCards.length !== boardTotal(def)) {
    throw new RangeError(`the board needs ${boardTotal(def)} card(s), got ${boardCards.length}`);
  }
  const p0 = positionOf(0, state.hand);
  const all = [...(p0 === 0 ? bySeat[0] : bySeat[1]), ...(p0 === 0 ? bySeat[1] : bySeat[0]), ...boardCards];
  const deck = deckOf(def.numRanks, def.numSuits);
  all.forEach((c, i) => {
    if (!deck.includes(c)) throw new RangeError(`${cardText(c)} is not in this game's deck`);
    if (all.indexOf(c) !== i) throw new RangeError(`${cardText(c)} is dealt twice`);
  });
  state.cards.set(all);
}
