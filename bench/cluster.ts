/**
 * The cluster (docs/cluster.md) under load: N `ludus serve` processes sharing a PostgreSQL store (a fresh database
 * of their own, dropped at the end) and Redis, and a load generator process (bench/cluster/load.ts) whose bots are
 * spread over them, each keeping `--lanes` matches going: the public queue (bots of any process meet, so a match's
 * seats are often on two processes) and private matches against built-ins, in Kuhn poker and the IPD.
 *
 *   deno task bench:cluster --database-url URL [--redis-url URL] [--processes 3] [--bots 64] [--lanes 8]
 *       [--seconds 20] [--warmup 3] [--think-ms 0]                     throughput with 1 … N processes
 *   ... --kill [--processes 3] [--think-ms 20]                        one process killed with SIGKILL mid-run
 *   ... --soak 3600 [--sample 60] [--bots 125 --lanes 8] [--think-ms 400]   an hour, a line of figures a minute
 *
 * `--database-url` names a PostgreSQL server the bench may create databases on (never an inherited $DATABASE_URL);
 * `--redis-url` defaults to $REDIS_URL (the cluster's keys are its own).
 *
 * Scaling (the default): the same bots, closed loop, against 1, 2 … N processes, each run on a fresh store: acks a
 * second, matches a second, act → ack percentiles, and the servers' CPU per ack (all processes summed), each as a
 * ratio to one process; and against a raw websocket echo of act-sized frames over as many sockets in the same run
 * (bench/selfplay/echo-server.ts). On a machine with fewer cores than processes the point is the shape: what the
 * cluster costs per action over one process (messages between processes for seats elsewhere, Redis for the queue),
 * from which `projected` gives acks a second per core.
 * Kill: N processes under load; after half the window one is killed with SIGKILL. The bots reconnect elsewhere and
 * resume; then nothing new starts and every match must end. Reported: the longest stall of a match (kill → its next
 * ack), every acknowledged action found in the store, no match left unfinished, who finished the killed process's.
 * Soak: N processes at a paced load for `--soak` seconds: each sample's acks a second, matches in play, lanes waiting
 * for their request to become a match (with each kind's requests sent, answered and started), p99, each process's
 * RSS; `flat` compares the last tenth of the run with the first (after a tenth's warm-up).
 */
import { parseArgs } from "node:util";
import process from "node:process";
import { ReplayStore } from "../db/store.ts";
import { MATCHES } from "../db/tables/matches.ts";
import { createTokens } from "../test/support/tokens.ts";
import { freshDatabase } from "../test/support/stores.ts";
import { round3 } from "./selfplay/histogram.ts";
import type { WindowResult } from "./selfplay/measurements.ts";
import { freePort, Processes, waitForHttp } from "./selfplay/processes.ts";
import { report } from "./report.ts";

const { values } = parseArgs({
  options: {
    "database-url": { type: "string" },
    "redis-url": { type: "string", default: process.env.REDIS_URL },
    processes: { type: "string", default: "3" },
    bots: { type: "string", default: "64" },
    lanes: { type: "string", default: "8" },
    seconds: { type: "string", default: "20" },
    warmup: { type: "string", default: "3" },
    "think-ms": { type: "string" },
    kill: { type: "boolean", default: false },
    soak: { type: "string" },
    sample: { type: "string", default: "60" },
  },
});
const DATABASE_URL = values["database-url"];
const REDIS_URL = values["redis-url"];
if (!DATABASE_URL || !REDIS_URL) {
  throw new Error(
    "give --database-url (a PostgreSQL server the bench may create databases on) and --redis-url (or REDIS_URL)",
  );
}
const PROCESSES = Number(values.processes);
const BOTS = Number(values.bots);
const LANES = Number(values.lanes);
const SECONDS = values.soak ? Number(values.soak) : Number(values.seconds);
const WARMUP = Number(values.warmup);
const MODE = values.kill ? "kill" : values.soak ? "soak" : "scaling";
const THINK_MS = Number(values["think-ms"] ?? (MODE === "kill" ? 20 : MODE === "soak" ? 400 : 0));

const ROOT = new URL("..", import.meta.url).pathname;
const DENO = Deno.execPath();
const processes = new Processes();
const workDir = Deno.makeTempDirSync({ prefix: "ludus-cluster-bench-" });
const CLOCK_TICKS = Number(
  new TextDecoder().decode(new Deno.Command("getconf", { args: ["CLK_TCK"] }).outputSync().stdout),
);
const drops: (() => Promise<void>)[] = [];

const log = (line: string) => console.error(`cluster: ${line}`);

function spawnDeno(script: string, args: readonly (string | number)[], captureStdout = false): Deno.ChildProcess {
  return processes.spawn(DENO, ["run", "--quiet", "--allow-all", script, ...args.map(String)], {
    cwd: ROOT,
    captureStdout,
    env: { DATABASE_URL: "", REDIS_URL: "" },
  });
}

interface Server {
  readonly node: string;
  readonly child: Deno.ChildProcess;
  readonly url: string;
  readonly wsUrl: string;
}

/** N processes of one cluster on a fresh database, started one after another. */
async function startCluster(n: number): Promise<{ servers: Server[]; databaseUrl: string; dataDir: string }> {
  const db = await freshDatabase(DATABASE_URL);
  drops.push(db.drop);
  const dataDir = Deno.makeTempDirSync({ dir: workDir });
  const servers: Server[] = [];
  for (let i = 1; i <= n; i++) {
    const port = freePort();
    const url = `http://127.0.0.1:${port}`;
    const child = spawnDeno("cli/main.ts", [
      ...["serve", "--host", "127.0.0.1", "--port", port, "--data-dir", dataDir, "--node", `b${i}`],
      ...["--database-url", db.url, "--redis-url", REDIS_URL!, "--public-url", url],
      // A short lease makes the kill's takeover quick to measure; the other modes run the default a user gets.
      ...["--fill-after", 0, ...(MODE === "kill" ? ["--lease", 3] : []), "--max-connections", 20_000],
    ]);
    await waitForHttp(`${url}/health`, child, 60_000);
    servers.push({ node: `b${i}`, child, url, wsUrl: `ws://127.0.0.1:${port}/bot` });
  }
  return { servers, databaseUrl: db.url, dataDir };
}

async function stopCluster(servers: readonly Server[]): Promise<void> {
  await Promise.all(servers.map((s) => processes.stop(s.child)));
}

/** The bots' tokens, in the cluster's store. */
async function tokensFor(cluster: { databaseUrl: string; dataDir: string }): Promise<string> {
  const names = Array.from({ length: BOTS }, (_, i) => `cluster-bench-${i}`);
  const tokens = await createTokens({ dataDir: cluster.dataDir, databaseUrl: cluster.databaseUrl }, names, "bot", 1000);
  const file = `${cluster.dataDir}/bench-tokens.json`;
  Deno.writeTextFileSync(file, JSON.stringify(tokens));
  return file;
}

type LoadReport = ReturnType<typeof parseFinal>;
function parseFinal(stdout: string) {
  const lines = stdout.trim().split("\n").map((l) => JSON.parse(l));
  const last = lines.at(-1) as {
    final: {
      seconds: number;
      acks: number;
      acksPerSecond: number;
      matchesPerSecond: number;
      inPlay: number;
      lanesWaiting: number;
      requests: Record<"create" | "queue", { sent: number; answered: number; started: number }>;
      actToAckMs: { p50Ms: number; p99Ms: number; maxMs: number; samples: number };
      maxGapMs: number;
      errors: number;
      serverCpuMicrosPerAck: number | null;
      serverCoresBusy: number;
      servers: { pid: number; cpuSeconds: number | null; rssMiB: number | null }[];
    };
    drained?: { seconds: number; unfinished: number };
  };
  return { ...last, samples: lines.slice(0, -1).map((l) => l.sample) };
}

/** One run of the generator against `servers`; with `during`, something is done to the cluster meanwhile. */
async function load(
  servers: readonly Server[],
  tokens: string,
  args: Record<string, string | number | true>,
  during?: () => Promise<void>,
): Promise<LoadReport> {
  const flags = Object.entries<string | number | true>({
    urls: servers.map((s) => s.wsUrl).join(","),
    tokens,
    lanes: LANES,
    "think-ms": THINK_MS,
    seconds: SECONDS,
    warmup: WARMUP,
    "server-pids": servers.map((s) => s.child.pid).join(","),
    "clock-ticks": CLOCK_TICKS,
    ...args,
  }).flatMap(([k, v]) => (v === true ? [`--${k}`] : [`--${k}`, String(v)]));
  const child = spawnDeno("bench/cluster/load.ts", flags, true);
  const output = processes.output(child, "the load generator", (WARMUP + SECONDS + 300) * 1000);
  await during?.();
  return parseFinal(await output);
}

/** The raw websocket echo of the same number of sockets, closed loop (bench/selfplay's generator). */
async function echoBaseline(): Promise<WindowResult> {
  const port = freePort();
  const echo = spawnDeno("bench/selfplay/echo-server.ts", ["--port", port]);
  await waitForHttp(`http://127.0.0.1:${port}`, echo);
  const child = spawnDeno("bench/selfplay/load.ts", [
    ...["--mode", "echo", "--url", `ws://127.0.0.1:${port}`, "--connections", BOTS],
    ...["--seconds", Math.min(SECONDS, 10), "--warmup", 1, "--server-pid", echo.pid, "--clock-ticks", CLOCK_TICKS],
  ], true);
  const result = JSON.parse(await processes.output(child, "the echo baseline", 120_000)) as WindowResult;
  await processes.stop(echo);
  return result;
}

const figures = (r: LoadReport["final"]) => ({
  acksPerSecond: r.acksPerSecond,
  matchesPerSecond: r.matchesPerSecond,
  matchesInPlay: r.inPlay,
  actToAckMs: { p50: r.actToAckMs.p50Ms, p99: r.actToAckMs.p99Ms },
  serverCpuMicrosPerAck: r.serverCpuMicrosPerAck,
  serverCoresBusy: r.serverCoresBusy,
  rssMiB: r.servers.map((s) => s.rssMiB),
  errors: r.errors,
});

async function scaling() {
  log(`echo baseline: ${BOTS} sockets, closed loop`);
  const echo = await echoBaseline();
  const echoPerSecond = echo.operations / echo.windowSeconds;
  const echoCpuMicros = ((echo.server.userSeconds + echo.server.systemSeconds) * 1e6) / echo.operations;
  const runs = [];
  for (let n = 1; n <= PROCESSES; n++) {
    const cluster = await startCluster(n);
    const tokens = await tokensFor(cluster);
    log(`${n} process${n > 1 ? "es" : ""}: ${BOTS} bots × ${LANES} lanes, ${SECONDS} s`);
    const run = await load(cluster.servers, tokens, {});
    await stopCluster(cluster.servers);
    log(`${n}: ${run.final.acksPerSecond} acks/s, ${run.final.serverCpuMicrosPerAck} µs server CPU per ack`);
    runs.push({ processes: n, ...figures(run.final) });
  }
  // Light load (8 bots, 2 lanes each, answering after 50 ms on average): act → ack with nobody queueing, one process
  // against all of them. The difference is what playing a match through another process adds to a frame.
  const light = [];
  for (const n of [1, PROCESSES]) {
    const cluster = await startCluster(n);
    const tokens = await tokensFor(cluster);
    const run = await load(cluster.servers, tokens, { lanes: 2, "think-ms": 50, bots: 8 });
    await stopCluster(cluster.servers);
    light.push({ processes: n, actToAckMs: { p50: run.final.actToAckMs.p50Ms, p99: run.final.actToAckMs.p99Ms } });
  }
  const one = runs[0];
  return {
    lightLoad: {
      what: "8 bots × 2 lanes answering after 50 ms on average: act → ack, one process against all of them",
      runs: light,
      addedP50Ms: round3(light[1].actToAckMs.p50 - light[0].actToAckMs.p50),
    },
    echo: {
      sockets: BOTS,
      roundTripsPerSecond: Math.round(echoPerSecond),
      serverCpuMicrosPerRoundTrip: round3(echoCpuMicros),
      roundTripMs: { p50: echo.roundTrip.p50Ms, p99: echo.roundTrip.p99Ms },
    },
    runs: runs.map((r) => ({
      ...r,
      vsOneProcess: {
        throughput: round3(r.acksPerSecond / one.acksPerSecond),
        serverCpuPerAck: round3(r.serverCpuMicrosPerAck! / one.serverCpuMicrosPerAck!),
        p99: round3(r.actToAckMs.p99 / one.actToAckMs.p99),
      },
      vsEcho: {
        throughput: round3(r.acksPerSecond / echoPerSecond),
        serverCpuPerAck: round3(r.serverCpuMicrosPerAck! / echoCpuMicros),
      },
      // Acks a second one core would carry at this cost per ack (the database and Redis apart).
      projectedAcksPerSecondPerCore: Math.round(1e6 / r.serverCpuMicrosPerAck!),
    })),
  };
}

async function kill() {
  const cluster = await startCluster(PROCESSES);
  const tokens = await tokensFor(cluster);
  const ackedFile = `${cluster.dataDir}/acked.json`;
  const victim = cluster.servers[0];
  let orphans = 0;
  log(`${PROCESSES} processes, ${BOTS} bots × ${LANES} lanes; ${victim.node} is killed after ${SECONDS / 2} s`);
  const run = await load(cluster.servers, tokens, { drain: true, acked: ackedFile }, async () => {
    await new Promise((resolve) => setTimeout(resolve, (WARMUP + SECONDS / 2) * 1000));
    const directory = await (await fetch(`${cluster.servers[1].url}/cluster`)).json();
    orphans = directory.nodes.find((n: { node: string }) => n.node === victim.node).matches;
    victim.child.kill("SIGKILL");
    log(`killed ${victim.node} with ${orphans} live matches`);
  });
  await stopCluster(cluster.servers);
  const acked = JSON.parse(Deno.readTextFileSync(ackedFile)) as [string, [number, unknown][]][];
  const store = await ReplayStore.open({ dataDir: cluster.dataDir, databaseUrl: cluster.databaseUrl });
  let lost = 0, checked = 0;
  try {
    for (const [match, seqs] of acked) {
      const stored = new Map((await store.steps(match)).map((s) => [s.seq, JSON.stringify(s.action)]));
      for (const [seq, action] of seqs) {
        checked++;
        if (stored.get(seq) !== JSON.stringify(action)) lost++;
      }
    }
    const unfinished = (await store.unfinished()).length;
    const byOwner = await store.sql.query<{ owner: string; n: number }>(
      `SELECT ${MATCHES.column.owner} AS owner, count(*)::integer AS n FROM matches GROUP BY 1 ORDER BY 1`,
    );
    return {
      killed: victim.node,
      liveMatchesOnKilled: orphans,
      ...figures(run.final),
      longestStallMs: run.final.maxGapMs,
      drain: run.drained,
      acknowledgedActionsChecked: checked,
      acknowledgedActionsLost: lost,
      matchesLeftUnfinished: unfinished,
      matchesByFinalOwner: Object.fromEntries(byOwner.map((r) => [r.owner, r.n])),
    };
  } finally {
    await store.close();
  }
}

async function soak() {
  const cluster = await startCluster(PROCESSES);
  const tokens = await tokensFor(cluster);
  log(`${PROCESSES} processes, ${BOTS} bots × ${LANES} lanes, think ${THINK_MS} ms, ${SECONDS} s`);
  const run = await load(cluster.servers, tokens, { "sample-seconds": Number(values.sample) });
  await stopCluster(cluster.servers);
  const samples = run.samples as LoadReport["final"][];
  const tenth = Math.max(1, Math.floor(samples.length / 10));
  const early = samples.slice(tenth, 2 * tenth);
  const late = samples.slice(-tenth);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const rss = (ss: typeof samples, i: number) => mean(ss.map((s) => s.servers[i].rssMiB ?? NaN));
  return {
    ...figures(run.final),
    samples: samples.map((s) => ({
      acksPerSecond: s.acksPerSecond,
      matchesInPlay: s.inPlay,
      lanesWaiting: s.lanesWaiting,
      requests: s.requests,
      p99Ms: s.actToAckMs.p99Ms,
      rssMiB: s.servers.map((p) => p.rssMiB),
      errors: s.errors,
    })),
    flat: {
      what: "the last tenth of the samples against the second tenth (the first is warm-up)",
      rssMiB: cluster.servers.map((_, i) => ({
        early: round3(rss(early, i)),
        late: round3(rss(late, i)),
        ratio: round3(rss(late, i) / rss(early, i)),
      })),
      p99Ms: {
        early: round3(mean(early.map((s) => s.actToAckMs.p99Ms))),
        late: round3(mean(late.map((s) => s.actToAckMs.p99Ms))),
        ratio: round3(mean(late.map((s) => s.actToAckMs.p99Ms)) / mean(early.map((s) => s.actToAckMs.p99Ms))),
      },
      matchesInPlay: {
        early: Math.round(mean(early.map((s) => s.inPlay))),
        late: Math.round(mean(late.map((s) => s.inPlay))),
      },
    },
  };
}

await report(
  async () => ({
    bench: "cluster",
    mode: MODE,
    processes: PROCESSES,
    bots: BOTS,
    lanes: LANES,
    thinkMs: THINK_MS,
    seconds: SECONDS,
    deno: Deno.version.deno,
    cores: navigator.hardwareConcurrency,
    ...(MODE === "scaling" ? await scaling() : MODE === "kill" ? await kill() : await soak()),
  }),
  async () => {
    await processes.stopAll();
    for (const drop of drops) await drop().catch(() => {});
    Deno.removeSync(workDir, { recursive: true });
  },
);
