import { describeObservation } from "./game-text.ts";
import type { PlayedBy } from "./played-by.ts";
import type { ExportMatch } from "./source.ts";

/**
 * The turns view: one row per decision, with what a trainer needs beside it — the seat's step reward,
 * its final return and its discounted return-to-go. `turns.jsonl`, `verl.jsonl` and `parquet` are
 * encodings of it. JSON-valued fields are JSON text, passed through as the store printed them.
 */
export interface TurnRow {
  readonly matchId: string;
  readonly game: string;
  readonly gameVersion: number;
  readonly variant: string;
  readonly seat: number;
  readonly role: string;
  /** Who played the seat: its record and this decision's replay fields. */
  readonly playedBy: PlayedBy;
  readonly turn: number;
  readonly seq: number;
  /** JSON text. */
  readonly observation: string;
  /**
   * The text the seat was shown (a text seat's turn frame, kept as shown); for a seat shown JSON, the game's
   * rendering of the observation; null when this build cannot render it.
   */
  readonly prompt: string | null;
  /** JSON text of the chat messages an LLM seat attached (`meta.prompt`), or null. */
  readonly messages: string | null;
  readonly response: string | null;
  /** JSON text, or null when the match ended before the seat moved. */
  readonly action: string | null;
  readonly legal: boolean;
  /** JSON text ({code, message}) or null. */
  readonly error: string | null;
  readonly attempts: number;
  readonly defaulted: string | null;
  readonly latencyMs: number;
  readonly promptTokens: number | null;
  readonly completionTokens: number | null;
  readonly reward: number;
  readonly return: number | null;
  readonly returnToGo: number;
  /** The resume cursor after this row's match, on the match's last row only. */
  readonly cursor: string | null;
}

/** The role id trainers condition on (SPIRAL-style role-conditioned advantages): the seat, named. */
export const roleOf = (seat: number): string => `seat${seat}`;

const count = (value: unknown): number | null => (typeof value === "number" && Number.isFinite(value) ? value : null);

/**
 * Per seat, the discounted return-to-go of each game step: G[t][s] = Σ_{k≥t} γ^(k−t) r_k[s], where r_k is
 * the reward vector of step k (recorded on the decision that completed it; zero for a step that never
 * completed). Also returns the rewards by step.
 */
function returnsToGo(
  entry: ExportMatch,
  seats: number,
  discount: number,
): { rewards: (readonly number[] | undefined)[]; toGo: Float64Array } {
  const steps = entry.steps;
  const lastTurn = steps.length ? steps[steps.length - 1].turn : -1;
  const rewards: (readonly number[] | undefined)[] = new Array(lastTurn + 1);
  for (const s of steps) if (s.rewards !== null) rewards[s.turn] = s.rewards;
  const toGo = new Float64Array((lastTurn + 2) * seats);
  for (let t = lastTurn; t >= 0; t--) {
    const r = rewards[t];
    for (let seat = 0; seat < seats; seat++) {
      toGo[t * seats + seat] = (r?.[seat] ?? 0) + discount * toGo[(t + 1) * seats + seat];
    }
  }
  return { rewards, toGo };
}

/**
 * The turns view of one match, a row at a time: each row's prompt is rendered as it is taken, so a long match is
 * never held whole as rows (the returns-to-go, a number per step and seat, are computed first).
 */
export function* turnRows(entry: ExportMatch, discount: number): Generator<TurnRow> {
  const { match, steps } = entry;
  const seats = match.seats.length;
  const { rewards, toGo } = returnsToGo(entry, seats, discount);
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i];
    const meta = s.meta;
    const usage = meta?.usage as Record<string, unknown> | undefined;
    yield {
      matchId: match.id,
      game: match.game,
      gameVersion: match.gameVersion,
      variant: match.variant,
      seat: s.seat,
      role: roleOf(s.seat),
      playedBy: { seat: match.seats[s.seat] ?? null, meta },
      turn: s.turn,
      seq: s.seq,
      observation: s.observation,
      // As the seat was shown it; rendered by the game only for a seat that was shown JSON.
      prompt: s.prompt ?? describeObservation(match.game, match.gameVersion, s.observation),
      messages: Array.isArray(meta?.prompt) ? JSON.stringify(meta.prompt) : null,
      response: typeof meta?.response === "string" ? meta.response : null,
      action: s.action === null ? null : JSON.stringify(s.action),
      legal: s.legal,
      error: s.error === null ? null : JSON.stringify(s.error),
      attempts: s.attempts.length,
      defaulted: s.defaulted,
      latencyMs: s.latencyMs,
      promptTokens: count(usage?.prompt_tokens),
      completionTokens: count(usage?.completion_tokens),
      reward: rewards[s.turn]?.[s.seat] ?? 0,
      return: match.returns?.[s.seat] ?? null,
      returnToGo: toGo[s.turn * seats + s.seat],
      cursor: i === steps.length - 1 ? entry.cursor : null,
    };
  }
}

/** About how many characters a row holds: what bounds a batch of rows in memory. */
export const rowChars = (r: TurnRow): number =>
  r.observation.length + (r.prompt?.length ?? 0) + (r.messages?.length ?? 0) + (r.response?.length ?? 0) + 200;
