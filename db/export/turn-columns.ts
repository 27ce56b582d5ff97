import { MATCHES } from "../tables/matches.ts";
import { STEPS } from "../tables/steps.ts";
import type { TurnRow } from "./turns-view.ts";

/**
 * The columns of the turns view, in `turns.jsonl`'s order and Parquet's: one list for both formats. Types are named
 * here (Parquet's side maps them to Arrow's, parquet.ts), so that JSONL never loads Arrow.
 */

/** A column's type, as both formats know it. */
export type ColumnType = "utf8" | "int32" | "float64" | "bool";

/**
 * A column of the turns view: its name, type and nullability, and its value. `game` marks a game-shaped value
 * (JSON text): Parquet stores the bare value, `turns.jsonl` the value under the game's id (`{"ipd": …}`). Every other
 * value is written as it is, JSON text as a string: this list is the one definition of both formats' columns.
 */
export type Column = readonly [
  name: string,
  type: ColumnType,
  nullable: boolean,
  value: (r: TurnRow) => string | number | boolean | null,
  game?: "game",
];

const M = MATCHES.column;
const S = STEPS.column;

/**
 * The columns before who played (played-by.ts) and those after, in turns.jsonl's order. One that carries a stored
 * column's value (as is, as JSON text, or counted: `attempts`) keeps that column's name.
 */
export const HEAD: readonly Column[] = [
  [S.matchId, "utf8", false, (r) => r.matchId],
  [M.game, "utf8", false, (r) => r.game],
  [M.gameVersion, "int32", false, (r) => r.gameVersion],
  [M.variant, "utf8", false, (r) => r.variant],
  [S.seat, "int32", false, (r) => r.seat],
  ["role", "utf8", false, (r) => r.role],
];
export const TAIL: readonly Column[] = [
  [S.turn, "int32", false, (r) => r.turn],
  [S.seq, "int32", false, (r) => r.seq],
  [S.observation, "utf8", false, (r) => r.observation, "game"],
  [S.prompt, "utf8", true, (r) => r.prompt],
  // JSON text whose shape is the seat's (chat messages) or absent on most rows: text in JSONL too, since a reader
  // that types columns from its first rows (pyarrow, Hugging Face datasets) cannot take a nested value after nulls.
  ["messages", "utf8", true, (r) => r.messages],
  ["response", "utf8", true, (r) => r.response],
  [S.action, "utf8", true, (r) => r.action, "game"],
  [S.legal, "bool", false, (r) => r.legal],
  [S.error, "utf8", true, (r) => r.error],
  [S.attempts, "int32", false, (r) => r.attempts],
  [S.defaulted, "utf8", true, (r) => r.defaulted],
  [S.latencyMs, "float64", false, (r) => r.latencyMs],
  ["prompt_tokens", "int32", true, (r) => r.promptTokens],
  ["completion_tokens", "int32", true, (r) => r.completionTokens],
  ["reward", "float64", false, (r) => r.reward],
  ["return", "float64", true, (r) => r.return],
  ["return_to_go", "float64", false, (r) => r.returnToGo],
  ["cursor", "utf8", true, (r) => r.cursor],
];
