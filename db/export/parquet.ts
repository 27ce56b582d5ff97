import * as arrow from "apache-arrow";
import * as parquet from "parquet-wasm";
import type { ExportMatch } from "./source.ts";
import { type TurnRow, turnRows } from "./turns-view.ts";

/**
 * `parquet`: the turns view as a Parquet file (ZSTD), with the columns and names of `turns.jsonl`;
 * JSON-valued columns (observation, messages, action, error) are JSON text.
 *
 * Memory stays bounded: each page of matches becomes one Arrow record batch, handed to parquet-wasm's
 * streaming writer, which closes a row group (and hands its bytes on) whenever ROW_GROUP_ROWS rows or
 * ROW_GROUP_BYTES bytes are buffered. So at most one page of rows and one open row group are held.
 */

export const ROW_GROUP_ROWS = 65_536;
export const ROW_GROUP_BYTES = 32 * 1024 * 1024;

type Column = readonly [name: string, type: arrow.DataType, nullable: boolean, value: (r: TurnRow) => unknown];

const utf8 = new arrow.Utf8();
const int32 = new arrow.Int32();
const float64 = new arrow.Float64();
const bool = new arrow.Bool();

const COLUMNS: readonly Column[] = [
  ["match_id", utf8, false, (r) => r.matchId],
  ["game", utf8, false, (r) => r.game],
  ["game_version", int32, false, (r) => r.gameVersion],
  ["variant", utf8, false, (r) => r.variant],
  ["seat", int32, false, (r) => r.seat],
  ["role", utf8, false, (r) => r.role],
  ["participant_kind", utf8, true, (r) => r.participantKind],
  ["participant_name", utf8, true, (r) => r.participantName],
  ["turn", int32, false, (r) => r.turn],
  ["seq", int32, false, (r) => r.seq],
  ["observation", utf8, false, (r) => r.observation],
  ["prompt", utf8, true, (r) => r.prompt],
  ["messages", utf8, true, (r) => r.messages],
  ["response", utf8, true, (r) => r.response],
  ["action", utf8, true, (r) => r.action],
  ["legal", bool, false, (r) => r.legal],
  ["error", utf8, true, (r) => r.error],
  ["attempts", int32, false, (r) => r.attempts],
  ["defaulted", utf8, true, (r) => r.defaulted],
  ["latency_ms", float64, false, (r) => r.latencyMs],
  ["prompt_tokens", int32, true, (r) => r.promptTokens],
  ["completion_tokens", int32, true, (r) => r.completionTokens],
  ["reward", float64, false, (r) => r.reward],
  ["return", float64, true, (r) => r.return],
  ["return_to_go", float64, false, (r) => r.returnToGo],
  ["cursor", utf8, true, (r) => r.cursor],
];

const SCHEMA = new arrow.Schema(COLUMNS.map(([name, type, nullable]) => new arrow.Field(name, type, nullable)));

/** One record batch in parquet-wasm's memory (an empty one carries the schema alone). */
function recordBatch(rows: readonly TurnRow[]): parquet.RecordBatch {
  const data = COLUMNS.map(([, type, , value]) => arrow.vectorFromArray(rows.map(value), type).data[0]);
  const batch = new arrow.RecordBatch(
    SCHEMA,
    arrow.makeData({ type: new arrow.Struct(SCHEMA.fields), length: rows.length, nullCount: 0, children: data }),
  );
  const table = parquet.Table.fromIPCStream(arrow.tableToIPC(new arrow.Table([batch]), "stream"));
  const [wasmBatch] = table.recordBatches();
  table.free();
  return wasmBatch;
}

const writerProperties = () =>
  new parquet.WriterPropertiesBuilder()
    .setCompression(parquet.Compression.ZSTD)
    .setMaxRowGroupSize(ROW_GROUP_ROWS)
    .setMaxRowGroupBytes(ROW_GROUP_BYTES)
    .setCreatedBy("ludus export")
    .build();

/**
 * The Parquet bytes of the turns view of `pages`. `onPage` is told of each page as its rows enter the
 * writer. The writer ends a file cleanly even when its input fails, so the last chunk (the footer) is held
 * back until the input is known to be whole: an export that fails leaves a file no reader accepts.
 */
export async function* parquetChunks(
  pages: AsyncIterator<readonly ExportMatch[]>,
  discount: number,
  onPage: (page: readonly ExportMatch[], rows: number) => void,
): AsyncGenerator<Uint8Array> {
  let failure: { error: unknown } | undefined;
  let started = false;
  const batches = new ReadableStream<parquet.RecordBatch>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(recordBatch([])); // the schema, even for an export without rows
        return;
      }
      try {
        const next = await pages.next();
        if (next.done) return controller.close();
        const rows = next.value.flatMap((entry) => turnRows(entry, discount));
        if (rows.length > 0) controller.enqueue(recordBatch(rows));
        onPage(next.value, rows.length);
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
