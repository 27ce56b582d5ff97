import { encodeEndCursor } from "../query.ts";
import type { MatchRecord } from "../records.ts";
import { yieldToEventLoop } from "../sql.ts";
import type { MatchFilter, ReplayStore } from "../store.ts";
import { STEPS } from "../tables/steps.ts";

/**
 * A decision row as an export reads it. The observation — most of an export's bytes — stays the JSON text
 * the database printed, so formats that pass it through never parse and re-stringify it.
 */
export interface StepText {
  readonly seq: number;
  readonly turn: number;
  readonly seat: number;
  /** JSON text. */
  readonly observation: string;
  readonly action: unknown;
  /** The input as sent, when it differs from `action`. */
  readonly input: unknown;
  readonly legal: boolean;
  readonly error: unknown;
  readonly attempts: readonly unknown[];
  readonly defaulted: string | null;
  readonly latencyMs: number;
  readonly meta: Record<string, unknown> | null;
  readonly rewards: readonly number[] | null;
  /** ISO 8601 in UTC, as `Date.toISOString` writes it. */
  readonly at: string;
  /** The text the seat was shown, when it was shown text; null otherwise (and in older records). */
  readonly prompt: string | null;
  /** The legal action ids offered, where the game has a numeric face (null in older records). */
  readonly legalIds: readonly number[] | null;
}

/** An ended match with what a format reads of its decisions, and the cursor that resumes an export after it. */
export interface PageEntry<S> {
  readonly match: MatchRecord;
  readonly steps: S;
  readonly cursor: string;
}

/** An ended match with its decisions as rows. */
export type ExportMatch = PageEntry<readonly StepText[]>;

/**
 * Reads the decisions of a page of matches: one entry per id, in the page's order, and how many characters of
 * text the database sent for them (what the page holds in memory, about), and of how many (estimated) decisions
 * when not of all the page's (a reader that leaves a long match's decisions to be read later).
 */
export type StepsReader<S> = (
  store: ReplayStore,
  matches: readonly MatchRecord[],
) => Promise<{ steps: S[]; chars: number; rows?: number }>;

const S = STEPS.column;

/** SQL of a timestamp column as JSON's time text: ISO 8601 in UTC, as `Date.toISOString` writes it. */
export const isoTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The columns of a decision's JSON array on a page row, in StepColumns' order. */
const STEP_COLUMNS = [
  S.seq,
  S.turn,
  S.seat,
  S.action,
  S.legal,
  S.error,
  S.attempts,
  S.defaulted,
  S.latencyMs,
  S.meta,
  S.rewards,
  isoTime(S.at),
  S.input,
  S.prompt,
  S.legalIds,
].join(", ");

/**
 * One row per match of a page: its observations joined by newlines (stored JSON text holds none) and the
 * other columns as one JSON array. Row by row, the embedded store spends more on each result row than on
 * its contents; this halves its export time. The lateral join looks each match up by the primary key
 * whatever the planner's statistics say (an embedded store is never ANALYZEd, and `match_id = ANY(...)`
 * then plans a sequential scan of every step for every page).
 */
const STEPS_OF_PAGE = `
SELECT p.n, s.observations, s.rest
FROM unnest($1::text[]) WITH ORDINALITY AS p(id, n)
CROSS JOIN LATERAL (
  SELECT string_agg(${S.observation}::text, E'\\n' ORDER BY ${S.seq}) AS observations,
    json_agg(json_build_array(${STEP_COLUMNS}) ORDER BY ${S.seq})::text AS rest
  FROM steps WHERE ${S.matchId} = p.id
) s
ORDER BY p.n`;

type StepColumns = [
  seq: number,
  turn: number,
  seat: number,
  action: unknown,
  legal: boolean,
  error: unknown,
  attempts: unknown[],
  defaulted: string | null,
  latencyMs: number,
  meta: Record<string, unknown> | null,
  rewards: number[] | null,
  at: string,
  input: unknown,
  prompt: string | null,
  legalIds: number[] | null,
];

interface PageRow {
  n: number | string;
  observations: string | null;
  rest: string | null;
}

/** A match's decisions from its page row. */
function stepsOf(row: PageRow): StepText[] {
  if (row.observations === null || row.rest === null) return []; // ended before anyone moved
  const observations = row.observations.split("\n");
  const columns = JSON.parse(row.rest) as StepColumns[];
  return columns.map((c, i) => ({
    seq: c[0],
    turn: c[1],
    seat: c[2],
    observation: observations[i],
    action: c[3],
    legal: c[4],
    error: c[5],
    attempts: c[6],
    defaulted: c[7],
    latencyMs: c[8],
    meta: c[9],
    rewards: c[10],
    at: c[11],
    input: c[12],
    prompt: c[13],
    legalIds: c[14],
  }));
}

/** The decisions of a page of matches as rows. */
export const stepRows: StepsReader<readonly StepText[]> = async (store, matches) => {
  const rows = await store.sql.query<PageRow>(STEPS_OF_PAGE, [matches.map((m) => m.id)]);
  const steps: StepText[][] = matches.map(() => []);
  let chars = 0;
  for (const row of rows) {
    steps[Number(row.n) - 1] = stepsOf(row);
    chars += (row.observations?.length ?? 0) + (row.rest?.length ?? 0);
  }
  return { steps, chars };
};

/** Pages read ahead of the consumer: the matches of page n+1 need only those of page n, not its steps. */
const READ_AHEAD = 2;

/** A match's decisions, estimated from its steps and seats (the record says so before the decisions are read). */
export const estimatedRows = (match: MatchRecord) => match.steps * match.seats.length;

/** The longest prefix of `matches` within `budget` decisions (at least one match), estimated. */
function withinBudget(matches: readonly MatchRecord[], budget: number): readonly MatchRecord[] {
  let rows = 0;
  for (let i = 0; i < matches.length; i++) {
    rows += estimatedRows(matches[i]);
    if (rows > budget && i > 0) return matches.slice(0, i);
  }
  return matches;
}

/** How much one page holds: at most `matches` matches, about `rows` decisions and about `chars` characters of them. */
export interface PageLimits {
  readonly matches: number;
  /** Long matches (a 100-round IPD, a twelve-agent Donor Game) make shorter pages: memory is bounded by rows. */
  readonly rows: number;
  /**
   * And by their text: a decision of a long match is larger too (its observation holds the history), so each page
   * takes as many decisions as `chars` allows at the size per decision of the last page read (pages are read ahead,
   * so the estimate lags a page or two behind).
   */
  readonly chars: number;
}

/** The size per decision assumed until a page has been read: a short match's (an observation of a few hundred bytes). */
const FIRST_CHARS_PER_ROW = 1_000;

/**
 * Pages of ended matches in the order they ended, after end sequence `after`, each with its decisions. Up to READ_AHEAD
 * pages are read while the caller encodes one, so a PostgreSQL server works while the exporter does.
 */
export async function* matchPages<S>(
  store: ReplayStore,
  kind: string,
  filter: MatchFilter,
  limits: PageLimits,
  after: number,
  readSteps: StepsReader<S>,
): AsyncGenerator<PageEntry<S>[]> {
  const cursorOf = (match: MatchRecord) => encodeEndCursor(kind, filter, match.endSeq!);
  /** The previous page's matches, and whether the store had no more after them. */
  let previous = Promise.resolve<{ matches: readonly MatchRecord[]; last: boolean } | undefined>(undefined);
  /** Characters per (estimated) decision of the last page whose decisions were read. */
  let charsPerRow = FIRST_CHARS_PER_ROW;
  const read = (): Promise<PageEntry<S>[]> => {
    const matches = previous.then(async (before) => {
      if (before?.last) return { matches: [], last: true };
      const position = before ? before.matches[before.matches.length - 1].endSeq! : after;
      const found = await store.endedMatches(filter, limits.matches, position);
      const page = withinBudget(found, Math.min(limits.rows, limits.chars / charsPerRow));
      return { matches: page, last: found.length < limits.matches && page.length === found.length };
    });
    previous = matches;
    const page = matches.then(async ({ matches }) => {
      if (matches.length === 0) return [];
      const { steps, chars, rows } = await readSteps(store, matches);
      const readRows = rows ?? matches.reduce((n, m) => n + estimatedRows(m), 0);
      if (readRows > 0) charsPerRow = Math.max(1, chars / readRows);
      return matches.map((match, i) => ({ match, steps: steps[i], cursor: cursorOf(match) }));
    });
    // Its failure is thrown where the page is awaited; until then it must not count as unhandled.
    page.catch(() => {});
    return page;
  };
  const ahead: Promise<PageEntry<S>[]>[] = [];
  for (;;) {
    while (ahead.length < READ_AHEAD) ahead.push(read());
    const page = await ahead.shift()!;
    if (page.length === 0) return;
    yield page;
    // PGlite answers through microtasks only: let sockets and timers run between pages.
    if (store.backend === "pglite") await yieldToEventLoop();
  }
}
