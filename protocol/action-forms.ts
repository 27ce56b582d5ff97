/**
 * The legal-action forms a `turn` frame lists (docs/protocol.md, "Actions"), as the wire carries them.
 * The games define their own (games/core/action.ts) because games import nothing outside games/; the
 * server hands the games' forms to `TurnFrame.legal`, so the type checker keeps the two shapes in step.
 */

/** Exactly this action, e.g. `{type: "cooperate"}`. */
export interface FixedForm {
  readonly kind: "fixed";
  readonly action: { readonly type: string };
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

/** `{type, give, get}`: 1..max of each named resource on each side, at least one per side; optional `text`. */
export interface ExchangeForm {
  readonly kind: "exchange";
  readonly type: string;
  readonly give: Readonly<Record<string, number>>;
  readonly get: Readonly<Record<string, number>>;
  readonly maxText: number;
}

export type ActionForm = FixedForm | AmountForm | TextForm | SplitForm | ExchangeForm;

/**
 * The action a seat plays when nobody chooses for it (the server's conduct policy, an agent's fallback):
 * the first action its game lists (check or fold in poker, cooperate in the dilemma, a message in the talk
 * phases), the low end of an amount, empty text, or a claim of nothing. A trade has no neutral value, and
 * every game with trades also lists a pass.
 */
export function defaultAction(legal: readonly ActionForm[]): unknown {
  for (const form of legal) {
    switch (form.kind) {
      case "fixed":
        return form.action;
      case "amount":
        return { type: form.type, amount: form.min };
      case "text":
        return { type: form.type, text: "" };
      case "split":
        return { type: form.type, take: form.max.map(() => 0) };
    }
  }
  throw new RangeError(`no action with a neutral value among ${JSON.stringify(legal)}`);
}
