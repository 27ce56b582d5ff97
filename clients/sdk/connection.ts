import type { Buffer } from "node:buffer";
import WebSocket from "ws";
import type { ClientFrame, PongFrame, ServerFrame, WelcomeFrame } from "../../protocol/frames.ts";
import { decodeFrame, encodeFrame, type FrameFormat } from "./codec.ts";
import { LudusError } from "./errors.ts";
import { Emitter } from "./events.ts";

export interface ReconnectOptions {
  /** Attempts after a drop before giving up (default 10). */
  readonly attempts?: number;
  /** The first wait; each later one doubles, up to `maxDelayMs` (defaults 100 and 5,000). */
  readonly minDelayMs?: number;
  readonly maxDelayMs?: number;
}

export interface ConnectOptions {
  /** The gateway's websocket address, e.g. `ws://127.0.0.1:2567/bot`. */
  readonly url: string;
  /** A bot token (`ludus token create`). */
  readonly token: string;
  /** `json` text frames (default) or `msgpack` binary frames, both ways. */
  readonly format?: FrameFormat;
  /** Ask for the text rendering of each observation in `turn` frames (for LLM seats). */
  readonly text?: boolean;
  /** Reconnect after an unexpected drop (the default), or `false` to end the connection instead. */
  readonly reconnect?: ReconnectOptions | false;
  /** How long to wait for `welcome` and for the answer to a request (default 10,000 ms). */
  readonly timeoutMs?: number;
}

type FrameEvents = { [F in Exclude<ServerFrame, WelcomeFrame> as F["type"]]: F };

/** Every frame by its type, every frame as `frame`, and the socket's life. */
export type ConnectionEvents = FrameEvents & {
  frame: ServerFrame;
  /** The socket dropped unexpectedly; a reconnect follows when enabled. */
  disconnected: { readonly code: number; readonly reason: string };
  /** Authenticated again after a drop; each match in `resumed` was sent `resume`. */
  reconnected: { readonly welcome: WelcomeFrame; readonly resumed: readonly string[] };
  /** The connection is over for good: closed by its owner (no error), or it could not reconnect. */
  closed: { readonly error?: LudusError };
};

interface PendingRequest {
  readonly name: string;
  accept(frame: ServerFrame): boolean;
  resolve(frame: ServerFrame): void;
  reject(error: LudusError): void;
}

const DEFAULT_RECONNECT: Required<ReconnectOptions> = { attempts: 10, minDelayMs: 100, maxDelayMs: 5_000 };

/**
 * One authenticated socket to the bot gateway. It frames JSON or msgpack, emits each server frame by
 * type, and pairs requests with their answers. When the socket drops unexpectedly it reconnects with
 * exponential backoff, authenticates again and sends `resume` for each match it was playing: the server
 * answers with the match's full state and any pending turn, or, for a match that ended meanwhile (no
 * longer in `welcome.matches` but still kept a while), its `match_end`; a refused resume is an error frame
 * naming the match.
 */
export class Connection {
  readonly url: string;
  readonly format: FrameFormat;
  readonly #options: ConnectOptions;
  readonly #events = new Emitter<ConnectionEvents>();
  readonly #requests: PendingRequest[] = [];
  /** Matches this connection has a seat in, to resume after a drop. */
  readonly #playing = new Set<string>();
  #socket!: WebSocket;
  #welcome!: WelcomeFrame;
  #state: "open" | "reconnecting" | "closed" = "open";
  #wake?: () => void;
  #pings = 0;

  private constructor(options: ConnectOptions) {
    this.#options = options;
    this.url = options.url;
    this.format = options.format ?? "json";
  }

  /** Connects and authenticates; rejects with a LudusError (`bad_token`, `connection_failed`, ...). */
  static async open(options: ConnectOptions): Promise<Connection> {
    const connection = new Connection(options);
    const { socket, welcome } = await connection.#authenticate();
    connection.#install(socket, welcome);
    return connection;
  }

  /** The latest `welcome`: who this bot is, the server's limits, and the matches it has a seat in. */
  get welcome(): WelcomeFrame {
    return this.#welcome;
  }

  /** Whether frames can be sent now (false while reconnecting and once closed). */
  get connected(): boolean {
    return this.#state === "open" && this.#socket.readyState === WebSocket.OPEN;
  }

  get closed(): boolean {
    return this.#state === "closed";
  }

  on<K extends keyof ConnectionEvents>(event: K, listener: (payload: ConnectionEvents[K]) => void): () => void {
    return this.#events.on(event, listener);
  }

  /** The next `event` for which `accept` holds. */
  next<K extends keyof ConnectionEvents>(
    event: K,
    accept?: (payload: ConnectionEvents[K]) => boolean,
  ): Promise<ConnectionEvents[K]> {
    return this.#events.next(event, accept);
  }

  /**
   * Sends a frame. Returns false when the socket is down (the frame is dropped: after a reconnect the
   * server sends each resumed match's state and pending turn again, so nothing needs replaying).
   */
  send(frame: ClientFrame): boolean {
    if (!this.connected) return false;
    this.#socket.send(encodeFrame(frame, this.format));
    return true;
  }

  /**
   * Sends `frame` and resolves with the first later frame `accept` takes, or rejects with the first
   * error frame that is not about an action or a match being played (the server answers in order).
   */
  request<T extends ServerFrame>(frame: ClientFrame, accept: (reply: ServerFrame) => reply is T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timeoutMs = this.#options.timeoutMs ?? 10_000;
      const timer = setTimeout(() => {
        this.#forget(pending);
        reject(new LudusError("timeout", `${this.url} did not answer \`${frame.type}\` within ${timeoutMs} ms`));
      }, timeoutMs);
      const pending: PendingRequest = {
        name: frame.type,
        accept,
        resolve: (reply) => {
          clearTimeout(timer);
          resolve(reply as T);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      if (!this.send(frame)) {
        clearTimeout(timer);
        reject(this.#downError(frame.type));
        return;
      }
      this.#requests.push(pending);
    });
  }

  /** Round trip to the server. */
  ping(): Promise<PongFrame> {
    const id = ++this.#pings;
    return this.request({ type: "ping", id }, (f): f is PongFrame => f.type === "pong" && f.id === id);
  }

  /**
   * Sends a frame the server answers only when it refuses it (`join`, `resume`): resolves once a ping
   * sent behind it comes back, that is once the server has taken it, or rejects with its error.
   */
  async sendChecked(frame: ClientFrame): Promise<void> {
    if (!this.send(frame)) throw this.#downError(frame.type);
    await this.ping();
  }

  /**
   * Cuts the socket as a network failure would: the connection then reconnects and resumes as after
   * any drop (to test a bot's resilience, or to replace a socket that has stalled).
   */
  drop(): void {
    this.#socket.terminate();
  }

  /** Closes the connection for good. */
  async close(): Promise<void> {
    if (this.#state === "closed") return;
    this.#finish();
    const socket = this.#socket;
    if (socket.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      socket.once("close", () => resolve());
      socket.close(1000, "bye");
    });
  }

  /** Opens a socket and authenticates; resolves at `welcome`. */
  #authenticate(): Promise<{ socket: WebSocket; welcome: WelcomeFrame }> {
    const { url, token, text } = this.#options;
    const timeoutMs = this.#options.timeoutMs ?? 10_000;
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.removeAllListeners();
        socket.on("error", () => {}); // late errors of a socket being discarded or handed on
        outcome();
      };
      const fail = (reason: string, error?: LudusError) =>
        settle(() => {
          socket.terminate();
          reject(error ?? new LudusError("connection_failed", `cannot connect to ${url}: ${reason}`));
        });
      const timer = setTimeout(() => fail(`no welcome within ${timeoutMs} ms`), timeoutMs);
      socket.on("error", (error) => fail(error.message || String(error)));
      socket.on("close", (code, reason) => fail(`the server closed the socket (${describeClose(code, reason)})`));
      socket.on(
        "open",
        () => socket.send(encodeFrame({ type: "auth", token, ...(text ? { text } : {}) }, this.format)),
      );
      socket.on("message", (data, binary) => {
        const frame = decodeFrame(data, binary);
        if (frame?.type === "welcome") settle(() => resolve({ socket, welcome: frame }));
        else if (frame?.type === "error") fail(frame.message, LudusError.fromFrame(frame));
      });
    });
  }

  #install(socket: WebSocket, welcome: WelcomeFrame): void {
    this.#socket = socket;
    this.#welcome = welcome;
    this.#state = "open";
    socket.on("message", (data, binary) => {
      const frame = decodeFrame(data, binary);
      if (frame && frame.type !== "welcome") this.#dispatch(frame);
    });
    socket.on("close", (code, reason) => this.#dropped(socket, code, describeClose(code, reason)));
  }

  #dispatch(frame: Exclude<ServerFrame, WelcomeFrame>): void {
    // Errors about an act carry its seq; errors naming a match this connection plays (a refused resume)
    // are that match's business; any other error answers the oldest request (the server answers in order).
    const answersRequest = frame.type === "error" && frame.seq === undefined &&
      (frame.match === undefined || !this.#playing.has(frame.match));
    if (frame.type === "match_start" || frame.type === "created") this.#playing.add(frame.match);
    if (frame.type === "match_end" || (frame.type === "error" && frame.seq === undefined && frame.match)) {
      this.#playing.delete(frame.match!);
    }
    this.#events.emit("frame", frame);
    (this.#events.emit as (event: string, payload: ServerFrame) => void)(frame.type, frame);
    if (frame.type === "error") {
      if (answersRequest) this.#requests.shift()?.reject(LudusError.fromFrame(frame));
      return;
    }
    const index = this.#requests.findIndex((r) => r.accept(frame));
    if (index >= 0) this.#requests.splice(index, 1)[0].resolve(frame);
  }

  #dropped(socket: WebSocket, code: number, reason: string): void {
    if (socket !== this.#socket || this.#state !== "open") return;
    for (const pending of this.#requests.splice(0)) pending.reject(this.#downError(pending.name));
    this.#events.emit("disconnected", { code, reason });
    if (this.#options.reconnect === false) {
      this.#finish(new LudusError("connection_closed", `the connection to ${this.url} closed (${reason})`));
    } else {
      void this.#reconnect();
    }
  }

  async #reconnect(): Promise<void> {
    this.#state = "reconnecting";
    const { attempts, minDelayMs, maxDelayMs } = { ...DEFAULT_RECONNECT, ...(this.#options.reconnect || {}) };
    let lastReason = "";
    for (let attempt = 1; attempt <= attempts; attempt++) {
      // Full jitter, so many bots cut off at once do not come back in lockstep.
      await this.#sleep(Math.random() * Math.min(maxDelayMs, minDelayMs * 2 ** (attempt - 1)));
      if (this.closed) return;
      try {
        const { socket, welcome } = await this.#authenticate();
        if (this.closed) {
          socket.close(1000, "bye");
          return;
        }
        this.#install(socket, welcome);
        const resumed = [...this.#playing];
        for (const match of resumed) this.send({ type: "resume", match });
        this.#events.emit("reconnected", { welcome, resumed });
        return;
      } catch (error) {
        const failure = error as LudusError;
        // The server refused the token itself: trying again cannot help.
        if (failure.code !== "connection_failed") return this.#finish(failure);
        lastReason = failure.message;
      }
    }
    this.#finish(new LudusError("connection_closed", `lost the connection and could not reconnect: ${lastReason}`));
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  #finish(error?: LudusError): void {
    if (this.#state === "closed") return;
    this.#state = "closed";
    this.#wake?.();
    const reason = error ?? new LudusError("connection_closed", `the connection to ${this.url} was closed`);
    for (const pending of this.#requests.splice(0)) pending.reject(reason);
    this.#events.emit("closed", error ? { error } : {});
  }

  #forget(pending: PendingRequest): void {
    const index = this.#requests.indexOf(pending);
    if (index >= 0) this.#requests.splice(index, 1);
  }

  #downError(request: string): LudusError {
    return new LudusError(
      "connection_closed",
      `the connection to ${this.url} dropped before \`${request}\` was answered`,
    );
  }
}

function describeClose(code: number, reason: Buffer | string): string {
  const text = reason.toString();
  return text ? `code ${code}: ${text}` : `code ${code}`;
}
