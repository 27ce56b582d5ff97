/**
 * The cluster bench's load generator (bench/cluster.ts), a process apart from the servers it loads. Bots (a token
 * each, `--bots` of the tokens file's, all by default) are spread round robin over the cluster's processes (`--urls`); each keeps `--lanes` matches going, one
 * after another, of the kinds `--mix` names in turn: `queue:<game>` (the public queue, where bots of every process
 * meet: a match's seats are often on two processes) or `create:<game>` (a private match against a built-in). A turn
 * is answered with a uniformly random legal action after `--think-ms` (0: at once). As docs/protocol.md says, a bot
 * whose connection drops (its process killed) connects to another process, resumes every match `welcome` lists and
 * every one it knows unfinished, and sends again every act it saw no ack for.
 *
 * It prints one JSON line a `--sample-seconds` (a soak's series) and one at the end, each with: acks and matches in
 * that period, act → ack percentiles, the largest gap between two acks of one match (a kill's stall), matches in
 * play, errors, and each server process's CPU and RSS (`--server-pids`). With `--drain`, after `--seconds` it starts
 * nothing new and waits for its matches to end; `--acked FILE` then gets every acknowledged (match, seq, action).
 */
import { parseArgs } from "node:util";
import type { ClientFrame, ServerFrame, TurnFrame } from "../../protocol/frames.ts";
import { Histogram, round3 } from "../selfplay/histogram.ts";
import { processCounters, rssKiB, usageBetween } from "../selfplay/proc.ts";

const { values } = parseArgs({
  options: {
    urls: { type: "string" },
    tokens: { type: "string" },
    bots: { type: "string" },
    lanes: { type: "string", default: "4" },
    mix: { type: "string", default: "queue:kuhn-poker,create:kuhn-poker,queue:ipd,create:ipd" },
    "think-ms": { type: "string", default: "0" },
    seconds: { type: "string", default: "10" },
    warmup: { type: "string", default: "2" },
    "sample-seconds": { type: "string" },
    "server-pids": { type: "string", default: "" },
    "clock-ticks": { type: "string", default: "100" },
    drain: { type: "boolean", default: false },
    acked: { type: "string" },
  },
});

const URLS = values.urls!.split(",");
const TOKENS: string[] = JSON.parse(Deno.readTextFileSync(values.tokens!)).slice(0, values.bots && Number(values.bots));
const LANES = Number(values.lanes);
const THINK_MS = Number(values["think-ms"]);
const SECONDS = Number(values.seconds);
const WARMUP = Number(values.warmup);
const SAMPLE_S = values["sample-seconds"] ? Number(values["sample-seconds"]) : undefined;
const CLOCK_TICKS = Number(values["clock-ticks"]);
/** The server processes now (a killed one's pid stays listed; it reads as gone). */
const PIDS = values["server-pids"] ? values["server-pids"].split(",").map(Number) : [];
const MIX: ClientFrame[] = values.mix!.split(",").map((kind) => {
  const [how, game] = kind.split(":");
  if (how === "queue") return { type: "queue", game };
  if (how === "create") return { type: "create", game, opponents: { 1: "strategy:random" } };
  throw new Error(`--mix takes queue:<game> and create:<game>, not ${kind}`);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A uniformly random fixed form: IPD and Kuhn poker offer nothing else. */
function randomAction(turn: TurnFrame): unknown {
  const fixed = (turn.legal as { kind: string; action?: unknown }[]).filter((f) => f.kind === "fixed");
  return fixed[Math.floor(Math.random() * fixed.length)].action;
}

/** What one period saw. */
class Period {
  acks = 0;
  matches = 0;
  errors = 0;
  readonly ack = new Histogram();
  /** The largest gap between two acks of one match that ended in this period. */
  maxGapMs = 0;
  readonly startedAt = performance.now();
}

/**
 * Requests a lane made, by kind, and how far each got: answered (`created`, `queued`) and started (`match_start`).
 * A lane whose request stops short of its start stays busy for good: these say where.
 */
const requests = {
  create: { sent: 0, answered: 0, started: 0 },
  queue: { sent: 0, answered: 0, started: 0 },
};

/** What is being counted: the whole run, and the current sample of a soak. */
let counting: Period[] = [];
let draining = false;
/** Every acknowledged action, by match then seq (for the store to be checked against, with --acked). */
const acked = new Map<string, Map<number, unknown>>();
const errorsShown = new Set<string>();

class Bot {
  private socket?: WebSocket;
  private lanesBusy = 0;
  private next = 0;
  /** Matches in play (a bot holds one seat of each), with when it last saw an ack there. */
  readonly playing = new Map<string, { lastAck: number }>();
  private readonly unacked = new Map<string, { match: string; seq: number; action: unknown; at: number }>();
  /** Matches this bot created, until they start. */
  private readonly created = new Set<string>();
  /** Matches `welcome` listed that were not in play here: resumed after a reconnect, not a lane's request. */
  private readonly reconnected = new Set<string>();
  private url = 0;

  constructor(private readonly token: string, home: number) {
    this.url = home;
  }

  connect(): void {
    const socket = new WebSocket(URLS[this.url % URLS.length]);
    this.socket = socket;
    socket.onopen = () => socket.send(JSON.stringify({ type: "auth", token: this.token }));
    socket.onmessage = (event) => this.receive(JSON.parse(event.data) as ServerFrame);
    socket.onerror = () => {};
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.lanesBusy = 0; // a create or queue in flight is lost; if it became a match, `welcome` lists it
      this.url++; // the next process: this one may be gone
      setTimeout(() => this.connect(), 100);
    };
  }

  /** Lanes whose request has not become a match yet. */
  get waiting(): number {
    return this.lanesBusy;
  }

  get done(): boolean {
    return this.playing.size === 0;
  }

  private send(frame: ClientFrame): void {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(frame));
  }

  private fill(): void {
    while (!draining && this.lanesBusy + this.playing.size < LANES) {
      this.lanesBusy++;
      const frame = MIX[this.next++ % MIX.length];
      requests[frame.type === "queue" ? "queue" : "create"].sent++;
      this.send(frame);
    }
  }

  private receive(frame: ServerFrame): void {
    const now = performance.now();
    switch (frame.type) {
      case "welcome":
        for (const match of frame.matches) if (!this.playing.has(match)) this.reconnected.add(match);
        for (const match of new Set([...frame.matches, ...this.playing.keys()])) this.send({ type: "resume", match });
        return this.fill();
      case "created":
        requests.create.answered++;
        this.created.add(frame.match);
        return;
      case "queued":
        requests.queue.answered++;
        return;
      case "match_start": {
        // A request's match may come as `resumed` too: its process lost its lease before the first `match_start`.
        if (!this.playing.has(frame.match) && !this.reconnected.delete(frame.match)) {
          this.lanesBusy = Math.max(0, this.lanesBusy - 1);
          requests[this.created.delete(frame.match) ? "create" : "queue"].started++;
        }
        if (!this.playing.has(frame.match)) this.playing.set(frame.match, { lastAck: now });
        for (const pending of this.unacked.values()) {
          if (pending.match === frame.match) {
            this.send({ type: "act", match: pending.match, seq: pending.seq, action: pending.action });
          }
        }
        return;
      }
      case "turn": {
        const action = randomAction(frame);
        const key = `${frame.match}/${frame.seq}`;
        const act = () => {
          this.unacked.set(key, { match: frame.match, seq: frame.seq, action, at: performance.now() });
          this.send({ type: "act", match: frame.match, seq: frame.seq, action });
        };
        if (THINK_MS > 0) setTimeout(act, THINK_MS * (0.5 + Math.random()));
        else act();
        return;
      }
      case "ack": {
        const key = `${frame.match}/${frame.seq}`;
        const sent = this.unacked.get(key);
        this.unacked.delete(key);
        const state = this.playing.get(frame.match);
        if (state) {
          for (const p of counting) p.maxGapMs = Math.max(p.maxGapMs, now - state.lastAck);
          state.lastAck = now;
        }
        if (values.acked) {
          let seqs = acked.get(frame.match);
          if (!seqs) acked.set(frame.match, seqs = new Map());
          seqs.set(frame.seq, frame.action);
        }
        if (frame.duplicate) return;
        for (const p of counting) {
          p.acks++;
          if (sent) p.ack.record(now - sent.at);
        }
        return;
      }
      case "match_end": {
        this.playing.delete(frame.match);
        this.reconnected.delete(frame.match);
        for (const key of [...this.unacked.keys()]) if (key.startsWith(`${frame.match}/`)) this.unacked.delete(key);
        // Seat 0's end counts the match once (a queue match has a bot in each seat; a created one is seat 0's).
        if (frame.seat === 0) { for (const p of counting) p.matches++; }
        return this.fill();
      }
      case "error": {
        // docs/protocol.md: a queue's match whose process died before anything of it was written is gone (resume
        // answers unknown_match); one being moved to another process is resumed again shortly.
        if (frame.code === "unknown_match" && frame.match !== undefined) {
          this.playing.delete(frame.match);
          this.reconnected.delete(frame.match);
          if (this.created.delete(frame.match)) this.lanesBusy = Math.max(0, this.lanesBusy - 1);
          return this.fill();
        }
        if (frame.match !== undefined && this.playing.has(frame.match)) {
          if (frame.code === "server_stopping") {
            const match = frame.match;
            return void setTimeout(() => this.send({ type: "resume", match }), 500);
          }
        }
        if (
          frame.code === "too_many_matches" || frame.code === "store_unavailable" || frame.code === "server_stopping"
        ) {
          // Refused for now: the lane tries again shortly.
          this.lanesBusy = Math.max(0, this.lanesBusy - 1);
          setTimeout(() => this.fill(), 200);
        }
        // A resend of a decision already closed, or one that crossed its match's end: nothing to do.
        if (["stale_sequence", "match_over", "not_seated"].includes(frame.code)) return;
        for (const p of counting) p.errors++;
        if (!errorsShown.has(frame.code)) {
          errorsShown.add(frame.code);
          console.error(`cluster load: ${JSON.stringify(frame)}`);
        }
      }
    }
  }

  stop(): void {
    const socket = this.socket;
    this.socket = undefined;
    socket?.close();
  }
}

const bots = TOKENS.map((token, i) => new Bot(token, i));
for (const bot of bots) bot.connect();

/** Each server process's CPU and RSS since the last reading (a process gone reads as null). */
function servers(before: Map<number, ReturnType<typeof processCounters>>) {
  return PIDS.map((pid) => {
    try {
      const now = processCounters(pid);
      const then = before.get(pid) ?? now;
      before.set(pid, now);
      const usage = usageBetween(then, now, CLOCK_TICKS);
      return { pid, cpuSeconds: round3(usage.userSeconds + usage.systemSeconds), rssMiB: round3(rssKiB(pid) / 1024) };
    } catch {
      return { pid, cpuSeconds: null, rssMiB: null };
    }
  });
}

function report(p: Period, counters: Map<number, ReturnType<typeof processCounters>>) {
  const seconds = (performance.now() - p.startedAt) / 1000;
  const procs = servers(counters);
  const cpu = procs.reduce((sum, s) => sum + (s.cpuSeconds ?? 0), 0);
  return {
    seconds: round3(seconds),
    acks: p.acks,
    acksPerSecond: Math.round(p.acks / seconds),
    matches: p.matches,
    matchesPerSecond: round3(p.matches / seconds),
    inPlay: bots.reduce((n, b) => n + b.playing.size, 0),
    lanesWaiting: bots.reduce((n, b) => n + b.waiting, 0),
    requests: structuredClone(requests),
    actToAckMs: p.ack.summary(),
    maxGapMs: round3(p.maxGapMs),
    errors: p.errors,
    serverCpuMicrosPerAck: p.acks ? round3((cpu * 1e6) / p.acks) : null,
    serverCoresBusy: round3(cpu / seconds),
    servers: procs,
  };
}

await sleep(WARMUP * 1000);
const counters = new Map<number, ReturnType<typeof processCounters>>();
servers(counters);
const whole = new Period();
counting = [whole];
if (SAMPLE_S) {
  // A soak: a line per sample, the whole run's totals at the end.
  const end = performance.now() + SECONDS * 1000;
  const sampled = new Map<number, ReturnType<typeof processCounters>>();
  servers(sampled);
  while (performance.now() < end) {
    const sample = new Period();
    counting = [whole, sample];
    await sleep(Math.min(SAMPLE_S * 1000, end - performance.now()));
    console.log(JSON.stringify({ sample: report(sample, sampled) }));
  }
} else {
  await sleep(SECONDS * 1000);
}
counting = [];
const final = report(whole, counters);
let drained: { seconds: number; unfinished: number } | undefined;
if (values.drain) {
  draining = true;
  const started = performance.now();
  while (bots.some((b) => !b.done) && performance.now() - started < 120_000) await sleep(100);
  drained = {
    seconds: round3((performance.now() - started) / 1000),
    unfinished: bots.reduce((n, b) => n + b.playing.size, 0),
  };
}
for (const bot of bots) bot.stop();
if (values.acked) {
  Deno.writeTextFileSync(
    values.acked,
    JSON.stringify([...acked].map(([match, seqs]) => [match, [...seqs]])),
  );
}
console.log(JSON.stringify({ final, drained }));
Deno.exit(0);
