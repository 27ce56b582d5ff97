import type {
  CreatedFrame,
  CreateFrame,
  ErrorFrame,
  MatchEndFrame,
  MatchStartFrame,
  QueuedFrame,
  TurnFrame,
} from "../../protocol/frames.ts";
import { Connection, type ConnectOptions } from "./connection.ts";
import { LudusError } from "./errors.ts";
import type { ActionForm } from "../../protocol/action-forms.ts";

/** A policy's answer with free fields the replay keeps beside it (`act.meta`: an LLM's prompt, response, usage). */
export class Answer {
  constructor(readonly action: unknown, readonly meta?: Record<string, unknown>) {}
}

/**
 * A policy's way to give up its seat when its player cannot go on (an endpoint that refuses every
 * request): the seat's status becomes ERROR, `reason` is kept in the replay, and the match applies its
 * timeout policy to the seat at once instead of waiting for its clock.
 */
export class Withdrawal {
  constructor(readonly reason: string) {}
}

/**
 * Chooses an action (JSON, e.g. `{type: "raise", amount: 4}`, or text such as `"raise 4"`) for a turn,
 * optionally wrapped in an `Answer` with replay fields, or a `Withdrawal`.
 * After an illegal or malformed answer that the match forgives it is asked again, with the server's
 * error (which names what is legal) as `error`.
 */
export type Policy<Observation = unknown> = (
  observation: Observation,
  legal: readonly ActionForm[],
  turn: TurnFrame,
  error?: LudusError,
) => unknown | Promise<unknown>;

export interface PlayOptions {
  readonly game: string;
  readonly variant?: string;
  readonly policy: Policy;
  /** How many matches to play, one after another (default 1). */
  readonly matches?: number;
  /** Called as each match ends (to report progress before `play` resolves). */
  readonly onMatchEnd?: (end: MatchEndFrame) => void;
  /** Once aborted, no further match is queued (a queue ticket still waiting is cancelled); the one being played finishes. */
  readonly signal?: AbortSignal;
}

/** A `create` frame's fields (see protocol/frames.ts) and the policy that plays the bot's seat. */
export interface CreateOptions extends Omit<CreateFrame, "type"> {
  readonly policy: Policy;
}

/** A private match this bot created: give `invite` to whoever should take an open seat. */
export interface PrivateMatch {
  readonly match: string;
  readonly invite: string;
  readonly seat: number;
  /** Settles when the match ends. */
  readonly result: Promise<MatchEndFrame>;
}

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Settled results are read later (or never, when the caller gave up): never an unhandled rejection.
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/** One seat this bot plays. */
interface Seat {
  readonly match: string;
  readonly policy: Policy;
  readonly end: Deferred<MatchEndFrame>;
  /** The latest turn frame. */
  turn?: TurnFrame;
  /** The decision whose answer the policy is working on. */
  thinking?: number;
  /** The last answer sent, resent as is when a resume brings its turn back. */
  answer?: { readonly seq: number; readonly action: unknown; readonly meta?: Record<string, unknown> };
  /** Illegal answers the server still forgives for the open decision. */
  forgiven: number;
}

/** Someone waiting for a match to start: a `queue` (by game) or a `join` (by match id or invite). */
interface Waiter {
  readonly kind: "queue" | "join";
  readonly game?: string;
  readonly variant?: string;
  readonly target?: string;
  readonly policy: Policy;
  readonly started: Deferred<Seat | undefined>;
  /** The queue ticket, once `queued` came. */
  ticket?: string;
}

/**
 * A bot on one connection: it queues or joins matches, answers every `turn` of its seats with its
 * policy, asks the policy again when the server forgives an illegal answer, and reports each `match_end`.
 */
export class Bot {
  readonly #seats = new Map<string, Seat>();
  readonly #waiters: Waiter[] = [];
  /** `create` requests in the order sent; each gets its seat when its `created` arrives. */
  readonly #creating: { readonly policy: Policy; seat?: Seat }[] = [];

  constructor(readonly connection: Connection) {
    connection.on("created", (frame) => {
      const request = this.#creating.shift();
      if (request) request.seat = this.#seat(frame.match, request.policy);
    });
    connection.on("match_start", (frame) => this.#started(frame));
    connection.on("turn", (frame) => this.#turn(frame));
    connection.on("error", (frame) => this.#error(frame));
    connection.on("match_end", (frame) => this.#ended(frame));
    connection.on("reconnected", () => this.#requeue());
    connection.on("closed", ({ error }) => this.#closed(error));
  }

  /** Connects and authenticates a bot; rejects with a LudusError (`bad_token`, `connection_failed`, ...). */
  static async connect(options: ConnectOptions): Promise<Bot> {
    return new Bot(await Connection.open(options));
  }

  /** Queues for `matches` matches of a game, one after another, and resolves with their `match_end` frames. */
  async play(options: PlayOptions): Promise<MatchEndFrame[]> {
    const count = options.matches ?? 1;
    if (!Number.isInteger(count) || count < 1) throw new RangeError(`matches must be a whole number ≥ 1, got ${count}`);
    const ends: MatchEndFrame[] = [];
    while (ends.length < count && !options.signal?.aborted) {
      const seat = await this.#queue(options);
      if (!seat) break; // stopped while waiting in the queue
      const end = await seat.end.promise;
      ends.push(end);
      options.onMatchEnd?.(end);
    }
    return ends;
  }

  /** Creates a private match with this bot in it; the match starts when every open seat is taken. */
  async create(options: CreateOptions): Promise<PrivateMatch> {
    const { policy, ...rest } = options;
    const request: { readonly policy: Policy; seat?: Seat } = { policy };
    this.#creating.push(request);
    let created: CreatedFrame;
    try {
      created = await this.connection.request(
        { type: "create", ...rest },
        (f): f is CreatedFrame => f.type === "created",
      );
    } catch (error) {
      const index = this.#creating.indexOf(request);
      if (index >= 0) this.#creating.splice(index, 1);
      throw error;
    }
    return { match: created.match, invite: created.invite, seat: created.seat, result: request.seat!.end.promise };
  }

  /** Takes an open seat by invite (or this bot's own seat by match id) and resolves when the match ends. */
  async join(matchOrInvite: string, policy: Policy): Promise<MatchEndFrame> {
    const waiter: Waiter = { kind: "join", target: matchOrInvite, policy, started: deferred() };
    this.#waiters.push(waiter);
    try {
      await this.connection.sendChecked({ type: "join", match: matchOrInvite });
    } catch (error) {
      this.#forget(waiter);
      throw error;
    }
    const seat = await waiter.started.promise;
    return seat!.end.promise;
  }

  close(): Promise<void> {
    return this.connection.close();
  }

  #queue(options: PlayOptions): Promise<Seat | undefined> {
    const waiter: Waiter = {
      kind: "queue",
      game: options.game,
      variant: options.variant,
      policy: options.policy,
      started: deferred(),
    };
    this.#waiters.push(waiter);
    this.#sendQueue(waiter);
    const { signal } = options;
    if (signal) {
      const stop = () => {
        if (!this.#waiters.includes(waiter)) return; // already started
        this.#forget(waiter);
        if (waiter.ticket) this.connection.send({ type: "cancel", ticket: waiter.ticket });
        waiter.started.resolve(undefined);
      };
      signal.addEventListener("abort", stop, { once: true });
      // `then` with both handlers: a refused queue must not leave a second, unhandled rejection behind.
      const off = () => signal.removeEventListener("abort", stop);
      waiter.started.promise.then(off, off);
    }
    return waiter.started.promise;
  }

  /** A refused `queue` fails its waiter; a drop before `queued` leaves it to queue again once reconnected. */
  #sendQueue(waiter: Waiter): void {
    this.connection.request(
      { type: "queue", game: waiter.game!, ...(waiter.variant ? { variant: waiter.variant } : {}) },
      (f): f is QueuedFrame => f.type === "queued",
    ).then((queued) => {
      waiter.ticket = queued.ticket;
      // Stopped before the ticket came back: cancel it now.
      if (!this.#waiters.includes(waiter)) this.connection.send({ type: "cancel", ticket: queued.ticket });
    }, (error) => {
      if (error instanceof LudusError && error.code === "connection_closed" && !this.connection.closed) return;
      this.#forget(waiter);
      waiter.started.reject(error);
    });
  }

  #seat(match: string, policy: Policy): Seat {
    const seat: Seat = { match, policy, end: deferred(), forgiven: 0 };
    this.#seats.set(match, seat);
    return seat;
  }

  /**
   * A new match is given to whoever waits for it: a join by that match id, else a queue for its game,
   * else a join by invite (the server does not echo the invite, so an invite's match is recognised by
   * elimination). A resumed match only ever goes to a join by its id.
   */
  #started(frame: MatchStartFrame): void {
    if (this.#seats.has(frame.match)) return; // a resume, or a created match beginning
    const byId = this.#waiters.find((w) => w.target === frame.match);
    const waiter = byId ??
      (frame.resumed
        ? undefined
        : this.#waiters.find((w) =>
          w.kind === "queue" && w.game === frame.game && (w.variant === undefined || w.variant === frame.variant)
        ) ??
          this.#waiters.find((w) => w.kind === "join"));
    if (!waiter) return;
    this.#forget(waiter);
    waiter.started.resolve(this.#seat(frame.match, waiter.policy));
  }

  #turn(turn: TurnFrame): void {
    const seat = this.#seats.get(turn.match);
    if (!seat) return;
    seat.turn = turn;
    if (seat.answer?.seq === turn.seq) {
      // The same decision again after a resume: the server acks a resent answer as a duplicate if it had it.
      this.#act(seat, turn.seq, seat.answer.action, seat.answer.meta);
      return;
    }
    if (seat.thinking === turn.seq) return;
    seat.forgiven = turn.retriesLeft;
    void this.#answer(seat, turn);
  }

  async #answer(seat: Seat, turn: TurnFrame, error?: LudusError): Promise<void> {
    seat.thinking = turn.seq;
    seat.answer = undefined;
    let decided: unknown;
    try {
      decided = await seat.policy(turn.observation, turn.legal, turn, error);
    } catch (failure) {
      this.#seats.delete(seat.match);
      seat.end.reject(failure);
      return;
    }
    // A later decision (or the match's end) overtook this one while the policy thought.
    if (this.#seats.get(seat.match) !== seat || seat.thinking !== turn.seq) return;
    seat.thinking = undefined;
    if (decided instanceof Withdrawal) {
      this.connection.send({ type: "withdraw", match: seat.match, reason: decided.reason });
      return;
    }
    const { action, meta } = decided instanceof Answer ? decided : { action: decided, meta: undefined };
    seat.answer = { seq: turn.seq, action, meta };
    this.#act(seat, turn.seq, action, meta);
  }

  #act(seat: Seat, seq: number, action: unknown, meta?: Record<string, unknown>): void {
    this.connection.send({ type: "act", match: seat.match, seq, action, ...(meta ? { meta } : {}) });
  }

  #error(frame: ErrorFrame): void {
    const seat = frame.match === undefined ? undefined : this.#seats.get(frame.match);
    if (!seat) return;
    if (frame.seq === undefined) {
      // A resume refused (`not_seated`: the hold expired; `unknown_match`: it ended too long ago): the seat is gone.
      this.#seats.delete(seat.match);
      seat.end.reject(LudusError.fromFrame(frame));
      return;
    }
    if (frame.seq !== seat.answer?.seq || (frame.code !== "illegal_action" && frame.code !== "malformed_action")) {
      return;
    }
    // `retriesLeft` counts illegal answers still forgiven: at 0 one more legal answer still counts, and the
    // error after an answer made at 0 closes the decision (the conduct policy has acted).
    if (seat.forgiven === 0 || seat.turn?.seq !== frame.seq) return;
    seat.forgiven = frame.retriesLeft ?? 0;
    void this.#answer(seat, seat.turn, LudusError.fromFrame(frame));
  }

  #ended(frame: MatchEndFrame): void {
    const seat = this.#seats.get(frame.match);
    if (!seat) return;
    this.#seats.delete(frame.match);
    seat.end.resolve(frame);
  }

  /** The server dropped this connection's queue tickets with the old socket: queue again. */
  #requeue(): void {
    for (const waiter of this.#waiters) if (waiter.kind === "queue") this.#sendQueue(waiter);
  }

  #closed(error?: LudusError): void {
    const reason = error ?? new LudusError("connection_closed", `the connection to ${this.connection.url} was closed`);
    for (const waiter of this.#waiters.splice(0)) waiter.started.reject(reason);
    for (const seat of this.#seats.values()) seat.end.reject(reason);
    this.#seats.clear();
  }

  #forget(waiter: Waiter): void {
    const index = this.#waiters.indexOf(waiter);
    if (index >= 0) this.#waiters.splice(index, 1);
  }
}
