/**
 * In-process matches inside `ludus serve`: a match whose seats are all built-ins (nothing acknowledged to
 * anyone) runs through the episode engine and writes its decisions in bulk. For Kuhn and Leduc poker, one
 * long match of `--hands` hands between built-ins (`create` with `seat: null`) is timed from `created`
 * until its record says it ended (its decisions are durable by then): decision rows/s.
 *
 * The same-run baseline is raw `COPY steps FROM STDIN` into the same kind of store (bench/replay/copy.ts):
 * `vsCopy` = in-process rows/s ÷ COPY rows/s. The aim is ≥ 0.5: before bulk writes, every such row
 * waited for its own durable round trip.
 *
 *   deno task bench:inprocess [--hands 50000] [--seconds 3] [--backend pglite|postgres|both]
 * `--backend` defaults to both when DATABASE_URL is set, else pglite (the server never inherits
 * DATABASE_URL: the bench passes a fresh database with --database-url). Prints one JSON object on stdout.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import { ReplayStore } from "../db/store.ts";
import { createTokens } from "../test/support/tokens.ts";
import { RawBot } from "../test/support/raw-bot.ts";
import { startServerProcess } from "../test/support/server-process.ts";
import { freshDatabase } from "../test/support/stores.ts";
import { benchClient, type CopyResult, copyToPglite, copyToPostgres } from "./replay/copy.ts";
import { matchScripts } from "./replay/workload.ts";
import { round3 } from "./selfplay/histogram.ts";

const { values } = parseArgs({
  options: {
    hands: { type: "string", default: "50000" },
    seconds: { type: "string", default: "3" },
    backend: { type: "string" },
    "copy-batch": { type: "string", default: "4000" },
  },
});
const HANDS = Number(values.hands);
const SECONDS = Number(values.seconds);
const COPY_BATCH = Number(values["copy-batch"]);
const BACKENDS = values.backend === "both" || (!values.backend && Deno.env.get("DATABASE_URL"))
  ? ["pglite", "postgres"] as const
  : [values.backend === "postgres" ? "postgres" : "pglite"] as const;
const log = (text: string) => console.error(`bench:inprocess: ${text}`);

const GAMES = [
  { game: "kuhn-poker", config: { rounds: HANDS, history: 0 }, seats: ["strategy:random", "strategy:nash"] },
  { game: "leduc-poker", config: { hands: HANDS, history: 0 }, seats: ["strategy:random", "strategy:always-call"] },
] as const;

async function timeMatch(url: string, bot: RawBot, spec: (typeof GAMES)[number]) {
  const started = performance.now();
  bot.send({
    type: "create",
    game: spec.game,
    config: spec.config,
    seat: null,
    opponents: Object.fromEntries(spec.seats.map((s, i) => [String(i), s])),
  });
  const created = await bot.next("created", () => true, { timeoutMs: 600_000 });
  for (;;) {
    // The listing's summary, not the record with every decision: reading those back is not what is measured.
    const { matches } = await (await fetch(`${url}/matches?game=${spec.game}&limit=1`)).json();
    const record = matches.find((m: { id: string }) => m.id === created.match);
    if (record?.endedAt) {
      if (record.endReason !== "completed") throw new Error(`${spec.game}: ended ${record.endReason}: ${record.error}`);
      const seconds = (performance.now() - started) / 1000;
      // Turn-based games: one decision per step.
      return {
        game: spec.game,
        hands: HANDS,
        rows: record.steps,
        seconds: round3(seconds),
        rowsPerSecond: Math.round(record.steps / seconds),
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function copyBaseline(dataDir: string, databaseUrl: string | undefined): Promise<CopyResult> {
  const scripts = matchScripts(64);
  if (databaseUrl) {
    const client = benchClient(databaseUrl);
    return await copyToPostgres(client, scripts, "bench-copy", COPY_BATCH, SECONDS).finally(() =>
      client.end({ timeout: 5 })
    );
  }
  const store = await ReplayStore.open({ dataDir }); // migrated, then released for raw access
  await store.close();
  const db = await PGlite.create(join(dataDir, "replay"));
  try {
    return await copyToPglite(db, scripts, "bench-copy", COPY_BATCH, SECONDS);
  } finally {
    await db.close();
  }
}

async function benchBackend(backend: "pglite" | "postgres") {
  const dataDir = mkdtempSync(join(tmpdir(), "ludus-bench-inprocess-"));
  const copyDir = mkdtempSync(join(tmpdir(), "ludus-bench-inprocess-copy-"));
  const database = backend === "postgres" ? await freshDatabase() : undefined;
  const copyDatabase = backend === "postgres" ? await freshDatabase() : undefined;
  try {
    if (copyDatabase) (await ReplayStore.open({ dataDir: copyDir, databaseUrl: copyDatabase.url })).close();
    log(`${backend}: raw COPY`);
    const copy = await copyBaseline(copyDir, copyDatabase?.url);
    const [token] = await createTokens({ dataDir, databaseUrl: database?.url }, ["bench"]);
    const server = await startServerProcess([
      "--data-dir",
      dataDir,
      ...(database ? ["--database-url", database.url] : []),
    ]);
    try {
      const bot = await RawBot.connect(server.wsUrl, token);
      const matches = [];
      for (const spec of GAMES) {
        log(`${backend}: ${spec.game}, ${HANDS} hands between built-ins`);
        const result = await timeMatch(server.url, bot, spec);
        matches.push({ ...result, vsCopy: round3(result.rowsPerSecond / copy.rowsPerSecond) });
      }
      bot.close();
      return { backend, copy: { rowsPerSecond: copy.rowsPerSecond, rowsPerCopy: copy.rowsPerCopy }, matches };
    } finally {
      server.child.kill("SIGTERM");
      await server.exited;
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(copyDir, { recursive: true, force: true });
    await database?.drop();
    await copyDatabase?.drop();
  }
}

const results = [];
for (const backend of BACKENDS) results.push(await benchBackend(backend));
console.log(JSON.stringify({ bench: "inprocess", hands: HANDS, deno: Deno.version.deno, results }, null, 2));
