import { Packr } from "msgpackr";
import WebSocket from "ws";
import type { ClientFrame, ServerFrame, TurnFrame } from "../../protocol/frames.ts";

// The server sends epoch times as msgpack integers (int64): read them as numbers, not BigInt.
const packr = new Packr({ useRecords: false, int64AsType: "number" });

/** Answers a turn; undefined sends nothing. */
export type Policy = (turn: TurnFrame) => unknown;

/**
 * A bot written against the raw protocol with a plain websocket, as a bot author in any language would:
 * it records every frame it receives, can wait for one, and can answer turns with a policy.
 */
export class RawBot {
  readonly frames: ServerFrame[] = [];
  /** Every action this bot sent, with its match and sequence number. */
  readonly sent: { match: string; seq: number; action: unknown }[] = [];
  private waiters: { test: (f: ServerFrame) => boolean; resolve: (f: ServerFrame) => void }[] = [];
  private policy?: Policy;
  /** Frames before this index were already returned by `next`. */
  private cursor = 0;
  closed?: { code: number; reason: string };

  private constructor(readonly socket: WebSocket, readonly format: "json" | "msgpack") {
    socket.on("message", (data: Buffer, binary: boolean) => {
      const frame = (binary ? packr.unpack(data) : JSON.parse(data.toString("utf8"))) as ServerFrame;
      this.frames.push(frame);
      this.waiters = this.waiters.filter((w) => {
        if (!w.test(frame)) return true;
        this.cursor = this.frames.length;
        w.resolve(frame);
        return false;
      });
      if (frame.type === "turn" && this.policy) {
        const action = this.policy(frame);
        if (action !== undefined) this.act(frame.match, frame.seq, action);
      }
    });
    socket.on("close", (code, reason) => (this.closed = { code, reason: reason.toString() }));
  }

  static open(url: string, format: "json" | "msgpack" = "json"): Promise<RawBot> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.once("open", () => resolve(new RawBot(socket, format)));
      socket.once("error", reject);
    });
  }

  /** Opens a socket, authenticates and waits for `welcome`. */
  static async connect(url: string, token: string, options: { format?: "json" | "msgpack"; text?: boolean } = {}) {
    const bot = await RawBot.open(url, options.format);
    bot.send({ type: "auth", token, ...(options.text ? { text: true } : {}) });
    await bot.next("welcome");
    return bot;
  }

  send(frame: ClientFrame | Record<string, unknown>): void {
    this.socket.send(this.format === "json" ? JSON.stringify(frame) : packr.pack(frame));
  }

  act(match: string, seq: number, action: unknown, meta?: Record<string, unknown>): void {
    this.sent.push({ match, seq, action });
    this.send({ type: "act", match, seq, action, ...(meta ? { meta } : {}) });
  }

  /** Answers every turn from now on (and any already received but unanswered) with `policy`. */
  play(policy: Policy): void {
    this.policy = policy;
    const last = new Map<string, ServerFrame>();
    for (const f of this.frames) if ("match" in f && f.match !== undefined) last.set(f.match, f);
    for (const f of last.values()) {
      if (f.type !== "turn" || this.sent.some((s) => s.match === f.match && s.seq === f.seq)) continue;
      const action = policy(f);
      if (action !== undefined) this.act(f.match, f.seq, action);
    }
  }

  /** The next frame of `type` (matching `test`) after the last one `next` returned, or from frame index `from`. */
  next<T extends ServerFrame["type"]>(
    type: T,
    test: (f: Extract<ServerFrame, { type: T }>) => boolean = () => true,
    options: { from?: number; timeoutMs?: number } = {},
  ): Promise<Extract<ServerFrame, { type: T }>> {
    const from = options.from ?? this.cursor;
    const match = (f: ServerFrame) => f.type === type && test(f as Extract<ServerFrame, { type: T }>);
    const i = this.frames.findIndex((f, i) => i >= from && match(f));
    if (i >= 0) {
      this.cursor = i + 1;
      return Promise.resolve(this.frames[i] as Extract<ServerFrame, { type: T }>);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `no \`${type}\` frame within ${options.timeoutMs ?? 60_000} ms; last: ${
                JSON.stringify(this.frames.at(-1))
              }`,
            ),
          ),
        options.timeoutMs ?? 60_000,
      );
      this.waiters.push({
        test: match,
        resolve: (f) => {
          clearTimeout(timer);
          resolve(f as Extract<ServerFrame, { type: T }>);
        },
      });
    });
  }

  /** Waits for the socket to close; resolves with its code and reason. */
  whenClosed(): Promise<{ code: number; reason: string }> {
    if (this.closed) return Promise.resolve(this.closed);
    return new Promise((resolve) =>
      this.socket.once("close", (code, reason) => resolve({ code, reason: reason.toString() }))
    );
  }

  close(): void {
    this.socket.close();
  }

  /** Drops the connection without a close handshake, as a crashed process or a cut cable would. */
  drop(): void {
    this.socket.terminate();
  }
}
