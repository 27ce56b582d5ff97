import type {
  AgentInfo,
  ClientFrame,
  ErrorCode,
  ErrorFrame,
  PongFrame,
  ServerFrame,
  WelcomeFrame,
} from "../../protocol/frames.ts";
import { decodeFrame, encodeFrame, type FrameFormat, type MsgpackCodec } from "./codec.ts";
import { LudusError } from "./errors.ts";
import { Emitter } from "./events.ts";

export interface ReconnectOptions {
  /** Attempts after a drop before giving up (default 10). */
  readonly attempts?: number;
  /** The first wait; each later one doubles, up to `maxDelayMs` (defaults 100 and 5,000). */
  readonly minDelayMs?: number;
  readonly maxDelayMs?: number;
  /**
   * After the server closed the socket for a restart (code 1012: it keeps its matches for its next start), keep
   * trying this long, however many attempts that takes (default 300,000 ms).
   */
  readonly restartWaitMs?: number;
}

/** A WebSocket class with the standard interface (Deno's, a browser's, Node 22's, or the `ws` package's). */
export type WebSocketClass = new (url: string) => WebSocket;

export interface ConnectOptions {
  /** The gateway's websocket address, e.g. `ws://127.0.0.1:2567/bot`. */
  readonly url: string;
  /** A bot token (`ludus token create`). */
  readonly token: string;
  /** `json` text frames (default) or `msgpack` binary frames, both ways; `msgpack` needs `msgpack`. */
  readonly format?: FrameFormat;
  /** The msgpack implementation for `format: "msgpack"`, e.g. `new Packr({ useRecords: false })` from msgpackr. */
  readonly msgpack?: MsgpackCodec;
  /** Ask for the text rendering of each observation in `turn` frames (for LLM seats). */
  readonly text?: boolean;
  /**
   * Ask for the numeric face: each `turn` carries the seat's information-state `tensor` and its `legalIds`, and
   * `match_start.numeric` the sizes (for seats played by a network, which answer with `ActionId`).
   */
  readonly numeric?: boolean;
  /** Who plays behind the token (an LLM seat's model, endpoint and sampling): recorded with every seat it takes. */
  readonly agent?: AgentInfo;
  /** Reconnect after an unexpected drop (the default), or `false` to end the connection instead. */
  readonly reconnect?: ReconnectOptions | false;
  /** How long to wait for `welcome` and for the answer to a request (default 10,000 ms). */
  readonly timeoutMs?: number;
  /** The WebSocket class, where the runtime has no global one (Node before 22: the `ws` package's). */
  readonly WebSocket?: WebSocketClass;
}

type FrameEvents = { [F in Exclude<ServerFrame, WelcomeFrame> as F["type"]]: F };

/** Every frame by its type, every frame as `frame`, and the socket's life. */
export type ConnectionEvents = FrameEvents & {
  frame: ServerFrame;
  /** The socket dropped unexpectedly (code 1012: the server is restarting); a reconnect follows when enabled. */
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

const DEFAULT_RECONNECT: Required<ReconnectOptions> = {
  attempts: 10,
  minDelayMs: 100,
  maxDelayMs: 5_000,
  restartWaitMs: 300_000,
};

/** The server closes bot sockets with this code when it stops to restart: its matches resume on the next start. */
export const CLOSE_RESTART = 1012;
/** Error codes that answer no request. */
const UNANSWERED = new Set<ErrorCode>(["unknown_ticket", "rate_limited"]);
/** The code `drop` closes with (4000-4999 are the application's). */
const CLOSE_DROPPED = 4000;
const OPEN = 1;
const CLOSED = 3;

/**
 * One authenticated socket to the bot gateway. It frames JSON or msgpack, emits each server frame by
 * type, and pairs requests with their answers. When the socket drops unexpectedly it reconnects with
 * exponential backoff (through a server restart too, however long it takes up to `restartWaitMs`),
 * authenticates again and sends `resume` for each match it holds seats in: the server answers with each
 * seat's full state and pending turn, or, for a match that ended meanwhile (even before a restart), each
 * seat's `match_end`; a refused resume is an error frame naming the match.
 */
/**
 * Whether `frame` ends this connection's seats in its match: a resume refused (`not_seated`: the hold
 * expired; `unknown_match`: it ended too long ago), or the seats taken over by another connection.
 */
export function losesSeats(frame: ServerFrame): frame is ErrorFrame & { match: string } {
  return frame.type === "error" && frame.seq === undefined && frame.match !== undefined &&
    (frame.code === "not_seated" || frame.code === "unknown_match");
}

export class Connection {
  readonly url: string;
  readonly format: FrameFormat;
  readonly #options: ConnectOptions;
  readonly #msgpack?: MsgpackCodec;
  readonly #WebSocket: WebSocketClass;
  readonly #events = new Emitter<ConnectionEvents>();
  readonly #requests: PendingRequest[] = [];
  /** The matches this connection holds seats in: each is resumed after a drop. */
  readonly #playing = new Set<string>();
  #socket!: WebSocket;
  #welcome!: WelcomeFrame;
  #state: "open" | "reconnecting" | "closed" = "open";
  #wake?: () => void;
  #pings = 0;

  private constructor(options: ConnectOptions, socketClass: WebSocketClass) {
    this.#options = options;
    this.url = options.url;
    this.format = options.format ?? "json";
    this.#msgpack = this.format === "msgpack" ? options.msgpack : undefined;
    this.#WebSocket = socketClass;
  }

  /** Connects and authenticates; rejects with a LudusError (`bad_token`, `connection_failed`, ...). */
  static async open(options: ConnectOptions): Promise<Connection> {
    if (options.format === "msgpack" && !options.msgpack) {
      throw new TypeError(
        'format "msgpack" needs a msgpack implementation: pass `msgpack`, e.g. `new Packr({ useRecords: false })` ' +
          "from msgpackr (or use the default JSON frames)",
      );
    }
    const socketClass = options.WebSocket ?? globalThis.WebSocket;
    if (typeof socketClass !== "function") {
      throw new TypeError(
        "this runtime has no global WebSocket (Node before 22): pass `WebSocket`, e.g. the ws package's",
      );
    }
    const connection = new Connection(options, socketClass);
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
    return this.#state === "open" && this.#socket.readyState === OPEN;
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
   * server sends each resumed match's state and pending turns again, so nothing needs replaying).
   */
  send(frame: ClientFrame): boolean {
    if (!this.connected) return false;
    this.#socket.send(encodeFrame(frame, this.#msgpack));
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
   * Gives up the socket as a network failure would: the connection then reconnects and resumes as after
   * any drop (to test a bot's resilience, or to replace a socket that has stalled).
   */
  drop(): void {
    const socket = this.#socket;
    this.#dropped(socket, CLOSE_DROPPED, "dropped by the client");
    socket.close(CLOSE_DROPPED, "dropped by the client");
  }

  /** Closes the connection for good. */
  async close(): Promise<void> {
    if (this.#state === "closed") return;
    this.#finish();
    const socket = this.#socket;
    if (socket.readyState === CLOSED) return;
    await new Promise<void>((resolve) => {
      // A server that never answers the close handshake must not hold the caller forever.
      const timer = setTimeout(resolve, this.#options.timeoutMs ?? 10_000);
      socket.onclose = () => {
        clearTimeout(timer);
        resolve();
      };
      socket.close(1000, "bye");
    });
  }

  /** Opens a socket and authenticates; resolves at `welcome`. */
  #authenticate(): Promise<{ socket: WebSocket; welcome: WelcomeFrame }> {
    const { url, token, text, numeric, agent } = this.#options;
    const timeoutMs = this.#options.timeoutMs ?? 10_000;
    return new Promise((resolve, reject) => {
      let socket: WebSocket;
      try {
        socket = new this.#WebSocket(url);
      } catch (error) {
        reject(new LudusError("connection_failed", `cannot connect to ${url}: ${(error as Error).message}`));
        return;
      }
      socket.binaryType = "arraybuffer";
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.onopen = socket.onmessage = socket.onclose = null;
        socket.onerror = () => {}; // late errors of a socket being discarded or handed on
        outcome();
      };
      const fail = (reason: string, error?: LudusError) =>
        settle(() => {
          if (socket.readyState !== CLOSED) socket.close();
          reject(error ?? new LudusError("connection_failed", `cannot connect to ${url}: ${reason}`));
        });
      const timer = setTimeout(() => fail(`no welcome within ${timeoutMs} ms`), timeoutMs);
      socket.onerror = (event) => fail((event as ErrorEvent).message || "the connection failed");
      socket.onclose = (event) => fail(`the server closed the socket (${describeClose(event.code, event.reason)})`);
      socket.onopen = () =>
        socket.send(
          encodeFrame(
            {
              type: "auth",
              token,
              ...(text ? { text } : {}),
              ...(numeric ? { numeric } : {}),
              ...(agent ? { agent } : {}),
            },
            this.#msgpack,
          ),
        );
      socket.onmessage = (event) => {
        const frame = decodeFrame(event.data, this.#msgpack);
        if (frame?.type === "welcome") settle(() => resolve({ socket, welcome: frame }));
        else if (frame?.type === "error") fail(frame.message, LudusError.fromFrame(frame));
      };
    });
  }

  #install(socket: WebSocket, welcome: WelcomeFrame): void {
    this.#socket = socket;
    this.#welcome = welcome;
    this.#state = "open";
    socket.onmessage = (event) => {
      const frame = decodeFrame(event.data, this.#msgpack);
      if (frame && frame.type !== "welcome") this.#dispatch(frame);
    };
    socket.onclose = (event) => this.#dropped(socket, event.code, describeClose(event.code, event.reason));
  }

  #dispatch(frame: Exclude<ServerFrame, WelcomeFrame>): void {
    // Errors about an act carry its seq; errors naming a match this connection plays (a refused resume or
    // withdrawal) are that match's business; a refused `cancel` (sent without a request) and a rate-limit notice
    // answer nothing; any other error answers the oldest request (the server answers in order).
    const answersRequest = frame.type === "error" && frame.seq === undefined && !UNANSWERED.has(frame.code) &&
      (frame.match === undefined || !this.#playing.has(frame.match));
    this.#track(frame);
    this.#events.emit("frame", frame);
    (this.#events.emit as (event: string, payload: ServerFrame) => void)(frame.type, frame);
    if (frame.type === "error") {
      if (answersRequest) this.#requests.shift()?.reject(LudusError.fromFrame(frame));
      return;
    }
    const index = this.#requests.findIndex((r) => r.accept(frame));
    if (index >= 0) this.#requests.splice(index, 1)[0].resolve(frame);
  }

  /** Keeps the matches held up to date, for the resumes after a drop. */
  #track(frame: Exclude<ServerFrame, WelcomeFrame>): void {
    if (frame.type === "created" || frame.type === "match_start") this.#playing.add(frame.match);
    // Every seat of a match ends at once.
    else if (frame.type === "match_end" || losesSeats(frame)) this.#playing.delete(frame.match);
  }

  #dropped(socket: WebSocket, code: number, reason: string): void {
    if (socket !== this.#socket || this.#state !== "open") return;
    socket.onmessage = socket.onclose = null;
    for (const pending of this.#requests.splice(0)) pending.reject(this.#downError(pending.name));
    this.#events.emit("disconnected", { code, reason });
    if (this.#options.reconnect === false) {
      this.#finish(new LudusError("connection_closed", `the connection to ${this.url} closed (${reason})`));
    } else {
      void this.#reconnect(code);
    }
  }

  async #reconnect(code: number): Promise<void> {
    this.#state = "reconnecting";
    const { attempts, minDelayMs, maxDelayMs, restartWaitMs } = {
      ...DEFAULT_RECONNECT,
      ...(this.#options.reconnect || {}),
    };
    // A restarting server is down for as long as its restart takes: count time, not attempts.
    const until = code === CLOSE_RESTART ? Date.now() + restartWaitMs : 0;
    let lastReason = "";
    for (let attempt = 1; attempt <= attempts || Date.now() < until; attempt++) {
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
    const tried = until ? `for ${restartWaitMs} ms after the server restarted` : `${attempts} times`;
    this.#finish(
      new LudusError("connection_closed", `lost the connection and tried to reconnect ${tried}: ${lastReason}`),
    );
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

function describeClose(code: number, reason: string): string {
  return reason ? `code ${code}: ${reason}` : `code ${code}`;
}
