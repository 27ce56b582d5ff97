import { Packr } from "msgpackr";
import { expect } from "vitest";
import type { ReplayStore } from "../../db/store.ts";
import WebSocket from "ws";
import { Rng } from "../../games/core/rng.ts";
import { randomAction } from "../../clients/sdk/random.ts";
import type { ClientFrame, ErrorFrame, MatchEndFrame, ServerFrame, TurnFrame } from "../../protocol/frames.ts";

const packr = new Packr({ useRecords: false, int64AsType: "number" });

/** What a lane plays next: a `create` (or `queue`) frame, or nothing more. */
export type Plan = () => ClientFrame | undefined;

/**
 * A bot written only from docs/protocol.md, as an outside tester would, that survives its server being
 * killed: it reconnects (retrying until the server is back), authenticates, resumes every match of
 * `welcome.matches` and every match it knows that has not ended, and resends every `act` whose `ack` it
 * never saw, with the very same input (its actions are a function of the match and the decision, so a
 * resend is always identical). It keeps `lanes` matches going, each started by `plan`, and records every
 * acknowledged action and every `match_end`.
 */
export class DocsBot {
  /** Acknowledged actions: match → seq → action, as the acks said. */
  readonly acked = new Map<string, Map<number, unknown>>();
  /** Every match_end, by match id then seat. */
  readonly ends = new Map<string, Map<number, MatchEndFrame>>();
  /** The seats each known match gave this bot (from created / match_start). */
  readonly seats = new Map<string, Set<number>>();
  /** Errors the server sent, except the ones the reconnect steps expect. */
  readonly errors: ErrorFrame[] = [];
  private readonly unacked = new Map<string, { match: string; seq: number; input: unknown }>();
  /** What happened to each match, as lines (for a failure's message). */
  readonly trace = new Map<string, string[]>();
  private socket?: WebSocket;
  private starting = 0;
  private started = 0;
  private stopped = false;
  private retryMs = 50;
  private readonly listeners = new Set<() => void>();
  connections = 0;

  constructor(
    private readonly url: () => string,
    private readonly token: string,
    private readonly options: { lanes: number; plan: Plan; format?: "json" | "msgpack" },
  ) {}

  start(): void {
    this.connect();
  }

  /** Acknowledged decisions so far, over every match. */
  get ackCount(): number {
    let n = 0;
    for (const seqs of this.acked.values()) n += seqs.size;
    return n;
  }

  /** Matches known and not yet ended for every seat this bot holds there. */
  unfinished(): string[] {
    return [...this.seats].filter(([match, seats]) => (this.ends.get(match)?.size ?? 0) < seats.size).map(([m]) => m);
  }

  /** Whether the plan is exhausted and every match it led to has ended. */
  get done(): boolean {
    return this.exhausted && this.starting === 0 && this.unfinished().length === 0;
  }

  private exhausted = false;

  /** Resolves once `test` holds, checked after every frame and connection change. */
  until(test: () => boolean, what: string, timeoutMs: number): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const check = () => {
        if (!test()) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve();
      };
      this.listeners.add(check);
    });
  }

  stop(): void {
    this.stopped = true;
    this.socket?.terminate();
  }

  private changed(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private note(match: string, line: string): void {
    let lines = this.trace.get(match);
    if (!lines) this.trace.set(match, lines = []);
    lines.push(`${this.connections}: ${line}`);
  }

  private send(frame: ClientFrame): void {
    if ("match" in frame) this.note(frame.match, `=> ${frame.type} ${"seq" in frame ? frame.seq : ""}`);
    const socket = this.socket;
    if (socket?.readyState !== WebSocket.OPEN) return;
    socket.send(this.options.format === "msgpack" ? packr.pack(frame) : JSON.stringify(frame));
  }

  private connect(): void {
    if (this.stopped) return;
    const socket = new WebSocket(this.url());
    this.socket = socket;
    socket.on("open", () => {
      this.retryMs = 50;
      this.connections++;
      this.send({ type: "auth", token: this.token });
    });
    socket.on("message", (data: Buffer, binary: boolean) => {
      const frame = (binary ? packr.unpack(data) : JSON.parse(data.toString("utf8"))) as ServerFrame;
      if ("match" in frame && frame.match) {
        this.note(
          frame.match,
          `<= ${frame.type} ${"seq" in frame ? frame.seq : ""}${"code" in frame ? frame.code : ""}`,
        );
      }
      this.receive(frame);
      this.changed();
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      if (this.socket !== socket) return;
      this.starting = 0; // a create or queue in flight is gone; if it became a match, welcome.matches says so
      this.changed();
      if (this.stopped) return;
      setTimeout(() => this.connect(), this.retryMs);
      this.retryMs = Math.min(1000, this.retryMs * 2);
    });
  }

  private receive(frame: ServerFrame): void {
    switch (frame.type) {
      case "welcome": {
        // docs/protocol.md, "Reconnecting and resuming": resume every match the token holds, and those known
        // unfinished (a match that ended meanwhile answers its match_end).
        const resume = new Set([...frame.matches, ...this.unfinished()]);
        for (const match of resume) this.send({ type: "resume", match });
        return this.fill();
      }
      case "created":
        this.starting = Math.max(0, this.starting - 1);
        this.hold(frame.match, frame.seats ?? [frame.seat]);
        return this.fill();
      case "match_start":
        if (this.starting > 0 && !this.seats.has(frame.match) && !frame.resumed) {
          this.starting--; // a queued match
          this.fill();
        }
        this.hold(frame.match, [frame.seat]);
        // Resend what was sent and never acknowledged (the same input: safe, see idempotency).
        for (const pending of this.unacked.values()) {
          if (pending.match === frame.match) this.act(pending.match, pending.seq, pending.input);
        }
        return;
      case "turn":
        return this.act(frame.match, frame.seq, this.choose(frame));
      case "ack": {
        let seqs = this.acked.get(frame.match);
        if (!seqs) this.acked.set(frame.match, seqs = new Map());
        seqs.set(frame.seq, frame.action);
        this.unacked.delete(`${frame.match}/${frame.seq}`);
        return;
      }
      case "match_end": {
        let byseat = this.ends.get(frame.match);
        if (!byseat) this.ends.set(frame.match, byseat = new Map());
        byseat.set(frame.seat, frame);
        this.hold(frame.match, [frame.seat]);
        for (const key of [...this.unacked.keys()]) if (key.startsWith(`${frame.match}/`)) this.unacked.delete(key);
        return this.fill();
      }
      case "error":
        return this.refused(frame);
    }
  }

  private refused(frame: ErrorFrame): void {
    if (frame.code === "server_stopping" && frame.match !== undefined && this.seats.has(frame.match)) {
      // docs/protocol.md: a match of ours is being moved to another server process: resume it again shortly (a
      // reconnect resumes every match).
      this.socket?.close();
      return;
    }
    if (frame.code === "store_unavailable" || frame.code === "server_stopping") {
      // A new match was refused for now: try again shortly.
      this.starting = Math.max(0, this.starting - 1);
      setTimeout(() => this.fill(), 200);
      return;
    }
    if (frame.code === "stale_sequence" || frame.code === "match_over") {
      // A resend of a decision already closed: nothing to do.
      if (frame.seq !== undefined) this.unacked.delete(`${frame.match}/${frame.seq}`);
      return;
    }
    // An act that crossed its match's `match_end` (docs: after it, the connection forgets the match).
    if (frame.code === "not_seated" && frame.match !== undefined && this.ends.has(frame.match)) return;
    // docs/protocol.md, "Server restarts": a queued match the server died with before acknowledging anything of it
    // is gone: the bot goes on with its plan.
    const lost = frame.match;
    if (frame.code === "unknown_match" && lost !== undefined && this.seats.has(lost) && !this.acked.has(lost)) {
      this.seats.delete(lost);
      for (const key of [...this.unacked.keys()]) if (key.startsWith(`${lost}/`)) this.unacked.delete(key);
      return this.fill();
    }
    this.errors.push(frame);
  }

  private hold(match: string, seats: readonly number[]): void {
    let held = this.seats.get(match);
    if (!held) this.seats.set(match, held = new Set());
    for (const seat of seats) held.add(seat);
  }

  /** The action for a decision: a function of (match, seq) only, so a resend is the same input. */
  private choose(turn: TurnFrame): unknown {
    const rng = new Rng(`${turn.match}/${turn.seq}`, 7);
    return randomAction(turn.legal, () => rng.float());
  }

  private act(match: string, seq: number, input: unknown): void {
    this.unacked.set(`${match}/${seq}`, { match, seq, input });
    this.send({ type: "act", match, seq, action: input });
  }

  /** Starts matches until `lanes` are going, while the plan has more. */
  private fill(): void {
    if (this.socket?.readyState !== WebSocket.OPEN || this.stopped) return;
    while (this.starting + this.unfinished().length < this.options.lanes) {
      const frame = this.options.plan();
      if (!frame) {
        this.exhausted = true;
        return;
      }
      this.starting++;
      this.started++;
      this.send(frame);
    }
  }
}

/**
 * What bots that lived through kills must find in the store: no error they did not expect, no match left
 * unfinished, every acknowledged action stored as acknowledged, every match they saw end stored as completed with
 * the returns they were told.
 */
export async function expectNothingLost(store: ReplayStore, bots: readonly DocsBot[]): Promise<void> {
  for (const bot of bots) {
    const why = bot.errors.slice(0, 2).map((e) => `${JSON.stringify(e)}\n${bot.trace.get(e.match!)?.join("\n")}`);
    expect(bot.errors, why.join("\n")).toEqual([]);
  }
  expect((await store.unfinished()).map((m) => m.id)).toEqual([]);
  for (const bot of bots) {
    for (const [match, seqs] of bot.acked) {
      const stored = new Map((await store.steps(match)).map((s) => [s.seq, s.action]));
      for (const [seq, action] of seqs) expect(stored.get(seq), `${match} seq ${seq}`).toEqual(action);
    }
    for (const [match, ends] of bot.ends) {
      const record = (await store.match(match))!;
      expect(record.endReason, `${match}: ${record.error}`).toBe("completed");
      for (const end of ends.values()) expect(end.returns).toEqual(record.returns);
    }
  }
}
