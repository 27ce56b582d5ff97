/**
 * Actions and what is legal. Every action is a small JSON object with a `type`; a seat's
 * legal actions are a list of forms, each either one fixed action or a typed family
 * (an amount in a range, a text message, a split of items). The same forms drive
 * validation of JSON and text input, the text an LLM reads, and uniform random play.
 */

/** The JSON shape of every action. */
export interface Action {
  readonly type: string;
}

/** Exactly this action, e.g. `{type: "cooperate"}`. */
export interface FixedForm<A extends Action = Action> {
  readonly kind: "fixed";
  readonly action: A;
}

/** `{type, amount}` with amount in [min, max] (both inclusive). */
export interface AmountForm {
  readonly kind: "amount";
  readonly type: string;
  readonly min: number;
  readonly max: number;
  readonly integer: boolean;
}

/** `{type, text}` with a text of at most maxLength characters. */
export interface TextForm {
  readonly kind: "text";
  readonly type: string;
  readonly maxLength: number;
}

/** `{type, take}`: how many units of each item to claim, take[i] an integer in [0, max[i]]. */
export interface SplitForm {
  readonly kind: "split";
  readonly type: string;
  readonly items: readonly string[];
  readonly max: readonly number[];
}

/**
 * `{type, give, get}`: a trade of some of what the actor holds for some of what it asks for, e.g.
 * `{type: "offer", give: {Wood: 3}, get: {Gold: 2}}`. Each side names at least one resource, each
 * count a whole number from 1 to that resource's maximum; a text of at most `maxText` characters
 * may ride along in `text`.
 */
export interface ExchangeForm {
  readonly kind: "exchange";
  readonly type: string;
  /** The most of each resource that may be given; resources at 0 cannot be. */
  readonly give: Readonly<Record<string, number>>;
  /** The most of each resource that may be asked for. */
  readonly get: Readonly<Record<string, number>>;
  readonly maxText: number;
}

export type ActionForm<A extends Action = Action> = FixedForm<A> | AmountForm | TextForm | SplitForm | ExchangeForm;

/** What a seat may do now; empty when it has nothing to do. */
export type ActionSpace<A extends Action = Action> = readonly ActionForm<A>[];

/**
 * The action a seat plays when nobody chooses for it (the server's conduct policy, an agent's fallback):
 * the first action its game lists (check or fold in poker, cooperate in the dilemma, a message in the talk
 * phases), the low end of an amount, empty text, or a claim of nothing. A trade has no neutral value, and
 * every game with trades also lists a pass.
 */
export function defaultAction<A extends Action>(space: ActionSpace<A>): A | Action {
  for (const form of space) {
    switch (form.kind) {
      case "fixed":
        return form.action;
      case "amount":
        return { type: form.type, amount: form.min } as Action;
      case "text":
        return { type: form.type, text: "" } as Action;
      case "split":
        return { type: form.type, take: form.max.map(() => 0) } as Action;
    }
  }
  throw new RangeError(`no action with a neutral value among ${JSON.stringify(space)}`);
}

export interface AmountAction extends Action {
  readonly amount: number;
}
export interface TextAction extends Action {
  readonly text: string;
}
export interface SplitAction extends Action {
  readonly take: readonly number[];
}
export interface ExchangeAction extends Action {
  readonly give: Readonly<Record<string, number>>;
  readonly get: Readonly<Record<string, number>>;
  readonly text?: string;
}

export type ActionErrorCode = "not_your_turn" | "malformed_action" | "illegal_action";

/** Why an input is not a legal action, with what is legal now. */
export class ActionError {
  constructor(
    readonly code: ActionErrorCode,
    readonly reason: string,
    readonly legal: string,
  ) {}

  /** One sentence for people and LLMs: what was wrong, and what is allowed. */
  get message(): string {
    return this.legal ? `${this.reason}. Legal now: ${this.legal}.` : `${this.reason}.`;
  }

  toJSON(): { code: ActionErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }
}

export function isActionError(value: unknown): value is ActionError {
  return value instanceof ActionError;
}

/** Words a form is written with in text: the action type, with dashes as spaces allowed. */
function formLabel(form: ActionForm): string {
  switch (form.kind) {
    case "fixed":
      return fixedLabel(form.action);
    case "amount":
      return `${form.type} <${form.integer ? "integer" : "number"} in ${rangeText(form)}>`;
    case "text":
      return `${form.type} <text of at most ${form.maxLength} characters>`;
    case "split":
      return `${form.type} ${form.items.map((item, i) => `<${item}: integer in [0, ${form.max[i]}]>`).join(" ")}`;
    case "exchange":
      return `${form.type} <give: ${bundleRange(form.give)}> -> <get: ${bundleRange(form.get)}>`;
  }
}

function bundleRange(max: Readonly<Record<string, number>>): string {
  return Object.entries(max).filter(([, n]) => n > 0).map(([name, n]) => `${name} 1-${n}`).join(", ");
}

function fixedLabel(action: Action): string {
  const extra = Object.entries(action).filter(([key]) => key !== "type").map(([, v]) => String(v));
  return [action.type, ...extra].join(" ");
}

/** A short, readable list of the legal forms, e.g. `cooperate | defect`. */
export function describeSpace(space: ActionSpace): string {
  return space.map(formLabel).join(" | ");
}

/**
 * A bound of an amount range as text: at most six decimals, rounded inward (a maximum down, a minimum
 * up), so that an amount written as printed is itself legal.
 */
export function boundText(n: number, side: "min" | "max"): string {
  if (Number.isInteger(n)) return String(n);
  const inward = side === "max" ? Math.floor : Math.ceil;
  // Past 2^53 / 10⁶ a sixth decimal cannot be counted in whole millionths: whole numbers then.
  if (Math.abs(n) >= 2 ** 53 / 1e6) return String(inward(n));
  const k = inward(n * 1e6);
  // n · 10⁶ is itself rounded: when the printed value lands just outside the bound, one millionth inward.
  const outside = side === "max" ? k / 1e6 > n : k / 1e6 < n;
  return String(outside ? (k + (side === "max" ? -1 : 1)) / 1e6 : k / 1e6);
}

function rangeText(form: AmountForm): string {
  return `[${boundText(form.min, "min")}, ${boundText(form.max, "max")}]`;
}

function illegal(space: ActionSpace, reason: string): ActionError {
  return new ActionError("illegal_action", reason, describeSpace(space));
}

function malformed(space: ActionSpace, reason: string): ActionError {
  return new ActionError("malformed_action", reason, describeSpace(space));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => sameJson(a[k], b[k]));
  }
  return false;
}

function unexpectedKeys(input: Record<string, unknown>, allowed: readonly string[]): string[] {
  return Object.keys(input).filter((key) => !allowed.includes(key));
}

/** Validates a JSON action against the legal forms; returns the canonical action. */
export function parseJsonAction<A extends Action>(space: ActionSpace<A>, input: unknown): A | ActionError {
  if (space.length === 0) return new ActionError("not_your_turn", "there is nothing for this seat to do now", "");
  if (!isPlainObject(input)) return malformed(space, "an action is a JSON object with a string field `type`");
  if (typeof input.type !== "string") return malformed(space, "the action has no string field `type`");
  const forms = space.filter((f) => (f.kind === "fixed" ? f.action.type : f.type) === input.type);
  if (forms.length === 0) return illegal(space, `\`${input.type}\` is not a legal action now`);
  let firstError: ActionError | undefined;
  for (const form of forms) {
    const result = matchForm(space, form, input);
    if (!(result instanceof ActionError)) return result as A;
    firstError ??= result;
  }
  return firstError!;
}

function matchForm(space: ActionSpace, form: ActionForm, input: Record<string, unknown>): Action | ActionError {
  switch (form.kind) {
    case "fixed":
      return sameJson(input, form.action)
        ? form.action
        : illegal(space, `${JSON.stringify(input)} is not a legal action now`);
    case "amount": {
      const extra = unexpectedKeys(input, ["type", "amount"]);
      if (extra.length) return malformed(space, `unexpected field \`${extra[0]}\` in a \`${form.type}\` action`);
      return checkAmount(space, form, input.amount);
    }
    case "text": {
      const extra = unexpectedKeys(input, ["type", "text"]);
      if (extra.length) return malformed(space, `unexpected field \`${extra[0]}\` in a \`${form.type}\` action`);
      return checkText(space, form, input.text);
    }
    case "split":
      return matchSplit(space, form, input);
    case "exchange": {
      const extra = unexpectedKeys(input, ["type", "give", "get", "text"]);
      if (extra.length) return malformed(space, `unexpected field \`${extra[0]}\` in a \`${form.type}\` action`);
      return checkExchange(space, form, input.give, input.get, input.text);
    }
  }
}

/** Checks both sides of a trade (and any text beside it) for an exchange form. */
export function checkExchange(
  space: ActionSpace,
  form: ExchangeForm,
  give: unknown,
  get: unknown,
  text?: unknown,
): ExchangeAction | ActionError {
  const sides = { give, get } as const;
  const checked: Record<string, Record<string, number>> = {};
  for (const side of ["give", "get"] as const) {
    const raw = sides[side];
    const max = form[side];
    if (!isPlainObject(raw)) {
      return malformed(
        space,
        `\`${side}\` must be an object of counts by resource, e.g. {"${Object.keys(max)[0]}": 1}`,
      );
    }
    const bundle: Record<string, number> = {};
    for (const [name, n] of Object.entries(raw)) {
      if (!Object.hasOwn(max, name)) {
        return malformed(space, `\`${name}\` is not a resource here (resources: ${Object.keys(max).join(", ")})`);
      }
      if (typeof n !== "number" || !Number.isInteger(n) || n < 1) {
        return malformed(space, `the ${name} count in \`${side}\` must be a whole number of at least 1`);
      }
      if (n > max[name]) {
        return illegal(space, `the ${name} count in \`${side}\` is ${n}; at most ${max[name]} is possible now`);
      }
      bundle[name] = n;
    }
    if (Object.keys(bundle).length === 0) {
      return malformed(space, "a trade gives at least one resource and asks for at least one");
    }
    checked[side] = bundle;
  }
  if (text === undefined) return { type: form.type, give: checked.give, get: checked.get };
  if (typeof text !== "string") return malformed(space, `the \`text\` beside a \`${form.type}\` must be a string`);
  if (text.length > form.maxText) {
    return illegal(space, `the text is ${text.length} characters long; at most ${form.maxText} are allowed`);
  }
  return { type: form.type, give: checked.give, get: checked.get, text };
}

/** Checks an amount for an amount form. */
export function checkAmount(space: ActionSpace, form: AmountForm, amount: unknown): AmountAction | ActionError {
  if (typeof amount !== "number" || !Number.isFinite(amount)) {
    return malformed(space, `\`${form.type}\` needs a numeric \`amount\``);
  }
  if (form.integer && !Number.isInteger(amount)) {
    return illegal(space, `the ${form.type} amount must be a whole number, got ${amount}`);
  }
  if (amount < form.min || amount > form.max) {
    return illegal(space, `the ${form.type} amount ${amount} is outside ${rangeText(form)}`);
  }
  return { type: form.type, amount };
}

/** Checks a text for a text form. */
export function checkText(space: ActionSpace, form: TextForm, text: unknown): TextAction | ActionError {
  if (typeof text !== "string") return malformed(space, `\`${form.type}\` needs a string \`text\``);
  if (text.length > form.maxLength) {
    return illegal(space, `the ${form.type} is ${text.length} characters long; at most ${form.maxLength} are allowed`);
  }
  return { type: form.type, text };
}

/** Checks one claim per item for a split form. */
export function checkSplit(space: ActionSpace, form: SplitForm, take: readonly unknown[]): SplitAction | ActionError {
  if (take.length !== form.items.length) {
    return malformed(space, `a ${form.type} names ${form.items.length} item count(s) (${form.items.join(", ")})`);
  }
  for (let i = 0; i < take.length; i++) {
    const n = take[i];
    if (typeof n !== "number" || !Number.isInteger(n)) {
      return malformed(space, `the ${form.items[i]} count must be a whole number, got ${JSON.stringify(n)}`);
    }
    if (n < 0 || n > form.max[i]) {
      return illegal(space, `the ${form.items[i]} count ${n} is outside [0, ${form.max[i]}]`);
    }
  }
  return { type: form.type, take: take as number[] };
}

/**
 * A split may be written `{take: [3, 7]}`, `{take: {hats: 3, books: 7}}`, or with the item
 * names as fields: `{hats: 3, books: 7}` (so a one-item split reads `{"type":"split","coins":7}`).
 */
function matchSplit(space: ActionSpace, form: SplitForm, input: Record<string, unknown>): Action | ActionError {
  const named = form.items.some((item) => Object.hasOwn(input, item));
  if (named && Object.hasOwn(input, "take")) return malformed(space, "give either `take` or the item fields, not both");
  const allowed = named ? ["type", ...form.items] : ["type", "take"];
  const extra = unexpectedKeys(input, allowed);
  if (extra.length) return malformed(space, `unexpected field \`${extra[0]}\` in a \`${form.type}\` action`);
  const { type: _, ...fields } = input;
  const source = named ? fields : input.take;
  if (Array.isArray(source)) return checkSplit(space, form, source);
  if (isPlainObject(source)) {
    const stray = unexpectedKeys(source, form.items);
    if (stray.length) return malformed(space, `\`${stray[0]}\` is not an item here (items: ${form.items.join(", ")})`);
    const missing = form.items.find((item) => !Object.hasOwn(source, item));
    if (missing) return malformed(space, `the ${form.type} gives no count for ${missing}`);
    return checkSplit(space, form, form.items.map((item) => source[item]));
  }
  return malformed(space, `\`${form.type}\` needs \`take\`: one whole number per item (${form.items.join(", ")})`);
}

/** How amounts are written in text, as regular-expression sources, for games' own answer formats too. */
export const AMOUNT_SYNTAX = Object.freeze({
  /** A number as people write it: a sign, a decimal point or comma, an exponent. */
  number: String.raw`[-+]?(?:\d+(?:[.,]\d+)?|[.,]\d+)(?:e[-+]?\d+)?`,
  /** After a number: it is a percentage. */
  percent: String.raw`\s*(?:%|per\s?cent\b)`,
  /** Words for the largest legal amount of an amount form. */
  largest: String.raw`(?:all|everything|max)\b`,
});
const NUMBERS = new RegExp(AMOUNT_SYNTAX.number, "gi");
/** The first number of an amount, and whether it is a percentage. */
const AMOUNT = new RegExp(`(${AMOUNT_SYNTAX.number})(${AMOUNT_SYNTAX.percent})?`, "i");
const LARGEST = new RegExp(`^${AMOUNT_SYNTAX.largest}`, "i");
/**
 * A count and a name (`3 hats`, `hats: 3`). A count starts where a number starts, never inside one, so
 * `3.5 hats` or `-3 hats` is read whole (and refused), not as 5 or 3.
 */
const COUNT = String.raw`(?<![\d.]|\d,)([-+]?\d+(?:[.,]\d+)?)`;
const COUNTED = new RegExp(String.raw`${COUNT}\s*([a-z]+)`, "gi");
const NAMED_COUNT = new RegExp(String.raw`${COUNT}\s*([a-z]+)|([a-z]+)\s*[:=]?\s*([-+]?\d+(?:[.,]\d+)?)`, "gi");

function parseNumber(token: string): number {
  return Number(token.replace(",", "."));
}

/**
 * The argument of an amount form written as text: its first number (a decimal comma is allowed), or
 * `all`, `everything` or `max` for the largest legal amount. `N%` is N percent of `percentOf` where a
 * game gives a percentage a meaning; elsewhere it is refused, never read as N.
 */
export function readAmount(
  space: ActionSpace,
  form: AmountForm,
  text: string,
  percentOf?: number,
): AmountAction | ActionError {
  const rest = text.trim();
  if (LARGEST.test(rest)) return { type: form.type, amount: form.max };
  const m = AMOUNT.exec(rest);
  if (!m) return malformed(space, `\`${form.type}\` needs an amount: a number, or all for the most allowed`);
  const n = parseNumber(m[1]);
  if (m[2] === undefined) return checkAmount(space, form, n);
  if (percentOf === undefined) {
    return malformed(space, `a percentage has no meaning for \`${form.type}\` here: write the amount itself`);
  }
  const amount = percentOf * (n / 100);
  if (!(amount >= form.min && amount <= form.max)) {
    return illegal(space, `${n}% of ${boundText(percentOf, "max")} is ${amount}, outside ${rangeText(form)}`);
  }
  return checkAmount(space, form, amount);
}

/**
 * The generic text form of an action: its type word (dashes may be spaces) followed by its
 * arguments, e.g. `cooperate`, `donate 3.5`, `donate all`, `message hello there`, `split 7` or
 * `split 3 hats 7 books`. Games add their own aliases in front of this.
 */
export function parseTextAction<A extends Action>(space: ActionSpace<A>, text: string): A | ActionError {
  if (space.length === 0) return new ActionError("not_your_turn", "there is nothing for this seat to do now", "");
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    let json: unknown;
    try {
      json = JSON.parse(trimmed);
    } catch {
      return malformed(space, "the text starts with `{` but is not valid JSON");
    }
    return parseJsonAction(space, json);
  }
  return readGeneric(space, trimmed) ?? cannotRead(space, trimmed);
}

/** The generic form, when the text starts with the type word of a legal form (else undefined). */
function readGeneric<A extends Action>(space: ActionSpace<A>, trimmed: string): A | ActionError | undefined {
  const lower = trimmed.toLowerCase();
  // Longest type first, so `punish` never shadows `punish-all` and the like.
  const forms = [...space].sort((a, b) => typeName(b).length - typeName(a).length);
  for (const form of forms) {
    const name = typeName(form);
    const spaced = name.replace(/-/g, " ");
    const head = [name, spaced].find((w) => lower === w || lower.startsWith(w + " ") || lower.startsWith(w + ":"));
    if (head === undefined) continue;
    const rest = trimmed.slice(head.length).replace(/^[:\s]+/, "");
    const result = matchTextForm(space, form, rest);
    if (result !== undefined) return result as A;
  }
  return undefined;
}

function cannotRead(space: ActionSpace, trimmed: string): ActionError {
  return illegal(space, `could not read an action in ${JSON.stringify(clip(trimmed))}`);
}

/** The `type` of the actions a form makes. */
export function typeName(form: ActionForm): string {
  return form.kind === "fixed" ? form.action.type : form.type;
}

function matchTextForm(space: ActionSpace, form: ActionForm, rest: string): Action | ActionError | undefined {
  switch (form.kind) {
    case "fixed": {
      const label = fixedLabel(form.action).toLowerCase();
      const words = rest.toLowerCase();
      const args = label.slice(form.action.type.length).trim();
      return words === args ? form.action : undefined;
    }
    case "amount":
      return readAmount(space, form, rest);
    case "text":
      return checkText(space, form, rest);
    case "split":
      return parseSplitText(space, form, rest);
    case "exchange":
      return parseExchangeText(space, form, rest);
  }
}

/** `3 Wood, 2 Gold -> 5 Gold` (or `and` between items) → a trade. */
function parseExchangeText(space: ActionSpace, form: ExchangeForm, text: string): ExchangeAction | ActionError {
  const sides = text.split("->");
  if (sides.length !== 2) return malformed(space, `write a trade as \`${form.type} 3 Wood -> 2 Gold\``);
  const bundles: Record<string, number>[] = [];
  for (const side of sides) {
    // A Map, not an object: the names are the sender's words.
    const bundle = new Map<string, number>();
    for (const m of side.matchAll(COUNTED)) {
      // `woods` and `wood` are Wood; an unknown word stays as written, for checkExchange to refuse.
      const word = m[2].toLowerCase();
      const name = Object.keys(form.give).find((r) => [word, word.replace(/s$/, "")].includes(r.toLowerCase())) ?? m[2];
      const n = parseNumber(m[1]);
      if (!Number.isInteger(n) || n < 1) {
        return malformed(space, `the ${name} count must be a whole number of at least 1, got ${m[1]}`);
      }
      bundle.set(name, (bundle.get(name) ?? 0) + n);
    }
    bundles.push(Object.fromEntries(bundle));
  }
  return checkExchange(space, form, bundles[0], bundles[1]);
}

/** `7`, `3 7`, `3 hats, 7 books` or `hats 3 books 7` → one count per item. */
export function parseSplitText(space: ActionSpace, form: SplitForm, text: string): SplitAction | ActionError {
  const byName = new Map<string, number>();
  for (const m of text.matchAll(NAMED_COUNT)) {
    const word = (m[2] ?? m[3]).toLowerCase();
    const item = form.items.find((it) => word === it || word === it.replace(/s$/, "") || word + "s" === it);
    if (item === undefined) continue;
    if (byName.has(item)) return malformed(space, `the ${form.type} gives ${item} twice`);
    byName.set(item, parseNumber(m[1] ?? m[4]));
  }
  if (byName.size > 0) {
    const missing = form.items.find((item) => !byName.has(item));
    if (missing) return malformed(space, `the ${form.type} gives no count for ${missing}`);
    return checkSplit(space, form, form.items.map((item) => byName.get(item)!));
  }
  const numbers = (text.match(NUMBERS) ?? []).map(parseNumber);
  if (numbers.length === 0) {
    return malformed(space, `\`${form.type}\` needs one count per item (${form.items.join(", ")})`);
  }
  return checkSplit(space, form, numbers);
}

function clip(text: string): string {
  return text.length > 80 ? text.slice(0, 77) + "..." : text;
}

/**
 * The whole input path: a JSON object, a JSON text, or text. Text is tried against the game's own
 * aliases first, then the generic `type args` form, and only then, with `freeText` where the space has a
 * text form (a talk phase), read whole as that form's text, so that `message hello` is the message
 * "hello", as the generic form reads it, and any other text is the message as written.
 */
export function parseInput<A extends Action>(
  space: ActionSpace<A>,
  input: unknown,
  aliases?: (text: string) => A | ActionError | undefined,
  freeText = false,
): A | ActionError {
  if (typeof input !== "string") return parseJsonAction(space, input);
  const trimmed = input.trim();
  if (space.length === 0 || trimmed.startsWith("{")) return parseTextAction(space, input);
  const aliased = aliases?.(input);
  // An alias names an action; whether it is legal now is still the space's call.
  if (aliased !== undefined) return aliased instanceof ActionError ? aliased : parseJsonAction(space, aliased);
  const generic = readGeneric(space, trimmed);
  if (generic !== undefined) return generic;
  const talk = freeText ? space.find((form) => form.kind === "text") : undefined;
  return talk ? parseJsonAction(space, { type: talk.type, text: input }) : cannotRead(space, trimmed);
}
