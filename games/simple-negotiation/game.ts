import { z } from "zod";
import {
  ActionError,
  type ActionSpace,
  describeSpace,
  type ExchangeForm,
  type FixedForm,
  type TextForm,
  typeName,
} from "../core/action.ts";
import { checkTalk, messageCharsKey } from "../core/config.ts";
import { defineGame, NumericFaceError, type Viewer } from "../core/game.ts";
import { idProblem, oneHot } from "../core/numeric.ts";
import { seatName } from "../core/text.ts";

/**
 * SPIRAL's SimpleNegotiation-v1: two players hold Wood and Gold, value them differently and in
 * private, and take turns chatting, offering trades, and accepting or denying the offer made to
 * them. Returns are the raw gains in inventory value, never a win or a loss.
 *
 * Offers are exchange forms (a bundle given for a bundle asked), limited by what each side holds;
 * `parse` reads them itself, for the SPIRAL token and for messages that name what each side holds.
 */

export const RESOURCES = ["Wood", "Gold"] as const;
export type Resource = (typeof RESOURCES)[number];
const R = RESOURCES.length;

const holdings = z.tuple([z.int().min(0).max(1_000_000), z.int().min(0).max(1_000_000)]);
const worths = z.tuple([z.number().min(0).max(1e9), z.number().min(0).max(1e9)]);

/** Every decision's observation holds every action so far, so stored observations grow with turns². */
const MAX_TURNS = 200;

export const snConfig = z.strictObject({
  maxTurns: z.int().min(1).max(MAX_TURNS).default(10)
    .describe(`actions in the whole game, both players' together (player 0 acts first), at most ${MAX_TURNS}`),
  messageChars: messageCharsKey(1000, "turns", "text in one action"),
  inventory: z.tuple([holdings, holdings]).default([[10, 10], [10, 10]])
    .describe("each player's starting Wood and Gold, player 0 first (public)"),
  values: z.tuple([worths, worths]).default([[5, 15], [15, 5]])
    .describe("each player's value per unit of Wood and of Gold, player 0 first (each player sees only its own)"),
}).check(checkTalk);
export type SnConfig = z.infer<typeof snConfig>;

/** Quantities by resource name, only those above zero. */
export type Bundle = Readonly<Partial<Record<Resource, number>>>;

export type SnAction =
  | { readonly type: "chat"; readonly text: string }
  | { readonly type: "offer"; readonly give: Bundle; readonly get: Bundle; readonly text?: string }
  | { readonly type: "accept"; readonly text?: string }
  | { readonly type: "deny"; readonly text?: string };

/** One action as everyone saw it. */
export interface SnEvent {
  /** 1-based action number. */
  readonly turn: number;
  readonly seat: number;
  readonly type: SnAction["type"];
  /** The chat, or the text sent with the token. */
  readonly text?: string;
  readonly give?: Bundle;
  readonly get?: Bundle;
  /** An offer made while one was pending to its sender: it denied that one. */
  readonly countered?: true;
}

export interface SnState {
  readonly config: SnConfig;
  /** Actions taken; the seat to act is `turn % 2`. */
  turn: number;
  /** Units held by seat and resource: inventory[2 * seat + resource]. */
  readonly inventory: Int32Array;
  /** The seat whose offer is pending, or -1. */
  offerFrom: number;
  /** The pending offer: what its maker gives, and what it asks for, by resource. */
  readonly offerGive: Int32Array;
  readonly offerGet: Int32Array;
  readonly log: SnEvent[];
}

export interface SnObservation {
  readonly game: "simple-negotiation";
  /** The viewer's seat, or "public". */
  readonly seat: number | "public";
  readonly resources: string[];
  /** 1-based action being played (maxTurns + 1 once over). */
  readonly turn: number;
  readonly maxTurns: number;
  readonly phase: "playing" | "over";
  readonly toMove: number | null;
  readonly messageChars: number;
  /** Units held by seat and resource (public: the starting inventories and every trade are). */
  readonly inventories: [number[], number[]];
  /** Values per unit by seat: the viewer's own, and both once the game is over. */
  readonly values: [number[] | null, number[] | null];
  /** Gain in inventory value so far by seat, shown as the values are. */
  readonly gains: [number | null, number | null];
  /** The offer waiting for an answer. */
  readonly offer: { readonly from: number; readonly to: number; readonly give: Bundle; readonly get: Bundle } | null;
  readonly log: SnEvent[];
}

interface Spaces {
  readonly talk: ActionSpace<SnAction>;
  /** An offer is pending to the seat and it can be carried out. */
  readonly answer: ActionSpace<SnAction>;
  /** An offer is pending to the seat but one side lacks what it names. */
  readonly refuse: ActionSpace<SnAction>;
}

const ACCEPT = Object.freeze({ type: "accept" as const });
const DENY = Object.freeze({ type: "deny" as const });
const ACCEPT_FORM: FixedForm<SnAction> = Object.freeze({ kind: "fixed", action: ACCEPT });
const DENY_FORM: FixedForm<SnAction> = Object.freeze({ kind: "fixed", action: DENY });
const NOTHING: ActionSpace<SnAction> = Object.freeze([]);
const SEAT = [Object.freeze([0]), Object.freeze([1])];
const NOBODY: readonly number[] = Object.freeze([]);
const NO_REWARD = Object.freeze([0, 0]);
const NO_CHANCE: readonly number[] = Object.freeze([]);

const spacesByConfig = new WeakMap<SnConfig, Spaces>();

function spaces(config: SnConfig): Spaces {
  let cached = spacesByConfig.get(config);
  if (cached === undefined) {
    const chat: TextForm = Object.freeze({ kind: "text", type: "chat", maxLength: config.messageChars });
    cached = {
      talk: Object.freeze([chat]),
      answer: Object.freeze([chat, ACCEPT_FORM, DENY_FORM]),
      refuse: Object.freeze([chat, DENY_FORM]),
    };
    spacesByConfig.set(config, cached);
  }
  return cached;
}

function isOver(state: SnState): boolean {
  return state.turn >= state.config.maxTurns;
}

function holds(state: SnState, seat: number, counts: ArrayLike<number>): boolean {
  for (let r = 0; r < R; r++) if (state.inventory[2 * seat + r] < counts[r]) return false;
  return true;
}

/** The pending offer's recipient can accept it: both sides still hold what it names. */
function executable(state: SnState): boolean {
  return holds(state, state.offerFrom, state.offerGive) && holds(state, 1 - state.offerFrom, state.offerGet);
}

function value(config: SnConfig, seat: number, counts: ArrayLike<number>): number {
  let sum = 0;
  for (let r = 0; r < R; r++) sum += counts[r] * config.values[seat][r];
  return sum;
}

function gain(state: SnState, seat: number): number {
  const inventory = state.inventory.subarray(2 * seat, 2 * seat + R);
  return value(state.config, seat, inventory) - value(state.config, seat, state.config.inventory[seat]);
}

function bundle(counts: ArrayLike<number>): Bundle {
  const out: Partial<Record<Resource, number>> = {};
  for (let r = 0; r < R; r++) if (counts[r] > 0) out[RESOURCES[r]] = counts[r];
  return out;
}

/** `3 Wood`, `3 Wood and 2 Gold`. */
export function bundleText(b: Bundle): string {
  return RESOURCES.filter((r) => b[r]).map((r) => `${b[r]} ${r}`).join(" and ");
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What the seat may do now, in one line. */
function legalText(state: SnState, seat: number): string {
  return describeSpace(simpleNegotiation.legal(state, seat));
}

/**
 * The trades open to `seat`: anything it holds, for up to all there is of each resource (asking for
 * more than the other holds is allowed, as in SPIRAL; such an offer simply cannot be accepted).
 */
function offerForm(state: SnState, seat: number): ExchangeForm | undefined {
  const give: Record<string, number> = {};
  const get: Record<string, number> = {};
  for (let r = 0; r < R; r++) {
    give[RESOURCES[r]] = state.inventory[2 * seat + r];
    get[RESOURCES[r]] = state.inventory[r] + state.inventory[2 + r];
  }
  const any = (bundle: Record<string, number>) => Object.values(bundle).some((n) => n > 0);
  if (!any(give) || !any(get)) return undefined;
  return { kind: "exchange", type: "offer", give, get, maxText: state.config.messageChars };
}

function illegal(state: SnState, seat: number, reason: string): ActionError {
  return new ActionError("illegal_action", reason, legalText(state, seat));
}

function malformed(state: SnState, seat: number, reason: string): ActionError {
  return new ActionError("malformed_action", reason, legalText(state, seat));
}

function checkText(state: SnState, seat: number, text: unknown, type: string): string | ActionError {
  if (typeof text !== "string") return malformed(state, seat, `the \`text\` of a ${type} must be a string`);
  const max = state.config.messageChars;
  if (text.length > max) {
    return illegal(state, seat, `the text is ${text.length} characters long; at most ${max} are allowed`);
  }
  return text;
}

/** A resource name as players write it: any case, `Woods` for Wood. */
function resourceIndex(name: string): number {
  const word = name.trim().toLowerCase();
  return RESOURCES.findIndex((r) => word === r.toLowerCase() || word === `${r.toLowerCase()}s`);
}

const RESOURCE_LIST = RESOURCES.join(", ");

/** A bundle from JSON (`{"Wood": 3}`), as counts by resource, or why not. */
function jsonBundle(state: SnState, seat: number, raw: unknown, side: "give" | "get"): Int32Array | ActionError {
  const what = side === "give" ? "what you give" : "what you ask for";
  if (!isPlainObject(raw)) {
    return malformed(state, seat, `\`${side}\` (${what}) must be an object of resource counts, e.g. {"Wood": 3}`);
  }
  const counts = new Int32Array(R);
  for (const [name, n] of Object.entries(raw)) {
    const r = resourceIndex(name);
    if (r < 0) return malformed(state, seat, `\`${name}\` is not a resource here (resources: ${RESOURCE_LIST})`);
    if (typeof n !== "number" || !Number.isInteger(n) || n < 1) {
      return malformed(state, seat, `the ${RESOURCES[r]} count in \`${side}\` must be a whole number of at least 1`);
    }
    counts[r] += n;
  }
  return counts;
}

/** A bundle from text (`3 Wood, 2 Gold` or `3 Wood and 2 Gold`), as SPIRAL reads it, or why not. */
function textBundle(state: SnState, seat: number, text: string): Int32Array | ActionError {
  const counts = new Int32Array(R);
  for (const part of text.split(/,\s*|\s+and\s+/i)) {
    const item = part.trim();
    if (!item) continue;
    const m = /^(\d+)\s+(.+)$/.exec(item);
    if (!m) {
      return malformed(state, seat, `could not read "${item}" in an offer: write a count and a resource, as 3 Wood`);
    }
    const r = resourceIndex(m[2]);
    if (r < 0) return malformed(state, seat, `\`${m[2].trim()}\` is not a resource here (resources: ${RESOURCE_LIST})`);
    if (Number(m[1]) < 1) return malformed(state, seat, `an offer names at least 1 of each resource it lists`);
    counts[r] += Number(m[1]);
  }
  return counts;
}

/** Checks an offer's two bundles and the text beside it; returns the canonical action. */
function offer(
  state: SnState,
  seat: number,
  give: Int32Array | ActionError,
  get: Int32Array | ActionError,
  text: string | ActionError | undefined,
): SnAction | ActionError {
  if (give instanceof ActionError) return give;
  if (get instanceof ActionError) return get;
  if (text instanceof ActionError) return text;
  if (give.every((n) => n === 0) || get.every((n) => n === 0)) {
    return malformed(state, seat, "an offer gives at least one resource and asks for at least one");
  }
  for (let r = 0; r < R; r++) {
    const held = state.inventory[2 * seat + r];
    if (give[r] > held) {
      return illegal(state, seat, `you hold ${held} ${RESOURCES[r]}, so you cannot offer ${give[r]}`);
    }
  }
  const action = { type: "offer" as const, give: bundle(give), get: bundle(get) };
  return text === undefined ? action : { ...action, text };
}

function answer(
  state: SnState,
  seat: number,
  type: "accept" | "deny",
  text: string | undefined,
): SnAction | ActionError {
  if (state.offerFrom < 0) return illegal(state, seat, `there is no offer to ${type}`);
  if (state.offerFrom === seat) {
    return illegal(state, seat, `the pending offer is your own; only player ${1 - seat} may ${type} it`);
  }
  if (type === "accept" && !executable(state)) {
    const side = holds(state, seat, state.offerGet) ? "the other player no longer holds" : "you do not hold";
    return illegal(state, seat, `the trade cannot be made: ${side} what it names`);
  }
  const base = type === "accept" ? ACCEPT : DENY;
  return text === undefined ? base : { type, text };
}

/** Each action type's fields (a Map: the key is the sender's `type`). */
const FIELDS: ReadonlyMap<string, readonly string[]> = new Map([
  ["chat", ["type", "text"]],
  ["offer", ["type", "give", "get", "text"]],
  ["accept", ["type", "text"]],
  ["deny", ["type", "text"]],
]);

function jsonAction(state: SnState, seat: number, input: unknown): SnAction | ActionError {
  if (!isPlainObject(input) || typeof input.type !== "string") {
    return malformed(state, seat, "an action is a JSON object with a string field `type`");
  }
  const type = input.type;
  const fields = FIELDS.get(type);
  if (fields === undefined) return illegal(state, seat, `\`${type}\` is not an action of this game`);
  const extra = Object.keys(input).find((key) => !fields.includes(key));
  if (extra) return malformed(state, seat, `unexpected field \`${extra}\` in a \`${type}\` action`);
  if (type === "chat") {
    const text = checkText(state, seat, input.text, "chat");
    return text instanceof ActionError ? text : { type: "chat", text };
  }
  const text = Object.hasOwn(input, "text") ? checkText(state, seat, input.text, type) : undefined;
  if (type === "offer") {
    return offer(
      state,
      seat,
      jsonBundle(state, seat, input.give, "give"),
      jsonBundle(state, seat, input.get, "get"),
      text,
    );
  }
  if (text instanceof ActionError) return text;
  return answer(state, seat, type as "accept" | "deny", text);
}

// SPIRAL's offer token (the colon is required), and its answers.
const OFFER_TOKEN = /\[Offer:\s*(?:I\s+(?:give|offer)\s+)?([^[\]]+?)\s*\.*\]/gi;
const OFFER_LIKE = /\[\s*offer\b/i;
const ACCEPT_TOKEN = /\[\s*accept\s*\]/gi;
const DENY_TOKEN = /\[\s*deny\s*\]/gi;
const BARE_ANSWER = /^\s*(accept|deny)\s*[.!]?\s*$/i;
/** The generic text form: a type word (then a space, a colon or nothing) and its arguments. */
const GENERIC = /^\s*(chat|offer|accept|deny)(?:\s*:\s*|\s+|$)([\s\S]*)$/i;

/** An offer's inside, `3 Wood, 2 Gold -> 5 Gold`, as SPIRAL reads it. */
function offerBody(state: SnState, seat: number, body: string, text: string | undefined): SnAction | ActionError {
  const cleaned = body.split(/\s+/).join(" ").replace(/[.,!?]+$/, "").replace(/^I\s+(?:give|offer)\s+/i, "");
  const sides = cleaned.split(/\s*->\s*/);
  if (sides.length !== 2 || !sides[0].trim() || !sides[1].trim()) {
    return malformed(
      state,
      seat,
      "an offer names what you give, then `->`, then what you ask for, as in [Offer: 3 Wood -> 2 Gold]",
    );
  }
  const checked = text === undefined ? undefined : checkText(state, seat, text, "offer");
  return offer(state, seat, textBundle(state, seat, sides[0]), textBundle(state, seat, sides[1]), checked);
}

/**
 * Free text with at most one token, `[Offer: …]`, `[Accept]` or `[Deny]`, the rest of the text riding
 * along; else the generic form of a legal action (`chat hello`, `offer 3 Wood -> 2 Gold`, `accept, thanks`);
 * else the whole text is a chat.
 */
function textAction(state: SnState, seat: number, input: string): SnAction | ActionError {
  const bare = BARE_ANSWER.exec(input);
  if (bare) return answer(state, seat, bare[1].toLowerCase() as "accept" | "deny", undefined);
  const offers = [...input.matchAll(OFFER_TOKEN)];
  const accepts = input.match(ACCEPT_TOKEN)?.length ?? 0;
  const denies = input.match(DENY_TOKEN)?.length ?? 0;
  if (offers.length + accepts + denies > 1) {
    return malformed(state, seat, "use at most one of [Offer: …], [Accept] and [Deny] in one turn");
  }
  const rest = (token: RegExp | string) => {
    const left = input.replace(token, " ").trim().replace(/\s+/g, " ");
    return left ? left : undefined;
  };
  if (offers.length === 1) return offerBody(state, seat, offers[0][1], rest(offers[0][0]));
  if (OFFER_LIKE.test(input)) {
    return malformed(state, seat, "write an offer as [Offer: 3 Wood -> 2 Gold], with the colon");
  }
  for (const [count, type, token] of [[accepts, "accept", ACCEPT_TOKEN], [denies, "deny", DENY_TOKEN]] as const) {
    if (count === 0) continue;
    const text = rest(token);
    const checked = text === undefined ? undefined : checkText(state, seat, text, type);
    return checked instanceof ActionError ? checked : answer(state, seat, type, checked);
  }
  const generic = GENERIC.exec(input);
  const type = generic?.[1].toLowerCase();
  const legal = simpleNegotiation.legal(state, seat).some((form) => typeName(form) === type);
  if (legal && type === "offer") return offerBody(state, seat, generic![2].trim(), undefined);
  if (legal && (type === "accept" || type === "deny")) {
    const rest = generic![2].trim();
    const checked = rest ? checkText(state, seat, rest, type) : undefined;
    return checked instanceof ActionError ? checked : answer(state, seat, type, checked);
  }
  const text = checkText(state, seat, legal ? generic![2] : input, "chat");
  return text instanceof ActionError ? text : { type: "chat", text };
}

function counts(b: Bundle, into: Int32Array): void {
  for (let r = 0; r < R; r++) into[r] = b[RESOURCES[r]] ?? 0;
}

function fmt(x: number): string {
  return Number.isInteger(x) ? String(x) : String(Math.round(x * 1000) / 1000);
}

function signed(x: number): string {
  return x > 0 ? `+${fmt(x)}` : fmt(x);
}

const PASS: SnAction = Object.freeze({ type: "chat", text: "" });
const PASS_ID = 0;
const ACCEPT_ID = 1;
const DENY_ID = 2;
const FIRST_SWAP_ID = 3;
/** The most swaps a config may have for a numeric face: more than a policy's action head reasonably holds. */
const MAX_SWAPS = 65_536;
const EVENT_TYPES: readonly SnAction["type"][] = Object.freeze(["chat", "offer", "accept", "deny"]);
const OFFER_FEATURES = 2 + 2 * R;
const EVENT_FEATURES = EVENT_TYPES.length + 2 * R + 2;

function tensorSize(maxTurns: number): number {
  return 2 + (maxTurns + 1) + 2 * R + (2 * R + 1) + 2 + OFFER_FEATURES + maxTurns * EVENT_FEATURES;
}

/** A config's action ids: the units of each resource in the game, where each resource's swaps start. */
interface NumericIds {
  readonly totals: readonly number[];
  readonly swapStart: readonly number[];
  readonly count: number;
  readonly shape: readonly number[];
  /** actionOf's mask, reused: it never outlives the call. */
  readonly scratch: Uint8Array;
  /** The swap actions made so far, by id. */
  readonly actions: SnAction[];
}

const idsByConfig = new WeakMap<SnConfig, NumericIds>();

function numericIds(config: SnConfig): NumericIds {
  let ids = idsByConfig.get(config);
  if (ids === undefined) {
    const totals = RESOURCES.map((_, r) => config.inventory[0][r] + config.inventory[1][r]);
    const swaps = 2 * totals[0] * totals[1];
    if (swaps > MAX_SWAPS) {
      throw new NumericFaceError(
        "simple-negotiation",
        `inventories of ${totals[0]} Wood and ${totals[1]} Gold in all make ${swaps} swaps, more than the ` +
          `${MAX_SWAPS} action ids a numeric face offers`,
      );
    }
    const count = FIRST_SWAP_ID + swaps;
    ids = {
      totals,
      swapStart: [FIRST_SWAP_ID, FIRST_SWAP_ID + totals[0] * totals[1]],
      count,
      shape: Object.freeze([tensorSize(config.maxTurns)]),
      scratch: new Uint8Array(count),
      actions: [],
    };
    idsByConfig.set(config, ids);
  }
  return ids;
}

/** The id of giving `give` for `get`, when that is a swap. */
function swapId(ids: NumericIds, give: Bundle, get: Bundle): number {
  for (let r = 0; r < R; r++) {
    const n = give[RESOURCES[r]] ?? 0;
    const m = get[RESOURCES[1 - r]] ?? 0;
    const width = ids.totals[1 - r];
    const swap = n > 0 && m > 0 && m <= width && give[RESOURCES[1 - r]] === undefined &&
      get[RESOURCES[r]] === undefined;
    if (swap) return ids.swapStart[r] + (n - 1) * width + (m - 1);
  }
  return -1;
}

/** The action an id in range stands for. */
function idAction(ids: NumericIds, id: number): SnAction {
  if (id === PASS_ID) return PASS;
  if (id === ACCEPT_ID) return ACCEPT;
  if (id === DENY_ID) return DENY;
  let action = ids.actions[id];
  if (action === undefined) {
    const r = id < ids.swapStart[1] ? 0 : 1;
    const width = ids.totals[1 - r];
    const k = id - ids.swapStart[r];
    action = Object.freeze({
      type: "offer" as const,
      give: Object.freeze({ [RESOURCES[r]]: Math.floor(k / width) + 1 }),
      get: Object.freeze({ [RESOURCES[1 - r]]: (k % width) + 1 }),
    });
    ids.actions[id] = action;
  }
  return action;
}

/** A bundle's counts by resource, into `out` from `at`. */
function writeBundle(out: Float32Array, at: number, bundle: Bundle): void {
  for (let r = 0; r < R; r++) out[at + r] = bundle[RESOURCES[r]] ?? 0;
}

/**
 * The numeric face. Talk is not part of it: a seat that says nothing sends the empty chat, its pass.
 * Offers are discretised as swaps, some of one resource for some of the other: with two resources every
 * trade whose net effect moves one resource each way has a swap with the same effect, and only gifts and
 * demands with nothing in return (a trade naming one resource on both sides) are left out. With TW and TG
 * the Wood and Gold in the game (both inventories together), the ids are:
 *
 * - 0: pass, `{type: "chat", text: ""}`; always legal on the seat's turn.
 * - 1: accept the offer made to the seat (when it can be carried out); 2: deny it.
 * - 3 + (n − 1)·TG + (m − 1): give n Wood (1…TW) for m Gold (1…TG).
 * - 3 + TW·TG + (n − 1)·TW + (m − 1): give n Gold (1…TG) for m Wood (1…TW).
 *
 * An offer is legal for n up to what the seat holds. Actions carrying text (except the pass) have no id, nor
 * offers other than swaps. A config with more than MAX_SWAPS swaps has no numeric face.
 *
 * The information-state tensor, shape [20 + 11·maxTurns], everything from the seat's observation (other
 * than free text), with seats absolute (player 0 first) but values the viewer's own first:
 *
 * - 2: the viewer's seat, one-hot.
 * - maxTurns + 1: actions taken so far, one-hot.
 * - 4: units held, player 0's Wood and Gold, then player 1's.
 * - 5: the viewer's values per unit of Wood and Gold; the other's (0 until shown at the end); 1 once shown.
 * - 2: the viewer's gain so far; the other's (0 until shown).
 * - 6: the pending offer: its maker, one-hot; the Wood and Gold it gives; the Wood and Gold it asks for.
 * - maxTurns × 10: action k (taken by seat k mod 2): its type one-hot (chat, offer, accept, deny); an
 *   offer's Wood and Gold given and asked for; whether it countered an offer; whether it carried text.
 */
export const simpleNegotiation = defineGame<SnState, SnAction, SnConfig, SnObservation>({
  id: "simple-negotiation",
  version: 1,
  title: "Simple negotiation",
  summary: "Two players start with Wood and Gold and value them differently, each knowing only its own " +
    "values. They take turns to chat, offer a trade, or accept or deny the offer made to them, for a fixed " +
    "number of actions. Each scores the change in the value of its own inventory, so a trade that moves each " +
    "resource to whoever values it more makes both better off.",
  utility: "general-sum",
  chanceMode: "deterministic",
  information: "imperfect",
  dynamics: "sequential",
  answerExample: "offer 3 Wood -> 2 Gold",
  caps: { maxTurns: 200, messageChars: 10_000 },
  seats: { min: 2, max: 2 },
  schema: snConfig,
  variants: {
    standard: {
      description: "SPIRAL's SimpleNegotiation-v1: 10 Wood and 10 Gold each, Wood worth 5 and Gold 15 to player 0 " +
        "and the reverse to player 1, 10 actions in all",
      config: {},
    },
    long: { description: "as standard, with 30 actions in all", config: { maxTurns: 30 } },
  },
  defaultVariant: "standard",

  seatCount: () => 2,

  // Each player's values are its own; the inventories are public.
  publicConfig: ({ values: _, ...open }) => open,

  rules(config) {
    return "A trading game for two players with two resources, Wood and Gold. Each player starts with some of " +
      `each (player 0: ${config.inventory[0][0]} Wood and ${config.inventory[0][1]} Gold; player 1: ` +
      `${config.inventory[1][0]} Wood and ${config.inventory[1][1]} Gold) and has its own value per unit of each, ` +
      "which only it knows until the game ends. Player 0 acts first, then the players alternate; the game ends " +
      `after ${config.maxTurns} actions in all. On your turn you do exactly one of these: chat (free text the ` +
      "other reads); make an offer, naming what you give and what you ask for in return, which replaces any " +
      "offer of yours still waiting and turns down one waiting for you; accept the offer made to you, which " +
      "trades the resources at once if both of you still hold them; or deny it, which withdraws it. You may " +
      "only offer resources you hold. Text may go before or after an offer, accept or deny. Your score is the " +
      "value of your inventory at the end, by your own values, minus its value at the start: a gain, which can " +
      `be negative. Texts are at most ${config.messageChars} characters.`;
  },

  start(config) {
    return {
      config,
      turn: 0,
      inventory: Int32Array.from([...config.inventory[0], ...config.inventory[1]]),
      offerFrom: -1,
      offerGive: new Int32Array(R),
      offerGet: new Int32Array(R),
      log: [],
    };
  },

  chance: () => NO_CHANCE,

  resolve() {
    throw new RangeError("simple-negotiation has no chance events");
  },

  toAct: (state) => (isOver(state) ? NOBODY : SEAT[state.turn & 1]),

  legal(state, seat) {
    if (isOver(state) || seat !== (state.turn & 1)) return NOTHING;
    const s = spaces(state.config);
    const answers = state.offerFrom !== 1 - seat ? s.talk : executable(state) ? s.answer : s.refuse;
    const offer = offerForm(state, seat);
    // Chat first, then the trade, then the answers to a waiting offer.
    return offer ? [answers[0], offer, ...answers.slice(1)] : answers;
  },

  play(state, moves) {
    const seat = state.turn & 1;
    const action = moves[seat]!;
    const turn = ++state.turn;
    const text = action.text === undefined ? {} : { text: action.text };
    switch (action.type) {
      case "chat":
        state.log.push({ turn, seat, type: "chat", text: action.text });
        return NO_REWARD;
      case "offer": {
        const countered = state.offerFrom === 1 - seat ? { countered: true as const } : {};
        state.offerFrom = seat;
        counts(action.give, state.offerGive);
        counts(action.get, state.offerGet);
        state.log.push({
          turn,
          seat,
          type: "offer",
          ...text,
          give: { ...action.give },
          get: { ...action.get },
          ...countered,
        });
        return NO_REWARD;
      }
      case "deny":
        state.offerFrom = -1;
        state.log.push({ turn, seat, type: "deny", ...text });
        return NO_REWARD;
      case "accept": {
        const from = state.offerFrom;
        const change = new Int32Array(R);
        for (let r = 0; r < R; r++) {
          change[r] = state.offerGet[r] - state.offerGive[r];
          state.inventory[2 * from + r] += change[r];
          state.inventory[2 * seat + r] -= change[r];
        }
        state.offerFrom = -1;
        state.log.push({ turn, seat, type: "accept", ...text });
        const proposer = value(state.config, from, change);
        // 0 − x, not −x: a trade worth nothing to the acceptor pays +0, never −0.
        const acceptor = 0 - value(state.config, seat, change);
        return from === 0 ? [proposer, acceptor] : [acceptor, proposer];
      }
    }
  },

  returns: (state) => [gain(state, 0), gain(state, 1)],

  observe(state, viewer: Viewer) {
    if (viewer !== "public" && viewer !== 0 && viewer !== 1) {
      throw new RangeError(`no seat ${viewer} in simple-negotiation`);
    }
    const over = isOver(state);
    const shown = (seat: number) => over || viewer === seat;
    const from = state.offerFrom;
    return {
      game: "simple-negotiation",
      seat: viewer,
      resources: [...RESOURCES],
      turn: state.turn + 1,
      maxTurns: state.config.maxTurns,
      phase: over ? "over" : "playing",
      toMove: over ? null : state.turn & 1,
      messageChars: state.config.messageChars,
      inventories: [Array.from(state.inventory.subarray(0, R)), Array.from(state.inventory.subarray(R, 2 * R))],
      values: [shown(0) ? [...state.config.values[0]] : null, shown(1) ? [...state.config.values[1]] : null],
      gains: [shown(0) ? gain(state, 0) : null, shown(1) ? gain(state, 1) : null],
      offer: from < 0 ? null : { from, to: 1 - from, give: bundle(state.offerGive), get: bundle(state.offerGet) },
      log: state.log.map((e) => ({
        ...e,
        ...(e.give ? { give: { ...e.give } } : {}),
        ...(e.get ? { get: { ...e.get } } : {}),
      })),
    };
  },

  describe(obs) {
    const spectator = obs.seat === "public";
    const me = spectator ? 0 : obs.seat as number;
    const who = (seat: number) => seatName(seat, obs.seat);
    const Who = (seat: number) => who(seat).replace(/^./, (c) => c.toUpperCase());
    const over = obs.phase === "over";
    const holding = (seat: number) => obs.resources.map((r, i) => `${obs.inventories[seat][i]} ${r}`).join(" and ");
    const lines: string[] = [];
    lines.push(`Simple negotiation over Wood and Gold. ${spectator ? "You are watching." : `You are player ${me}.`}`);
    lines.push(
      over
        ? `The game is over after ${obs.maxTurns} actions.`
        : `Action ${obs.turn} of ${obs.maxTurns}; player ${obs.toMove} is to act.`,
    );
    for (const seat of spectator ? [0, 1] : [me, 1 - me]) {
      const values = obs.values[seat];
      const worth = values
        ? ` (values per unit: ${obs.resources.map((r, i) => `${r} ${fmt(values[i])}`).join(", ")}; gain so far ` +
          `${signed(obs.gains[seat]!)})`
        : "; values private";
      lines.push(`${Who(seat)} hold${who(seat) === "you" ? "" : "s"} ${holding(seat)}${worth}.`);
    }
    for (const e of obs.log) {
      const said = e.text === undefined ? "" : e.type === "chat" ? `: ${e.text}` : `, saying: ${e.text}`;
      const what = e.type === "chat"
        ? "said"
        : e.type === "offer"
        ? `offered ${bundleText(e.give!)} for ${bundleText(e.get!)}${
          e.countered ? " (turning down the offer made to them)" : ""
        }`
        : e.type === "accept"
        ? "accepted the offer; the trade was made"
        : "denied the offer";
      lines.push(`- Action ${e.turn}, ${who(e.seat)}: ${what}${said}`);
    }
    if (obs.offer) {
      lines.push(
        `Waiting: ${who(obs.offer.from)} offer${who(obs.offer.from) === "you" ? "" : "s"} ` +
          `${bundleText(obs.offer.give)} for ${bundleText(obs.offer.get)}.`,
      );
    }
    if (over || spectator || obs.toMove !== me) return lines.join("\n");
    const answers = obs.offer?.to === me ? " [Accept] takes the waiting offer, [Deny] turns it down;" : "";
    lines.push(
      "Your turn. Write free text to chat, or include exactly one token: [Offer: 3 Wood -> 2 Gold] offers what " +
        `you give for what you ask;${answers} other text may surround the token. Or JSON: ` +
        '{"type":"chat","text":"..."}, {"type":"offer","give":{"Wood":3},"get":{"Gold":2}}, {"type":"accept"}, ' +
        '{"type":"deny"}.',
    );
    return lines.join("\n");
  },

  parse(input, state, seat): SnAction | ActionError {
    if (simpleNegotiation.legal(state, seat).length === 0) {
      return new ActionError("not_your_turn", "there is nothing for this seat to do now", "");
    }
    if (typeof input !== "string") return jsonAction(state, seat, input);
    if (!input.trim().startsWith("{")) return textAction(state, seat, input);
    let json: unknown;
    try {
      json = JSON.parse(input);
    } catch {
      return malformed(state, seat, "the text starts with `{` but is not valid JSON");
    }
    return jsonAction(state, seat, json);
  },

  clone(state) {
    return {
      ...state,
      inventory: state.inventory.slice(),
      offerGive: state.offerGive.slice(),
      offerGet: state.offerGet.slice(),
      // Events are never changed once logged, so a clone may share them.
      log: [...state.log],
    };
  },

  actionCount: (config) => numericIds(config).count,

  actionId(action, state) {
    switch (action.type) {
      case "chat":
        return action.text === "" ? PASS_ID : -1;
      case "accept":
        return action.text === undefined ? ACCEPT_ID : -1;
      case "deny":
        return action.text === undefined ? DENY_ID : -1;
      case "offer":
        return action.text === undefined ? swapId(numericIds(state.config), action.give, action.get) : -1;
    }
  },

  actionOf(id, state, seat) {
    const ids = numericIds(state.config);
    simpleNegotiation.legalMask(state, seat, ids.scratch);
    return idProblem(id, ids.scratch) ?? idAction(ids, id);
  },

  legalMask(state, seat, out) {
    out.fill(0);
    if (isOver(state) || seat !== (state.turn & 1)) return;
    out[PASS_ID] = 1;
    if (state.offerFrom === 1 - seat) {
      out[DENY_ID] = 1;
      if (executable(state)) out[ACCEPT_ID] = 1;
    }
    const ids = numericIds(state.config);
    for (let r = 0; r < R; r++) {
      // Swaps giving n of resource r lie n by n, each run as long as there is of the other resource.
      const width = ids.totals[1 - r];
      const start = ids.swapStart[r];
      out.fill(1, start, start + state.inventory[2 * seat + r] * width);
    }
  },

  observationShape: (config) => numericIds(config).shape,

  encode(obs, out) {
    out.fill(0);
    const me = typeof obs.seat === "number" ? obs.seat : -1;
    const maxTurns = obs.maxTurns;
    let at = 0;
    oneHot(out, at, 2, me);
    at += 2;
    oneHot(out, at, maxTurns + 1, obs.turn - 1);
    at += maxTurns + 1;
    for (let seat = 0; seat < 2; seat++) {
      for (let r = 0; r < R; r++) out[at++] = obs.inventories[seat][r];
    }
    const own = me < 0 ? null : obs.values[me];
    const other = me < 0 ? null : obs.values[1 - me];
    for (let r = 0; r < R; r++) out[at + r] = own === null ? 0 : own[r];
    at += R;
    for (let r = 0; r < R; r++) out[at + r] = other === null ? 0 : other[r];
    at += R;
    out[at++] = other === null ? 0 : 1;
    out[at++] = me < 0 ? 0 : obs.gains[me] ?? 0;
    out[at++] = me < 0 ? 0 : obs.gains[1 - me] ?? 0;
    if (obs.offer !== null) {
      oneHot(out, at, 2, obs.offer.from);
      writeBundle(out, at + 2, obs.offer.give);
      writeBundle(out, at + 2 + R, obs.offer.get);
    }
    at += OFFER_FEATURES;
    for (let k = 0; k < obs.log.length && k < maxTurns; k++) {
      const event = obs.log[k];
      const slot = at + k * EVENT_FEATURES;
      oneHot(out, slot, EVENT_TYPES.length, EVENT_TYPES.indexOf(event.type));
      if (event.give) writeBundle(out, slot + EVENT_TYPES.length, event.give);
      if (event.get) writeBundle(out, slot + EVENT_TYPES.length + R, event.get);
      if (event.countered) out[slot + EVENT_TYPES.length + 2 * R] = 1;
      if (event.text) out[slot + EVENT_TYPES.length + 2 * R + 1] = 1;
    }
  },
});
