import { perGame } from "./json-text.ts";
import { type Column, HEAD, TAIL } from "./turn-columns.ts";
import { playedByJson } from "./played-by.ts";
import type { ExportMatch } from "./source.ts";
import { type TurnRow, turnRows } from "./turns-view.ts";

/**
 * `turns.jsonl`: the turns view, one JSON object per decision, with the columns of `parquet` (parquet.ts and
 * played-by.ts define them for both), every key on every row. The game-shaped values (observation, action) sit under
 * the game's id, `{"ipd": {...}}`, so a file of several games has one column per game in readers that type columns
 * (pyarrow): a field that is a number in one game and a list in another never meet. Every other JSON value (an LLM's
 * messages, a refusal, log-probabilities) is JSON text, as in Parquet: such readers type a column from its first
 * rows, and a nested value where those rows had null (built-ins' rows, before the LLMs') is refused.
 */

/** A column's value as JSON: a string (JSON text too) quoted, a game-shaped value spliced under the game's id. */
type Writer = (r: TurnRow) => string;

function writer([name, , , value, game]: Column, first: boolean): Writer {
  const key = `${first ? "" : ","}${JSON.stringify(name)}:`;
  if (game) return (r) => key + perGame(r.game, value(r) as string | null);
  return (r) => {
    const v = value(r);
    return key + (typeof v === "string" ? JSON.stringify(v) : v === null ? "null" : String(v));
  };
}

const HEAD_WRITERS = HEAD.map((column, i) => writer(column, i === 0));
const TAIL_WRITERS = TAIL.map((column) => writer(column, false));

/** One row as a JSON line; game-shaped values are spliced in as the store printed them. */
export function turnLine(r: TurnRow): string {
  let line = "{";
  for (const write of HEAD_WRITERS) line += write(r);
  line += playedByJson(r.playedBy);
  for (const write of TAIL_WRITERS) line += write(r);
  return `${line}}\n`;
}

/** The lines of one match, one at a time. */
export function turnLines(entry: ExportMatch, discount: number): { pieces: Iterable<string>; rows: number } {
  return { pieces: Iterator.from(turnRows(entry, discount)).map(turnLine), rows: entry.steps.length };
}
