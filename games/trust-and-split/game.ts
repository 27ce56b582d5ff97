import { z } from "zod";
import {
  type ActionError,
  type ActionSpace,
  parseInput,
  parseSplitText,
  type SplitForm,
  type TextForm,
} from "../core/action.ts";
import { checkTalk, messageCharsKey, messagesKey } from "../core/config.ts";
import { defineGame, drawOutcome, type Game, NumericFaceError, type Viewer } from "../core/game.ts";
import { idProblem, oneHot } from "../core/numeric.ts";
import type { Rng } from "../core/rng.ts";
import { seatName } from "../core/text.ts";

/**
 * Trust-and-Split: every round two seats chat, then claim at the same time how many units of each
 * item they keep; over-claims are scaled down in proportion. Who values the units more is private
 * (rock-paper-scissors hands) or public ("ties"), so talk is cheap but informative.
 */

export const VALUATIONS = ["rps", "rps-alternating", "ties"] as const;
export type Valuation = (typeof VALUATIONS)[number];

const itemName = z.string().regex(/^[a-z]{1,20}$/, "an item name is 1 to 20 lowercase letters")
  // Split actions may name items as JSON fields next to `type` and `take`.
  .refine((name) => name !== "type" && name !== "take", "`type` and `take` cannot name an item");

/** Every decision's observation holds every round so far, so a match's stored observations grow with rounds². */
const MAX_ROUNDS = 200;

export const tasConfig = z.strictObject({
  rounds: z.int().min(1).max(MAX_ROUNDS).default(10).describe(`rounds per match, at most ${MAX_ROUNDS}`),
  items: z.array(itemName).min(1).max(10).default(["coins"])
    .describe("the item types split every round (lowercase plural nouns), 1 to 10 of them"),
  quantity: z.int().min(1).max(1000).default(10).describe("units of each item to split every round, at most 1000"),
  messages: messagesKey(1, "messages each seat sends per round before the claims, taking turns (0: no chat)"),
  messageChars: messageCharsKey(500, "rounds"),
  valuation: z.enum(VALUATIONS).default("rps").describe(
    "how per-unit values are drawn: `rps` (private rock-paper-scissors hands, the winning hand values " +
      "every unit at `high`, the other at `low`), `rps-alternating` (as rps in round 1, then the winning " +
      "hand passes to the other seat every round), `ties` (public values, each seat and item `high` or " +
      "`low` with probability 1/2, redrawn until both value some item `high`)",
  ),
  high: z.number().default(10).describe("the high per-unit value (the winning hand's)"),
  low: z.number().min(0).default(1).describe("the low per-unit value (the losing hand's)"),
}).check((ctx) => {
  checkTalk(ctx);
  const { high, low, items } = ctx.value;
  if (!(high > low)) {
    ctx.issues.push({
      code: "custom",
      input: high,
      path: ["high"],
      message: `the high value must exceed the low value, got high=${high} low=${low}`,
    });
  }
  const repeated = items.find((item, i) => items.indexOf(item) !== i);
  if (repeated !== undefined) {
    ctx.issues.push({ code: "custom", input: items, path: ["items"], message: `item \`${repeated}\` is listed twice` });
  }
});
export type TasConfig = z.infer<typeof tasConfig>;

export const HANDS = ["rock", "paper", "scissors"] as const;
export type Hand = (typeof HANDS)[number];
export type Standing = "upper" | "lower";

export type TasAction =
  | { readonly type: "message"; readonly text: string }
  | { readonly type: "split"; readonly take: readonly number[] };

export interface TasMessage {
  /** 1-based round. */
  readonly round: number;
  readonly seat: number;
  readonly text: string;
}

export interface TasState {
  readonly config: TasConfig;
  /** Rounds completed. */
  round: number;
  /** Messages sent in the current round. */
  said: number;
  /** The seat that speaks first in the current round; -1 until the first chance event draws it. */
  starter: number;
  /** Whether the current round's hands or values are dealt; until then its deal is the chance event due. */
  dealt: boolean;
  /** Hands (indices into HANDS) by round and seat: hands[2 * round + seat]; unused under "ties". */
  readonly hands: Uint8Array;
  /** Per-unit values by round, seat and item: values[(2 * round + seat) * items + item]. */
  readonly values: Float64Array;
  /** Units claimed, laid out as `values`. */
  readonly claims: Int32Array;
  /** Points by round and seat: rewards[2 * round + seat]. */
  readonly rewards: Float64Array;
  readonly totals: [number, number];
  readonly chat: TasMessage[];
}

/** One completed round, everything revealed. Pairs are by seat. */
export interface TasRoundSummary {
  /** Both hands (null under "ties"). */
  readonly hands: [Hand, Hand] | null;
  /** Who held the winning hand (null under "ties"). */
  readonly standing: [Standing, Standing] | null;
  /** Per-unit values, one per item. */
  readonly values: [number[], number[]];
  /** Units claimed, one per item. */
  readonly claims: [number[], number[]];
  /** Units received after proportional scaling, one per item. */
  readonly received: [number[], number[]];
  readonly rewards: [number, number];
}

export interface TasObservation {
  readonly game: "trust-and-split";
  /** The viewer's seat, or "public". */
  readonly seat: number | "public";
  /** 1-based round being played (rounds + 1 once over). */
  readonly round: number;
  readonly rounds: number;
  readonly phase: "message" | "split" | "over";
  readonly valuation: Valuation;
  readonly items: string[];
  /** Units of each item per round. */
  readonly quantity: number;
  readonly high: number;
  readonly low: number;
  /** Messages each seat sends per round. */
  readonly messages: number;
  readonly messageChars: number;
  /** Who speaks first this round (null once over). */
  readonly starter: number | null;
  /** Who sends the next message (null outside the message phase). */
  readonly speaker: number | null;
  /** The viewer's own hand this round (null for the public, under "ties", and once over). */
  readonly hand: Hand | null;
  /**
   * This round's per-unit values by seat and item, when public ("ties"); null otherwise. Under
   * the rps valuations a seat does not see its own value: with distinct hands it would give away
   * the other's hand.
   */
  readonly values: [number[], number[]] | null;
  readonly history: TasRoundSummary[];
  readonly totals: [number, number];
  /** Every message so far. */
  readonly chat: TasMessage[];
}

interface Spaces {
  readonly message: ActionSpace<TasAction>;
  readonly split: ActionSpace<TasAction>;
  /** How many claims there are, (quantity + 1)^items: the claim ids. */
  readonly claims: number;
}

const NOTHING: ActionSpace<TasAction> = Object.freeze([]);
const BOTH = Object.freeze([0, 1]);
const SEAT = [Object.freeze([0]), Object.freeze([1])];
const NOBODY: readonly number[] = Object.freeze([]);
const NO_REWARD = Object.freeze([0, 0]);

// A config's action spaces never change, so each config builds them once.
const spacesByConfig = new WeakMap<TasConfig, Spaces>();

function spaces(config: TasConfig): Spaces {
  let cached = spacesByConfig.get(config);
  if (cached === undefined) {
    const message: TextForm = Object.freeze({ kind: "text", type: "message", maxLength: config.messageChars });
    const split: SplitForm = Object.freeze({
      kind: "split",
      type: "split",
      items: Object.freeze([...config.items]),
      max: Object.freeze(config.items.map(() => config.quantity)),
    });
    cached = {
      message: Object.freeze([message]),
      split: Object.freeze([split]),
      claims: (config.quantity + 1) ** config.items.length,
    };
    spacesByConfig.set(config, cached);
  }
  return cached;
}

/** True when hand `a` beats hand `b` (rock > scissors > paper > rock). */
export function beats(a: number, b: number): boolean {
  return (a + 3 - b) % 3 === 1;
}

/**
 * Deals hands `h0` and `h1` (indices into HANDS, distinct) for the current round and sets the
 * values they imply. The draw uses it; so can tests that need a known deal.
 */
export function setHands(state: TasState, h0: number, h1: number): void {
  if (h0 === h1 || HANDS[h0] === undefined || HANDS[h1] === undefined) {
    throw new RangeError(`hands must be distinct of 0..2, got ${h0}, ${h1}`);
  }
  const { config, round } = state;
  const n = config.items.length;
  state.hands[2 * round] = h0;
  state.hands[2 * round + 1] = h1;
  const upper = beats(h0, h1) ? 0 : 1;
  const base = 2 * round * n;
  state.values.fill(upper === 0 ? config.high : config.low, base, base + n);
  state.values.fill(upper === 1 ? config.high : config.low, base + n, base + 2 * n);
}

/**
 * The chance events, in order: the first speaker (outcome = the seat, 1/2 each), then each round's deal:
 * - rps (and rps-alternating's first round): one of the six ordered pairs of distinct hands, 1/6 each;
 *   outcome k deals hand k >> 1 to seat 0 and hand (k >> 1) + 1 + (k & 1) mod 3 to seat 1;
 * - rps-alternating after the first round: the winning hand, 1/3 each, which passes to last round's loser;
 * - ties: each seat's high items as bits (bit i of `mine` for seat 0's item i, of `theirs` for seat 1's),
 *   every pair with at least one item both value high, equally likely (4^items − 3^items of them). Outcome k
 *   is the k-th such pair by code = mine + theirs·2^items, ascending.
 */
const NO_CHANCE: readonly number[] = Object.freeze([]);
const HALVES: readonly number[] = Object.freeze([1 / 2, 1 / 2]);
const THIRDS: readonly number[] = Object.freeze([1 / 3, 1 / 3, 1 / 3]);
const SIXTHS: readonly number[] = Object.freeze(new Array<number>(6).fill(1 / 6));

/** The deals of the ties valuation for a number of items. */
interface TiesDeals {
  readonly odds: readonly number[];
  /** codes[outcome]: mine + theirs·2^items. */
  readonly codes: Int32Array;
  /** outcomeOf[code]: the outcome with that code, -1 where the pair has no item both value high. */
  readonly outcomeOf: Int32Array;
}

const tiesDealsByItems: TiesDeals[] = [];

function tiesDeals(items: number): TiesDeals {
  let deals = tiesDealsByItems[items];
  if (deals === undefined) {
    const mask = (1 << items) - 1;
    const outcomeOf = new Int32Array(1 << (2 * items)).fill(-1);
    const codes: number[] = [];
    for (let code = 0; code < outcomeOf.length; code++) {
      if ((code & (code >>> items) & mask) !== 0) outcomeOf[code] = codes.push(code) - 1;
    }
    deals = {
      odds: Object.freeze(new Array<number>(codes.length).fill(1 / codes.length)),
      codes: Int32Array.from(codes),
      outcomeOf,
    };
    tiesDealsByItems[items] = deals;
  }
  return deals;
}

/** Whether a chance event is due (only asked while rounds remain). */
function chanceDue(state: TasState): boolean {
  return state.starter < 0 || !state.dealt;
}

function dealOdds(state: TasState): readonly number[] {
  const { config } = state;
  if (config.valuation === "ties") return tiesDeals(config.items.length).odds;
  return config.valuation === "rps-alternating" && state.round > 0 ? THIRDS : SIXTHS;
}

/** Deals the current round's hands or values: `outcome` indexes `dealOdds`. */
function deal(state: TasState, outcome: number): void {
  const { config, round } = state;
  if (config.valuation === "ties") {
    const n = config.items.length;
    const code = tiesDeals(n).codes[outcome];
    const base = 2 * round * n;
    for (let i = 0; i < n; i++) {
      state.values[base + i] = code & (1 << i) ? config.high : config.low;
      state.values[base + n + i] = code & (1 << (n + i)) ? config.high : config.low;
    }
    return;
  }
  if (config.valuation === "rps-alternating" && round > 0) {
    // The winning hand passes to the seat that lost the last round; its hand is uniform.
    const upper = beats(state.hands[2 * round - 2], state.hands[2 * round - 1]) ? 1 : 0;
    const winner = outcome;
    const loser = (winner + 2) % 3;
    setHands(state, upper === 0 ? winner : loser, upper === 0 ? loser : winner);
    return;
  }
  const h0 = outcome >> 1;
  setHands(state, h0, (h0 + 1 + (outcome & 1)) % 3);
}

/**
 * The ties deal as it has always been drawn: each output bit a fair coin, n for seat 0's items and n for
 * seat 1's, redrawn until both value some item high.
 */
function drawTies(items: number, rng: Rng): number {
  const { outcomeOf } = tiesDeals(items);
  const codeMask = (1 << (2 * items)) - 1;
  let outcome: number;
  do outcome = outcomeOf[rng.next() & codeMask]; while (outcome < 0);
  return outcome;
}

function speaker(state: TasState): number {
  return state.said % 2 === 0 ? state.starter : 1 - state.starter;
}

function inMessagePhase(state: TasState): boolean {
  return state.said < 2 * state.config.messages;
}

function phase(state: TasState): TasObservation["phase"] {
  if (state.round >= state.config.rounds) return "over";
  return inMessagePhase(state) ? "message" : "split";
}

/** Units received per item from the two claims: all claims when they fit, else in proportion. */
function received(quantity: number, own: number, other: number): number {
  const total = own + other;
  return total > quantity ? (quantity * own) / total : own;
}

function slice(array: Float64Array | Int32Array, round: number, seat: number, n: number): number[] {
  const base = (2 * round + seat) * n;
  return Array.from(array.subarray(base, base + n));
}

function summary(state: TasState, r: number): TasRoundSummary {
  const { config } = state;
  const n = config.items.length;
  const claims: [number[], number[]] = [slice(state.claims, r, 0, n), slice(state.claims, r, 1, n)];
  const rps = config.valuation !== "ties";
  const h0 = state.hands[2 * r];
  const h1 = state.hands[2 * r + 1];
  return {
    hands: rps ? [HANDS[h0], HANDS[h1]] : null,
    standing: rps ? (beats(h0, h1) ? ["upper", "lower"] : ["lower", "upper"]) : null,
    values: [slice(state.values, r, 0, n), slice(state.values, r, 1, n)],
    claims,
    received: [
      claims[0].map((c, i) => received(config.quantity, c, claims[1][i])),
      claims[1].map((c, i) => received(config.quantity, c, claims[0][i])),
    ],
    rewards: [state.rewards[2 * r], state.rewards[2 * r + 1]],
  };
}

function num(x: number): string {
  return Number.isInteger(x) ? String(x) : String(Math.round(x * 1000) / 1000);
}

/** `10 coins` or `10 hats, 10 books and 10 balls`. */
function amounts(items: readonly string[], counts: readonly number[]): string {
  const parts = items.map((item, i) => `${num(counts[i])} ${item}`);
  return parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(", ")} and ${parts[parts.length - 1]}`;
}

function valueList(items: readonly string[], values: readonly number[]): string {
  return items.map((item, i) => `${item} ${num(values[i])}`).join(", ");
}

/** How to write a claim: the proposal token for one item, the `Proposal:` list for several, or JSON. */
function claimFormat(items: readonly string[], quantity: number): string {
  const text = items.length === 1
    ? `<<proposal_start>> x <<proposal_end>> where x is a whole number from 0 to ${quantity}`
    : `Proposal: ${items.map((item) => `x ${item}`).join(", ")} with each x a whole number from 0 to ${quantity}`;
  const json = items.length === 1
    ? `{"type":"split","${items[0]}":x}`
    : `{"type":"split","take":[${items.map(() => "x").join(",")}]}`;
  return `${text} (or JSON ${json})`;
}

/**
 * The numeric face. Action ids 0 .. (quantity + 1)^items − 1 are the claims, the counts read as the digits
 * of the id in base quantity + 1, the first item's most significant (with one item, id = the claim). When the
 * config has talk (`messages` > 0), id (quantity + 1)^items is the empty message: a numeric policy sends only
 * that, so it never talks. Configs with more than 2^16 claims (e.g. 5 items of 10) have no numeric face.
 *
 * Information-state tensor, shape [13 + 2·items + rounds·(9 + 6·items)], from the viewer's side (own first,
 * then the other's; the public view puts seat 0 first):
 * - [0, 2): the seat, one-hot (zeros for the public);
 * - [2, 5): the phase, one-hot: message, split, over;
 * - 5: rounds completed / rounds;
 * - [6, 8): who speaks first this round: own, other (zeros once over);
 * - 8: messages sent so far this round / (2·messages), 0 without talk; their text is not encoded;
 * - 9: low / high;
 * - [10, 13): own hand this round, one-hot rock, paper, scissors (zeros under ties, for the public, once over);
 * - [13, 13 + 2·items): this round's public values under ties, own per item then the other's, 1 high, 0 low;
 * - then per round r < rounds, 9 + 6·items entries, zeros until it is played: 1 once played, own hand
 *   one-hot, the other's (zeros under ties), own values (1 high, 0 low), the other's, own claims / quantity,
 *   the other's, own units received / quantity, the other's, own points / (quantity·items·high), the other's.
 */
const MAX_CLAIM_IDS = 1 << 16;
const SILENCE = Object.freeze({ type: "message" as const, text: "" });
const PHASES: readonly TasObservation["phase"][] = ["message", "split", "over"];
/** Where this round's values start; the rounds follow them. */
const VALUES_AT = 13;

function claimIds(config: TasConfig): number {
  const claims = spaces(config).claims;
  if (claims > MAX_CLAIM_IDS) {
    throw new NumericFaceError(
      "trust-and-split",
      `${config.items.length} item(s) of ${config.quantity} make ${claims} claims, more than ${MAX_CLAIM_IDS} action ids`,
    );
  }
  return claims;
}

/** Writes 1 for each of `values` that is `high`, from `at`. */
function encodeHigh(out: Float32Array, at: number, values: readonly number[], high: number): void {
  for (let i = 0; i < values.length; i++) out[at + i] = values[i] === high ? 1 : 0;
}

/** Writes `counts` / `quantity`, from `at`. */
function encodeShares(out: Float32Array, at: number, counts: readonly number[], quantity: number): void {
  for (let i = 0; i < counts.length; i++) out[at + i] = counts[i] / quantity;
}

const MESSAGE_TOKENS = /<<message_start>>([\s\S]*?)(?:<<message_end>>|$)|<message>([\s\S]*?)(?:<\/message>|$)/i;
const PROPOSAL_TOKENS = /<<proposal_start>>([\s\S]*?)<<proposal_end>>|<([a-z]+)_to_self>([\s\S]*?)<\/\2_to_self>/i;
const PROPOSAL_PREFIX = /^\s*proposal\s*:/i;
const BARE_CLAIM = /^[\s\d.,:=a-z]*\d[\s\d.,:=a-z]*$/i;

/** The text inside the message tokens. */
function messageAlias(text: string): TasAction | undefined {
  const m = MESSAGE_TOKENS.exec(text);
  return m ? { type: "message", text: (m[1] ?? m[2]).trim() } : undefined;
}

/**
 * `<<proposal_start>> 7 <<proposal_end>>`, `<coins_to_self> 7 </coins_to_self>`,
 * `Proposal: 3 hats, 10 books, 0 balls`, or a bare `7` / `3 hats, 7 books`; other text falls
 * through to the generic parser (`split 7`).
 */
function splitAlias(space: ActionSpace<TasAction>, text: string): TasAction | ActionError | undefined {
  const form = space[0] as SplitForm;
  const claim = claimText(form, text);
  // The split space has one form, of type `split`, so a parsed split is a TasAction.
  return claim === undefined ? undefined : parseSplitText(space, form, claim) as TasAction | ActionError;
}

/** The part of `text` that states a claim, when it is written in one of the claim aliases. */
function claimText(form: SplitForm, text: string): string | undefined {
  const m = PROPOSAL_TOKENS.exec(text);
  if (m) return m[1] ?? m[3];
  if (PROPOSAL_PREFIX.test(text)) return text.replace(PROPOSAL_PREFIX, "");
  // A bare claim holds only counts and item names (singular or plural), so `split 7` stays generic.
  const named = (word: string) => form.items.some((item) => word === item || word + "s" === item);
  return BARE_CLAIM.test(text) && (text.toLowerCase().match(/[a-z]+/g) ?? []).every(named) ? text : undefined;
}

export const trustAndSplit: Game<TasState, TasAction, TasConfig, TasObservation> = defineGame<
  TasState,
  TasAction,
  TasConfig,
  TasObservation
>({
  id: "trust-and-split",
  version: 1,
  title: "Trust-and-Split",
  summary: "Two players split a pile of items every round. Each round they exchange short messages, " +
    "then both claim at the same time how many units they keep; claims that add up to more than the " +
    "pile are scaled down in proportion. By default each player privately holds a rock, paper or " +
    "scissors hand, and the winning hand makes every unit worth ten times more, so the players gain " +
    "most by telling the truth and letting the winner take all, and a liar can grab more for itself.",
  utility: "general-sum",
  chanceMode: "explicit-stochastic",
  information: "imperfect",
  dynamics: "simultaneous",
  answerExample: "split 6",
  caps: { rounds: 200, items: 10, quantity: 1000, messages: 10, messageChars: 10_000 },
  seats: { min: 2, max: 2 },
  schema: tasConfig,
  variants: {
    rps: {
      description: "Trust-and-Split as published: 10 coins, private rock-paper-scissors hands (winner 10 " +
        "per coin, loser 1), one message each per round, 10 rounds",
      config: {},
    },
    alternating: {
      description: "as rps, but after a random first round the winning hand passes to the other player every round",
      config: { valuation: "rps-alternating" },
    },
    "no-press": {
      description: "No-Press Split: 10 hats, books and balls, public values of 10 or 1 per item with at least " +
        "one item both value at 10, no messages",
      config: { valuation: "ties", items: ["hats", "books", "balls"], messages: 0 },
    },
  },
  defaultVariant: "rps",

  seatCount: () => 2,
  // Talk takes turns; the moves (the claims) are simultaneous.
  simultaneous: (config) => config.messages === 0,
  // Nothing in the config is private.
  publicConfig: (config) => config,

  rules(config) {
    const { high, low, quantity, items, rounds } = config;
    const pile = amounts(items, items.map(() => quantity));
    const values = config.valuation === "ties"
      ? `At the start of every round each player values each item at ${num(high)} or ${num(low)} per unit, ` +
        "each with probability 1/2 and independently of everything else; the draw is repeated until at least " +
        `one item is worth ${num(high)} to both players. Both players see both players' values.`
      : "At the start of every round each player is dealt a hand of rock, paper or scissors, the two hands " +
        "always different (rock beats scissors, scissors beats paper, paper beats rock). The player with the " +
        `winning hand, the upper hand, values every unit at ${num(high)}; the other values every unit at ` +
        `${num(low)}. You see only your own hand, so you do not know your value until you learn the other ` +
        "player's hand; both hands are revealed when the round ends. " +
        (config.valuation === "rps-alternating"
          ? "The hands of round 1 are random; after that the upper hand passes to the other player every round."
          : "Hands are dealt at random every round, so over many rounds each player holds the upper hand " +
            "about half the time.");
    const talk = config.messages > 0
      ? `Each round opens with a chat: one player sends a message, then the other, until each has sent ` +
        `${config.messages} message(s) of at most ${config.messageChars} characters. The first speaker is ` +
        "drawn at random in round 1 and alternates every round. Both players read every message; nothing " +
        "said is binding. After the chat, "
      : "There is no chat. In every round ";
    // An over-claim for the example, whatever the quantity: 7 and 5 of 10.
    const a = Math.ceil((7 * quantity) / 10);
    const b = Math.ceil(quantity / 2);
    const example = `claims of ${a} and ${b} give ${quantity * a}/${a + b} and ${quantity * b}/${a + b} units`;
    return `Trust-and-Split for two players, ${rounds} round(s). Every round there are ${pile} to split. ` +
      `${values} ${talk}both players claim at the same time how many units of each item they keep, a whole ` +
      `number from 0 to ${quantity}; neither sees the other's claim until the round ends. If the two claims ` +
      `for an item add up to at most ${quantity}, each player receives its claim and any units left over are ` +
      `lost. If they add up to more, the ${quantity} units are shared in proportion to the claims (${example}). ` +
      "Your points for a round are the units you receive times your per-unit value, summed over the items; " +
      "units need not be whole. Your score is the sum of your points over all rounds.";
  },

  start(config) {
    const n = config.items.length;
    return {
      config,
      round: 0,
      said: 0,
      starter: -1,
      dealt: false,
      hands: new Uint8Array(2 * config.rounds),
      values: new Float64Array(2 * n * config.rounds),
      claims: new Int32Array(2 * n * config.rounds),
      rewards: new Float64Array(2 * config.rounds),
      totals: [0, 0],
      chat: [],
    };
  },

  chance(state) {
    if (state.round >= state.config.rounds) return NO_CHANCE;
    if (state.starter < 0) return HALVES;
    return state.dealt ? NO_CHANCE : dealOdds(state);
  },

  resolve(state, outcome) {
    if (state.round >= state.config.rounds || !chanceDue(state)) throw new RangeError("no chance event is due");
    if (state.starter < 0) {
      state.starter = outcome;
    } else {
      deal(state, outcome);
      state.dealt = true;
    }
  },

  // Only the ties deal was drawn otherwise than `drawOutcome` draws it: by rejection, from raw bits.
  sample(state, rng) {
    const ties = state.config.valuation === "ties" && state.starter >= 0;
    return ties ? drawTies(state.config.items.length, rng) : drawOutcome(trustAndSplit.chance(state), rng);
  },

  toAct(state) {
    if (state.round >= state.config.rounds || chanceDue(state)) return NOBODY;
    return inMessagePhase(state) ? SEAT[speaker(state)] : BOTH;
  },

  legal(state, seat) {
    if (state.round >= state.config.rounds || chanceDue(state) || (seat !== 0 && seat !== 1)) return NOTHING;
    if (inMessagePhase(state)) return speaker(state) === seat ? spaces(state.config).message : NOTHING;
    return spaces(state.config).split;
  },

  play(state, moves) {
    const { config } = state;
    if (inMessagePhase(state)) {
      const seat = speaker(state);
      const action = moves[seat] as { readonly text: string };
      state.chat.push({ round: state.round + 1, seat, text: action.text });
      state.said++;
      return NO_REWARD;
    }
    const take0 = (moves[0] as { readonly take: readonly number[] }).take;
    const take1 = (moves[1] as { readonly take: readonly number[] }).take;
    const n = config.items.length;
    const q = config.quantity;
    const base = 2 * state.round * n;
    let r0 = 0;
    let r1 = 0;
    for (let i = 0; i < n; i++) {
      const c0 = take0[i];
      const c1 = take1[i];
      state.claims[base + i] = c0;
      state.claims[base + n + i] = c1;
      const denom = c0 + c1 > q ? c0 + c1 : q;
      // One division per product keeps integer cases exact (7 of 12 claimed coins at 10 each: 700/12).
      r0 += (q * c0 * state.values[base + i]) / denom;
      r1 += (q * c1 * state.values[base + n + i]) / denom;
    }
    state.rewards[2 * state.round] = r0;
    state.rewards[2 * state.round + 1] = r1;
    state.totals[0] += r0;
    state.totals[1] += r1;
    state.round++;
    state.said = 0;
    state.starter = 1 - state.starter;
    state.dealt = false;
    return [r0, r1];
  },

  returns: (state) => [state.totals[0], state.totals[1]],

  observe(state, viewer: Viewer) {
    if (viewer !== "public" && viewer !== 0 && viewer !== 1) {
      throw new RangeError(`no seat ${viewer} in trust-and-split`);
    }
    const { config, round } = state;
    const n = config.items.length;
    const now = phase(state);
    const playing = now !== "over";
    const ties = config.valuation === "ties";
    const history: TasRoundSummary[] = [];
    for (let r = 0; r < round; r++) history.push(summary(state, r));
    return {
      game: "trust-and-split",
      seat: viewer,
      round: round + 1,
      rounds: config.rounds,
      phase: now,
      valuation: config.valuation,
      items: [...config.items],
      quantity: config.quantity,
      high: config.high,
      low: config.low,
      messages: config.messages,
      messageChars: config.messageChars,
      // While chance is due, what it has not drawn yet is null.
      starter: playing && state.starter >= 0 ? state.starter : null,
      speaker: now === "message" && state.starter >= 0 ? speaker(state) : null,
      hand: playing && state.dealt && !ties && viewer !== "public" ? HANDS[state.hands[2 * round + viewer]] : null,
      values: playing && state.dealt && ties
        ? [slice(state.values, round, 0, n), slice(state.values, round, 1, n)]
        : null,
      history,
      totals: [state.totals[0], state.totals[1]],
      chat: state.chat.map((m) => ({ ...m })),
    };
  },

  describe(obs) {
    const spectator = obs.seat === "public";
    const me = spectator ? 0 : obs.seat as number;
    const other = 1 - me;
    const who = (seat: number) => seatName(seat, obs.seat);
    const Who = (seat: number) => who(seat).replace(/^./, (c) => c.toUpperCase());
    const lines: string[] = [];
    lines.push(
      obs.phase === "over" ? `The match is over after ${obs.rounds} rounds.` : `Round ${obs.round} of ${obs.rounds}.`,
    );
    lines.push(spectator ? "You are watching players 0 and 1." : `You are player ${me}.`);
    if (obs.history.length > 0) {
      lines.push("Previous rounds:");
      obs.history.forEach((h, i) => {
        const order = spectator ? [0, 1] : [me, other];
        const hands = h.hands && h.standing
          ? order.map((s) => `${who(s)} had ${h.hands![s]} (${h.standing![s]} hand)`).join(", ") + "; "
          : order.map((s) => `${who(s)} valued ${valueList(obs.items, h.values[s])}`).join("; ") + "; ";
        const claims = order.map((s) =>
          `${who(s)} claimed ${amounts(obs.items, h.claims[s])} and received ${amounts(obs.items, h.received[s])}`
        ).join(", ");
        const points = order.map((s) => `${who(s)} ${num(h.rewards[s])}`).join(", ");
        lines.push(`- Round ${i + 1}: ${hands}${claims}; points: ${points}.`);
      });
    }
    lines.push(
      spectator
        ? `Totals: player 0 ${num(obs.totals[0])}, player 1 ${num(obs.totals[1])}.`
        : `Your total is ${num(obs.totals[me])}; the other player's total is ${num(obs.totals[other])}.`,
    );
    if (obs.phase === "over") return lines.join("\n");
    if (obs.values) {
      const order = spectator ? [0, 1] : [me, other];
      lines.push(
        `Per-unit values this round: ${
          order.map((s) => `${who(s)}: ${valueList(obs.items, obs.values![s])}`).join("; ")
        }.`,
      );
    } else if (obs.hand) {
      lines.push(
        `Your hand this round is ${obs.hand}. You do not know the other player's hand: the winning hand values ` +
          `each unit at ${num(obs.high)}, the losing hand at ${num(obs.low)}.`,
      );
    } else {
      lines.push("The hands stay hidden until the round ends.");
    }
    const thisRound = obs.chat.filter((m) => m.round === obs.round);
    for (const m of thisRound) lines.push(`${Who(m.seat)} said: ${m.text}`);
    if (spectator) return lines.join("\n");
    if (obs.phase === "message") {
      lines.push(
        obs.speaker === me
          ? `Send your message now, at most ${obs.messageChars} characters, as ` +
            `<<message_start>> your message <<message_end>> (or JSON {"type":"message","text":"..."}).`
          : "Wait for the other player's message.",
      );
    } else {
      const pile = amounts(obs.items, obs.items.map(() => obs.quantity));
      lines.push(`Claim how much of the ${pile} you keep: ${claimFormat(obs.items, obs.quantity)}.`);
    }
    return lines.join("\n");
  },

  parse(input, state, seat): TasAction | ActionError {
    const space = trustAndSplit.legal(state, seat);
    const messaging = space.length > 0 && space[0].kind === "text";
    return messaging
      ? parseInput(space, input, messageAlias, true) // any other text is the message, unless in the generic form
      : parseInput(space, input, (text) => splitAlias(space, text));
  },

  clone(state) {
    return {
      config: state.config,
      round: state.round,
      said: state.said,
      starter: state.starter,
      dealt: state.dealt,
      hands: state.hands.slice(),
      values: state.values.slice(),
      claims: state.claims.slice(),
      rewards: state.rewards.slice(),
      totals: [state.totals[0], state.totals[1]],
      chat: state.chat.map((m) => ({ ...m })),
    };
  },

  actionCount: (config) => claimIds(config) + (config.messages > 0 ? 1 : 0),

  actionId(action, state) {
    if (action.type === "message") return action.text === "" ? spaces(state.config).claims : -1;
    const base = state.config.quantity + 1;
    let id = 0;
    for (const count of action.take) id = id * base + count;
    return id;
  },

  actionOf(id, state, seat) {
    const { config } = state;
    const mask = new Uint8Array(trustAndSplit.actionCount(config));
    trustAndSplit.legalMask(state, seat, mask);
    const problem = idProblem(id, mask);
    if (problem) return problem;
    if (id === spaces(config).claims) return SILENCE;
    const base = config.quantity + 1;
    const take = new Array<number>(config.items.length);
    for (let i = take.length - 1; i >= 0; i--, id = Math.floor(id / base)) take[i] = id % base;
    return { type: "split", take };
  },

  legalMask(state, seat, out) {
    out.fill(0);
    if (trustAndSplit.legal(state, seat).length === 0) return;
    const { claims } = spaces(state.config);
    if (inMessagePhase(state)) out[claims] = 1;
    else out.fill(1, 0, claims);
  },

  observationShape(config) {
    const n = config.items.length;
    return [VALUES_AT + 2 * n + config.rounds * (9 + 6 * n)];
  },

  encode(obs, out) {
    out.fill(0);
    const me = obs.seat === "public" ? 0 : obs.seat;
    const other = 1 - me;
    const n = obs.items.length;
    const { quantity, high } = obs;
    if (obs.seat !== "public") out[me] = 1;
    oneHot(out, 2, 3, PHASES.indexOf(obs.phase));
    const history = obs.history;
    out[5] = history.length / obs.rounds;
    if (obs.starter !== null) out[obs.starter === me ? 6 : 7] = 1;
    let said = 0;
    for (let i = obs.chat.length - 1; i >= 0 && obs.chat[i].round === obs.round; i--) said++;
    out[8] = obs.messages > 0 ? said / (2 * obs.messages) : 0;
    out[9] = obs.low / high;
    if (obs.hand !== null) oneHot(out, 10, 3, HANDS.indexOf(obs.hand));
    if (obs.values !== null) {
      encodeHigh(out, VALUES_AT, obs.values[me], high);
      encodeHigh(out, VALUES_AT + n, obs.values[other], high);
    }
    const width = 9 + 6 * n;
    const most = quantity * n * high;
    for (let r = 0; r < history.length; r++) {
      const h = history[r];
      const at = VALUES_AT + 2 * n + r * width;
      out[at] = 1;
      if (h.hands !== null) {
        oneHot(out, at + 1, 3, HANDS.indexOf(h.hands[me]));
        oneHot(out, at + 4, 3, HANDS.indexOf(h.hands[other]));
      }
      encodeHigh(out, at + 7, h.values[me], high);
      encodeHigh(out, at + 7 + n, h.values[other], high);
      encodeShares(out, at + 7 + 2 * n, h.claims[me], quantity);
      encodeShares(out, at + 7 + 3 * n, h.claims[other], quantity);
      encodeShares(out, at + 7 + 4 * n, h.received[me], quantity);
      encodeShares(out, at + 7 + 5 * n, h.received[other], quantity);
      out[at + 7 + 6 * n] = h.rewards[me] / most;
      out[at + 8 + 6 * n] = h.rewards[other] / most;
    }
  },
});
