import type { SeatRecord } from "../records.ts";
import { jsonString } from "./json-text.ts";
import type { ColumnType } from "./turn-columns.ts";

/**
 * Who played a decision: the same columns, by the same names, in every per-decision format (`turns.jsonl`,
 * `verl.jsonl`'s `extra_info`, `parquet`, `tensors.parquet`). The participant comes from the match's seat
 * record (what it declared when it sat down: model, endpoint, sampling; a policy's id and version; a built-in's
 * strategy); the renderer and the log-probabilities from the decision's own replay fields (`meta`), as an LLM
 * seat attached them.
 */

/** A value as JSONL writes it and Parquet stores it (JSON text is a string in both: see turns.ts). */
type Value =
  | { readonly kind: "text"; readonly value: string | null }
  | { readonly kind: "int"; readonly value: number | null }
  | { readonly kind: "bool"; readonly value: boolean | null };

type Source = (seat: SeatRecord | null, meta: Record<string, unknown> | null) => Value;

const text = (value: unknown): Value => ({ kind: "text", value: typeof value === "string" ? value : null });
const int = (value: unknown): Value => ({ kind: "int", value: Number.isSafeInteger(value) ? value as number : null });
const bool = (value: unknown): Value => ({ kind: "bool", value: typeof value === "boolean" ? value : null });

/** The columns, in their order in every format (Parquet's Arrow side: parquet.ts). */
export const PLAYED_BY_COLUMNS: readonly (readonly [name: string, type: ColumnType, source: Source])[] = [
  ["participant_kind", "utf8", (seat) => text(seat?.kind)],
  ["participant_name", "utf8", (seat) => text(seat?.name)],
  ["participant_token", "utf8", (seat) => text(seat?.tokenId)],
  ["participant_strategy", "utf8", (seat) => text(seat?.strategy)],
  ["participant_model", "utf8", (seat) => text(seat?.model)],
  ["participant_endpoint", "utf8", (seat) => text(seat?.endpoint)],
  // Sampling parameters are whatever the seat declared (any key, text or number): JSON text in every format, so a
  // key that is a number for one model and text for another cannot break a reader's column types.
  ["participant_sampling", "utf8", (seat) => text(seat?.sampling && JSON.stringify(seat.sampling))],
  ["participant_policy_id", "utf8", (seat) => text(seat?.policyId)],
  ["participant_policy_version", "int32", (seat) => int(seat?.policyVersion)],
  ["participant_greedy", "bool", (seat) => bool(seat?.greedy)],
  ["participant_learner", "bool", (seat) => bool(seat ? seat.learner === true : null)],
  ["renderer", "utf8", (_, meta) => text(meta?.renderer)],
  [
    "logprobs",
    "utf8",
    (_, meta) => text(Array.isArray(meta?.logprobs) ? JSON.stringify(meta.logprobs) : null),
  ],
];

/** Who played, for one decision: its seat's record and the decision's `meta`. */
export interface PlayedBy {
  readonly seat: SeatRecord | null;
  readonly meta: Record<string, unknown> | null;
}

/** The columns that come from the seat: the same for every decision of it. */
const SEAT_COLUMNS = PLAYED_BY_COLUMNS.filter(([name]) => name.startsWith("participant_"));
const DECISION_COLUMNS = PLAYED_BY_COLUMNS.filter(([name]) => !name.startsWith("participant_"));

function jsonFields(
  columns: typeof PLAYED_BY_COLUMNS,
  seat: SeatRecord | null,
  meta: Record<string, unknown> | null,
): string {
  let out = "";
  for (const [name, , source] of columns) {
    const v = source(seat, meta);
    const written = v.value === null ? "null" : v.kind === "text" ? jsonString(v.value) : String(v.value);
    out += `,"${name}":${written}`;
  }
  return out;
}

/** A seat's columns as JSONL, written once per seat record of a page (a match's decisions share its records). */
const seatJson = new WeakMap<SeatRecord, string>();
const NO_SEAT_JSON = jsonFields(SEAT_COLUMNS, null, null);

/** The columns as JSONL fields: `,"participant_kind":…` and the rest, to splice into a row after another field. */
export function playedByJson({ seat, meta }: PlayedBy): string {
  return seatFields(seat) + jsonFields(DECISION_COLUMNS, seat, meta);
}

function seatFields(seat: SeatRecord | null): string {
  if (seat === null) return NO_SEAT_JSON;
  let json = seatJson.get(seat);
  if (json === undefined) {
    json = jsonFields(SEAT_COLUMNS, seat, null);
    seatJson.set(seat, json);
  }
  return json;
}
