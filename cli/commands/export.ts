import { type Command, InvalidArgumentError } from "commander";
import { existsSync } from "node:fs";
import { type IncomingMessage, request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { join } from "node:path";
import {
  exportDataset,
  type ExportFormat,
  type ExportProgress,
  fileName,
  FORMATS,
  isParquet,
  parseDiscount,
} from "../../db/export/index.ts";
import { parseTensorConfig } from "../../db/export/tensor-spec.ts";
import { FILTER_KEYS, parseFilter, QueryError } from "../../db/query.ts";
import { ReplayStore, StoreError, type StoreOptions } from "../../db/store.ts";
import { TRAILERS } from "../../server/api/datasets.ts";
import { type Io, processIo } from "../io.ts";
import { oneOf, storeFlags, storeLocation } from "../options.ts";

/** `ludus export`: a dataset of the replay store's ended matches, from the store or a running server. */

/** The export ran but did not finish: a server refused or went away, the output could not be written. */
export class ExportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ExportError";
  }
}

interface ExportFlags {
  format: ExportFormat;
  game?: string;
  version?: string;
  variant?: string;
  participant?: string;
  player?: string;
  model?: string;
  opponent?: string;
  status?: string;
  from?: string;
  to?: string;
  cursor?: string;
  discount?: number;
  config?: string;
  out: string;
  dataDir: string;
  databaseUrl?: string;
  server?: URL;
}

/** The filter flags given, as the (key, value) pairs parseFilter and the HTTP query take. */
function filterFlags(flags: ExportFlags): [string, string][] {
  return FILTER_KEYS.flatMap((key) => (flags[key] === undefined ? [] : [[key, flags[key]!]]));
}

function discountOption(value: string): number {
  try {
    return parseDiscount(value);
  } catch {
    throw new InvalidArgumentError("expected a number in [0, 1] (1 = undiscounted).");
  }
}

/** Where the bytes go: a file, the process's stdout, or (in tests) the Io's text output. */
interface Sink {
  readonly name: string;
  write(chunk: Uint8Array): Promise<void>;
  close(): void;
}

async function writeAll(target: { write(p: Uint8Array): Promise<number> }, chunk: Uint8Array): Promise<void> {
  for (let done = 0; done < chunk.length;) done += await target.write(chunk.subarray(done));
}

async function openSink(out: string, format: ExportFormat, io: Io): Promise<Sink> {
  if (out !== "-") {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(out, { write: true, create: true, truncate: true });
    } catch (cause) {
      throw new ExportError(`cannot write ${out}: ${(cause as Error).message}`);
    }
    return { name: out, write: (chunk) => writeAll(file, chunk), close: () => file.close() };
  }
  if (io !== processIo) {
    const decoder = new TextDecoder();
    return {
      name: "stdout",
      write: (chunk) => Promise.resolve(io.out(decoder.decode(chunk, { stream: true }))),
      close() {},
    };
  }
  if (isParquet(format) && Deno.stdout.isTerminal()) {
    throw new QueryError(`Parquet is binary: write it to a file (--out ${fileName(format)}) or pipe stdout elsewhere`);
  }
  return { name: "stdout", write: (chunk) => writeAll(Deno.stdout, chunk), close() {} };
}

const number = (n: number) => Math.round(n).toLocaleString("en");
const counted = (n: number, one: string, many: string) => `${number(n)} ${n === 1 ? one : many}`;
const amount = (p: ExportProgress) => `${counted(p.rows, "row", "rows")} (${counted(p.matches, "match", "matches")})`;

/** A status line on a terminal's stderr, redrawn at most a few times a second; nothing elsewhere. */
function progressLine(
  io: Io,
  format: ExportFormat,
): { update(rows: number, matches: number | null, bytes: number): void; clear(): void } {
  const shown = io === processIo && Deno.stderr.isTerminal();
  const started = performance.now();
  let drawn = 0;
  return {
    update(rows, matches, bytes) {
      const now = performance.now();
      if (!shown || now - drawn < 200) return;
      drawn = now;
      const seconds = (now - started) / 1000;
      const counts = matches === null
        ? `${(bytes / 1e6).toFixed(1)} MB, ${(bytes / 1e6 / seconds).toFixed(1)} MB/s`
        : `${number(matches)} matches, ${number(rows)} rows, ${number(rows / seconds)} rows/s`;
      io.err(`\r\x1b[Kexporting ${format}: ${counts}`);
    },
    clear: () => shown && drawn > 0 && io.err("\r\x1b[K"),
  };
}

/** Stops a loop at a whole chunk on Ctrl-C (only in the real process), instead of dying mid-write. */
function interruption(io: Io): { readonly requested: boolean; dispose(): void } {
  const state = { requested: false, dispose() {} };
  if (io !== processIo) return state;
  const stop = () => (state.requested = true);
  Deno.addSignalListener("SIGINT", stop);
  state.dispose = () => Deno.removeSignalListener("SIGINT", stop);
  return state;
}

/** Reads the store directly. Progress (and so the resume cursor) is exact to the last chunk written. */
async function fromStore(flags: ExportFlags, location: StoreOptions, sink: Sink, io: Io): Promise<ExportProgress> {
  if (!location.databaseUrl && !existsSync(join(flags.dataDir, "replay"))) {
    throw new StoreError(
      `no replay store in ${
        join(flags.dataDir, "replay")
      }; give the server's --data-dir, --database-url (or set DATABASE_URL), or --server to export from a running server`,
    );
  }
  const filter = parseFilter(filterFlags(flags));
  const store = await ReplayStore.open(location);
  const bar = progressLine(io, flags.format);
  const signal = interruption(io);
  let announced: ExportProgress = { matches: 0, rows: 0, cursor: flags.cursor ?? null };
  let written = announced;
  /** Whether the chunk being written ends with a whole match (a long match comes in several chunks). */
  let wholeMatch = false;
  let bytes = 0;
  try {
    const chunks = exportDataset(store, flags.format, {
      filter,
      cursor: flags.cursor,
      discount: flags.discount,
      config: flags.config === undefined ? undefined : parseTensorConfig(flags.config),
      onProgress: (p) => ((announced = p), (wholeMatch = true)),
    });
    for await (const chunk of chunks) {
      await sink.write(chunk);
      bytes += chunk.length;
      written = announced;
      bar.update(written.rows, written.matches, bytes);
      const atMatchEnd = wholeMatch;
      wholeMatch = false;
      // JSONL stops at the end of a whole match, so the file is one to resume; Parquet at once.
      if (signal.requested && (atMatchEnd || isParquet(flags.format))) {
        bar.clear();
        throw new ExportError(
          `interrupted after ${amount(written)}; ` +
            (isParquet(flags.format)
              ? "a Parquet file without its footer cannot be read: run the export again"
              : written.cursor === null
              ? "run the export again"
              : `${sink.name} ends with a whole match: resume with --cursor ${written.cursor}`),
        );
      }
    }
    bar.clear();
    return written;
  } finally {
    signal.dispose();
    await store.close();
  }
}

function failureOf(response: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = "";
    response.on("data", (chunk) => (body += chunk));
    response.on("end", () => {
      try {
        resolve(JSON.parse(body).error.message);
      } catch {
        resolve(body.slice(0, 200) || `HTTP ${response.statusCode}`);
      }
    });
    response.on("error", () => resolve(`HTTP ${response.statusCode}`));
  });
}

/** Streams GET /datasets/<format> from a running server; its trailers give the rows and the cursor. */
async function fromServer(flags: ExportFlags, server: URL, sink: Sink, io: Io): Promise<ExportProgress> {
  const filters = filterFlags(flags);
  parseFilter(filters); // fail early, as the store would
  const url = new URL(`datasets/${flags.format}`, server.href.endsWith("/") ? server : `${server.href}/`);
  for (const [key, value] of filters) url.searchParams.set(key, value);
  if (flags.cursor !== undefined) url.searchParams.set("cursor", flags.cursor);
  if (flags.discount !== undefined) url.searchParams.set("discount", String(flags.discount));
  if (flags.config !== undefined) url.searchParams.set("config", JSON.stringify(parseTensorConfig(flags.config)));
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const request = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, resolve);
    request.on("error", (cause) => reject(new ExportError(`cannot reach ${server.origin}: ${cause.message}`)));
    request.end();
  });
  if (response.statusCode === 400) throw new QueryError(await failureOf(response));
  if (response.statusCode !== 200) {
    throw new ExportError(`${server.origin} answered ${response.statusCode}: ${await failureOf(response)}`);
  }
  const bar = progressLine(io, flags.format);
  const signal = interruption(io);
  const cutShort = (what: string) =>
    new ExportError(
      `${what}; ${sink.name} is incomplete: ${
        isParquet(flags.format)
          ? "run the export again"
          : "resume with the `cursor` of its last row that has one (docs/datasets.md)"
      }`,
    );
  let bytes = 0;
  try {
    for await (const chunk of response as AsyncIterable<Uint8Array>) {
      await sink.write(chunk);
      bytes += chunk.length;
      bar.update(0, null, bytes);
      if (signal.requested) {
        response.destroy();
        throw cutShort("interrupted");
      }
    }
  } catch (cause) {
    if (cause instanceof ExportError) throw cause;
    throw cutShort(`the server stopped the export midway (${(cause as Error).message})`);
  } finally {
    signal.dispose();
    bar.clear();
  }
  const rows = response.trailers[TRAILERS.rows];
  if (rows === undefined) throw cutShort("the server stopped the export midway");
  return {
    rows: Number(rows),
    matches: Number(response.trailers[TRAILERS.matches]),
    cursor: response.trailers[TRAILERS.cursor] ?? flags.cursor ?? null,
  };
}

export function registerExport(program: Command, io: Io): void {
  storeFlags(
    program
      .command("export")
      .description(
        "export the replay store's ended matches as a dataset for training (formats and fields: docs/datasets.md)",
      )
      .requiredOption("--format <format>", `the dataset format: ${FORMATS.join(", ")}`, oneOf(FORMATS))
      .requiredOption("--out <file|->", "where to write it: a file, or - for stdout")
      .option("--game <id>", "only this game")
      .option("--version <n>", "only this version of the game (with --game; tensors.parquet: default the current one)")
      .option("--variant <name>", "only this variant (tensors.parquet: default the game's default variant)")
      .option("--participant <name>", "only matches where this participant (name or token id) sat")
      .option(
        "--player <id>",
        "only matches where this player sat, as GET /players names it (kind:name, e.g. bot:alpha)",
      )
      .option("--model <name>", "only matches where an LLM seat played this model (as its agent declared it)")
      .option(
        "--opponent <player>",
        "only matches where another seat than the one --model/--player/--participant picks held this player " +
          "(kind:name, e.g. builtin:tit-for-tat) or participant (name or token id)",
      )
      .option(
        "--status <status>",
        "only matches with this end reason (completed, forfeit, aborted, error), or where the seat --model/--player/" +
          "--participant picks (else any seat) ended with this status (DONE, ERROR, INVALID, TIMEOUT, DISCONNECTED)",
      )
      .option("--from <time>", "only matches created at or after this time (ISO 8601 or epoch ms)")
      .option("--to <time>", "only matches created before this time (ISO 8601 or epoch ms)")
      .option("--cursor <cursor>", "resume after the match this cursor names (printed by an earlier export)")
      .option("--discount <gamma>", "γ of return_to_go, in [0, 1] (default 1: undiscounted)", discountOption)
      .option(
        "--config <json>",
        "tensors.parquet: config keys over the variant's whose shapes to export, e.g. '{\"rounds\":3}' (matches of " +
          "other shapes are left out)",
      ),
    "export through a running server (GET /datasets/<format>), e.g. http://127.0.0.1:2567; a running server locks its " +
      "embedded store",
  )
    .action(async (flags: ExportFlags, command: Command) => {
      const started = performance.now();
      const sink = await openSink(flags.out, flags.format, io);
      let done: ExportProgress;
      try {
        done = flags.server
          ? await fromServer(flags, flags.server, sink, io)
          : await fromStore(flags, storeLocation(flags, command), sink, io);
      } finally {
        sink.close();
      }
      const seconds = (performance.now() - started) / 1000;
      io.err(
        done.matches === 0
          ? `ludus: no ended match to export${flags.cursor ? " after the cursor" : ""}: ${sink.name} has no rows${
            done.cursor ? `; resume later with --cursor ${done.cursor}` : ""
          }\n`
          : `ludus: exported ${amount(done)} of ${flags.format} to ${sink.name} in ${seconds.toFixed(1)} s (${
            number(done.rows / seconds)
          } rows/s); resume after them with --cursor ${done.cursor}\n`,
      );
    });
}
