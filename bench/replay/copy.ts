import { finished } from "node:stream/promises";
import type { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import type { StepRecordRow } from "../../db/records.ts";
import { noDelaySocket } from "../../db/sql.ts";
import { STEPS } from "../../db/tables/steps.ts";
import { type CoresBusy, measureCores, repeatFor } from "./cpu.ts";
import { type MatchScript, newMatchId, stepRow } from "./workload.ts";

/**
 * The ceiling: the same step rows appended with raw `COPY steps FROM STDIN` in large batches, each
 * batch its own (durable) transaction, with no per-row waiting. The time includes encoding the rows
 * into COPY's text format, the counterpart of the JSON the group commit builds.
 */

const S = STEPS.column;
/** The columns `copyLine` writes, in its order: the schema's first (the later ones, all nullable, are left null). */
const COLUMNS = [
  S.matchId,
  S.seq,
  S.turn,
  S.seat,
  S.observation,
  S.action,
  S.legal,
  S.error,
  S.attempts,
  S.defaulted,
  S.latencyMs,
  S.meta,
  S.rewards,
  S.writer,
  S.at,
].join(", ");
const COPY_STEPS = `COPY steps (${COLUMNS}) FROM STDIN`;

export interface CopyResult {
  readonly rowsPerSecond: number;
  readonly rowsPerCopy: number;
  readonly copies: number;
  /** The share of the time spent encoding rows to COPY text in this process. */
  readonly encodeShare: number;
  readonly coresBusy: CoresBusy;
}

/** COPY text format: tab-separated, `\N` for null, backslashes doubled (JSON never holds a raw tab or newline). */
const json = (
  value: unknown,
) => (value === null || value === undefined ? "\\N" : JSON.stringify(value).replaceAll("\\", "\\\\"));

function copyLine(s: StepRecordRow, writer: string): string {
  return `${s.matchId}\t${s.seq}\t${s.turn}\t${s.seat}\t${json(s.observation)}\t${json(s.action)}\t${
    s.legal ? "t" : "f"
  }\t${json(s.error)}\t${json(s.attempts)}\t${s.defaulted ?? "\\N"}\t${s.latencyMs}\t${json(s.meta)}\t${
    json(s.rewards)
  }\t${writer}\t${s.at.toISOString()}\n`;
}

/** `count` step rows of whole matches from the scripts, under fresh match ids. */
export function stepRows(scripts: readonly MatchScript[], count: number): StepRecordRow[] {
  const rows: StepRecordRow[] = [];
  for (let n = 0; rows.length < count; n++) {
    const script = scripts[n % scripts.length];
    const id = newMatchId();
    for (let i = 0; i < script.decisions.length; i++) rows.push(stepRow(script, id, i));
  }
  return rows;
}

/** Runs `copy(text)` on fresh batches of `batch` rows for `seconds` (after one uncounted batch). */
async function measure(
  scripts: readonly MatchScript[],
  writer: string,
  batch: number,
  seconds: number,
  copy: (text: string) => Promise<void>,
): Promise<CopyResult> {
  const encode = () => {
    const start = performance.now();
    const text = stepRows(scripts, batch).map((row) => copyLine(row, writer)).join("");
    return { text, rows: batch, ms: performance.now() - start };
  };
  await copy(encode().text);
  let rows = 0, copies = 0, encodeMs = 0;
  const start = performance.now();
  const cores = measureCores();
  while (performance.now() - start < seconds * 1000) {
    const next = encode();
    encodeMs += next.ms;
    await copy(next.text);
    rows += next.rows;
    copies++;
  }
  const elapsed = performance.now() - start;
  return {
    rowsPerSecond: Math.round(rows / (elapsed / 1000)),
    rowsPerCopy: batch,
    copies,
    encodeShare: Math.round((encodeMs / elapsed) * 1000) / 1000,
    coresBusy: cores(),
  };
}

export function copyToPostgres(
  client: postgres.Sql,
  scripts: readonly MatchScript[],
  writer: string,
  batch: number,
  seconds: number,
): Promise<CopyResult> {
  return measure(scripts, writer, batch, seconds, async (text) => {
    const stream = await client.unsafe(COPY_STEPS).writable();
    stream.end(text);
    await finished(stream);
  });
}

/** The export's ceiling: every step row read with raw `COPY steps TO STDOUT`, the bytes counted and dropped. */
export interface CopyOutResult {
  readonly rowsPerSecond: number;
  readonly megabytesPerSecond: number;
  readonly rows: number;
  readonly bytes: number;
  readonly passes: number;
  readonly coresBusy: CoresBusy;
}

const COPY_OUT = "COPY steps TO STDOUT";

/** Runs `copyOut()` (bytes read) over and over for `seconds`, after one uncounted pass. */
async function measureOut(rows: number, seconds: number, copyOut: () => Promise<number>): Promise<CopyOutResult> {
  let bytes = 0;
  const { passes, elapsed, coresBusy } = await repeatFor(seconds, async () => (bytes = await copyOut()));
  return {
    rowsPerSecond: Math.round((rows * passes) / elapsed),
    megabytesPerSecond: Math.round((bytes * passes) / elapsed / 1e5) / 10,
    rows,
    bytes,
    passes,
    coresBusy,
  };
}

/** One connection to the bench's database, with Nagle's algorithm off as the store has it. */
export const benchClient = (url: string) =>
  postgres(url, { max: 1, onnotice: () => {}, socket: noDelaySocket } as postgres.Options<Record<string, never>>);

export function copyFromPostgres(client: postgres.Sql, rows: number, seconds: number): Promise<CopyOutResult> {
  return measureOut(rows, seconds, async () => {
    let bytes = 0;
    const stream = await client.unsafe(COPY_OUT).readable();
    stream.on("data", (chunk: Uint8Array) => bytes += chunk.byteLength);
    // postgres.js closes the stream at CopyDone without always emitting "end" (async iteration then hangs).
    await new Promise((resolve, reject) => stream.on("close", resolve).on("end", resolve).on("error", reject));
    return bytes;
  });
}

export function copyFromPglite(db: PGlite, rows: number, seconds: number): Promise<CopyOutResult> {
  return measureOut(rows, seconds, async () => {
    const { blob } = await db.query(COPY_OUT.replace("STDOUT", "'/dev/blob'"));
    return blob!.size;
  });
}

export function copyToPglite(
  db: PGlite,
  scripts: readonly MatchScript[],
  writer: string,
  batch: number,
  seconds: number,
): Promise<CopyResult> {
  return measure(scripts, writer, batch, seconds, async (text) => {
    await db.query(`COPY steps (${COLUMNS}) FROM '/dev/blob'`, [], { blob: new Blob([text]) });
  });
}
