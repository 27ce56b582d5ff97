/**
 * The replay store's write and export paths, on PGlite (a temporary data directory) and on PostgreSQL
 * (a fresh database on the server of DATABASE_URL, dropped afterwards).
 *
 * Group commit: `--matches` live matches in this process (as a server process, owning them), each a closed
 * loop that writes its match row, then its decisions one at a time, each awaited until durable (as the server
 * acknowledges a decision), then its end row, and starts the next match. Rows come from real IPD and Kuhn poker games
 * (bench/replay/workload.ts). Measured for each `--windows` value of GroupCommitOptions.windowMs:
 * durable steps/s, the wait for durability (p50/p99/max), writes (statements and COPYs) and steps per write.
 *
 * The same-run baseline is raw `COPY steps FROM STDIN` of the same kind of rows into the same database,
 * in batches of `--copy-batch` rows: what the database takes with nobody waiting. `vsCopy` = group
 * commit steps/s ÷ COPY rows/s. Each phase starts from empty tables after a CHECKPOINT.
 *
 * Export: `--export-matches` ended matches written through the store, then exported whole in every
 * format (db/export) again and again for `--seconds`: rows/s of each format, decisions/s and MB/s. Its
 * same-run baseline is raw `COPY steps TO STDOUT` of those decisions' rows: `vsCopyOut` = decisions
 * exported/s ÷ rows COPY reads out/s.
 *
 * `coresBusy` says how many cores this process and the whole machine used while a figure was measured:
 * a machine figure well above what the bench and its database use means something else was running.
 *
 *   deno task bench:replay [--seconds 5] [--warmup 1] [--matches 256] [--backend pglite|postgres|both]
 *                          [--windows 0,1,2,5] [--copy-batch 10000] [--export-matches 2000] [--export-rounds N]
 * `--export-rounds N` makes the exported IPD matches N rounds long (long matches: larger observations, longer pages).
 * `--backend` defaults to both when DATABASE_URL is set, else pglite.
 * Prints one JSON object on stdout; progress goes to stderr.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import { ReplayStore } from "../db/store.ts";
import { freshDatabase } from "../test/support/stores.ts";
import { FORMATS } from "../db/export/index.ts";
import {
  benchClient,
  copyFromPglite,
  copyFromPostgres,
  type CopyOutResult,
  type CopyResult,
  copyToPglite,
  copyToPostgres,
} from "./replay/copy.ts";
import { type ExportResult, measureExport, seedEnded } from "./replay/export.ts";
import { type LiveMatchesResult, runLiveMatches } from "./replay/live-matches.ts";
import { matchScripts } from "./replay/workload.ts";
import { round3 } from "./selfplay/histogram.ts";

const BACKEND_CHOICES = ["pglite", "postgres", "both"];
const DATABASE_URL = process.env.DATABASE_URL;

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    warmup: { type: "string", default: "1" },
    matches: { type: "string", default: "256" },
    backend: { type: "string", default: DATABASE_URL ? "both" : "pglite" },
    windows: { type: "string", default: "0,1,2,5" },
    "copy-batch": { type: "string", default: "10000" },
    "export-matches": { type: "string", default: "2000" },
    "export-rounds": { type: "string" },
  },
});

function numberFlag(name: string, value: string, integer: boolean, allowZero = false): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || (!allowZero && n === 0) || (integer && !Number.isInteger(n))) {
    throw new Error(`--${name} must be a ${integer ? "whole " : ""}number ${allowZero ? "≥" : ">"} 0, got ${value}`);
  }
  return n;
}

const SECONDS = numberFlag("seconds", values.seconds, false);
const WARMUP = numberFlag("warmup", values.warmup, false, true);
const MATCHES = numberFlag("matches", values.matches, true);
const COPY_BATCH = numberFlag("copy-batch", values["copy-batch"], true);
const EXPORT_MATCHES = numberFlag("export-matches", values["export-matches"], true);
const EXPORT_ROUNDS = values["export-rounds"] === undefined
  ? undefined
  : numberFlag("export-rounds", values["export-rounds"], true);
const WINDOWS = values.windows.split(",").map((w) => numberFlag("windows", w.trim(), false, true));
if (!BACKEND_CHOICES.includes(values.backend)) {
  throw new Error(`--backend must be one of ${BACKEND_CHOICES.join(", ")}, got ${values.backend}`);
}
if (values.backend !== "pglite" && !DATABASE_URL) {
  throw new Error(`--backend ${values.backend} needs DATABASE_URL (a PostgreSQL server to create a database on)`);
}
const BACKENDS = values.backend === "both"
  ? ["pglite", "postgres"] as const
  : [values.backend as "pglite" | "postgres"];

const log = (line: string) => console.error(`replay: ${line}`);
const scripts = matchScripts(64);

/** Empty tables and a fresh checkpoint, so that every phase starts from the same place. */
async function reset(query: (text: string) => Promise<unknown>): Promise<void> {
  await query("TRUNCATE steps, matches");
  await query("CHECKPOINT");
}

interface GroupCommitFigures extends LiveMatchesResult {
  readonly vsCopy: number;
}

async function groupCommit(store: ReplayStore): Promise<LiveMatchesResult[]> {
  const owner = await store.nodes.join("bench", { url: "http://127.0.0.1", shared: false, leaseMs: 3_600_000 });
  const run = (windowMs: number, seconds: number) =>
    runLiveMatches({
      sql: store.sql,
      writerId: store.writerId,
      owner,
      scripts,
      matches: MATCHES,
      windowMs,
      warmup: WARMUP,
      seconds,
    });
  // The first run after opening pays for JIT, cold caches and, on a new PGlite store, WAL segments being
  // created and zero-filled (~50 ms stalls each 16 MB; later runs recycle them): run one unreported.
  log(`${store.backend}: warming up`);
  await run(WINDOWS[0], WARMUP + 1);
  const results: LiveMatchesResult[] = [];
  for (const windowMs of WINDOWS) {
    await reset((text) => store.sql.query(text));
    log(`${store.backend}: group commit, windowMs ${windowMs}, ${MATCHES} live matches`);
    const result = await run(windowMs, SECONDS);
    log(`${store.backend}: ${result.stepsPerSecond} steps/s, p99 wait ${result.waitMs.p99Ms} ms`);
    results.push(result);
  }
  return results;
}

/**
 * The phases that go through the store: group commit under each window, then exports of ended matches (left
 * in the store for raw `COPY TO`).
 */
async function storePhases(store: ReplayStore) {
  const live = await groupCommit(store);
  await reset((text) => store.sql.query(text));
  log(`${store.backend}: writing ${EXPORT_MATCHES} ended matches to export`);
  // Distinct matches, so that Parquet's dictionaries and ZSTD see real variety rather than 64 repeats.
  const steps = await seedEnded(store, matchScripts(EXPORT_MATCHES, EXPORT_ROUNDS), EXPORT_MATCHES);
  const exports: ExportResult[] = [];
  for (const format of FORMATS) {
    const result = await measureExport(store, format, steps, SECONDS);
    log(`${store.backend}: export ${format}: ${result.rowsPerSecond} rows/s`);
    exports.push(result);
  }
  return { live, exports, steps };
}

/** Raw `COPY TO` of the exported step rows, then (from empty tables) raw `COPY FROM`. */
async function copyPhases(
  dataDir: string,
  databaseUrl: string | undefined,
  steps: number,
): Promise<{ copyOut: CopyOutResult; copy: CopyResult }> {
  const backend = databaseUrl ? "postgres" : "pglite";
  log(`${backend}: raw COPY TO of the ${steps} exported decisions`);
  const copyIn = () => log(`${backend}: raw COPY, ${COPY_BATCH} rows a statement`);
  if (databaseUrl) {
    const client = benchClient(databaseUrl);
    try {
      const copyOut = await copyFromPostgres(client, steps, SECONDS);
      await reset((text) => client.unsafe(text));
      copyIn();
      return { copyOut, copy: await copyToPostgres(client, scripts, "bench-copy", COPY_BATCH, SECONDS) };
    } finally {
      await client.end({ timeout: 5 });
    }
  }
  // The store's own PGlite hides its handle, and COPY to or from a blob needs it: open the same directory raw.
  const db = await PGlite.create(join(dataDir, "replay"));
  try {
    const copyOut = await copyFromPglite(db, steps, SECONDS);
    await reset((text) => db.query(text));
    copyIn();
    return { copyOut, copy: await copyToPglite(db, scripts, "bench-copy", COPY_BATCH, SECONDS) };
  } finally {
    await db.close();
  }
}

/** What an interrupted run must still remove: the temporary data directory and database. */
const cleanups = new Set<() => Promise<void>>();
const interrupted = () => {
  // The live matches' writes fail once their database is gone; nobody waits for them any more.
  globalThis.addEventListener("unhandledrejection", (event) => event.preventDefault());
  return Promise.all([...cleanups].map((cleanup) => cleanup())).finally(() => Deno.exit(130));
};
Deno.addSignalListener("SIGINT", interrupted);
Deno.addSignalListener("SIGTERM", interrupted);

async function benchBackend(backend: "pglite" | "postgres") {
  const dataDir = mkdtempSync(join(tmpdir(), "ludus-bench-replay-"));
  const database = backend === "postgres" ? await freshDatabase() : undefined;
  const cleanup = async () => {
    cleanups.delete(cleanup);
    rmSync(dataDir, { recursive: true, force: true });
    await database?.drop();
  };
  cleanups.add(cleanup);
  try {
    const store = await ReplayStore.open({ dataDir, databaseUrl: database?.url });
    const { live, exports, steps } = await storePhases(store).finally(() => store.close());
    const { copyOut, copy } = await copyPhases(dataDir, database?.url, steps);
    log(`${backend}: COPY TO ${copyOut.rowsPerSecond} rows/s, COPY ${copy.rowsPerSecond} rows/s`);
    const groupCommit: GroupCommitFigures[] = live.map((r) => ({
      ...r,
      vsCopy: round3(r.stepsPerSecond / copy.rowsPerSecond),
    }));
    // Decisions exported per second against step rows COPY reads out per second (tensors.parquet: its Kuhn rows).
    const exported = exports.map((r) => ({ ...r, vsCopyOut: round3(r.stepsPerSecond / copyOut.rowsPerSecond) }));
    return { backend, groupCommit, copy, copyOut, export: exported };
  } finally {
    await cleanup();
  }
}

function workload() {
  const decisions = scripts.flatMap((s) => s.decisions);
  const llm = scripts.flatMap((s) => s.decisions.filter((d) => d.seat === s.llmSeat));
  return {
    games: [...new Set(scripts.map((s) => `${s.game}/${s.variant}`))],
    meanStepsPerMatch: round3(decisions.length / scripts.length),
    meanObservationBytes: Math.round(
      decisions.reduce((n, d) => n + JSON.stringify(d.observation).length, 0) / decisions.length,
    ),
    rowsWithMeta: round3(llm.length / decisions.length),
  };
}

const results = [];
for (const backend of BACKENDS) results.push(await benchBackend(backend));
Deno.removeSignalListener("SIGINT", interrupted);
Deno.removeSignalListener("SIGTERM", interrupted);
console.log(JSON.stringify(
  {
    bench: "replay",
    seconds: SECONDS,
    warmupSeconds: WARMUP,
    liveMatches: MATCHES,
    exportMatches: EXPORT_MATCHES,
    exportIpdRounds: EXPORT_ROUNDS ?? "the variant's",
    deno: Deno.version.deno,
    cores: navigator.hardwareConcurrency,
    workload: workload(),
    results,
  },
  null,
  2,
));
