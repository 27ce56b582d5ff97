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
