/**
 * The browser path: people playing private matches in the Colyseus rooms, as the web app does it
 * (web/src/session.ts), with no browser: `@colyseus/sdk` under Deno in this process, against a
 * `ludus serve` process of its own (the embedded replay store in a temporary directory, or PostgreSQL at
 * `--database-url`, never $DATABASE_URL; every step is journaled before a page sees it). Each of `--clients` simulated people (one SDK `Client` each) creates a private match of Kuhn
 * poker or the IPD against the built-in `random` strategy (`client.create(game, {opponents: {"1":
 * "strategy:random"}, seat: 0})`), answers each `turn` at once with a uniformly random legal `act`, leaves
 * the room at `match_end` and creates the next match, for `--warmup` and then `--seconds` counted seconds.
 * The SDK decodes the synchronised room state as a page's does; nothing is drawn.
 *
 * Figures per game and client count: moves/s (the person's acts acknowledged), matches/s, and latency
 * percentiles (p50/p90/p99) of
 * - the step: act sent → the next frame it led to for that person (the next `turn`, or `match_end`), which
 *   includes the built-in's answer and the journal write;
 * - the ack: act sent → its `ack`;
 * - joining: `client.create` called → resolved (a matchmaking POST, a websocket, the join).
 * And the server's CPU per move and per match (utime + stime from /proc over the window; a match also
 * costs a room, its matchmaking and its records).
 *
 * The same-run baseline is a websocket echo server (bench/selfplay/echo-server.ts, `ws` on node:http
 * under Deno like the server's Colyseus transport) in a process of its own, driven from this process with
 * the same WebSocket class the SDK uses here and the same number of sockets, each sending the exact bytes
 * the SDK sends for an act (a binary frame) and waiting for them to come back. `vsEcho` = step (and ack)
 * percentile ÷ echo round-trip percentile, moves/s ÷ echo round trips/s, and server CPU per move ÷ echo
 * server CPU per round trip.
 *
 *   deno task bench:rooms [--seconds 4] [--warmup 1] [--clients 1,16] [--database-url URL]
 * Prints one JSON object on stdout; progress goes to stderr.
 */
import { Client, Room } from "@colyseus/sdk";
import { parseArgs } from "node:util";
import { randomAction } from "../clients/sdk/index.ts";
import type { TurnFrame } from "../protocol/frames.ts";
import { Histogram, round3 } from "./selfplay/histogram.ts";
import { processCounters, usageBetween } from "./selfplay/proc.ts";
import { freePort, Processes, waitForHttp } from "./selfplay/processes.ts";
import { report } from "./report.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "4" },
    warmup: { type: "string", default: "1" },
    clients: { type: "string", default: "1,16" },
    "database-url": { type: "string" },
  },
});
const DATABASE_URL = values["database-url"];

function positiveFlag(name: string, value: string, whole: boolean): number {
  const n = Number(value);
  if (!(n > 0) || (whole && !Number.isInteger(n))) {
    throw new Error(`--${name} must be a positive ${whole ? "whole " : ""}number, got ${value}`);
  }
  return n;
}

const SECONDS = positiveFlag("seconds", values.seconds, false);
const WARMUP = values.warmup === "0" ? 0 : positiveFlag("warmup", values.warmup, false);
const CLIENTS = values.clients.split(",").map((c) => positiveFlag("clients", c.trim(), true));
const GAMES = ["kuhn-poker", "ipd"];
const OPPONENT = "random";

const ROOT = new URL("..", import.meta.url).pathname;
const processes = new Processes();
const dataDir = Deno.makeTempDirSync({ prefix: "ludus-browser-rooms-" });
const CLOCK_TICKS = Number(
  new TextDecoder().decode(new Deno.Command("getconf", { args: ["CLK_TCK"] }).outputSync().stdout),
);

const log = (line: string) => console.error(`browser-rooms: ${line}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The bytes a page sends for an act, from the SDK's own encoder (a room that is never connected). */
function actFrame(): Uint8Array {
  let frame: Uint8Array | undefined;
  const probe = new Room("act-size");
  (probe as unknown as { connection: unknown }).connection = {
    isOpen: true,
    send: (data: Uint8Array) => (frame = data.slice()),
  };
  probe.send("act", { seq: 17, action: "cooperate" });
  return frame!;
}
const ACT_FRAME = actFrame();

interface Server {
  readonly child: Deno.ChildProcess;
  readonly url: string;
}

/** Runs an entry point of this repository with this same deno binary, in a process of its own, once it answers HTTP. */
async function startServer(script: string, args: readonly (string | number)[]): Promise<Server> {
  const port = freePort();
  const child = processes.spawn(
    Deno.execPath(),
    ["run", "--quiet", "--allow-all", script, ...args.map(String), "--port", String(port)],
    { cwd: ROOT, env: { DATABASE_URL: "" } },
  );
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(script === "cli/main.ts" ? `${url}/health` : url, child);
  return { child, url };
}

type Percentiles = { p50: number; p90: number; p99: number };
const percentiles = (h: Histogram): Percentiles => ({
  p50: round3(h.percentile(50)),
  p90: round3(h.percentile(90)),
  p99: round3(h.percentile(99)),
});
const ratios = (a: Percentiles, b: Percentiles): Percentiles => ({
  p50: round3(a.p50 / b.p50),
  p90: round3(a.p90 / b.p90),
  p99: round3(a.p99 / b.p99),
});

/** What one load sees: counts and latencies, recorded only inside the counted window. */
class Window {
  measuring = false;
  /** Set once the window is over: each client finishes what it is doing and stops. */
  stopping = false;
  operations = 0;
  matches = 0;
  errors = 0;
  readonly roundTrip = new Histogram();
  readonly step = new Histogram();
  readonly join = new Histogram();

  /** Waits out the warmup, counts for `SECONDS`; returns the window's length and the server's CPU seconds in it. */
  async run(serverPid: number): Promise<{ seconds: number; serverCpuSeconds: number }> {
    await sleep(WARMUP * 1000);
    const before = processCounters(serverPid), t0 = performance.now();
    this.measuring = true;
    await sleep(SECONDS * 1000);
    this.measuring = false;
    this.stopping = true;
    const used = usageBetween(before, processCounters(serverPid), CLOCK_TICKS);
    return { seconds: (performance.now() - t0) / 1000, serverCpuSeconds: used.userSeconds + used.systemSeconds };
  }
}

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.binaryType = "arraybuffer";
    socket.onopen = () => resolve(socket);
    socket.onerror = (event) => reject(new Error((event as ErrorEvent).message || "websocket error"));
  });
}

/** `clients` sockets, each sending the act's bytes and sending them again as soon as they come back. */
async function echo(server: Server, clients: number) {
  const window = new Window();
  const sockets = await Promise.all(Array.from({ length: clients }, () => open(server.url.replace(/^http/, "ws"))));
  for (const socket of sockets) {
    let sentAt = performance.now();
    socket.onmessage = () => {
      const now = performance.now();
      if (window.measuring) {
        window.operations++;
        window.roundTrip.record(now - sentAt);
      }
      if (window.stopping) return socket.close();
      sentAt = performance.now();
      socket.send(ACT_FRAME);
    };
    socket.send(ACT_FRAME);
  }
  const { seconds, serverCpuSeconds } = await window.run(server.child.pid);
  return {
    clients,
    roundTripsPerSecond: Math.round(window.operations / seconds),
    roundTripMs: percentiles(window.roundTrip),
    serverCpuMicrosPerRoundTrip: round3((serverCpuSeconds * 1e6) / window.operations),
  };
}

let errorsShown = 0;

/** One match in a fresh room, played to its end; resolves at `match_end`. */
function playOne(room: Room, window: Window): Promise<void> {
  return new Promise((resolve, reject) => {
    /** When the last act went out, while its step is open. */
    let stepFrom: number | undefined;
    let sentAt = 0, sentSeq = -1;
    const stepDone = (now: number) => {
      if (stepFrom !== undefined && window.measuring) window.step.record(now - stepFrom);
      stepFrom = undefined;
    };
    room.onMessage("turn", (turn: TurnFrame) => {
      stepDone(performance.now());
      sentAt = stepFrom = performance.now();
      sentSeq = turn.seq;
      room.send("act", { seq: turn.seq, action: randomAction(turn.legal) });
    });
    room.onMessage("ack", (ack: { seq: number }) => {
      const now = performance.now();
      if (ack.seq !== sentSeq || !window.measuring) return;
      window.operations++;
      window.roundTrip.record(now - sentAt);
    });
    room.onMessage("match_end", () => {
      stepDone(performance.now());
      if (window.measuring) window.matches++;
      resolve();
    });
    room.onMessage("error", (error: unknown) => {
      if (window.measuring) window.errors++;
      if (errorsShown++ < 5) log(`error message ${JSON.stringify(error)}`);
    });
    room.onMessage("*", () => {}); // match_start, created, view: a page draws them; here they are only decoded
    room.onLeave((code: number) => reject(new Error(`the room closed (${code}) before the match ended`)));
  });
}

/** `clients` people, each creating and playing matches of `game` one after another. */
async function rooms(server: Server, game: string, clients: number) {
  const window = new Window();
  const person = async (i: number) => {
    const client = new Client(server.url);
    while (!window.stopping) {
      const asked = performance.now();
      const room = await client.create(game, {
        name: `bench-${i}`,
        seat: 0,
        opponents: { "1": `strategy:${OPPONENT}` },
      });
      if (window.measuring) window.join.record(performance.now() - asked);
      await playOne(room, window);
      await room.leave(true);
    }
  };
  const people = Promise.all(Array.from({ length: clients }, (_, i) => person(i)));
  const { seconds, serverCpuSeconds } = await window.run(server.child.pid);
  await people;
  if (window.operations === 0) throw new Error(`${game}: no act was acknowledged`);
  return {
    clients,
    movesPerSecond: Math.round(window.operations / seconds),
    matchesPerSecond: round3(window.matches / seconds),
    stepMs: percentiles(window.step),
    ackMs: percentiles(window.roundTrip),
    joinMs: percentiles(window.join),
    serverCpuMicrosPerMove: round3((serverCpuSeconds * 1e6) / window.operations),
    serverCpuMicrosPerMatch: round3((serverCpuSeconds * 1e6) / window.matches),
    errors: window.errors,
  };
}

async function bench() {
  // Every simulated person opens matches from this one address, as fast as they end.
  const ludus = await startServer("cli/main.ts", [
    "serve",
    "--host",
    "127.0.0.1",
    "--data-dir",
    dataDir,
    "--room-creates",
    100_000,
    ...(DATABASE_URL ? ["--database-url", DATABASE_URL] : []),
  ]);
  const echoServer = await startServer("bench/selfplay/echo-server.ts", []);
  const echoes = [];
  const results = GAMES.map((game) => ({ game, runs: [] as unknown[] }));
  for (const clients of CLIENTS) {
    log(`echo baseline ×${clients}`);
    const baseline = await echo(echoServer, clients);
    echoes.push(baseline);
    log(`echo ×${clients}: ${baseline.roundTripsPerSecond} round trips/s, p50 ${baseline.roundTripMs.p50} ms`);
    for (const result of results) {
      const run = await rooms(ludus, result.game, clients);
      log(
        `${result.game} ×${clients}: ${run.movesPerSecond} moves/s, ${run.matchesPerSecond} matches/s, ` +
          `step p50 ${run.stepMs.p50} ms`,
      );
      result.runs.push({
        ...run,
        vsEcho: {
          step: ratios(run.stepMs, baseline.roundTripMs),
          ack: ratios(run.ackMs, baseline.roundTripMs),
          throughput: round3(run.movesPerSecond / baseline.roundTripsPerSecond),
          serverCpuPerMove: round3(run.serverCpuMicrosPerMove / baseline.serverCpuMicrosPerRoundTrip),
        },
      });
    }
  }
  return {
    bench: "browser-rooms",
    seconds: SECONDS,
    warmupSeconds: WARMUP,
    clients: CLIENTS,
    opponent: OPPONENT,
    store: DATABASE_URL ? "postgres" : "pglite",
    deno: Deno.version.deno,
    cores: navigator.hardwareConcurrency,
    actFrameBytes: ACT_FRAME.length,
    echo: echoes,
    results,
  };
}

await report(
  bench,
  () => processes.stopAll().then(() => Deno.removeSync(dataDir, { recursive: true })),
);
// The SDK's clients can keep timers or connections that hold the process open after their rooms are left.
Deno.exit(0);
