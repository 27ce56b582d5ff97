/**
 * Registered policies playing each other inside one server process (issue 16), against raw onnxruntime.
 *
 * The same-run baseline is raw onnxruntime-node: an InferenceSession of a 2-layer MLP (hidden 64 unless
 * `--hidden`; the game config's tensor in, one logit per action id out), one intra-op thread as the server
 * opens it, `session.run` on one batch in a closed loop at batch 1, 16 and 256, and at each batch size the
 * live matches reach: samples/s.
 *
 * Ludus: the same MLP registered as a policy in a fresh store, a PolicyRuntime and LiveMatches with both, as
 * `ludus serve` composes them; N ∈ {1, 64, 256} policy-vs-policy matches kept live at once (one that ends is
 * replaced at once, as a trainer's loop would), both seats the same version, so every decision goes through
 * one batcher. Figures over the window, after a warm-up: policy decisions/s (the batcher's count), matches
 * ended/s, the mean batch size reached, and `vsRaw` = decisions/s ÷ raw samples/s at that batch size
 * (rounded). Then the same with LiveMatches given no store: what recording every match costs.
 *
 * Configs: Kuhn and Leduc with 1 hand per match (the network: 11 → 2, 30 → 3) and with 10. A
 * match of R hands has a tensor of every finished hand (Kuhn's is 13 + 14R numbers), so no one
 * network plays both; more hands spread a match's creation and records over more decisions, and show what a
 * decision costs once creation does not dominate.
 *
 * Aims (the issue's), over 256 live matches with the store: ≥ 0.8 × raw at the batch reached; ≥ 100k
 * decisions/s across Kuhn matches. Each figure says whether it is met; store-off figures are listed beside
 * them but do not count.
 *
 *   deno task bench:policies [--seconds 2] [--warmup 1] [--raw-seconds 1.5] [--matches 1,64,256]
 *     [--games kuhn-poker,leduc-poker] [--hands 1,10] [--hidden 64] [--store both|on|off]
 *     [--backend pglite|postgres] [--cpu-prof DIR]
 * `--backend postgres` records into a database of its own, created from $DATABASE_URL and dropped after.
 * `--cpu-prof DIR` writes a V8 CPU profile of each measured window. Prints one JSON object on stdout;
 * progress goes to stderr.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Session } from "node:inspector";
import { parseArgs } from "node:util";
import * as ort from "onnxruntime-node";
import { ReplayStore } from "../db/store.ts";
import type { PolicyRecord } from "../db/policies.ts";
import { configure } from "../games/core/config.ts";
import { getGame } from "../games/registry.ts";
import type { PolicyBatcher } from "../policies/onnx/batcher.ts";
import { PolicyRuntime } from "../policies/onnx/runtime.ts";
import { LiveMatches, StoreUnavailableError } from "../server/match/live-matches.ts";
import { mlpModel } from "../test/support/onnx-models.ts";
import { freshDatabase } from "../test/support/stores.ts";
import { type CoresBusy, measureCores } from "./replay/cpu.ts";
import { round3 } from "./selfplay/histogram.ts";
import { report } from "./report.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "2" },
    warmup: { type: "string", default: "1" },
    "raw-seconds": { type: "string", default: "1.5" },
    matches: { type: "string", default: "1,64,256" },
    games: { type: "string", default: "kuhn-poker,leduc-poker" },
    hands: { type: "string", default: "1,10" },
    hidden: { type: "string", default: "64" },
    store: { type: "string", default: "both" },
    backend: { type: "string", default: "pglite" },
    "cpu-prof": { type: "string" },
  },
});
const SECONDS = Number(values.seconds);
const WARMUP = Number(values.warmup);
const RAW_SECONDS = Number(values["raw-seconds"]);
const LIVE = values.matches.split(",").map(Number);
const STORES: Readonly<Record<string, readonly boolean[]>> = { both: [true, false], on: [true], off: [false] };
const STORE = STORES[values.store];
if (!STORE) throw new Error(`--store is both, on or off, not ${values.store}`);
const RAW_BATCHES = [1, 16, 256];
const HIDDEN = Number(values.hidden);
const AIM_VS_RAW = 0.8;
const AIM_KUHN_DECISIONS = 100_000;
const BACKEND = values.backend;
if (BACKEND !== "pglite" && BACKEND !== "postgres") throw new Error(`--backend is pglite or postgres, not ${BACKEND}`);
if (BACKEND === "postgres" && !Deno.env.get("DATABASE_URL")) {
  throw new Error("--backend postgres needs DATABASE_URL: the bench creates a database of its own there, and drops it");
}
const PROFILES = values["cpu-prof"];
const log = (line: string) => console.error(`bench:policies: ${line}`);

/** Each game's key for hands per match. */
const HANDS_KEY: Readonly<Record<string, string>> = { "kuhn-poker": "rounds", "leduc-poker": "hands" };
const GAMES = values.games.split(",").flatMap((game, g) => {
  if (!HANDS_KEY[game]) throw new Error(`--games names kuhn-poker and leduc-poker, not ${game}`);
  return values.hands.split(",").map((hands) => ({
    game,
    hands: Number(hands),
    config: { [HANDS_KEY[game]]: Number(hands) },
    seed: g + 1,
  }));
});
type GameSpec = (typeof GAMES)[number];

/** The MLP for a game config: its tensor's width in, one logit per action id out. */
function modelFor(spec: GameSpec) {
  const game = getGame(spec.game);
  const { config } = configure(game, spec.config);
  const inputs = game.observationShape(config).reduce((a, b) => a * b, 1);
  const outputs = game.actionCount(config);
  return { inputs, outputs, bytes: mlpModel(inputs, HIDDEN, outputs, spec.seed) };
}

/**
 * Raw onnxruntime: one session, `session.run` on a batch of `batch` binary tensors (as poker's are), each
 * run awaited before the next, for RAW_SECONDS after a few runs to warm up.
 */
async function rawSamplesPerSecond(session: ort.InferenceSession, inputs: number, batch: number): Promise<number> {
  const data = new Float32Array(batch * inputs);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7919) % 5 === 0 ? 1 : 0;
  const feeds = { [session.inputNames[0]]: new ort.Tensor("float32", data, [batch, inputs]) };
  for (let i = 0; i < 100; i++) await session.run(feeds);
  let runs = 0;
  const start = performance.now();
  const until = start + RAW_SECONDS * 1000;
  while (performance.now() < until) {
    await session.run(feeds);
    runs++;
  }
  return Math.round((runs * batch) / ((performance.now() - start) / 1000));
}

interface LiveResult {
  readonly liveMatches: number;
  readonly decisionsPerSecond: number;
  readonly matchesEndedPerSecond: number;
  readonly meanBatch: number;
  readonly batchesPerSecond: number;
  readonly coresBusy: CoresBusy;
  /** This process's CPU time per decision: what the server spends on one, inference included. */
  readonly cpuMicrosPerDecision: number;
  /** The JS heap after the window: what live matches and unwritten records hold. */
  readonly heapUsedMiB: number;
  /** Matches that ended in the window otherwise than completed, by reason (a timeout, an error): none is expected. */
  readonly otherEnds: Record<string, number>;
  /**
   * With the store: records waiting to be written before and after the window (growing: the store falls
   * behind the matches, which nothing acknowledged waits for), the seconds it then took to write them,
   * and creates refused in the window because the write buffer was full (each tried again 10 ms later).
   */
  readonly store: {
    readonly backlogBefore: number;
    readonly backlogAfter: number;
    readonly drainSeconds: number;
    readonly refusedCreates: number;
  } | null;
}

/**
 * `n` matches of `spec` between `policy` and itself kept live in `matches` (one that ends is replaced at
 * once), measured over SECONDS after WARMUP seconds; then every live match is aborted and, with a store,
 * its writes drained, so the next run starts clean.
 */
async function runLive(
  matches: LiveMatches,
  batcher: PolicyBatcher,
  spec: GameSpec,
  policy: string,
  n: number,
): Promise<LiveResult> {
  const writer = matches.store?.writer;
  const live = new Set<ReturnType<LiveMatches["create"]>>();
  const otherEnds: Record<string, number> = {};
  let measuring = false;
  let stopping = false;
  let ended = 0;
  let refused = 0;
  let failure: unknown;
  const seats = [{ strategy: policy }, { strategy: policy }];
  const start = (): void => {
    if (stopping) return;
    let match;
    try {
      match = matches.create({ game: spec.game, config: spec.config, seats });
    } catch (error) {
      if (error instanceof StoreUnavailableError) {
        if (measuring) refused++;
        setTimeout(start, 10);
      } else {
        failure ??= error;
      }
      return;
    }
    live.add(match);
    match.subscribe((event) => {
      if (event.kind !== "end") return;
      live.delete(match);
      if (measuring) ended++;
      if (measuring && event.end.reason !== "completed") {
        otherEnds[event.end.reason] = (otherEnds[event.end.reason] ?? 0) + 1;
      }
      start();
    });
  };
  for (let i = 0; i < n; i++) start();
  await sleep(WARMUP * 1000);
  const profile = PROFILES ? await startProfile() : undefined;
  const before = { decisions: batcher.decisions, batches: batcher.batches, backlog: writer?.buffered ?? 0 };
  measuring = true;
  const cores = measureCores();
  const t0 = performance.now();
  await sleep(SECONDS * 1000);
  measuring = false;
  const seconds = (performance.now() - t0) / 1000;
  const coresBusy = cores();
  const backlog = writer?.buffered ?? 0;
  const heapUsedMiB = Math.round(Deno.memoryUsage().heapUsed / 2 ** 20);
  await profile?.(`${spec.game}-${spec.hands}-${n}-store-${writer ? "on" : "off"}`);
  const decisions = batcher.decisions - before.decisions;
  const batches = batcher.batches - before.batches;
  stopping = true;
  for (const match of [...live]) match.abort();
  const drainStart = performance.now();
  await writer?.drain();
  if (failure) throw failure;
  return {
    liveMatches: n,
    decisionsPerSecond: Math.round(decisions / seconds),
    matchesEndedPerSecond: Math.round(ended / seconds),
    meanBatch: round3(decisions / Math.max(1, batches)),
    batchesPerSecond: Math.round(batches / seconds),
    coresBusy,
    cpuMicrosPerDecision: round3((coresBusy.process * seconds * 1e6) / Math.max(1, decisions)),
    heapUsedMiB,
    otherEnds,
    store: writer
      ? {
        backlogBefore: before.backlog,
        backlogAfter: backlog,
        drainSeconds: round3((performance.now() - drainStart) / 1000),
        refusedCreates: refused,
      }
      : null,
  };
}

/**
 * `--cpu-prof DIR`: V8's sampling profiler over a measured window (the inspector, in this process); the
 * returned function stops it and writes `DIR/<name>.cpuprofile`, which Chrome's DevTools open.
 */
async function startProfile(): Promise<(name: string) => Promise<void>> {
  const session = new Session();
  session.connect();
  const post = (method: string) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, {}, (error, result) => (error ? reject(error) : resolve(result)))
    );
  await post("Profiler.enable");
  await post("Profiler.start");
  return async (name) => {
    const { profile } = await post("Profiler.stop") as { profile: unknown };
    session.disconnect();
    mkdirSync(PROFILES!, { recursive: true });
    writeFileSync(join(PROFILES!, `${name}.cpuprofile`), JSON.stringify(profile));
  };
}

const dataDir = mkdtempSync(join(tmpdir(), "ludus-bench-policies-"));
let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
let store: ReplayStore | undefined;
let runtime: PolicyRuntime | undefined;

/** One game: raw onnxruntime at the fixed batch sizes, then live matches with and without the store. */
async function benchGame(spec: GameSpec, runtime: PolicyRuntime, recorded: LiveMatches, unrecorded: LiveMatches) {
  const { inputs, outputs, bytes } = modelFor(spec);
  const name = `bench-${spec.game}-${spec.hands}`;
  const session = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 1, executionProviders: ["cpu"] });
  const raw = new Map<number, number>();
  const rawAt = async (batch: number) => {
    if (!raw.has(batch)) {
      log(`${spec.game} × ${spec.hands}: raw onnxruntime, batch ${batch}`);
      raw.set(batch, await rawSamplesPerSecond(session, inputs, batch));
    }
    return raw.get(batch)!;
  };
  try {
    for (const batch of RAW_BATCHES) await rawAt(batch);
    const live = [];
    for (const recording of STORE) {
      const matches = recording ? recorded : unrecorded;
      for (const n of LIVE) {
        log(`${spec.game} × ${spec.hands}: ${n} live policy-vs-policy matches, store ${recording ? "on" : "off"}`);
        // A version of its own for each run, so each starts with a fresh batcher: matches left out of step by
        // the previous run (its aborted decisions still in the batcher) go on asking in two alternating batches.
        const record: PolicyRecord = await runtime.register({ name, game: spec.game, config: spec.config }, bytes);
        const batcher = await runtime.batcher(record);
        const result = await runLive(matches, batcher, spec, `policy:${name}`, n);
        await runtime.remove(record.id);
        const rawReached = await rawAt(Math.max(1, Math.round(result.meanBatch)));
        live.push({
          recorded: recording,
          ...result,
          rawSamplesPerSecondAtReachedBatch: rawReached,
          vsRaw: round3(result.decisionsPerSecond / rawReached),
        });
      }
    }
    return {
      game: spec.game,
      hands: spec.hands,
      config: spec.config,
      model: { inputs, hidden: HIDDEN, outputs, bytes: bytes.byteLength },
      raw: Object.fromEntries([...raw].sort(([a], [b]) => a - b).map(([b, s]) => [`batch${b}`, s])),
      live,
    };
  } finally {
    await session.release();
  }
}

async function bench() {
  if (BACKEND === "postgres") database = await freshDatabase();
  store = await ReplayStore.open({ dataDir, databaseUrl: database?.url });
  runtime = await PolicyRuntime.open(store.policies);
  const recorded = new LiveMatches({ store, policies: runtime, lingerMs: 0 });
  const unrecorded = new LiveMatches({ policies: runtime, lingerMs: 0 });
  const results: Awaited<ReturnType<typeof benchGame>>[] = [];
  for (const spec of GAMES) results.push(await benchGame(spec, runtime, recorded, unrecorded));
  // The aims are about 256 live matches; a server records every match, so only store-on figures count.
  const at256 = results.flatMap((r) =>
    r.live.filter((l) => l.liveMatches === 256).map((l) => ({ game: r.game, hands: r.hands, ...l }))
  );
  const vsRaw = at256.map(({ game, hands, recorded, vsRaw }) => ({
    game,
    hands,
    recorded,
    vsRaw,
    met: vsRaw >= AIM_VS_RAW,
  }));
  const kuhn = at256.filter((l) => l.game === "kuhn-poker").map(({ hands, recorded, decisionsPerSecond: d }) => ({
    hands,
    recorded,
    decisionsPerSecond: d,
    met: d >= AIM_KUHN_DECISIONS,
  }));
  const allMet = (figures: { recorded: boolean; met: boolean }[]) =>
    figures.some((f) => f.recorded) && figures.every((f) => !f.recorded || f.met);
  return {
    bench: "policies",
    seconds: SECONDS,
    warmupSeconds: WARMUP,
    rawSeconds: RAW_SECONDS,
    store: BACKEND,
    deno: Deno.version.deno,
    onnxruntime: ort.env.versions.common,
    cores: navigator.hardwareConcurrency,
    results,
    aims: {
      vsRawAt256Live: { aim: AIM_VS_RAW, met: allMet(vsRaw), figures: vsRaw },
      kuhnDecisionsPerSecondAt256Live: { aim: AIM_KUHN_DECISIONS, met: allMet(kuhn), figures: kuhn },
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

await report(bench, async () => {
  await runtime?.close();
  await store?.close();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});
