import { z } from "zod";
import {
  ActionError,
  type ActionSpace,
  checkSplit,
  describeSpace,
  type FixedForm,
  parseInput,
  parseJsonAction,
  parseSplitText,
  type SplitForm,
  type TextForm,
} from "../core/action.ts";
import { checkTalk, messageCharsKey } from "../core/config.ts";
import { defineGame, type Game, type Viewer } from "../core/game.ts";
import { idProblem, oneHot } from "../core/numeric.ts";
import {
  allInstances,
  type Counts,
  type Instance,
  instanceProblem,
  ITEM_TYPES,
  ITEMS,
  MAX_ITEMS,
  TOTAL_VALUE,
  worthOf,
} from "./instances.ts";
import { seatName } from "../core/text.ts";

/**
 * Deal or No Deal (Lewis et al. 2017): two players divide a pool of books, hats and balls, each
 * knowing only its own values. Either they bargain by alternating offers (OpenSpiel's `bargaining`)
 * or they talk freely and then each privately states its take (the original dialogue protocol).
 * No agreement pays nothing to either.
 */

export const PROTOCOLS = ["alternating-offers", "dialogue"] as const;
export type Protocol = (typeof PROTOCOLS)[number];

const count = (max: number) => z.int().min(0).max(max);
const triple = (max: number) => z.tuple([count(max), count(max), count(max)]);

const instanceSchema = z.strictObject({
  pool: triple(7).describe("books, hats and balls in the pool"),
  values: z.tuple([triple(TOTAL_VALUE), triple(TOTAL_VALUE)])
    .describe("each player's value per book, hat and ball, player 0 first"),
});

/** Every decision's observation holds every offer and message so far, so stored observations grow with turns². */
const MAX_TURNS = 100;

export const dondConfig = z.strictObject({
  protocol: z.enum(PROTOCOLS).default("alternating-offers").describe(
    "`alternating-offers`: players take turns proposing how to split the pool until one agrees to the other's " +
      "last offer; `dialogue`: free messages until one player selects, then both privately state their take",
  ),
  maxTurns: z.int().min(1).max(MAX_TURNS).default(10).describe(
    "alternating-offers: offers before the game ends with no deal (the last cannot be accepted); dialogue: " +
      `messages before the talk closes and both must state their take; at most ${MAX_TURNS}`,
  ),
  discount: z.number().gt(0).max(1).default(1).describe(
    "alternating-offers only: a deal's payoffs are multiplied by this for every offer or agreement after the second",
  ),
  messageChars: messageCharsKey(500, "turns"),
  instance: instanceSchema.nullable().default(null).describe(
    "a fixed pool and values obeying the constraints, e.g. {pool: [1,2,3], values: [[8,1,0],[4,0,2]]}; " +
      "null draws one uniformly from the 5,793 valid instances",
  ),
}).check((ctx) => {
  // A turn has at most one message, in either protocol.
  checkTalk(ctx);
  const { instance, protocol, discount } = ctx.value;
  const problem = instance === null ? undefined : instanceProblem(instance as Instance);
  if (problem !== undefined) ctx.issues.push({ code: "custom", input: instance, path: ["instance"], message: problem });
  if (protocol === "dialogue" && discount !== 1) {
    ctx.issues.push({
      code: "custom",
      input: discount,
      path: ["discount"],
      message: "the discount applies only to the alternating-offers protocol; leave it at 1 for dialogue",
    });
  }
});
export type DondConfig = z.infer<typeof dondConfig>;

export type DondAction =
  | { readonly type: "message"; readonly text: string }
  | { readonly type: "propose"; readonly take: readonly number[] }
  | { readonly type: "agree" }
  | { readonly type: "select" }
  | { readonly type: "choice"; readonly take: readonly number[] }
  | { readonly type: "no_agreement" };

export interface DondMessage {
  /** 1-based turn it was sent in. */
  readonly turn: number;
  readonly seat: number;
  readonly text: string;
}

const NEGOTIATE = 0;
const CHOOSE = 1;
const OVER = 2;
/** Chance is due: the instance is drawn. */
const DEAL = 3;
/** Chance is due: who opens the dialogue is drawn. */
const OPENER = 4;

interface Spaces {
  /** Alternating offers, before any offer: message or propose. */
  readonly open: ActionSpace<DondAction>;
  /** Alternating offers with an offer on the table: message, propose or agree. */
  readonly openAnswer: ActionSpace<DondAction>;
  /** After this turn's message: propose only, or propose or agree. */
  readonly propose: ActionSpace<DondAction>;
  readonly answer: ActionSpace<DondAction>;
  /** Dialogue: message or select. */
  readonly talk: ActionSpace<DondAction>;
  /** Dialogue, after the talk: choice or no_agreement. */
  readonly choose: ActionSpace<DondAction>;
}

export interface DondState {
  readonly config: DondConfig;
  /** All zero until the instance is dealt. */
  readonly pool: Int8Array;
  /** Per-unit values by seat and item: values[3 * seat + item]. */
  readonly values: Int8Array;
  /** The pool's action spaces, once dealt. */
  spaces: Spaces;
  phase: number;
  /** The seat to act while negotiating. */
  actor: number;
  /** Offers made (alternating offers) or messages sent (dialogue). */
  turns: number;
  /** Alternating offers: the actor has sent its message this turn. */
  spoke: boolean;
  /** Alternating offers: offers and agreements so far (not messages), for the discount. */
  bids: number;
  /** What each offer's proposer keeps: offers[3 * k + item]; offer k is seat k % 2's. */
  readonly offers: Int8Array;
  /** Dialogue: the seat that ended the talk, or -1 (the cap ended it, or not yet). */
  selector: number;
  /** Dialogue: each seat's stated take, choices[3 * seat + item]; -1 throughout for no agreement. */
  readonly choices: Int8Array;
  agreed: boolean;
  readonly payoffs: [number, number];
  readonly chat: DondMessage[];
}

export interface DondObservation {
  readonly game: "deal-or-no-deal";
  /** The viewer's seat, or "public". */
  readonly seat: number | "public";
  readonly protocol: Protocol;
  readonly items: string[];
  readonly pool: number[];
  /** Per-unit values by seat: only the viewer's own until the game is over, then both. */
  readonly values: [number[] | null, number[] | null];
  readonly phase: "negotiate" | "choose" | "over";
  readonly toAct: number[];
  /** 1-based turn being played (offers or messages so far, plus one). */
  readonly turn: number;
  readonly maxTurns: number;
  readonly discount: number;
  readonly messageChars: number;
  /** Alternating offers: every offer, as what its proposer keeps. */
  readonly offers: { readonly seat: number; readonly keep: number[] }[];
  readonly chat: DondMessage[];
  /** Dialogue: who ended the talk (null if nobody has, or the cap did). */
  readonly selectedBy: number | null;
  /** Dialogue, once over: each seat's stated take (null for no agreement). */
  readonly choices: [number[] | null, number[] | null] | null;
  /** Whether a deal was made (null while playing). */
  readonly agreement: boolean | null;
  readonly returns: [number, number];
}

const AGREE = Object.freeze({ type: "agree" as const });
const SELECT = Object.freeze({ type: "select" as const });
const NO_AGREEMENT = Object.freeze({ type: "no_agreement" as const });
const fixed = (action: DondAction): FixedForm<DondAction> => Object.freeze({ kind: "fixed" as const, action });
const AGREE_FORM = fixed(AGREE);
const SELECT_FORM = fixed(SELECT);
const NO_AGREEMENT_FORM = fixed(NO_AGREEMENT);
const NOTHING: ActionSpace<DondAction> = Object.freeze([]);
const BOTH = Object.freeze([0, 1]);
const SEAT = [Object.freeze([0]), Object.freeze([1])];
const NOBODY: readonly number[] = Object.freeze([]);
const NO_REWARD = Object.freeze([0, 0]);
const NO_CHANCE: readonly number[] = Object.freeze([]);
const COIN: readonly number[] = Object.freeze([0.5, 0.5]);
/** Nothing is legal before the deal. */
const UNDEALT: Spaces = Object.freeze({
  open: NOTHING,
  openAnswer: NOTHING,
  propose: NOTHING,
  answer: NOTHING,
  talk: NOTHING,
  choose: NOTHING,
});
let instanceOdds: readonly number[] | undefined;

/** Every instance equally likely, as the deal draws them. */
function dealOdds(): readonly number[] {
  const count = allInstances().length;
  instanceOdds ??= Object.freeze(new Array<number>(count).fill(1 / count));
  return instanceOdds;
}

/** Lays out `instance` on the table: its pool, values and action spaces. */
function deal(state: DondState, instance: Instance): void {
  state.pool.set(instance.pool);
  state.values.set(instance.values[0]);
  state.values.set(instance.values[1], ITEM_TYPES);
  state.spaces = spacesFor(state.config, instance.pool);
}

/** What follows the deal: the draw of who opens in the dialogue protocol, else player 0's first offer. */
function afterDeal(config: DondConfig): number {
  return config.protocol === "dialogue" ? OPENER : NEGOTIATE;
}

// A config has at most 31 pools, and each pool's spaces never change: built once, shared by every match.
// Instances share their pool tuples, so the tuple itself is the key.
const spacesByConfig = new WeakMap<DondConfig, Map<Counts, Spaces>>();

function spacesFor(config: DondConfig, pool: Counts): Spaces {
  let byPool = spacesByConfig.get(config);
  if (byPool === undefined) {
    byPool = new Map();
    spacesByConfig.set(config, byPool);
  }
  let spaces = byPool.get(pool);
  if (spaces === undefined) {
    const message: TextForm = Object.freeze({ kind: "text", type: "message", maxLength: config.messageChars });
    const split = (type: string): SplitForm =>
      Object.freeze({ kind: "split", type, items: Object.freeze([...ITEMS]), max: Object.freeze([...pool]) });
    const propose = split("propose");
    const space = (...forms: (TextForm | SplitForm | FixedForm<DondAction>)[]) =>
      Object.freeze(forms) as ActionSpace<DondAction>;
    spaces = {
      open: space(message, propose),
      openAnswer: space(message, propose, AGREE_FORM),
      propose: space(propose),
      answer: space(propose, AGREE_FORM),
      talk: space(message, SELECT_FORM),
      choose: space(split("choice"), NO_AGREEMENT_FORM),
    };
    byPool.set(pool, spaces);
  }
  return spaces;
}

function dialogue(state: DondState): boolean {
  return state.config.protocol === "dialogue";
}

function ownValues(state: DondState, seat: number): number[] {
  return Array.from(state.values.subarray(3 * seat, 3 * seat + 3));
}

/** Seat `seat`'s value of `counts` (one count per item). */
function worth(state: DondState, seat: number, counts: ArrayLike<number>): number {
  return worthOf(state.values.subarray(3 * seat, 3 * seat + 3), counts);
}

function finish(state: DondState, p0: number, p1: number): readonly number[] {
  state.payoffs[0] = p0;
  state.payoffs[1] = p1;
  state.phase = OVER;
  return [p0, p1];
}

/** `1 book`, `2 hats`. */
function itemCount(n: number, item: string): string {
  return `${n} ${n === 1 ? item.slice(0, -1) : item}`;
}

/** `1 book, 2 hats and 0 balls`. */
export function amounts(counts: readonly number[]): string {
  const parts = ITEMS.map((item, i) => itemCount(counts[i], item));
  return `${parts[0]}, ${parts[1]} and ${parts[2]}`;
}

function valueList(values: readonly number[]): string {
  return ITEMS.map((item, i) => `${item} ${values[i]}`).join(", ");
}

const AGREE_WORDS = /^\s*[[<(]?\s*(?:i\s+)?(?:agree|accept|deal)\s*[\]>)]?\s*[.!]*\s*$/i;
const SELECT_WORDS = /^\s*[[<(]?\s*select(?:ion)?\s*[\]>)]?\s*[.!]*\s*$/i;
const NO_DEAL_WORDS = /^\s*[[<(]?\s*no[\s_-]*(?:agreement|deal)\s*[\]>)]?\s*[.!]*\s*$/i;
const MESSAGE_TOKENS = /<message>([\s\S]*?)(?:<\/message>|$)/i;
const SPLIT_HEAD = /^\s*(?:propose|offer|keep|choice|choose|take)\s*:?\s*([\s\S]*)$/i;
// The original dataset's output format, and the AdAlignLLM split tags.
const FB_CHOICE = /item0\s*=\s*(\d+)\s+item1\s*=\s*(\d+)\s+item2\s*=\s*(\d+)/i;
const TAGGED = /<books>\s*(\d+)\s*<\/books>\s*<hats>\s*(\d+)\s*<\/hats>\s*<balls>\s*(\d+)\s*<\/balls>/i;
const BARE = /^[\s\d,;:=a-z]*\d[\s\d,;:=a-z]*$/i;
const ITEM_WORDS = new Set(["book", "books", "hat", "hats", "ball", "balls", "and"]);

/** A take written as `propose 1 book, 2 hats, 0 balls`, `Offer: 1 2 0`, `item0=1 item1=2 item2=0`, or bare counts. */
function splitAlias(space: ActionSpace<DondAction>, text: string): DondAction | ActionError | undefined {
  const form = space.find((f) => f.kind === "split") as SplitForm | undefined;
  if (form === undefined) return undefined;
  const numbered = FB_CHOICE.exec(text) ?? TAGGED.exec(text);
  // The split space's one split form makes a propose or a choice, both DondActions.
  if (numbered) return checkSplit(space, form, numbered.slice(1, 4).map(Number)) as DondAction | ActionError;
  const head = SPLIT_HEAD.exec(text);
  const words = text.toLowerCase().match(/[a-z]+/g) ?? [];
  const claim = head ? head[1] : BARE.test(text) && words.every((w) => ITEM_WORDS.has(w)) ? text : undefined;
  if (claim === undefined) return undefined;
  return parseSplitText(space, form, claim.replace(/\band\b/gi, ",")) as DondAction | ActionError;
}

/** The text inside `<message>` tokens. */
function messageAlias(text: string): DondAction | undefined {
  const m = MESSAGE_TOKENS.exec(text);
  return m ? { type: "message", text: m[1].trim() } : undefined;
}

/** Why `agree` is not legal now, when that is because there is no offer to agree to. */
function noOfferYet(state: DondState, space: ActionSpace<DondAction>): ActionError | undefined {
  if (dialogue(state) || state.phase !== NEGOTIATE || space.includes(AGREE_FORM)) return undefined;
  return new ActionError("illegal_action", "there is no offer on the table to agree to yet", describeSpace(space));
}

function textAlias(
  state: DondState,
  space: ActionSpace<DondAction>,
  text: string,
): DondAction | ActionError | undefined {
  if (state.phase === CHOOSE) return NO_DEAL_WORDS.test(text) ? NO_AGREEMENT : splitAlias(space, text);
  if (dialogue(state)) return SELECT_WORDS.test(text) ? SELECT : messageAlias(text);
  if (AGREE_WORDS.test(text)) return noOfferYet(state, space) ?? AGREE;
  // Before its offer a seat may say one thing.
  return splitAlias(space, text) ?? (state.spoke ? undefined : messageAlias(text));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The input as a JSON object, when it is one or is JSON text; `keep` is read as `take`. */
function jsonInput(input: unknown): unknown {
  let value = input;
  if (typeof input === "string") {
    if (!input.trim().startsWith("{")) return undefined;
    try {
      value = JSON.parse(input);
    } catch {
      // Not JSON after all: the generic parser explains.
      return undefined;
    }
  }
  if (isPlainObject(value) && Object.hasOwn(value, "keep") && !Object.hasOwn(value, "take")) {
    const { keep, ...rest } = value;
    return { ...rest, take: keep };
  }
  return value;
}

function howToSplit(obs: DondObservation, type: string): string {
  const example = obs.pool.map((n) => Math.ceil(n / 2));
  return `${type} ${amounts(example)} (or JSON {"type":"${type}","take":[${example.join(",")}]})`;
}

/** Every split of at most MAX_ITEMS items, as what its maker keeps, in OpenSpiel bargaining's order (books fastest). */
const SPLITS: readonly (readonly number[])[] = (() => {
  const splits: (readonly number[])[] = [];
  for (let balls = 0; balls <= MAX_ITEMS; balls++) {
    for (let hats = 0; balls + hats <= MAX_ITEMS; hats++) {
      for (let books = 0; books + hats + balls <= MAX_ITEMS; books++) splits.push(Object.freeze([books, hats, balls]));
    }
  }
  return Object.freeze(splits);
})();
/** Units of one item a split or pool may hold, 0 to MAX_ITEMS: the width of its thermometer code. */
const COUNT_WIDTH = MAX_ITEMS + 1;
/** A split's id by books + 8·hats + 64·balls; −1 where there is none. */
const SPLIT_IDS = (() => {
  const ids = new Int16Array(COUNT_WIDTH ** ITEM_TYPES).fill(-1);
  SPLITS.forEach(([books, hats, balls], id) => ids[books + COUNT_WIDTH * (hats + COUNT_WIDTH * balls)] = id);
  return ids;
})();
const SPLIT_COUNT = SPLITS.length;
// The ids after the splits: agree in alternating offers (OpenSpiel's AgreeAction); pass, select and
// no_agreement in the dialogue.
const AGREE_ID = SPLIT_COUNT;
const PASS_ID = SPLIT_COUNT;
const SELECT_ID = SPLIT_COUNT + 1;
const NO_AGREEMENT_ID = SPLIT_COUNT + 2;
/** The dialogue's no-talk move: an empty message. */
const PASS: DondAction = Object.freeze({ type: "message", text: "" });

/** A protocol's actions by id, and actionOf's mask, reused (it never outlives the call). */
interface NumericIds {
  readonly actions: readonly DondAction[];
  readonly scratch: Uint8Array;
}

function numericIds(actions: DondAction[]): NumericIds {
  return { actions: Object.freeze(actions), scratch: new Uint8Array(actions.length) };
}

const IDS: Readonly<Record<Protocol, NumericIds>> = {
  "alternating-offers": numericIds([...SPLITS.map((take) => Object.freeze({ type: "propose", take })), AGREE]),
  dialogue: numericIds([...SPLITS.map((take) => Object.freeze({ type: "choice", take })), PASS, SELECT, NO_AGREEMENT]),
};

// The splits a pool allows, by books + 8·hats + 64·balls, built on first use: at most 31 pools.
const splitMasks: (Uint8Array | undefined)[] = [];

function splitMask(pool: Int8Array): Uint8Array {
  const key = pool[0] + COUNT_WIDTH * (pool[1] + COUNT_WIDTH * pool[2]);
  let mask = splitMasks[key];
  if (mask === undefined) {
    mask = Uint8Array.from(SPLITS, (take) => Number(take.every((n, i) => n <= pool[i])));
    splitMasks[key] = mask;
  }
  return mask;
}

/** The id of keeping `take`, or −1 when it is no split of at most MAX_ITEMS. */
function splitId(take: readonly number[]): number {
  let key = 0;
  for (let i = ITEM_TYPES - 1; i >= 0; i--) {
    if (!(take[i] >= 0 && take[i] <= MAX_ITEMS)) return -1;
    key = key * COUNT_WIDTH + take[i];
  }
  return SPLIT_IDS[key];
}

const VALUE_WIDTH = TOTAL_VALUE + 1;
const SPLIT_WIDTH = ITEM_TYPES * COUNT_WIDTH;
const VALUES_WIDTH = ITEM_TYPES * VALUE_WIDTH;
const PHASES: readonly DondObservation["phase"][] = Object.freeze(["negotiate", "choose", "over"]);
const MESSAGE_FEATURES = 3;

const shapes = new WeakMap<DondConfig, readonly number[]>();

function tensorShape(config: DondConfig): readonly number[] {
  let shape = shapes.get(config);
  if (shape === undefined) {
    const turns = config.maxTurns;
    const head = 1 + (turns + 1) + SPLIT_WIDTH + VALUES_WIDTH;
    const size = config.protocol === "dialogue"
      ? head + 2 + VALUES_WIDTH + PHASES.length + 2 + turns * MESSAGE_FEATURES + 2 + 2 * (SPLIT_WIDTH + 1)
      : head + turns * SPLIT_WIDTH + 2 + VALUES_WIDTH + turns;
    shape = Object.freeze([size]);
    shapes.set(config, shape);
  }
  return shape;
}

/**
 * Writes one thermometer code per item from `at` (OpenSpiel's: ones at 0…n for a count n, `width` wide),
 * nothing for null, and returns where the next block starts.
 */
function thermometers(out: Float32Array, at: number, width: number, counts: readonly number[] | null): number {
  if (counts !== null) {
    for (let i = 0; i < ITEM_TYPES; i++) {
      for (let j = 0; j <= counts[i] && j < width; j++) out[at + i * width + j] = 1;
    }
  }
  return at + ITEM_TYPES * width;
}

/**
 * The numeric face. Splits are OpenSpiel bargaining's 120 offers: every (books, hats, balls) kept with at
 * most MAX_ITEMS (7) in all, books counting fastest, id 0 keeping nothing; a split is legal when it fits
 * the pool. Messages are not part of it. Ids by protocol:
 *
 * - alternating-offers, 121 ids as OpenSpiel's bargaining: 0–119 propose that split, 120 agree (once an
 *   offer is on the table). The optional message before an offer is left out.
 * - dialogue, 123 ids: 0–119 state that split as the seat's take (after the talk), 120 pass (the empty
 *   message, the no-talk move), 121 select, 122 no_agreement.
 *
 * Messages with text have no id. The information-state tensor, one dimension, from the seat's observation,
 * codes counts as OpenSpiel does, by thermometer (ones at 0…n for a count n); in alternating offers it
 * begins exactly as OpenSpiel bargaining's InformationStateTensor (whose count of offers is written one
 * place early, over the deal flag, a slip not copied here). Values are the viewer's first; a public
 * observation has none. The blocks:
 *
 * - 1: a deal was made.
 * - maxTurns + 1: offers made (alternating offers) or messages sent (dialogue) so far, one-hot.
 * - 3 × 8: the pool, per item.
 * - 3 × 11: the viewer's values per item.
 * - alternating-offers only, maxTurns × 3 × 8: each offer made, what its maker keeps (offer k by seat k mod 2).
 * - 2: the viewer's seat, one-hot.
 * - 3 × 11: the other's values per item, once shown at the end (else 0).
 * - alternating-offers, maxTurns: a message was sent in turn k + 1. In all 94 + 26·maxTurns.
 * - dialogue: 3, the phase one-hot (negotiate, choose, over); 2, the seats to act; maxTurns × 3, message
 *   k's sender one-hot and whether it had text; 2, who selected, one-hot; 2 × (3 × 8 + 1), each seat's
 *   stated take at the end, or 1 in its last entry for no agreement. In all 151 + 4·maxTurns.
 */
export const dealOrNoDeal: Game<DondState, DondAction, DondConfig, DondObservation> = defineGame({
  id: "deal-or-no-deal",
  version: 1,
  title: "Deal or No Deal",
  summary: "Two players divide a pool of 5 to 7 books, hats and balls. Each has private values that make the " +
    "whole pool worth 10 to it; every item type matters to someone and some type matters to both, so there is " +
    "both room for a deal that suits each and something to fight over. They bargain by alternating offers or by " +
    "free talk followed by private statements of what each takes; a deal pays each player the value of its " +
    "share, and no deal pays nothing.",
  utility: "general-sum",
  chanceMode: "explicit-stochastic",
  information: "imperfect",
  dynamics: "simultaneous",
  answerExample: "propose 1 0 2",
  caps: { maxTurns: 100, messageChars: 10_000 },
  seats: { min: 2, max: 2 },
  schema: dondConfig,
  variants: {
    "alternating-offers": {
      description: "OpenSpiel's bargaining: player 0 proposes first, then the players alternate, each turn an " +
        "optional message and then a counter-offer or agreement to the last offer; 10 offers at most",
      config: {},
    },
    dialogue: {
      description: "Lewis et al.'s protocol: free messages (20 at most, a random player first) until one " +
        "player selects, then both privately state their take; a deal only if the takes fit together exactly",
      config: { protocol: "dialogue", maxTurns: 20 },
    },
  },
  defaultVariant: "alternating-offers",

  seatCount: () => 2,

  // A fixed instance's pool is on the table for both; its values are each player's own.
  publicConfig: (config) => ({
    ...config,
    instance: config.instance === null ? null : { pool: [...config.instance.pool] },
  }),

  rules(config) {
    const setup = "Deal or No Deal for two players. A pool of books, hats and balls lies between you: 5 to 7 " +
      "items, at least one of each kind. Each player has its own value for one book, one hat and one ball, a " +
      `whole number from 0 to ${TOTAL_VALUE}, chosen so that the whole pool is worth exactly ${TOTAL_VALUE} to ` +
      "that player. Every kind of item is worth something to at least one player, and at least one kind is worth " +
      "something to both. You see your own values, never the other player's, until the game ends. " +
      (config.instance === null
        ? "The pool and the values are drawn uniformly from all the instances that obey these constraints. "
        : "");
    if (config.protocol === "dialogue") {
      return setup +
        "A player chosen at random speaks first; after that the players take turns. On your turn you either send " +
        `a message of at most ${config.messageChars} characters, which the other reads, or select, which ends ` +
        `the talk. The talk also ends after ${config.maxTurns} messages. Then both players state at the same ` +
        "time, and without seeing the other's statement, how many of each item they take, or that there is no " +
        "agreement. If the two takes add up to exactly the pool for every kind of item, each player scores the " +
        "value of its take by its own values; otherwise both score 0. Nothing said in the talk is binding.";
    }
    const discount = config.discount < 1
      ? ` A deal is worth less the longer it takes: from the third action on (counting offers and the ` +
        `agreement, not messages), both payoffs are multiplied by ${config.discount} once more per action.`
      : "";
    return setup +
      "Player 0 opens, then the players take turns. On your turn you may first send one message of at most " +
      `${config.messageChars} characters, and then you must either propose a split, naming how many of each ` +
      "item you keep (the other player would get the rest), or agree to the other player's last offer. An " +
      "agreement ends the game: the player who made the offer scores the value of what it kept, the one who " +
      "agreed the value of the rest, each by its own values. " +
      `After ${config.maxTurns} offers without an agreement the game ends and both score 0; the last offer ` +
      `cannot be accepted.${discount}`;
  },

  start(config) {
    const state: DondState = {
      config,
      pool: new Int8Array(ITEM_TYPES),
      values: new Int8Array(2 * ITEM_TYPES),
      spaces: UNDEALT,
      phase: config.instance === null ? DEAL : afterDeal(config),
      actor: 0,
      turns: 0,
      spoke: false,
      bids: 0,
      offers: new Int8Array(config.protocol === "dialogue" ? 0 : 3 * config.maxTurns),
      selector: -1,
      choices: new Int8Array(6).fill(-1),
      agreed: false,
      payoffs: [0, 0],
      chat: [],
    };
    if (config.instance !== null) deal(state, config.instance as Instance);
    return state;
  },

  chance(state) {
    if (state.phase === DEAL) return dealOdds();
    return state.phase === OPENER ? COIN : NO_CHANCE;
  },

  resolve(state, outcome) {
    if (state.phase === DEAL) {
      deal(state, allInstances()[outcome]);
      state.phase = afterDeal(state.config);
    } else if (state.phase === OPENER) {
      state.actor = outcome;
      state.phase = NEGOTIATE;
    } else {
      throw new RangeError("no chance event is due in this deal-or-no-deal match");
    }
  },

  // Both draws were always one rng.int over the outcomes (the deal as rng.pick of the instance list).
  sample: (state, rng) => rng.int(dealOrNoDeal.chance(state).length),

  toAct(state) {
    if (state.phase === NEGOTIATE) return SEAT[state.actor];
    return state.phase === CHOOSE ? BOTH : NOBODY;
  },

  legal(state, seat) {
    if (seat !== 0 && seat !== 1) return NOTHING;
    const spaces = state.spaces;
    if (state.phase === CHOOSE) return spaces.choose;
    if (state.phase !== NEGOTIATE || seat !== state.actor) return NOTHING;
    if (dialogue(state)) return spaces.talk;
    const offered = state.turns > 0;
    if (state.spoke) return offered ? spaces.answer : spaces.propose;
    return offered ? spaces.openAnswer : spaces.open;
  },

  play(state, moves) {
    if (state.phase === CHOOSE) return settle(state, moves[0]!, moves[1]!);
    const seat = state.actor;
    const action = moves[seat]!;
    switch (action.type) {
      case "message":
        state.chat.push({ turn: state.turns + 1, seat, text: action.text });
        if (!dialogue(state)) {
          state.spoke = true;
          return NO_REWARD;
        }
        if (++state.turns >= state.config.maxTurns) state.phase = CHOOSE;
        else state.actor = 1 - seat;
        return NO_REWARD;
      case "select":
        state.selector = seat;
        state.phase = CHOOSE;
        return NO_REWARD;
      case "propose":
        state.offers.set(action.take, 3 * state.turns);
        state.bids++;
        if (++state.turns >= state.config.maxTurns) return finish(state, 0, 0);
        state.actor = 1 - seat;
        state.spoke = false;
        return NO_REWARD;
      case "agree": {
        state.bids++;
        state.agreed = true;
        const keep = state.offers.subarray(3 * (state.turns - 1), 3 * state.turns);
        const rest = [state.pool[0] - keep[0], state.pool[1] - keep[1], state.pool[2] - keep[2]];
        const factor = state.config.discount ** Math.max(0, state.bids - 2);
        const proposer = 1 - seat;
        const p = worth(state, proposer, keep) * factor;
        const r = worth(state, seat, rest) * factor;
        return proposer === 0 ? finish(state, p, r) : finish(state, r, p);
      }
      default:
        // Choices are legal only in the choose phase, settled above.
        throw new RangeError(`${action.type} is not an action of the negotiation`);
    }
  },

  returns: (state) => [state.payoffs[0], state.payoffs[1]],

  observe(state, viewer: Viewer) {
    if (viewer !== "public" && viewer !== 0 && viewer !== 1) {
      throw new RangeError(`no seat ${viewer} in deal-or-no-deal`);
    }
    const over = state.phase === OVER;
    const shown = (seat: number) => (over || viewer === seat ? ownValues(state, seat) : null);
    const offers: DondObservation["offers"] = [];
    for (let k = 0; k < (dialogue(state) ? 0 : state.turns); k++) {
      offers.push({ seat: k % 2, keep: Array.from(state.offers.subarray(3 * k, 3 * k + 3)) });
    }
    const choice = (seat: number) =>
      state.choices[3 * seat] < 0 ? null : Array.from(state.choices.subarray(3 * seat, 3 * seat + 3));
    return {
      game: "deal-or-no-deal",
      seat: viewer,
      protocol: state.config.protocol,
      items: [...ITEMS],
      pool: Array.from(state.pool),
      values: [shown(0), shown(1)],
      phase: over ? "over" : state.phase === CHOOSE ? "choose" : "negotiate",
      toAct: [...dealOrNoDeal.toAct(state)],
      turn: over ? state.turns : state.turns + 1,
      maxTurns: state.config.maxTurns,
      discount: state.config.discount,
      messageChars: state.config.messageChars,
      offers,
      chat: state.chat.map((m) => ({ ...m })),
      selectedBy: state.selector >= 0 ? state.selector : null,
      choices: over && dialogue(state) ? [choice(0), choice(1)] : null,
      agreement: over ? state.agreed : null,
      returns: [state.payoffs[0], state.payoffs[1]],
    };
  },

  describe(obs) {
    const spectator = obs.seat === "public";
    const me = spectator ? 0 : obs.seat as number;
    const who = (seat: number) => seatName(seat, obs.seat);
    const Who = (seat: number) => who(seat).replace(/^./, (c) => c.toUpperCase());
    const dialogueGame = obs.protocol === "dialogue";
    const lines: string[] = [];
    lines.push(
      `Deal or No Deal (${dialogueGame ? "talk, then private takes" : "alternating offers"}). ` +
        (spectator ? "You are watching players 0 and 1." : `You are player ${me}.`),
    );
    lines.push(`The pool: ${amounts(obs.pool)}.`);
    if (obs.phase === "over") {
      lines.push(
        `Values per item: ${
          [0, 1].map((s) => `${who(s)}: ${valueList(obs.values[s]!)}`).join("; ")
        } (the pool is worth ${TOTAL_VALUE} to each).`,
      );
    } else if (!spectator) {
      lines.push(
        `Your values per item: ${valueList(obs.values[me]!)}; the whole pool is worth ${TOTAL_VALUE} to you. ` +
          "The other player's values are hidden until the game ends.",
      );
    } else {
      lines.push("Both players' values stay hidden until the game ends.");
    }
    // In turn order: each turn's message, then its offer.
    const lastTurn = Math.max(obs.offers.length, obs.chat.length > 0 ? obs.chat[obs.chat.length - 1].turn : 0);
    for (let t = 1, c = 0; t <= lastTurn; t++) {
      for (; c < obs.chat.length && obs.chat[c].turn === t; c++) {
        lines.push(`${Who(obs.chat[c].seat)} said (turn ${t}): ${obs.chat[c].text}`);
      }
      const o = obs.offers[t - 1];
      if (o === undefined) continue;
      const rest = obs.pool.map((n, i) => n - o.keep[i]);
      lines.push(
        `- Offer ${t}, by ${who(o.seat)}: ${who(o.seat)} keep${spectator || o.seat !== me ? "s" : ""} ${
          amounts(o.keep)
        }; ${who(1 - o.seat)} get${spectator || o.seat === me ? "s" : ""} ${amounts(rest)}.`,
      );
    }
    if (obs.phase === "over") {
      if (obs.choices) {
        lines.push(
          `Stated takes: ${
            [0, 1].map((s) => `${who(s)} ${obs.choices![s] ? amounts(obs.choices![s]!) : "no agreement"}`).join("; ")
          }.`,
        );
      }
      lines.push(
        `The game is over: ${obs.agreement ? "a deal" : "no deal"}. Scores: ${
          [0, 1].map((s) => `${who(s)} ${Math.round(obs.returns[s] * 1000) / 1000}`).join(", ")
        }.`,
      );
      return lines.join("\n");
    }
    if (spectator || !obs.toAct.includes(me)) {
      lines.push(`Waiting for ${obs.toAct.map(who).join(" and ")}.`);
      return lines.join("\n");
    }
    if (obs.phase === "choose") {
      lines.push(
        "The talk is over. State how many of each item you take, without seeing the other player's answer: " +
          `${howToSplit(obs, "choice")}, or no_agreement. Only takes that add up to the pool make a deal.`,
      );
    } else if (dialogueGame) {
      lines.push(
        `Message ${obs.turn} of at most ${obs.maxTurns}. Write your message (at most ${obs.messageChars} ` +
          'characters, or JSON {"type":"message","text":"..."}), or select to end the talk and state your take.',
      );
    } else {
      const last = obs.offers.length === obs.maxTurns - 1 ? " This is the last offer: nobody can accept it." : "";
      const spoke = obs.chat.some((m) => m.turn === obs.turn && m.seat === me);
      const agree = obs.offers.length > 0 ? ", or agree to the other player's last offer: agree" : "";
      lines.push(
        `Turn ${obs.turn} of at most ${obs.maxTurns}. ${
          spoke ? "" : `You may first send one message (message <text>, at most ${obs.messageChars} characters). `
        }Propose what you keep: ${howToSplit(obs, "propose")}${agree}.${last}`,
      );
    }
    return lines.join("\n");
  },

  parse(input, state, seat): DondAction | ActionError {
    const space = dealOrNoDeal.legal(state, seat);
    if (space.length === 0) return parseInput(space, input);
    const json = jsonInput(input);
    if (json !== undefined) {
      if (isPlainObject(json) && json.type === "agree") {
        const why = noOfferYet(state, space);
        if (why) return why;
      }
      return parseJsonAction(space, json);
    }
    // Where a message may be sent, any other text is the message, unless written in the generic form.
    return parseInput(space, input, (text) => textAlias(state, space, text), true);
  },

  clone(state) {
    return {
      ...state,
      pool: state.pool.slice(),
      values: state.values.slice(),
      offers: state.offers.slice(),
      choices: state.choices.slice(),
      payoffs: [state.payoffs[0], state.payoffs[1]],
      chat: state.chat.map((m) => ({ ...m })),
    };
  },

  actionCount: (config) => IDS[config.protocol].actions.length,

  actionId(action, state) {
    switch (action.type) {
      case "propose":
      case "choice":
        return splitId(action.take);
      case "agree":
        return AGREE_ID;
      case "message":
        return dialogue(state) && action.text === "" ? PASS_ID : -1;
      case "select":
        return SELECT_ID;
      case "no_agreement":
        return NO_AGREEMENT_ID;
    }
  },

  actionOf(id, state, seat) {
    const ids = IDS[state.config.protocol];
    dealOrNoDeal.legalMask(state, seat, ids.scratch);
    return idProblem(id, ids.scratch) ?? ids.actions[id];
  },

  legalMask(state, seat, out) {
    out.fill(0);
    if (state.phase === CHOOSE && (seat === 0 || seat === 1)) {
      out.set(splitMask(state.pool));
      out[NO_AGREEMENT_ID] = 1;
    } else if (state.phase === NEGOTIATE && seat === state.actor) {
      if (dialogue(state)) {
        out[PASS_ID] = 1;
        out[SELECT_ID] = 1;
      } else {
        out.set(splitMask(state.pool));
        if (state.turns > 0) out[AGREE_ID] = 1;
      }
    }
  },

  observationShape: tensorShape,

  encode(obs, out) {
    out.fill(0);
    const turns = obs.maxTurns;
    const talk = obs.protocol === "dialogue";
    const me: number = obs.seat === "public" ? -1 : obs.seat;
    const own = me < 0 ? null : obs.values[me] ?? null;
    const other = me < 0 ? null : obs.values[1 - me] ?? null;
    let at = 0;
    if (obs.agreement === true) out[at] = 1;
    at += 1;
    oneHot(out, at, turns + 1, talk ? obs.chat.length : obs.offers.length);
    at += turns + 1;
    at = thermometers(out, at, COUNT_WIDTH, obs.pool);
    at = thermometers(out, at, VALUE_WIDTH, own);
    if (!talk) {
      for (let k = 0; k < turns; k++) at = thermometers(out, at, COUNT_WIDTH, obs.offers[k]?.keep ?? null);
    }
    oneHot(out, at, 2, me);
    at += 2;
    at = thermometers(out, at, VALUE_WIDTH, other);
    if (!talk) {
      for (const message of obs.chat) oneHot(out, at, turns, message.turn - 1);
      return;
    }
    oneHot(out, at, PHASES.length, PHASES.indexOf(obs.phase));
    at += PHASES.length;
    for (const seat of obs.toAct) oneHot(out, at, 2, seat);
    at += 2;
    for (let k = 0; k < obs.chat.length && k < turns; k++) {
      oneHot(out, at + k * MESSAGE_FEATURES, 2, obs.chat[k].seat);
      if (obs.chat[k].text) out[at + k * MESSAGE_FEATURES + 2] = 1;
    }
    at += turns * MESSAGE_FEATURES;
    oneHot(out, at, 2, obs.selectedBy ?? -1);
    at += 2;
    for (let seat = 0; seat < 2 && obs.choices !== null; seat++) {
      const take = obs.choices[seat];
      if (take === null) out[at + SPLIT_WIDTH] = 1;
      else thermometers(out, at, COUNT_WIDTH, take);
      at += SPLIT_WIDTH + 1;
    }
  },
});

/** Ends a dialogue: a deal iff both stated takes add up to the pool, item by item. */
function settle(state: DondState, a0: DondAction, a1: DondAction): readonly number[] {
  const takes = [a0, a1].map((a) => (a.type === "choice" ? a.take : null));
  takes.forEach((take, seat) => take && state.choices.set(take, 3 * seat));
  const t0 = takes[0];
  const t1 = takes[1];
  state.agreed = t0 !== null && t1 !== null && t0.every((n, i) => n + t1[i] === state.pool[i]);
  return state.agreed ? finish(state, worth(state, 0, t0!), worth(state, 1, t1!)) : finish(state, 0, 0);
}
