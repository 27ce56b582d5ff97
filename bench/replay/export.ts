import { exportDataset, type ExportFormat, isParquet } from "../../db/export/index.ts";
import type { ReplayStore } from "../../db/store.ts";
import { type CoresBusy, repeatFor } from "./cpu.ts";
import { matchRecord, type MatchScript, newMatchId, stepRow } from "./workload.ts";

export interface ExportResult {
  readonly format: ExportFormat;
  /** Rows of the format (a line of JSONL, a row of Parquet; episodes: one per match) per second. */
  readonly rowsPerSecond: number;
  /** Decisions exported per second, the same unit for every format. */
  readonly stepsPerSecond: number;
  readonly megabytesPerSecond: number;
  /** One pass over the store. */
  readonly rows: number;
  readonly bytes: number;
  /** Full passes timed. */
  readonly passes: number;
  readonly coresBusy: CoresBusy;
}

/** Writes `matches` ended matches through the store's group commit; returns the decisions written. */
export async function seedEnded(store: ReplayStore, scripts: readonly MatchScript[], matches: number): Promise<number> {
  const start = Date.now() - matches * 1000;
  let steps = 0;
  const writes: Promise<void>[] = [];
  for (let n = 0; n < matches; n++) {
    const script = scripts[n % scripts.length];
    const id = newMatchId();
    writes.push(store.writer.writeMatch(matchRecord(script, id, new Date(start + n * 1000), true)));
    for (let i = 0; i < script.decisions.length; i++) writes.push(store.writer.appendStep(stepRow(script, id, i)));
    steps += script.decisions.length;
  }
  await Promise.all(writes);
  return steps;
}

/** tensors.parquet covers one game variant: the workload's Kuhn matches; every other format the whole store. */
const filterOf = (format: ExportFormat) =>
  format === "tensors.parquet" ? { game: "kuhn-poker", variant: "textarena" } : {};

/** One whole export: rows (as the exporter counts them; JSONL checked against its lines) and bytes. */
async function pass(store: ReplayStore, format: ExportFormat): Promise<{ rows: number; bytes: number }> {
  let rows = 0;
  let bytes = 0;
  let lines = 0;
  const chunks = exportDataset(store, format, { filter: filterOf(format), onProgress: (p) => (rows = p.rows) });
  for await (const chunk of chunks) {
    bytes += chunk.byteLength;
    if (isParquet(format)) continue;
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
  }
  if (!isParquet(format) && lines !== rows) throw new Error(`${format}: ${lines} lines but ${rows} rows reported`);
  return { rows, bytes };
}

/** Exports the whole store in `format` over and over for at least `seconds`, after one untimed pass. */
export async function measureExport(
  store: ReplayStore,
  format: ExportFormat,
  steps: number,
  seconds: number,
): Promise<ExportResult> {
  let rows = 0, bytes = 0;
  const { passes, elapsed, coresBusy } = await repeatFor(
    seconds,
    async () => ({ rows, bytes } = await pass(store, format)),
  );
  return {
    format,
    rowsPerSecond: Math.round((rows * passes) / elapsed),
    // tensors.parquet reads only the Kuhn matches: its decisions are its rows.
    stepsPerSecond: Math.round(((format === "tensors.parquet" ? rows : steps) * passes) / elapsed),
    megabytesPerSecond: Math.round((bytes * passes) / elapsed / 1e5) / 10,
    rows,
    bytes,
    passes,
    coresBusy,
  };
}
