import { decodeEndCursor, QueryError } from "../query.ts";
import type { MatchFilter, ReplayStore } from "../store.ts";
import { episodeLine, episodeSteps } from "./episodes.ts";
import { tensorFilter, type TensorSpec, tensorSpec } from "./tensor-spec.ts";
import { matchPages, type PageEntry, stepRows, type StepText } from "./source.ts";
import { turnLines } from "./turns.ts";
import { verlLines } from "./verl.ts";

/** Dataset exports of the replay store: ended matches, streamed page by page (docs/datasets.md). */

export const FORMATS = ["episodes.jsonl", "turns.jsonl", "verl.jsonl", "parquet", "tensors.parquet"] as const;
export type ExportFormat = (typeof FORMATS)[number];

/** What each format is, for the HTTP listing and content types. */
export const FORMAT_INFO: Readonly<
  Record<ExportFormat, { readonly contentType: string; readonly description: string }>
> = {
  "episodes.jsonl": {
    contentType: "application/x-ndjson",
    description: "one JSON object per match: its record and every decision (the full replay)",
  },
  "turns.jsonl": {
    contentType: "application/x-ndjson",
    description:
      "one JSON object per decision: prompt, response, action, legality, step reward, return and return-to-go",
  },
  "verl.jsonl": {
    contentType: "application/x-ndjson",
    description: "one row per decision for verl: data_source, prompt (chat messages), reward_model, extra_info",
  },
  parquet: {
    contentType: "application/vnd.apache.parquet",
    description: "the turns.jsonl rows as a Parquet file (ZSTD)",
  },
  "tensors.parquet": {
    contentType: "application/vnd.apache.parquet",
    description: "one row per decision of one game variant: observation tensor, legal mask, action id, reward, " +
      "done, seat, match, group, seed and participant, in fixed-size columns (needs `game`)",
  },
};

/** Whether a format is a (binary) Parquet file. */
export const isParquet = (format: ExportFormat): format is "parquet" | "tensors.parquet" =>
  format === "parquet" || format === "tensors.parquet";

/** The file name a format's export is offered as. */
export const fileName = (format: ExportFormat): string =>
  format === "parquet" ? "ludus-turns.parquet" : `ludus-${format}`;

/** Matches per page (at most): each page is one read of the store and, in Parquet, one record batch. */
export const PAGE_SIZE = 200;
/** Decisions per page (about): what bounds an export's memory when matches are long. */
export const PAGE_ROWS = 20_000;
/** Characters of decisions per page (about): what bounds it when their observations are large too. */
export const PAGE_CHARS = 4_000_000;

/** JSONL is handed over in chunks of whole matches, about this many characters each. */
const CHUNK_CHARS = 1 << 20;

export function exportFormat(name: string): ExportFormat {
  if (!(FORMATS as readonly string[]).includes(name)) {
    throw new QueryError(`no export format \`${name}\`; formats: ${FORMATS.join(", ")}`);
  }
  return name as ExportFormat;
}

export interface ExportProgress {
  readonly matches: number;
  readonly rows: number;
  /** Where an export of the same format, filters and discount resumes; null before the first match. */
  readonly cursor: string | null;
}

export interface ExportOptions {
  readonly filter: MatchFilter;
  /** Resume after the match this cursor (of the same format, filters and discount) names. */
  readonly cursor?: string;
  /** γ of the return-to-go, in [0, 1]; 1 (undiscounted) by default. */
  readonly discount?: number;
  /** `tensors.parquet`: config keys over the variant's, whose shapes the columns take (`parseTensorConfig`). */
  readonly config?: Readonly<Record<string, unknown>>;
  /** Matches per read of the store (and per Parquet record batch); PAGE_SIZE by default. */
  readonly pageSize?: number;
  /** About how many decisions a read may bring; PAGE_ROWS by default. */
  readonly pageRows?: number;
  /** About how many characters of decisions a read may bring, at the size of those read before; PAGE_CHARS by default. */
  readonly pageChars?: number;
  /**
   * Told as whole matches are encoded, just before their bytes are handed over (JSONL: the next chunk;
   * Parquet: a record batch enters the writer): once the consumer has written that chunk, `cursor` resumes
   * after everything written.
   */
  readonly onProgress?: (progress: ExportProgress) => void;
}

/** The cursor kind: a cursor only resumes the export (format, discount and tensor config) that issued it. */
const cursorKind = (format: ExportFormat, discount: number, tensors?: TensorSpec): string =>
  format === "episodes.jsonl"
    ? `export:${format}`
    : `export:${format}:discount=${discount}${tensors?.config ? `:config=${JSON.stringify(tensors.config)}` : ""}`;

const discountError = (got: unknown) =>
  new QueryError(`\`discount\` must be a number in [0, 1] (1 = undiscounted), got ${JSON.stringify(got)}`);

function checkDiscount(discount: number): number {
  if (typeof discount !== "number" || !Number.isFinite(discount) || discount < 0 || discount > 1) {
    throw discountError(discount);
  }
  return discount;
}

/** A discount given as text (a query parameter, a flag). */
export function parseDiscount(text: string): number {
  if (!/^\s*(\d+(\.\d*)?|\.\d+)(e-?\d+)?\s*$/i.test(text)) throw discountError(text);
  return checkDiscount(Number(text));
}

/**
 * A match's JSONL as pieces taken one at a time (a long match is never one string), and its rows; pieces that are
 * still to be read from the store come as an async iterable.
 */
type JsonlEncoder<S> = (
  entry: PageEntry<S>,
  discount: number,
) => { pieces: Iterable<string> | AsyncIterable<string>; rows: number };
type JsonlFormat = Exclude<ExportFormat, "parquet" | "tensors.parquet">;

/** The JSONL formats built from decision rows. */
const ROW_JSONL: Record<Exclude<JsonlFormat, "episodes.jsonl">, JsonlEncoder<readonly StepText[]>> = {
  "turns.jsonl": turnLines,
  "verl.jsonl": verlLines,
};

/**
 * JSONL in chunks of about CHUNK_CHARS, with `advance` told of the matches a chunk completes before it is handed
 * over. Short matches go whole into a chunk; a match longer than a chunk is handed over in several, the matches
 * before it first in a chunk of their own, so that every chunk `advance` was told of ends with a whole match.
 */
async function* jsonlChunks<S>(
  pages: AsyncIterable<PageEntry<S>[]>,
  encode: JsonlEncoder<S>,
  discount: number,
  advance: (page: readonly PageEntry<S>[], rows: number) => void,
): AsyncGenerator<Uint8Array> {
  const encoder = new TextEncoder();
  for await (const page of pages) {
    let text = "";
    let rows = 0;
    let from = 0;
    for (let i = 0; i < page.length; i++) {
      const lines = encode(page[i], discount);
      let start = text.length; // where match i begins in `text`
      // Awaiting only pieces still being read from the store: `for await` over the per-row pieces of turns and verl
      // cost a microtask a row.
      const pieces = Symbol.asyncIterator in lines.pieces
        ? lines.pieces[Symbol.asyncIterator]()
        : lines.pieces[Symbol.iterator]();
      for (;;) {
        const next = pieces.next();
        const { done, value: piece } = next instanceof Promise ? await next : next;
        if (done) break;
        text += piece;
        if (text.length < CHUNK_CHARS) continue;
        if (from < i) {
          advance(page.slice(from, i), rows);
          yield encoder.encode(text.slice(0, start));
          [text, rows, from] = [text.slice(start), 0, i];
        }
        if (text.length >= CHUNK_CHARS) {
          yield encoder.encode(text); // part of match i: nothing to advance yet
          text = "";
        }
        start = 0;
      }
      rows += lines.rows;
      if (text.length < CHUNK_CHARS && i < page.length - 1) continue;
      advance(page.slice(from, i + 1), rows);
      yield encoder.encode(text);
      text = "";
      rows = 0;
      from = i + 1;
    }
  }
}

/** A Parquet export's bytes. Arrow and parquet-wasm load here, on a server's first Parquet export, not when it starts. */
async function parquetExport(
  rows: AsyncGenerator<PageEntry<readonly StepText[]>[]>,
  tensors: TensorSpec | undefined,
  discount: number,
  advance: (page: readonly PageEntry<unknown>[], rows: number) => void,
): Promise<AsyncIterable<Uint8Array>> {
  const { parquetChunks, turnsEncoder } = await import("./parquet.ts");
  const encoder = tensors ? (await import("./tensors.ts")).tensorsEncoder(tensors) : turnsEncoder(discount);
  return parquetChunks(rows, encoder, advance);
}

/**
 * Streams a dataset of the ended matches that `options.filter` selects, in the order they ended. Bad
 * options throw a QueryError here, before anything is read; the store is read one page at a time as the
 * consumer pulls, so memory stays bounded and a consumer that stops pulling stops the export.
 */
export function exportDataset(
  store: ReplayStore,
  format: ExportFormat,
  options: ExportOptions,
): AsyncIterable<Uint8Array> {
  const discount = checkDiscount(options.discount ?? 1);
  const limits = {
    matches: options.pageSize ?? PAGE_SIZE,
    rows: options.pageRows ?? PAGE_ROWS,
    chars: options.pageChars ?? PAGE_CHARS,
  };
  if (!Number.isInteger(limits.matches) || limits.matches < 1 || !(limits.rows >= 1) || !(limits.chars >= 1)) {
    throw new RangeError(
      `pageSize, pageRows and pageChars must be ≥ 1, got ${limits.matches}, ${limits.rows} and ${limits.chars}`,
    );
  }
  if (options.config !== undefined && format !== "tensors.parquet") {
    throw new QueryError("`config` picks the shapes of `tensors.parquet`; the other formats take every config");
  }
  const tensors = format === "tensors.parquet" ? tensorSpec(options.filter, options.config) : undefined;
  const filter: MatchFilter = { ...(tensors ? tensorFilter(options.filter, tensors) : options.filter), ended: true };
  const kind = cursorKind(format, discount, tensors);
  const after = options.cursor === undefined ? 0 : decodeEndCursor(kind, filter, options.cursor);
  return {
    async *[Symbol.asyncIterator]() {
      const progress = { matches: 0, rows: 0, cursor: options.cursor ?? null };
      const advance = (page: readonly PageEntry<unknown>[], rows: number) => {
        progress.matches += page.length;
        progress.rows += rows;
        progress.cursor = page[page.length - 1].cursor;
        options.onProgress?.({ ...progress });
      };
      // episodes.jsonl takes its decisions as JSON text the database built; every other format as rows.
      let pages: AsyncGenerator<unknown>, chunks: AsyncIterable<Uint8Array>;
      if (format === "episodes.jsonl") {
        const texts = matchPages(store, kind, filter, limits, after, episodeSteps);
        [pages, chunks] = [texts, jsonlChunks(texts, episodeLine, discount, advance)];
      } else {
        const rows = matchPages(store, kind, filter, limits, after, stepRows);
        [pages, chunks] = [
          rows,
          isParquet(format)
            ? await parquetExport(rows, tensors, discount, advance)
            : jsonlChunks(rows, ROW_JSONL[format], discount, advance),
        ];
      }
      try {
        yield* chunks;
      } finally {
        await pages.return(undefined);
      }
    },
  };
}
