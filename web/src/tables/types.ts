/// <reference lib="dom" />
import type { ComponentType } from "preact";
import type { ActionForm } from "../../../protocol/action-forms.ts";

/**
 * What every game's table is given. A table draws one observation (a seat's, the public's, or a replay's)
 * in that game's own terms: cards and chips, a board, offers. It never decides what is legal: when the
 * seat it shows is to act, `turn` carries the server's legal forms and the way to answer.
 */

/** The action a page sends: exactly one of the legal forms, filled in. */
export type Action = { readonly type: string } & Record<string, unknown>;

export interface TurnBinding {
  /** The legal forms of the open decision, from the server's `turn` frame. */
  readonly legal: readonly ActionForm[];
  /** Sends the action (the server judges it; a refusal comes back as an error shown on the page). */
  readonly submit: (action: Action) => void;
}

export interface TableProps<O = Record<string, unknown>> {
  /** The game's observation as the server rendered it for `seat` (see each game's `observe`). */
  readonly obs: O;
  /** Whose view this is: a seat index, or null for the public (spectators). */
  readonly seat: number | null;
  /** Display names by seat. */
  readonly names: readonly string[];
  /** Present while `seat` has a decision open. */
  readonly turn?: TurnBinding;
}

/** A game's table, and which legal forms it offers on the table itself (the action bar offers the rest). */
export interface GameTable {
  readonly Board: ComponentType<TableProps<never>>;
  /** Forms the board lets the person choose (e.g. tic-tac-toe's cells); the action bar leaves them out. */
  readonly ownsForm?: (form: ActionForm) => boolean;
  /** Quick amounts for an amount form (e.g. a pot-sized raise), shown beside its slider. */
  readonly presets?: (
    form: Extract<ActionForm, { kind: "amount" }>,
    obs: never,
  ) => readonly { label: string; amount: number }[];
  /** Words for action types in buttons (default: the type, capitalised). */
  readonly labels?: Readonly<Record<string, string>>;
}
