import { jsonString as text, jsonTime as time, perGame } from "./json-text.ts";
import type { MatchRecord, SeatRecord } from "../records.ts";
import type { ReplayStore } from "../store.ts";
import { STEPS } from "../tables/steps.ts";
import { estimatedRows, isoTime, type PageEntry, type StepsReader } from "./source.ts";

const S = STEPS.column;

/**
 * `episodes.jsonl`: one JSON object per match — its record and every decision in `seq` order, the full
 * replay (like a Kaggle environment's episode). So that a file of several games reads in readers that type
 * columns (pyarrow), the game-shaped values (config, observation, action) sit under the game's id
 * (`{"ipd": {...}}`), what a client sent in whatever shape it chose (input, attempts, meta) and a refusal (error)
 * are JSON text, and every seat carries every key of a seat record.
 */

/**
 * A decision as the JSON text of its place in the line, built by the database: the decisions' JSON columns hold
 * the compact text the server wrote and pass through as stored, so nothing is parsed and printed again in JS. The
 * bytes are those `JSON.stringify` writes: a `real` latency goes through `numeric`, which prints it without the
 * exponent PostgreSQL's float output uses from 10⁶ up; strings go through `to_json`, which escapes as
 * JSON.stringify does (JSON text too: `to_json(input::text)`); a boolean is cast (concat would print `t`).
 * `opened` is the SQL of `{"<game>":`, made once per match in JS rather than once per decision in SQL.
 */
const stepJson = (opened: string) => {
  /** Each key (a decision's keys are its columns' names) and the SQL of its value's JSON text, as concat's arguments. */
  const fields: readonly (readonly [column: string, json: string])[] = [
    [S.seq, S.seq],
    [S.turn, S.turn],
    [S.seat, S.seat],
    [S.observation, `${opened}, ${S.observation}, '}'`],
    [S.action, `CASE WHEN ${S.action} IS NULL THEN 'null' ELSE concat(${opened}, ${S.action}::text, '}') END`],
    [S.input, `coalesce(to_json(${S.input}::text)::text, 'null')`],
    [S.legal, `${S.legal}::text`],
    [S.error, `coalesce(to_json(${S.error}::text)::text, 'null')`],
    [S.attempts, `coalesce(to_json(${S.attempts}::text)::text, 'null')`],
    [S.defaulted, `coalesce(to_json(${S.defaulted})::text, 'null')`],
    [S.latencyMs, `${S.latencyMs}::text::numeric`],
    [S.meta, `coalesce(to_json(${S.meta}::text)::text, 'null')`],
    [S.rewards, `coalesce(${S.rewards}::text, 'null')`],
    [S.at, `'"', ${isoTime(S.at)}, '"'`],
    [S.prompt, `coalesce(to_json(${S.prompt})::text, 'null')`],
    [S.legalIds, `coalesce(${S.legalIds}::text, 'null')`],
  ];
  return `concat(${
    fields.map(([column, json], i) => `'${i === 0 ? "{" : ","}"${column}":', ${json}`).join(", ")
  }, '}')`;
};

/** Each short match's decisions as the JSON array text of its line (without the brackets). */
const EPISODE_STEPS_OF_PAGE = `
SELECT p.n, s.steps
FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS p(id, opened, n)
CROSS JOIN LATERAL (
  SELECT string_agg(${stepJson("p.opened")}, ',' ORDER BY ${S.seq}) AS steps
  FROM steps WHERE ${S.matchId} = p.id
) s
ORDER BY p.n`;

/** The next `$3` decisions of match `$1` after seq `$2`, as text like the above, and the last one's seq. */
const EPISODE_STEPS_AFTER = `
SELECT max(${S.seq}) AS last, count(*) AS n, string_agg(${stepJson("$4::text")}, ',' ORDER BY ${S.seq}) AS steps
FROM (SELECT * FROM steps WHERE ${S.matchId} = $1 AND ${S.seq} > $2 ORDER BY ${S.seq} LIMIT $3) s`;

/**
 * What episodes.jsonl reads of a match's decisions: the JSON array's text, without its brackets, whole for a short
 * match; for a long one, slices of it read from the database as the line is written.
 */
export type EpisodeSteps = string | AsyncIterable<string>;

/** Matches of more decisions than this (estimated) are read in slices: the most a match is held at once, whole. */
const LONG_MATCH_ROWS = 512;
/** The decisions of a long match's first slice; later ones are sized to about SLICE_CHARS by the one before. */
const FIRST_SLICE_ROWS = 64;
/** A quarter of a chunk: a chunk that a slice completes is at most a quarter over its size. */
const SLICE_CHARS = 1 << 18;

/** `{"<game>":` as JSON text. */
const openedFor = (game: string) => `{${JSON.stringify(game)}:`;

/** A long match's decisions, a slice at a time, each slice's text starting with a comma but the first. */
async function* slicesOf(store: ReplayStore, match: MatchRecord): AsyncGenerator<string> {
  const opened = openedFor(match.game);
  let after = 0;
  let limit = FIRST_SLICE_ROWS;
  for (;;) {
    const [row] = await store.sql.query<{ last: number | null; n: number | string; steps: string | null }>(
      EPISODE_STEPS_AFTER,
      [match.id, after, limit, opened],
    );
    if (row.steps === null) return;
    yield after === 0 ? row.steps : `,${row.steps}`;
    const n = Number(row.n);
    if (n < limit) return;
    after = Number(row.last);
    // Decisions grow along a match (observations carry its history): at most double, and never past what a short
    // match may hold whole.
    limit = Math.max(1, Math.min(2 * limit, LONG_MATCH_ROWS, Math.round(SLICE_CHARS / (row.steps.length / n))));
  }
}

/** The decisions of a page of matches: short ones' text, long ones' slices (read when the line is written). */
export const episodeSteps: StepsReader<EpisodeSteps> = async (store, matches) => {
  const short = matches.filter((m) => estimatedRows(m) <= LONG_MATCH_ROWS);
  const rows = short.length === 0 ? [] : await store.sql.query<{ n: number | string; steps: string | null }>(
    EPISODE_STEPS_OF_PAGE,
    [short.map((m) => m.id), short.map((m) => openedFor(m.game))],
  );
  const texts = short.map(() => ""); // a match that ended before anyone moved has no row
  let chars = 0;
  for (const row of rows) {
    if (row.steps === null) continue;
    texts[Number(row.n) - 1] = row.steps;
    chars += row.steps.length;
  }
  let next = 0;
  const steps = matches.map((m) => (estimatedRows(m) <= LONG_MATCH_ROWS ? texts[next++] : slicesOf(store, m)));
  return { steps, chars, rows: short.reduce((n, m) => n + estimatedRows(m), 0) };
};

/** Every key a seat record may have, in this order: each seat of every line carries all of them (null when absent). */
const SEAT_KEYS = [
  "kind",
  "name",
  "tokenId",
  "strategy",
  "model",
  "endpoint",
  "sampling",
  "policyId",
  "policyVersion",
  "greedy",
  "learner",
] as const satisfies readonly (keyof SeatRecord)[];

/**
 * A seat in one shape whatever played it: readers that type columns from the first lines (pyarrow, Hugging Face
 * datasets) refuse a seat struct that gains a field (an LLM's model) after lines of built-ins. Sampling parameters
 * are JSON text (any key, text or number).
 */
function seatShape(seat: SeatRecord | null): Record<string, unknown> | null {
  if (seat === null) return null;
  const shaped: Record<string, unknown> = {};
  for (const key of SEAT_KEYS) shaped[key] = seat[key] ?? null;
  if (seat.sampling) shaped.sampling = JSON.stringify(seat.sampling);
  return shaped;
}

/** Pieces of a short match's steps text it is handed over in, so its line is never copied whole. */
const PIECE_CHARS = 1 << 20;

/** One match's line, in pieces: the header, its decisions' text a slice at a time, the cursor. */
export function episodeLine(
  entry: PageEntry<EpisodeSteps>,
): { pieces: Iterable<string> | AsyncIterable<string>; rows: number } {
  const m = entry.match;
  const head = `{"match_id":${text(m.id)},"game":${text(m.game)},"game_version":${m.gameVersion},"variant":${
    text(m.variant)
  },"config":${perGame(m.game, JSON.stringify(m.config))},"seed":${text(m.seed)},"group":${
    text(m.group ?? null)
  },"seats":${JSON.stringify(m.seats.map(seatShape))},"conduct":${JSON.stringify(m.conduct)},"statuses":${
    JSON.stringify(m.statuses)
  },"returns":${JSON.stringify(m.returns)},"end_reason":${text(m.endReason)},"error":${
    text(m.error ?? null)
  },"culprit":${m.culprit},"game_steps":${m.steps},"created_at":${time(m.createdAt)},"started_at":${
    time(m.startedAt)
  },"ended_at":${time(m.endedAt)},"steps":`;
  const steps = entry.steps;
  const tail = `],"cursor":${text(entry.cursor)}}\n`;
  if (typeof steps !== "string") {
    return {
      pieces: (async function* () {
        yield `${head}[`;
        yield* steps;
        yield tail;
      })(),
      rows: 1,
    };
  }
  if (steps.length <= PIECE_CHARS) return { pieces: [`${head}[${steps}${tail}`], rows: 1 };
  function* pieces(steps: string) {
    yield `${head}[`;
    for (let at = 0; at < steps.length; at += PIECE_CHARS) yield steps.slice(at, at + PIECE_CHARS);
    yield tail;
  }
  return { pieces: pieces(steps), rows: 1 };
}
