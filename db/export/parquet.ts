import * as arrow from "apache-arrow";
import * as parquet from "parquet-wasm";
import { PLAYED_BY_COLUMNS, type PlayedBy } from "./played-by.ts";
import type { ExportMatch } from "./source.ts";
import { type Column, type ColumnType, HEAD, TAIL } from "./turn-columns.ts";
import { rowChars, type TurnRow, turnRows } from "./turns-view.ts";

/**
 * Parquet exports, streamed. `parquet`: the turns view as a Parquet file (ZSTD), with the columns and names of `turns.jsonl`
 * (both written from HEAD, played-by.ts and TAIL); JSON-valued columns (observation, messages, action, error) are JSON text.
 *
 * Memory stays bounded: each page of matches becomes Arrow record batches of at most about BATCH_CHARS
 * characters (a long match makes several), handed one at a time to parquet-wasm's streaming writer, which
 * closes a row group (and hands its bytes on) whenever ROW_GROUP_ROWS rows or ROW_GROUP_BYTES bytes are
 * buffered. So at most one batch of rows, the page it comes from and one open row group are held.
 */

export const ROW_GROUP_ROWS = 65_536;
export const ROW_GROUP_BYTES = 32 * 1024 * 1024;
/** Characters of rows per record batch, about. */
const BATCH_CHARS = 4_000_000;

/** Each column type's Arrow type. */
export const ARROW_TYPES: Readonly<Record<ColumnType, arrow.DataType>> = {
  utf8: new arrow.Utf8(),
  int32: new arrow.Int32(),
  float64: new arrow.Float64(),
  bool: new arrow.Bool(),
};

const fields = (columns: readonly Column[]) =>
  columns.map(([name, type, nullable]) => new arrow.Field(name, ARROW_TYPES[type], nullable));
/** Who played (played-by.ts) as Arrow fields, every one nullable. */
export const PLAYED_BY_FIELDS: readonly arrow.Field[] = PLAYED_BY_COLUMNS.map(([name, type]) =>
  new arrow.Field(name, ARROW_TYPES[type], true)
);

/** Who played, for a batch of rows, as Arrow data in field order. */
export function playedByColumns<R>(rows: readonly R[], of: (row: R) => PlayedBy): arrow.Data[] {
  const values = rows.map(of);
  return PLAYED_BY_COLUMNS.map(([, type, source]) =>
    arrow.vectorFromArray(values.map(({ seat, meta }) => source(seat, meta).value), ARROW_TYPES[type]).data[0]
  );
}

const SCHEMA = new arrow.Schema([...fields(HEAD), ...PLAYED_BY_FIELDS, ...fields(TAIL)]);

/** Arrow columns as one record batch in parquet-wasm's memory. */
export function wasmBatch(schema: arrow.Schema, length: number, children: arrow.Data[]): parquet.RecordBatch {
  const batch = new arrow.RecordBatch(
    schema,
    arrow.makeData({ type: new arrow.Struct(schema.fields), length, nullCount: 0, children }),
  );
  const table = parquet.Table.fromIPCStream(arrow.tableToIPC(new arrow.Table([batch]), "stream"));
  const [first] = table.recordBatches();
  table.free();
  return first;
}

const data = (columns: readonly Column[], rows: readonly TurnRow[]) =>
  columns.map(([, type, , value]) => arrow.vectorFromArray(rows.map(value), ARROW_TYPES[type]).data[0]);

/** The turns view's rows as one record batch (an empty one carries the schema alone). */
function recordBatch(rows: readonly TurnRow[]): parquet.RecordBatch {
  return wasmBatch(
    SCHEMA,
    rows.length,
    [
      ...data(HEAD, rows),
      ...playedByColumns(rows, (r) => r.playedBy),
      ...data(TAIL, rows),
    ],
  );
}

/** How a Parquet format turns pages of matches into record batches. */
export interface ParquetEncoder {
  /** A batch without rows: the schema, written first so that an export without rows is a valid file. */
  empty(): parquet.RecordBatch;
  /** A page's rows as batches, made as they are taken (none when it has no rows), and how many rows. */
  page(page: readonly ExportMatch[]): { batches: Iterable<parquet.RecordBatch>; rows: number };
}

/** The `parquet` format: the turns view. */
export const turnsEncoder = (discount: number): ParquetEncoder => ({
  empty: () => recordBatch([]),
  page(page) {
    function* batches() {
      let rows: TurnRow[] = [];
      let chars = 0;
      for (const entry of page) {
        for (const row of turnRows(entry, discount)) {
          rows.push(row);
          chars += rowChars(row);
          if (chars < BATCH_CHARS) continue;
          yield recordBatch(rows);
          [rows, chars] = [[], 0];
        }
      }
      if (rows.length > 0) yield recordBatch(rows);
    }
    return { batches: batches(), rows: page.reduce((n, entry) => n + entry.steps.length, 0) };
  },
});

const writerProperties = () =>
  new parquet.WriterPropertiesBuilder()
    .setCompression(parquet.Compression.ZSTD)
    .setMaxRowGroupSize(ROW_GROUP_ROWS)
    .setMaxRowGroupBytes(ROW_GROUP_BYTES)
    .setCreatedBy("ludus export")
    .build();

/**
 * The Parquet bytes of `pages` as `encoder` lays them out. `onPage` is told of each page once all its rows have
 * entered the writer. The writer ends a file cleanly even when its input fails, so the last chunk (the footer) is
 * held back until the input is known to be whole: an export that fails leaves a file no reader accepts.
 */
export async function* parquetChunks(
  pages: AsyncIterator<readonly ExportMatch[]>,
  encoder: ParquetEncoder,
  onPage: (page: readonly ExportMatch[], rows: number) => void,
): AsyncGenerator<Uint8Array> {
  let failure: { error: unknown } | undefined;
  let started = false;
  /** The page being written: its batches still to take, and what onPage is told once they are taken. */
  let current: { page: readonly ExportMatch[]; rows: number; batches: Iterator<parquet.RecordBatch> } | undefined;
  const batches = new ReadableStream<parquet.RecordBatch>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(encoder.empty()); // the schema, even for an export without rows
        return;
      }
      try {
        for (;;) {
          if (current) {
            const batch = current.batches.next();
            if (!batch.done) return controller.enqueue(batch.value);
            onPage(current.page, current.rows);
            current = undefined;
          }
          const next = await pages.next();
          if (next.done) return controller.close();
          const { batches, rows } = encoder.page(next.value);
          current = { page: next.value, rows, batches: batches[Symbol.iterator]() };
        }
      } catch (error) {
        failure = { error };
        controller.close();
      }
    },
  });
  const bytes = await parquet.transformParquetStream(batches, writerProperties());
  let held: Uint8Array | undefined;
  for await (const chunk of bytes as unknown as AsyncIterable<Uint8Array>) {
    if (held) yield held;
    held = chunk;
  }
  if (failure) throw failure.error;
  if (held) yield held;
}
