import type { MatchEndFrame } from "../protocol/frames.ts";

/** Where a command writes: stdout for results, stderr for progress and errors. Tests capture both. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export const processIo: Io = {
  out: (text) => void Deno.stdout.writeSync(new TextEncoder().encode(text)),
  err: (text) => void Deno.stderr.writeSync(new TextEncoder().encode(text)),
};

/** Exit codes scripts can rely on. */
export const EXIT = {
  ok: 0,
  /** The command was understood but failed while running (e.g. the port is taken). */
  failure: 1,
  /** Bad usage: unknown command or flag, bad value, bad config, unknown game or strategy. */
  usage: 2,
} as const;

/** One line per finished match, as `ludus bot` and `ludus llm` print them. */
export function matchLine(end: MatchEndFrame): string {
  const returns = end.returns.map((r) => (Number.isInteger(r) ? String(r) : r.toFixed(4))).join(" ");
  const reason = end.reason === "completed" ? "" : `  (${end.reason})`;
  return `match ${end.match}  seat ${end.seat}  returns ${returns}${reason}\n`;
}
