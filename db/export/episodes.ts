import { jsonString as text, jsonTime as time, perGame } from "./json-text.ts";
import type { PageEntry, StepsReader } from "./source.ts";

/**
 * `episodes.jsonl`: one JSON object per match — its record and every decision in `seq` order, the full
 * replay (like a Kaggle environment's episode). So that a file of several games reads in readers that type
 * columns (pyarrow), the game-shaped values (config, observation, action) sit under the game's id
 * (`{"ipd": {...}}`), and what a client sent in whatever shape it chose (input, attempts, meta) is JSON text.
 */

/**
 * Each match's decisions as the JSON array text of the line, built by the database: the decisions' JSON
 * columns hold the compact text the server wrote and pass through as stored, so nothing is parsed and
 * printed again in JS. The bytes are those `JSON.stringify` writes: a `real` latency goes through `numeric`,
 * which prints it without the exponent PostgreSQL's float output uses from 10⁶ up; strings go through
 * `to_json`, which escapes as JSON.stringify does (JSON text too: `to_json(input::text)`); a boolean is cast
 * (concat would print `t`).
 */
const EPISODE_STEPS_OF_PAGE = `
SELECT p.n, s.steps
FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS p(id, game, n)
CROSS JOIN LATERAL (
  SELECT string_agg(concat(
    '{"seq":', seq, ',"turn":', turn, ',"seat":', seat, ',"observation":{', to_json(p.game)::text, ':', observation,
    '},"action":', CASE WHEN action IS NULL THEN 'null' ELSE concat('{', to_json(p.game)::text, ':', action::text, '}') END,
    ',"input":', coalesce(to_json(input::text)::text, 'null'),
    ',"legal":', legal::text, ',"error":', coalesce(error::text, 'null'),
    ',"attempts":', coalesce(to_json(attempts::text)::text, 'null'),
    ',"defaulted":', coalesce(to_json(defaulted)::text, 'null'),
    ',"latency_ms":', latency_ms::text::numeric, ',"meta":', coalesce(to_json(meta::text)::text, 'null'),
    ',"rewards":', coalesce(rewards::text, 'null'),
    ',"at":"', to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    '","prompt":', coalesce(to_json(prompt)::text, 'null'), ',"legal_ids":', coalesce(legal_ids::text, 'null'),
    '}'), ',' ORDER BY seq) AS steps
  FROM steps WHERE match_id = p.id
) s
ORDER BY p.n`;

/** The decisions of a page of matches, each match's as the JSON array text of its line. */
export const episodeSteps: StepsReader<string> = async (store, matches) => {
  const rows = await store.sql.query<{ n: number | string; steps: string | null }>(EPISODE_STEPS_OF_PAGE, [
    matches.map((m) => m.id),
    matches.map((m) => m.game),
  ]);
  const steps = matches.map(() => "[]"); // a match that ended before anyone moved has no row
  let chars = 0;
  for (const row of rows) {
    if (row.steps === null) continue;
    steps[Number(row.n) - 1] = `[${row.steps}]`;
    chars += row.steps.length;
  }
  return { steps, chars };
};

/** Pieces of the steps' text a long match is handed over in, so its line is never copied whole. */
const PIECE_CHARS = 1 << 20;

/** One match's line, in pieces: the header, its decisions' text a slice at a time, the cursor. */
export function episodeLine(entry: PageEntry<string>): { pieces: Iterable<string>; rows: number } {
  const m = entry.match;
  const head = `{"match_id":${text(m.id)},"game":${text(m.game)},"game_version":${m.gameVersion},"variant":${
    text(m.variant)
  },"config":${perGame(m.game, JSON.stringify(m.config))},"seed":${text(m.seed)},"group":${
    text(m.group ?? null)
  },"seats":${
    JSON.stringify(
      m.seats.map((seat) => (seat?.sampling ? { ...seat, sampling: JSON.stringify(seat.sampling) } : seat)),
    )
  },"conduct":${JSON.stringify(m.conduct)},"statuses":${JSON.stringify(m.statuses)},"returns":${
    JSON.stringify(m.returns)
  },"end_reason":${text(m.endReason)},"error":${
    text(m.error ?? null)
  },"culprit":${m.culprit},"game_steps":${m.steps},"created_at":${time(m.createdAt)},"started_at":${
    time(m.startedAt)
  },"ended_at":${time(m.endedAt)},"steps":`;
  const steps = entry.steps;
  function* pieces() {
    yield head;
    for (let at = 0; at < steps.length; at += PIECE_CHARS) yield steps.slice(at, at + PIECE_CHARS);
    yield `,"cursor":${text(entry.cursor)}}\n`;
  }
  return { pieces: pieces(), rows: 1 };
}
