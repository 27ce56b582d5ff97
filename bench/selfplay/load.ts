/**
 * The selfplay bench's load generator, a process apart from the server it loads. One measurement per
 * run, printed as one JSON line on stdout:
 *
 *   --mode play  --game G: `--connections` bots (one token each) queue for G, play uniformly random
 *                legal actions the moment a turn arrives, and queue again when a match ends.
 *   --mode echo: `--connections` sockets each send an act-sized frame and wait for it to come back.
 *   --mode idle: opens `--connections` authenticated sockets that do nothing, and reads the server's RSS.
 *   --mode colyseus: `--connections` players (`@colyseus/sdk` clients) join the Colyseus peer's Kuhn rooms
 *                (bench/selfplay/colyseus-kuhn.ts) in pairs and play hand after hand as the bots above do.
 *
 * `--rate R` paces sends to R a second in total (default: as fast as answers come). Counting starts after
 * `--warmup` seconds and lasts `--seconds`; the CPU time and write calls of the server (`--server-pid`) and of
 * this process are read around it.
 */
import { Client } from "@colyseus/sdk";
import { parseArgs } from "node:util";
import type { ServerFrame, TurnFrame } from "../../protocol/frames.ts";
import { Histogram } from "./histogram.ts";
import { ECHO_PAYLOAD, type IdleResult, type WindowResult } from "./measurements.ts";
import { Pacer } from "./pacer.ts";
import { openFileLimit, processCounters, rssKiB, usageBetween } from "./proc.ts";

const { values } = parseArgs({
  options: {
    mode: { type: "string" },
    url: { type: "string" },
    "health-url": { type: "string" },
    tokens: { type: "string" },
    game: { type: "string" },
    connections: { type: "string", default: "64" },
    rate: { type: "string" },
    seconds: { type: "string", default: "5" },
    warmup: { type: "string", default: "1" },
    "server-pid": { type: "string" },
    "clock-ticks": { type: "string", default: "100" },
  },
});

const SERVER_URL = values.url!;
const CONNECTIONS = Number(values.connections);
const RATE = values.rate === undefined ? undefined : Number(values.rate);
const SECONDS = Number(values.seconds);
const WARMUP = Number(values.warmup);
const SERVER_PID = Number(values["server-pid"]);
const CLOCK_TICKS = Number(values["clock-ticks"]);
const TOKENS: string[] = values.tokens ? JSON.parse(Deno.readTextFileSync(values.tokens)) : [];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.onopen = () => resolve(socket);
    socket.onerror = (event) => reject(new Error((event as ErrorEvent).message || "websocket error"));
  });
}

/** Counters and latencies of the current window; samples before `measuring` is set are dropped. */
class Window {
  measuring = false;
  operations = 0;
  matches = 0;
  errors = 0;
  readonly roundTrip = new Histogram();
  readonly step = new Histogram();
  readonly start = new Histogram();

  /** Runs the warmup, then the counted window; returns what it saw. */
  async run(hasSteps: boolean): Promise<WindowResult> {
    await sleep(WARMUP * 1000);
    this.operations = this.matches = this.errors = 0;
    this.roundTrip.reset();
    this.step.reset();
    this.start.reset();
    const server0 = processCounters(SERVER_PID), client0 = processCounters(Deno.pid), t0 = performance.now();
    this.measuring = true;
    await sleep(SECONDS * 1000);
    this.measuring = false;
    const server1 = processCounters(SERVER_PID), client1 = processCounters(Deno.pid), t1 = performance.now();
    const start = this.start.summary();
    return {
      windowSeconds: (t1 - t0) / 1000,
      operations: this.operations,
      matches: this.matches,
      errors: this.errors,
      roundTrip: this.roundTrip.summary(),
      step: hasSteps ? this.step.summary() : null,
      start: start.samples > 0 ? start : null, // none: echo, and the peer's rooms, which outlive their hands
      server: usageBetween(server0, server1, CLOCK_TICKS),
      client: usageBetween(client0, client1, CLOCK_TICKS),
      serverRssKiB: rssKiB(SERVER_PID),
    };
  }
}

/** A uniformly random fixed form; IPD and Kuhn poker offer nothing else. */
function randomAction(turn: TurnFrame): unknown {
  const fixed = (turn.legal as { kind: string; action?: unknown }[]).filter((f) => f.kind === "fixed");
  if (fixed.length === 0) throw new Error(`no fixed action among ${turn.legalText}`);
  return fixed[Math.floor(Math.random() * fixed.length)].action;
}

async function play(game: string): Promise<WindowResult> {
  const window = new Window();
  const pacer = new Pacer(RATE);
  /** When the last act of each match's open step was sent. */
  const stepStarted = new Map<string, number>();
  const queue = JSON.stringify({ type: "queue", game });
  let errorsShown = 0;

  const stepDone = (match: string, now: number) => {
    const started = stepStarted.get(match);
    if (started === undefined) return;
    stepStarted.delete(match);
    if (window.measuring) window.step.record(now - started);
  };

  const startBot = async (token: string) => {
    const socket = await open(SERVER_URL);
    let sentAt = 0, sentSeq = -1, queuedAt = 0;
    const enqueue = () => {
      queuedAt = performance.now();
      socket.send(queue);
    };
    socket.onmessage = (event) => {
      const now = performance.now();
      const frame = JSON.parse(event.data) as ServerFrame;
      switch (frame.type) {
        case "welcome":
          return enqueue();
        case "match_start":
          if (window.measuring) window.start.record(now - queuedAt);
          return;
        case "turn":
          stepDone(frame.match, now);
          return pacer.submit(() => {
            sentAt = performance.now();
            sentSeq = frame.seq;
            stepStarted.set(frame.match, sentAt);
            socket.send(
              JSON.stringify({ type: "act", match: frame.match, seq: frame.seq, action: randomAction(frame) }),
            );
          });
        case "ack":
          if (frame.seq !== sentSeq || !window.measuring) return;
          window.operations++;
          return window.roundTrip.record(now - sentAt);
        case "match_end":
          stepDone(frame.match, now);
          if (frame.seat === 0 && window.measuring) window.matches++;
          return enqueue();
        case "error":
          if (window.measuring) window.errors++;
          if (errorsShown++ < 5) console.error(`selfplay load: error frame ${JSON.stringify(frame)}`);
      }
    };
    socket.send(JSON.stringify({ type: "auth", token }));
  };

  if (TOKENS.length < CONNECTIONS) throw new Error(`${CONNECTIONS} bots need ${CONNECTIONS} tokens`);
  await Promise.all(TOKENS.slice(0, CONNECTIONS).map(startBot));
  const result = await window.run(true);
  pacer.stop();
  return result;
}

/** The same loop against the Colyseus peer: a room per pair of players, a hand per match. */
async function colyseus(): Promise<WindowResult> {
  const window = new Window();
  const pacer = new Pacer(RATE);
  const client = new Client(SERVER_URL);
  let errorsShown = 0;
  const startPlayer = async () => {
    const room = await client.joinOrCreate("kuhn");
    let sentAt = 0, sentSeq = -1, stepStarted: number | undefined;
    const stepDone = (now: number) => {
      if (stepStarted !== undefined && window.measuring) window.step.record(now - stepStarted);
      stepStarted = undefined;
    };
    room.onMessage("match_start", () => {});
    room.onMessage("turn", (turn: TurnFrame) => {
      stepDone(performance.now());
      pacer.submit(() => {
        stepStarted = sentAt = performance.now();
        sentSeq = turn.seq;
        room.send("act", { seq: turn.seq, action: randomAction(turn) });
      });
    });
    room.onMessage("ack", (ack: { seq: number }) => {
      if (ack.seq !== sentSeq || !window.measuring) return;
      window.operations++;
      window.roundTrip.record(performance.now() - sentAt);
    });
    room.onMessage("match_end", (end: { seat: number }) => {
      stepDone(performance.now());
      if (end.seat === 0 && window.measuring) window.matches++;
      room.send("again");
    });
    room.onMessage("error", (error: unknown) => {
      if (window.measuring) window.errors++;
      if (errorsShown++ < 5) console.error(`selfplay load: error message ${JSON.stringify(error)}`);
    });
  };
  // One at a time, so that players pair up in join order and every room fills.
  for (let i = 0; i < CONNECTIONS; i++) await startPlayer();
  const result = await window.run(true);
  pacer.stop();
  return result;
}

async function echo(): Promise<WindowResult> {
  const window = new Window();
  const pacer = new Pacer(RATE);
  const startSocket = async () => {
    const socket = await open(SERVER_URL);
    let sentAt = 0;
    const send = () => {
      sentAt = performance.now();
      socket.send(ECHO_PAYLOAD);
    };
    socket.onmessage = () => {
      if (window.measuring) {
        window.operations++;
        window.roundTrip.record(performance.now() - sentAt);
      }
      pacer.submit(send);
    };
    pacer.submit(send);
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, startSocket));
  const result = await window.run(false);
  pacer.stop();
  return result;
}

/** Opens authenticated sockets a few hundred at a time and keeps them; RSS is read before and after. */
async function idle(): Promise<IdleResult> {
  const token = TOKENS[0];
  const sockets: WebSocket[] = [];
  let failed = 0;
  let firstFailure: string | null = null;
  const rssBeforeKiB = rssKiB(SERVER_PID);
  const started = performance.now();
  const connectOne = async () => {
    try {
      const socket = await open(SERVER_URL);
      await new Promise<void>((resolve, reject) => {
        socket.onmessage = (event) => {
          const frame = JSON.parse(event.data) as ServerFrame;
          if (frame.type === "welcome") resolve();
          else reject(new Error(`expected welcome, got ${event.data}`));
        };
        socket.onclose = () => reject(new Error("closed before welcome"));
        socket.send(JSON.stringify({ type: "auth", token }));
      });
      socket.onmessage = socket.onclose = null;
      sockets.push(socket);
    } catch (error) {
      failed++;
      firstFailure ??= (error as Error).message;
    }
  };
  for (let done = 0; done < CONNECTIONS;) {
    const wave = Math.min(256, CONNECTIONS - done);
    await Promise.all(Array.from({ length: wave }, connectOne));
    done += wave;
  }
  const openSeconds = (performance.now() - started) / 1000;
  await sleep(1000);
  const health = await (await fetch(values["health-url"]!)).json();
  return {
    requested: CONNECTIONS,
    welcomed: sockets.length,
    failed,
    firstFailure,
    openSeconds,
    stillOpen: sockets.filter((s) => s.readyState === WebSocket.OPEN).length,
    serverConnections: health.botConnections,
    rssBeforeKiB,
    rssAfterKiB: rssKiB(SERVER_PID),
    serverOpenFileLimit: openFileLimit(SERVER_PID),
    clientOpenFileLimit: openFileLimit(Deno.pid),
  };
}

if (import.meta.main) {
  const result = values.mode === "play"
    ? await play(values.game!)
    : values.mode === "echo"
    ? await echo()
    : values.mode === "idle"
    ? await idle()
    : values.mode === "colyseus"
    ? await colyseus()
    : undefined;
  if (!result) throw new Error(`--mode is play, echo, idle or colyseus; got ${values.mode}`);
  console.log(JSON.stringify(result));
  Deno.exit(0);
}
