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
      return `${form.type} <${form.integer ? "integer" : "number"} in [${fmt(form.min)}, ${fmt(form.max)}]>`;
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

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Math.round(n * 1e6) / 1e6);
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
      if (!(name in max)) {
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
    return illegal(space, `the ${form.type} amount ${amount} is outside [${fmt(form.min)}, ${fmt(form.max)}]`);
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
  const named = form.items.some((item) => item in input);
  if (named && "take" in input) return malformed(space, "give either `take` or the item fields, not both");
  const allowed = named ? ["type", ...form.items] : ["type", "take"];
  const extra = unexpectedKeys(input, allowed);
  if (extra.length) return malformed(space, `unexpected field \`${extra[0]}\` in a \`${form.type}\` action`);
  const { type: _, ...fields } = input;
  const source = named ? fields : input.take;
  if (Array.isArray(source)) return checkSplit(space, form, source);
  if (isPlainObject(source)) {
    const stray = unexpectedKeys(source, form.items);
    if (stray.length) return malformed(space, `\`${stray[0]}\` is not an item here (items: ${form.items.join(", ")})`);
    const missing = form.items.find((item) => !(item in source));
    if (missing) return malformed(space, `the ${form.type} gives no count for ${missing}`);
    return checkSplit(space, form, form.items.map((item) => source[item]));
  }
  return malformed(space, `\`${form.type}\` needs \`take\`: one whole number per item (${form.items.join(", ")})`);
}

const NUMBER = /[-+]?(?:\d+(?:[.,]\d+)?|[.,]\d+)/g;

function parseNumber(token: string): number {
  return Number(token.replace(",", "."));
}

/**
 * The generic text form of an action: its type word (dashes may be spaces) followed by its
 * arguments, e.g. `cooperate`, `donate 3.5`, `message hello there`, `split 7` or
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
  return illegal(space, `could not read an action in ${JSON.stringify(clip(trimmed))}`);
}

function typeName(form: ActionForm): string {
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
    case "amount": {
      const numbers = rest.match(NUMBER);
      if (!numbers) return malformed(space, `\`${form.type}\` needs an amount`);
      return checkAmount(space, form, parseNumber(numbers[0]));
    }
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
  const [give, get] = sides.map((side) => {
    const bundle: Record<string, number> = {};
    for (const m of side.matchAll(/(\d+)\s*([a-z]+)/gi)) {
      const name = Object.keys(form.give).find((r) =>
        r.toLowerCase() === m[2].toLowerCase().replace(/s$/, "") ||
        r.toLowerCase() === m[2].toLowerCase()
      ) ?? m[2];
      bundle[name] = (bundle[name] ?? 0) + Number(m[1]);
    }
    return bundle;
  });
  return checkExchange(space, form, give, get);
}

/** `7`, `3 7`, `3 hats, 7 books` or `hats 3 books 7` → one count per item. */
export function parseSplitText(space: ActionSpace, form: SplitForm, text: string): SplitAction | ActionError {
  const byName = new Map<string, number>();
  const pairs = /(\d+)\s*([a-z]+)|([a-z]+)\s*[:=]?\s*(\d+)/gi;
  for (const m of text.matchAll(pairs)) {
    const word = (m[2] ?? m[3]).toLowerCase();
    const item = form.items.find((it) => word === it || word === it.replace(/s$/, "") || word + "s" === it);
    if (item) byName.set(item, Number(m[1] ?? m[4]));
  }
  if (byName.size > 0) {
    const missing = form.items.find((item) => !byName.has(item));
    if (missing) return malformed(space, `the ${form.type} gives no count for ${missing}`);
    return checkSplit(space, form, form.items.map((item) => byName.get(item)!));
  }
  const numbers = (text.match(NUMBER) ?? []).map(parseNumber);
  if (numbers.length === 0) {
    return malformed(space, `\`${form.type}\` needs one count per item (${form.items.join(", ")})`);
  }
  return checkSplit(space, form, numbers.slice(0, form.items.length));
}

function clip(text: string): string {
  return text.length > 80 ? text.slice(0, 77) + "..." : text;
}

/**
 * The whole input path: a JSON object, a JSON text, or text (tried against the game's own
 * aliases first, then the generic `type args` form).
 */
export function parseInput<A extends Action>(
  space: ActionSpace<A>,
  input: unknown,
  aliases?: (text: string) => A | ActionError | undefined,
): A | ActionError {
  if (typeof input === "string") {
    if (space.length > 0 && aliases && !input.trim().startsWith("{")) {
      const aliased = aliases(input);
      // An alias names an action; whether it is legal now is still the space's call.
      if (aliased !== undefined) return aliased instanceof ActionError ? aliased : parseJsonAction(space, aliased);
    }
    return parseTextAction(space, input);
  }
  return parseJsonAction(space, input);
}
