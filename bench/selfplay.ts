/**
 * Selfplay through the real gateway: a `ludus serve` process, and a separate load-generator process
 * (bench/selfplay/load.ts) whose bots queue in pairs and play Kuhn poker and the IPD with uniformly random
 * legal actions, answering every turn at once, match after match.
 *
 * The same-run baseline is a websocket echo server on the same stack (`ws` on node:http under Deno,
 * bench/selfplay/echo-server.ts), loaded by the same generator with the same number of sockets, each
 * sending an act-sized frame and waiting for it to come back.
 *
 * Figures per game:
 * - at peak (closed loop): actions (acks) and matches a second; act → ack round trip; server CPU per
 *   action (utime + stime of the server process over the window, from /proc) against echo CPU per round trip.
 * - at half of that peak (the generator paced to it): the step time, act sent → the next frame it caused
 *   (the opponent's `turn`, both seats' `turn` in the IPD, or `match_end`), and the echo round trip at the
 *   same rate and socket count. `serverAddedMs` = step percentile − echo percentile: the client cannot see
 *   inside the server, and the echo round trip is what the network, `ws` and the event loops cost on their
 *   own at that load, so the difference estimates what the server adds (a difference of percentiles, not a
 *   percentile of differences).
 * - at both: `queue` sent → `match_start` (`queueToStartMs`), the partner's wait included.
 * And server RSS per idle authenticated connection (a fresh server, `--idle` sockets).
 *
 * The peer: the same bots' loop through Colyseus 0.18 (bench/selfplay/colyseus-kuhn.ts, a minimal Kuhn room
 * with no store, players staying in their room hand after hand), the same generator and socket count; its
 * actions/s and server CPU per action, and Ludus's Kuhn figures against them (`colyseusPeer`).
 *
 * The server records into the embedded store in a temporary directory, or into `--database-url` (never
 * $DATABASE_URL: a bench must not leave its matches in a database someone else uses).
 *
 *   deno task bench:selfplay [--seconds 5] [--warmup 1] [--bots 64] [--idle 2000] [--database-url URL]
 * Prints one JSON object on stdout; progress goes to stderr.
 */
import { parseArgs } from "node:util";
import { createTokens } from "../test/support/tokens.ts";
import { round3 } from "./selfplay/histogram.ts";
import { ECHO_PAYLOAD, type IdleResult, type WindowResult } from "./selfplay/measurements.ts";
import { freePort, Processes, waitForHttp } from "./selfplay/processes.ts";
import { report } from "./report.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    warmup: { type: "string", default: "1" },
    bots: { type: "string", default: "64" },
    idle: { type: "string", default: "2000" },
    "database-url": { type: "string" },
  },
});
const DATABASE_URL = values["database-url"];
const SECONDS = Number(values.seconds);
const WARMUP = Number(values.warmup);
const BOTS = Number(values.bots);
const IDLE = Number(values.idle);
if (!(BOTS >= 2 && BOTS % 2 === 0)) throw new Error(`--bots must be an even number ≥ 2, got ${values.bots}`);
const GAMES = ["kuhn-poker", "ipd"];

const ROOT = new URL("..", import.meta.url).pathname;
const DENO = Deno.execPath();
const processes = new Processes();
const dataDir = Deno.makeTempDirSync({ prefix: "ludus-selfplay-" });
const tokensFile = `${dataDir}/bench-tokens.json`;
const CLOCK_TICKS = Number(
  new TextDecoder().decode(new Deno.Command("getconf", { args: ["CLK_TCK"] }).outputSync().stdout),
);

const log = (line: string) => console.error(`selfplay: ${line}`);

interface Server {
  readonly child: Deno.ChildProcess;
  readonly wsUrl: string;
  readonly healthUrl: string;
}

/** Runs an entry point of this repository with this same deno binary, in a process of its own. */
function spawnDeno(script: string, args: readonly (string | number)[], captureStdout = false): Deno.ChildProcess {
  return processes.spawn(DENO, ["run", "--quiet", "--allow-all", script, ...args.map(String)], {
    cwd: ROOT,
    captureStdout,
    env: { DATABASE_URL: "" },
  });
}

async function startLudus(): Promise<Server> {
  const port = freePort();
  // Room for the idle phase's sockets (beyond the default cap with --idle over 10,000; raise ulimit -n to match).
  const serve = [
    ...["serve", "--host", "127.0.0.1", "--port", port, "--data-dir", dataDir, "--fill-after", 0],
    ...["--max-connections", Math.max(IDLE, BOTS)],
  ];
  if (DATABASE_URL) serve.push("--database-url", DATABASE_URL);
  const child = spawnDeno("cli/main.ts", serve);
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/health`, child);
  return { child, wsUrl: `ws://127.0.0.1:${port}/bot`, healthUrl: `${url}/health` };
}

async function startEcho(): Promise<Server> {
  const port = freePort();
  const child = spawnDeno("bench/selfplay/echo-server.ts", ["--port", port]);
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(url, child);
  return { child, wsUrl: `ws://127.0.0.1:${port}`, healthUrl: url };
}

async function startColyseusPeer(): Promise<Server> {
  const port = freePort();
  const child = spawnDeno("bench/selfplay/colyseus-kuhn.ts", ["--port", port]);
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(url, child);
  return { child, wsUrl: url, healthUrl: url };
}

/** One run of the load generator against `server`. */
async function load<R>(server: Server, args: Record<string, string | number>): Promise<R> {
  const flags = Object.entries({
    url: server.wsUrl,
    "health-url": server.healthUrl,
    "server-pid": server.child.pid,
    "clock-ticks": CLOCK_TICKS,
    tokens: tokensFile,
    seconds: SECONDS,
    warmup: WARMUP,
    ...args,
  }).flatMap(([k, v]) => [`--${k}`, v]);
  const child = spawnDeno("bench/selfplay/load.ts", flags, true);
  const stdout = await processes.output(child, `the load generator (${args.mode})`, (WARMUP + SECONDS + 120) * 1000);
  return JSON.parse(stdout);
}

const perSecond = (r: WindowResult) => r.operations / r.windowSeconds;
const serverCpu = (r: WindowResult) => r.server.userSeconds + r.server.systemSeconds;
const cpuMicrosPer = (r: WindowResult) => (serverCpu(r) * 1e6) / r.operations;
const latency = (s: { p50Ms: number; p99Ms: number }) => ({ p50: s.p50Ms, p99: s.p99Ms });

/** What a closed-loop window shows: throughput, the server's CPU and system calls per operation, cores busy on each side. */
function peakFigures(r: WindowResult) {
  return {
    perSecond: Math.round(perSecond(r)),
    serverCpuMicrosPerOp: round3(cpuMicrosPer(r)),
    /** The share of that CPU spent in the kernel (socket reads and writes, mostly). */
    serverKernelShare: round3(r.server.systemSeconds / serverCpu(r)),
    serverWriteCallsPerOp: round3(r.server.writeCalls / r.operations),
    serverCoresBusy: round3(serverCpu(r) / r.windowSeconds),
    loadGeneratorCoresBusy: round3((r.client.userSeconds + r.client.systemSeconds) / r.windowSeconds),
    roundTripMs: latency(r.roundTrip),
  };
}

async function selfplay() {
  const names = Array.from({ length: BOTS }, (_, i) => `selfplay-${i}`);
  const tokens = await createTokens({ dataDir, databaseUrl: DATABASE_URL || undefined }, names, "bot", 100_000);
  Deno.writeTextFileSync(tokensFile, JSON.stringify(tokens));

  log(`echo baseline, ${BOTS} sockets, closed loop`);
  const echo = await startEcho();
  const echoPeak = await load<WindowResult>(echo, { mode: "echo", connections: BOTS });
  const echoFigures = peakFigures(echoPeak);
  log(`echo: ${echoFigures.perSecond} round trips/s, ${echoFigures.serverCpuMicrosPerOp} µs CPU each`);

  const ludus = await startLudus();
  const results = [];
  for (const game of GAMES) {
    log(`${game}: ${BOTS} bots, closed loop`);
    const peak = await load<WindowResult>(ludus, { mode: "play", game, connections: BOTS });
    if (peak.operations === 0) throw new Error(`${game}: no action was acknowledged`);
    const half = Math.round(perSecond(peak) / 2);
    log(`${game}: ${Math.round(perSecond(peak))} actions/s; now paced to ${half}/s, then echo at the same rate`);
    const paced = await load<WindowResult>(ludus, { mode: "play", game, connections: BOTS, rate: half });
    const echoPaced = await load<WindowResult>(echo, { mode: "echo", connections: BOTS, rate: half });
    const figures = peakFigures(peak);
    results.push({
      game,
      peak: {
        actionsPerSecond: figures.perSecond,
        matchesPerSecond: Math.round(peak.matches / peak.windowSeconds),
        serverCpuMicrosPerAction: figures.serverCpuMicrosPerOp,
        serverKernelShare: figures.serverKernelShare,
        serverWriteCallsPerAction: figures.serverWriteCallsPerOp,
        serverRssAfterMiB: round3(peak.serverRssKiB / 1024),
        serverCoresBusy: figures.serverCoresBusy,
        loadGeneratorCoresBusy: figures.loadGeneratorCoresBusy,
        actRoundTripMs: figures.roundTripMs,
        stepMs: latency(peak.step!),
        queueToStartMs: latency(peak.start!),
        errors: peak.errors,
      },
      halfLoad: {
        targetActionsPerSecond: half,
        actionsPerSecond: Math.round(perSecond(paced)),
        actRoundTripMs: latency(paced.roundTrip),
        stepMs: latency(paced.step!),
        queueToStartMs: latency(paced.start!),
        echoRoundTripMs: latency(echoPaced.roundTrip),
        serverAddedMs: {
          p50: round3(paced.step!.p50Ms - echoPaced.roundTrip.p50Ms),
          p99: round3(paced.step!.p99Ms - echoPaced.roundTrip.p99Ms),
        },
        errors: paced.errors,
      },
      vsEcho: {
        serverCpuPerAction: round3(cpuMicrosPer(peak) / cpuMicrosPer(echoPeak)),
        throughput: round3(perSecond(peak) / perSecond(echoPeak)),
      },
    });
  }
  await processes.stop(ludus.child);
  await processes.stop(echo.child);

  log(`the Colyseus peer: ${BOTS} players in Kuhn rooms, closed loop`);
  const peer = await startColyseusPeer();
  const peerPeak = await load<WindowResult>(peer, { mode: "colyseus", connections: BOTS });
  await processes.stop(peer.child);
  if (peerPeak.operations === 0) throw new Error("the Colyseus peer acknowledged no action");
  const peerFigures = peakFigures(peerPeak);
  const kuhn = results.find((r) => r.game === "kuhn-poker");
  log(`the Colyseus peer: ${peerFigures.perSecond} actions/s, ${peerFigures.serverCpuMicrosPerOp} µs CPU each`);

  log(`idle: ${IDLE} authenticated sockets on a fresh server`);
  const fresh = await startLudus();
  const idle = await load<IdleResult>(fresh, { mode: "idle", connections: IDLE });
  await processes.stop(fresh.child);

  return {
    bench: "selfplay",
    seconds: SECONDS,
    warmupSeconds: WARMUP,
    bots: BOTS,
    store: DATABASE_URL ? "postgres" : "pglite",
    deno: Deno.version.deno,
    cores: navigator.hardwareConcurrency,
    clockTicksPerSecond: CLOCK_TICKS,
    echo: {
      frameBytes: ECHO_PAYLOAD.length,
      roundTripsPerSecond: echoFigures.perSecond,
      serverCpuMicrosPerRoundTrip: echoFigures.serverCpuMicrosPerOp,
      serverKernelShare: echoFigures.serverKernelShare,
      serverWriteCallsPerRoundTrip: echoFigures.serverWriteCallsPerOp,
      serverCoresBusy: echoFigures.serverCoresBusy,
      loadGeneratorCoresBusy: echoFigures.loadGeneratorCoresBusy,
      roundTripMs: echoFigures.roundTripMs,
    },
    results,
    colyseusPeer: {
      what: "a minimal Kuhn room on Colyseus 0.18, no store: players stay in their room, hand after hand",
      actionsPerSecond: peerFigures.perSecond,
      matchesPerSecond: Math.round(peerPeak.matches / peerPeak.windowSeconds),
      serverCpuMicrosPerAction: peerFigures.serverCpuMicrosPerOp,
      serverWriteCallsPerAction: peerFigures.serverWriteCallsPerOp,
      serverCoresBusy: peerFigures.serverCoresBusy,
      actRoundTripMs: peerFigures.roundTripMs,
      errors: peerPeak.errors,
      vsEcho: { serverCpuPerAction: round3(cpuMicrosPer(peerPeak) / cpuMicrosPer(echoPeak)) },
      /** Ludus's gateway (Kuhn, with its store) against the peer: actions/s ÷ the peer's, CPU per action ÷ the peer's. */
      ludusKuhnVsPeer: kuhn && {
        throughput: round3(kuhn.peak.actionsPerSecond / peerFigures.perSecond),
        serverCpuPerAction: round3(kuhn.peak.serverCpuMicrosPerAction / peerFigures.serverCpuMicrosPerOp),
      },
    },
    idle: {
      connections: IDLE,
      held: idle.welcomed === IDLE && idle.stillOpen === IDLE && idle.serverConnections === IDLE,
      welcomed: idle.welcomed,
      stillOpen: idle.stillOpen,
      serverConnections: idle.serverConnections,
      failed: idle.failed,
      firstFailure: idle.firstFailure,
      openSeconds: round3(idle.openSeconds),
      serverRssBeforeMiB: round3(idle.rssBeforeKiB / 1024),
      serverRssAfterMiB: round3(idle.rssAfterKiB / 1024),
      serverKiBPerConnection: round3((idle.rssAfterKiB - idle.rssBeforeKiB) / Math.max(1, idle.welcomed)),
      serverOpenFileLimit: idle.serverOpenFileLimit,
      loadGeneratorOpenFileLimit: idle.clientOpenFileLimit,
    },
  };
}

await report(
  selfplay,
  () => processes.stopAll().then(() => Deno.removeSync(dataDir, { recursive: true })),
);
