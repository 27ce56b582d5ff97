import type {
  CreatedFrame,
  CreateFrame,
  ErrorFrame,
  MatchEndFrame,
  MatchStartFrame,
  QueuedFrame,
  TurnFrame,
} from "../../protocol/frames.ts";
import type { ActionForm } from "../../protocol/action-forms.ts";
import { gameTable, type Table } from "./catalog.ts";
import { Connection, type ConnectOptions, losesSeats } from "./connection.ts";
import { LudusError } from "./errors.ts";

/** A policy's answer with free fields the replay keeps beside it (`act.meta`: an LLM's prompt, response, usage). */
export class Answer {
  readonly action: unknown;
  readonly meta?: Record<string, unknown>;
  constructor(action: unknown, meta?: Record<string, unknown>) {
    this.action = action;
    this.meta = meta;
  }
}

/**
 * A policy's answer by action id: an id of the game's numeric face, one of `turn.legalIds` (sent when the bot
 * connected with `numeric: true`), e.g. what a network sampled. The server reads it as the action it stands
 * for now; `meta` as in `Answer`.
 */
export class ActionId {
  readonly id: number;
  readonly meta?: Record<string, unknown>;
  constructor(id: number, meta?: Record<string, unknown>) {
    this.id = id;
    this.meta = meta;
  }
}

/**
 * A policy's way to give up its seat when its player cannot go on (an endpoint that refuses every
 * request): the seat's status becomes ERROR, `reason` is kept in the replay, and the match applies its
 * timeout policy to the seat at once instead of waiting for its clock.
 */
export class Withdrawal {
  readonly reason: string;
  constructor(reason: string) {
    this.reason = reason;
  }
}

/**
 * Chooses an action (JSON, e.g. `{type: "raise", amount: 4}`, or text such as `"raise 4"`) for a turn,
 * optionally wrapped in an `Answer` with replay fields; or an `ActionId`; or a `Withdrawal`. `turn.seat` says
 * which seat is to act (a bot may hold several seats of one match). After an illegal or malformed answer that
 * the match forgives it is asked again, with the server's error (which names what is legal) as `error`.
 */
export type Policy<Observation = unknown> = (
  observation: Observation,
  legal: readonly ActionForm[],
  turn: TurnFrame,
  error?: LudusError,
) => unknown | Promise<unknown>;

/**
 * The bot's seat in private matches against built-ins: a seat number, `alternate` (match i takes seat
 * i mod seats, so every seat is played as often) or `random`.
 */
export type SeatChoice = number | "alternate" | "random";

export interface PlayOptions {
  readonly game: string;
  readonly variant?: string;
  readonly policy: Policy;
  /** How many matches to start (default 1): queue tickets, or private matches with `opponent`. */
  readonly matches?: number;
  /** Matches played at once over this connection (default 1). */
  readonly concurrency?: number;
  /**
   * Queued tickets of this token may be seated together (self-play: with `concurrency` ≥ 2 they can meet
   * each other). By default a token never meets itself.
   */
  readonly selfPlay?: boolean;
  /**
   * Private matches instead of the queue: every other seat is this built-in strategy (`nash`,
   * `donate:0.5`), or `self`: every seat of the match is this bot's, played by `policy`.
   */
  readonly opponent?: string;
  /** The bot's seat against a built-in `opponent` (default `alternate`). */
  readonly seat?: SeatChoice;
  /** With `opponent`: match i (from 0) is seeded `<seed>/<i>`, and a `random` seat is drawn from it, reproducibly. */
  readonly seed?: string;
  /** With `opponent`: overrides of the variant's config (`create.config`); the server refuses a bad one (`bad_config`). */
  readonly config?: Readonly<Record<string, unknown>>;
  /**
   * With `opponent`: how many seats a match of `config` has, where the config changes it (a Donor Game of
   * `agents: 6`). By default the variant's count from the server's catalog.
   */
  readonly seats?: number;
  /**
   * A seed group (`queue.group`, `create.group`): queued tickets of a group meet only each other (or the fill) and
   * every match of it starts from the same seed; private matches are recorded with the group's name.
   */
  readonly group?: string;
  /**
   * With `opponent`: the policy for match i's seats (from 0), in place of `policy`, for seats that change hands
   * from match to match (several models taking turns at the seats of a self-play match).
   */
  readonly policyFor?: (index: number) => Policy;
  /**
   * With `opponent`: who plays match i's seats (`create.agents`, by seat number), recorded for each seat in place of
   * the connection's `agent`: several models over one connection, each seat named with its own.
   */
  readonly agentsFor?: (index: number) => CreateFrame["agents"];
  /** Called as each seat's match ends (to report progress before `play` resolves). */
  readonly onMatchEnd?: (end: MatchEndFrame) => void;
  /** Once aborted, no further match is started (a queue ticket still waiting is cancelled); those being played finish. */
  readonly signal?: AbortSignal;
}

/** A `create` frame's fields (see protocol/frames.ts) and the policy that plays the bot's seats. */
export interface CreateOptions extends Omit<CreateFrame, "type" | "seat"> {
  readonly policy: Policy;
  /**
   * The seat this bot plays (default 0); null takes none (a match of built-ins and policies the bot only makes:
   * it hears nothing of it, and `result` rejects).
   */
  readonly seat?: number | null;
}

/** A private match this bot created: give `invite` to whoever should take an open seat. */
export interface PrivateMatch {
  readonly match: string;
  readonly invite: string;
  /** The seat asked for (`create.seat`, default 0); null when it asked for none. */
  readonly seat: number | null;
  /** Every seat this bot plays in the match: `seat`, then the `"self"` opponents. */
  readonly seats: readonly number[];
  /** Settles when the match ends, with `seat`'s `match_end`. */
  readonly result: Promise<MatchEndFrame>;
  /** Settles when the match ends, with every seat's `match_end`, in the order of `seats`. */
  readonly ends: Promise<MatchEndFrame[]>;
}

/** A built-in's name as an opponent (`strategy:<name>`); a registered policy (`policy:<name>`) as it is. */
const opponentSpec = (opponent: string) => (opponent.startsWith("policy:") ? opponent : `strategy:${opponent}`);

/** Refuses options that contradict each other, before anything is sent. */
export function checkPlayOptions(options: Omit<PlayOptions, "policy">): void {
  const { matches = 1, concurrency = 1, opponent, seat, selfPlay, seed, config, seats } = options;
  if (!Number.isInteger(matches) || matches < 1) {
    throw new RangeError(`matches must be a whole number ≥ 1, got ${matches}`);
  }
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be a whole number ≥ 1, got ${concurrency}`);
  }
  if (seat !== undefined && (opponent === undefined || opponent === "self")) {
    throw new RangeError(
      "`seat` chooses the bot's seat against a built-in `opponent`; queued matches draw seats at random, " +
        'and against `"self"` every seat is the bot\'s',
    );
  }
  if (typeof seat === "number" && (!Number.isInteger(seat) || seat < 0)) {
    throw new RangeError(`seat must be a seat number (0, 1, …), "alternate" or "random", got ${seat}`);
  }
  if (selfPlay && opponent !== undefined) {
    throw new RangeError('`selfPlay` is for queued matches; for a private self-play match use `opponent: "self"`');
  }
  if (seed !== undefined && opponent === undefined) {
    throw new RangeError("`seed` needs `opponent`: queued matches are seeded by the server");
  }
  if (
    (config !== undefined || seats !== undefined || options.policyFor || options.agentsFor) && opponent === undefined
  ) {
    throw new RangeError(
      "`config`, `seats`, `policyFor` and `agentsFor` need `opponent`: queued matches play the variant's own config, " +
        "with `policy` and the connection's `agent`",
    );
  }
  if (seats !== undefined && (!Number.isInteger(seats) || seats < 1)) {
    throw new RangeError(`seats must be a whole number ≥ 1, got ${seats}`);
  }
}

/** The seat of match `index` (from 0) against a built-in opponent. */
export function chooseSeat(choice: SeatChoice, index: number, seats: number, seed?: string): number {
  if (typeof choice === "number") return choice;
  if (choice === "alternate") return index % seats;
  return seed === undefined ? Math.floor(Math.random() * seats) : fnv1a(`${seed}/${index}`) % seats;
}

/** 32-bit FNV-1a: a stable hash of the seed, so a `random` seat is the same in every run with that seed. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return hash;
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

/** One seat this bot plays: a match can have several (self-play), so seats are keyed by match and seat. */
interface Seat {
  readonly match: string;
  readonly seat: number;
  readonly end: Deferred<MatchEndFrame>;
  /** The seat's first `match_start`: which game it is, and whether it came back by a resume. */
  start?: MatchStartFrame;
  /** Who plays it; unset while the seat's owner is not known yet (its `match_start` came first). */
  policy?: Policy;
  /** The latest turn frame. */
  turn?: TurnFrame;
  /** The decision whose answer the policy is working on. */
  thinking?: number;
  /** The last answer sent, resent as is when a resume brings its turn back. */
  answer?: { readonly seq: number; readonly act: Act };
  /** Illegal answers the server still forgives for the open decision. */
  forgiven: number;
}

/** Someone waiting for a match to start: a `queue` (by game) or a `join` (by match id or invite). */
interface Waiter {
  readonly kind: "queue" | "join" | "serve";
  readonly game?: string;
  readonly variant?: string;
  readonly selfPlay?: boolean;
  readonly group?: string;
  readonly target?: string;
  readonly policy: Policy;
  readonly started: Deferred<Seat | undefined>;
  /** The queue ticket, once `queued` came. */
  ticket?: string;
}

/** A `create` sent and not yet answered; its `created` names its seats. */
interface CreateRequest {
  readonly policy: Policy;
  seats?: Seat[];
}

/** What an `act` says: the action, or an action id, and the replay's free fields. */
type Act =
  | { readonly action: unknown; readonly meta?: Record<string, unknown> }
  | { readonly actionId: number; readonly meta?: Record<string, unknown> };

/** A seat's key: a connection may hold several seats of one match, so seats are told apart by match and seat. */
export const seatKey = (match: string, seat: number): string => `${seat}@${match}`;

/**
 * A bot on one connection: it queues, creates or joins matches, answers every `turn` of its seats (any
 * number, several of one match included) with its policy, asks the policy again when the server forgives
 * an illegal answer, and reports each seat's `match_end`.
 */
export class Bot {
  /** Every seat held, by match and seat. */
  readonly #seats = new Map<string, Seat>();
  readonly #waiters: Waiter[] = [];
  /** `create` requests in the order sent; each gets its seats when its `created` arrives. */
  readonly #creating: CreateRequest[] = [];
  readonly connection: Connection;

  constructor(connection: Connection) {
    this.connection = connection;
    connection.on("created", (frame) => this.#created(frame));
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

  /**
   * Plays `matches` matches of a game, `concurrency` at a time: queued, or private against a built-in or
   * itself (`opponent`). Resolves with every seat's `match_end` as they ended (a self-play match gives one
   * per seat).
   */
  async play(options: PlayOptions): Promise<MatchEndFrame[]> {
    checkPlayOptions(options);
    const total = options.matches ?? 1;
    const table = options.opponent === undefined
      ? undefined
      : await gameTable(this.connection.url, options.game, options.variant);
    const ends: MatchEndFrame[] = [];
    let started = 0;
    let failed = false;
    const lane = async () => {
      while (started < total && !options.signal?.aborted && !failed) {
        const index = started++;
        let played: MatchEndFrame[] | undefined;
        try {
          played = table ? await this.#playPrivate(options, table, index) : await this.#playQueued(options);
        } catch (error) {
          failed = true; // the other lanes finish their matches and start no more
          throw error;
        }
        if (!played) break; // stopped while waiting in the queue
        for (const end of played) {
          ends.push(end);
          options.onMatchEnd?.(end);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 1, total) }, lane));
    return ends;
  }

  /**
   * Creates a private match with this bot in it (in several seats with `"self"` opponents); the match starts
   * when every open seat is taken. While the server stops for a restart (`server_stopping`), it waits for the
   * reconnect and asks again.
   */
  async create(options: CreateOptions): Promise<PrivateMatch> {
    const { policy, ...frame } = options;
    for (;;) {
      const request: CreateRequest = { policy };
      this.#creating.push(request);
      let created: CreatedFrame;
      try {
        created = await this.connection.request(
          { type: "create", ...frame },
          (f): f is CreatedFrame => f.type === "created",
        );
      } catch (error) {
        this.#creating.splice(this.#creating.indexOf(request), 1);
        this.#assign(); // seats held back while this request was open
        if (!(error instanceof LudusError && error.code === "server_stopping")) throw error;
        await this.#reconnected();
        continue;
      }
      const seats = request.seats!;
      const ends = Promise.all(seats.map((seat) => seat.end.promise));
      ends.catch(() => {}); // read by whoever wants every seat's end; `result` reports the failure too
      // `seat: null`: the bot only made the match; it hears nothing of it (watch it over HTTP instead).
      const result = seats[0]?.end.promise ??
        Promise.reject(new RangeError(`this bot took no seat in match ${created.match}: it has no result to give`));
      result.catch(() => {});
      return {
        match: created.match,
        invite: created.invite,
        seat: seats[0]?.seat ?? null,
        seats: seats.map((seat) => seat.seat),
        result,
        ends,
      };
    }
  }

  /**
   * Takes an open seat by invite and resolves when the match ends. Given a match id instead, it resumes
   * this token's seats there (every one of them, played with `policy`) and resolves with the first one's end.
   */
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

  /**
   * Plays every seat the server gives this token without being asked, with `policy`, until `stop()`: a tournament a
   * server runs seats its `bot:<name>` players so (docs/league.md). Seats of matches made while this bot was away
   * (`welcome.matches` it does not know) are resumed and played too. Each seat's `match_end` comes as usual.
   */
  serve(policy: Policy): { stop(): void } {
    const waiter: Waiter = { kind: "serve", policy, started: deferred() };
    this.#waiters.push(waiter);
    for (const match of this.connection.welcome.matches) {
      if (![...this.#seats.values()].some((seat) => seat.match === match && seat.policy)) {
        this.connection.send({ type: "resume", match });
      }
    }
    this.#assign();
    return { stop: () => this.#forget(waiter) };
  }

  close(): Promise<void> {
    return this.connection.close();
  }

  async #playQueued(options: PlayOptions): Promise<MatchEndFrame[] | undefined> {
    const seat = await this.#queue(options);
    return seat ? [await seat.end.promise] : undefined;
  }

  async #playPrivate(options: PlayOptions, table: Table, index: number): Promise<MatchEndFrame[]> {
    const self = options.opponent === "self";
    const seats = options.seats ?? table.seats;
    const mine = self ? 0 : chooseSeat(options.seat ?? "alternate", index, seats, options.seed);
    const opponents = Object.fromEntries(
      Array.from({ length: seats }, (_, seat) => seat)
        .filter((seat) => seat !== mine)
        .map((seat) => [String(seat), self ? "self" : opponentSpec(options.opponent!)]),
    );
    const agents = options.agentsFor?.(index);
    const created = await this.create({
      game: options.game,
      variant: table.variant,
      ...(options.config === undefined ? {} : { config: { ...options.config } }),
      seat: mine,
      opponents,
      ...(options.seed === undefined ? {} : { seed: `${options.seed}/${index}` }),
      ...(options.group === undefined ? {} : { group: options.group }),
      ...(agents ? { agents } : {}),
      policy: options.policyFor?.(index) ?? options.policy,
    });
    return created.ends;
  }

  #queue(options: PlayOptions): Promise<Seat | undefined> {
    const waiter: Waiter = {
      kind: "queue",
      game: options.game,
      variant: options.variant,
      selfPlay: options.selfPlay,
      group: options.group,
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

  /**
   * A refused `queue` fails its waiter; a drop before `queued`, or a server stopping to restart, leaves it to
   * queue again once reconnected.
   */
  #sendQueue(waiter: Waiter): void {
    this.connection.request(
      {
        type: "queue",
        game: waiter.game!,
        ...(waiter.variant ? { variant: waiter.variant } : {}),
        ...(waiter.selfPlay ? { selfPlay: true } : {}),
        ...(waiter.group === undefined ? {} : { group: waiter.group }),
      },
      (f): f is QueuedFrame => f.type === "queued",
    ).then((queued) => {
      waiter.ticket = queued.ticket;
      // Stopped before the ticket came back: cancel it now.
      if (!this.#waiters.includes(waiter)) this.connection.send({ type: "cancel", ticket: queued.ticket });
    }, (error) => {
      if (error instanceof LudusError && !this.connection.closed) {
        if (error.code === "connection_closed" || error.code === "server_stopping") return;
      }
      this.#forget(waiter);
      waiter.started.reject(error);
    });
  }

  /** Resolves at the next reconnect, or rejects when the connection ends instead. */
  #reconnected(): Promise<void> {
    return new Promise((resolve, reject) => {
      const offs = [
        this.connection.on("reconnected", () => {
          for (const off of offs) off();
          resolve();
        }),
        this.connection.on("closed", ({ error }) => {
          for (const off of offs) off();
          reject(error ?? new LudusError("connection_closed", `the connection to ${this.connection.url} was closed`));
        }),
      ];
    });
  }

  #seat(match: string, seat: number): Seat {
    let held = this.#seats.get(seatKey(match, seat));
    if (!held) this.#seats.set(seatKey(match, seat), held = { match, seat, end: deferred(), forgiven: 0 });
    return held;
  }

  /** Gives a seat its policy, and answers the turn that came before its owner was known. */
  #claim(seat: Seat, policy: Policy): Seat {
    seat.policy = policy;
    if (seat.turn) this.#turn(seat.turn);
    return seat;
  }

  #created(frame: CreatedFrame): void {
    // A resume of a match still waiting for players answers `created` again.
    if (frame.seat !== null && this.#seats.get(seatKey(frame.match, frame.seat))?.policy) return;
    const request = this.#creating.shift();
    if (!request) return;
    request.seats = (frame.seats ?? (frame.seat === null ? [] : [frame.seat])).map((seat) =>
      this.#claim(this.#seat(frame.match, seat), request.policy)
    );
    this.#assign();
  }

  /** A seat's `match_start` may come before the `created` that names it: its owner is settled by `#assign`. */
  #started(frame: MatchStartFrame): void {
    const seat = this.#seat(frame.match, frame.seat);
    seat.start ??= frame;
    if (!seat.policy) this.#assign();
  }

  /**
   * Gives each seat whose owner is not known to whoever waits for it: a join by that match id, else a queue
   * for its game, else a join by invite (the server does not echo the invite, so an invite's match is
   * recognised by elimination). A resumed seat only ever goes to a join by its match id, and while a `create`
   * is unanswered any seat may be its, so only joins by id are served.
   */
  #assign(): void {
    for (const seat of this.#seats.values()) {
      if (seat.policy || !seat.start) continue;
      const { match, game, variant, resumed } = seat.start;
      const waiter = this.#waiters.find((w) => w.target === match) ??
        (resumed || this.#creating.length > 0
          ? undefined
          : this.#waiters.find((w) =>
            w.kind === "queue" && w.game === game && (w.variant === undefined || w.variant === variant)
          ) ?? this.#waiters.find((w) => w.kind === "join")) ??
        // Seats nobody asked for: a server-run tournament's (or resumed from `welcome.matches`), once serving.
        (this.#creating.length > 0 ? undefined : this.#waiters.find((w) => w.kind === "serve"));
      if (!waiter) continue;
      // A join by match id stays for the match's other seats; serving goes on until stopped.
      if (waiter.target !== match && waiter.kind !== "serve") this.#forget(waiter);
      const claimed = this.#claim(seat, waiter.policy);
      if (waiter.kind === "serve") claimed.end.promise.catch(() => {}); // nobody awaits a served seat's end
      waiter.started.resolve(claimed);
    }
  }

  #turn(turn: TurnFrame): void {
    const seat = this.#seats.get(seatKey(turn.match, turn.seat));
    if (!seat) return;
    seat.turn = turn;
    if (!seat.policy) return;
    if (seat.answer?.seq === turn.seq) {
      // The same decision again after a resume: the server acks a resent answer as a duplicate if it had it.
      this.#act(seat, turn.seq, seat.answer.act);
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
      decided = await seat.policy!(turn.observation, turn.legal, turn, error);
    } catch (failure) {
      this.#seats.delete(seatKey(seat.match, seat.seat));
      seat.end.reject(failure);
      return;
    }
    // A later decision (or the match's end) overtook this one while the policy thought.
    if (this.#seats.get(seatKey(seat.match, seat.seat)) !== seat || seat.thinking !== turn.seq) return;
    seat.thinking = undefined;
    if (decided instanceof Withdrawal) {
      this.connection.send({ type: "withdraw", match: seat.match, seat: seat.seat, reason: decided.reason });
      return;
    }
    const act: Act = decided instanceof ActionId
      ? { actionId: decided.id, meta: decided.meta }
      : decided instanceof Answer
      ? { action: decided.action, meta: decided.meta }
      : { action: decided };
    seat.answer = { seq: turn.seq, act };
    this.#act(seat, turn.seq, act);
  }

  #act(seat: Seat, seq: number, act: Act): void {
    const { meta, ...answer } = act;
    this.connection.send({ type: "act", match: seat.match, seq, ...answer, ...(meta ? { meta } : {}) });
  }

  #error(frame: ErrorFrame): void {
    if (frame.match === undefined) return;
    const seats = [...this.#seats.values()].filter((seat) => seat.match === frame.match);
    if (frame.seq === undefined) {
      if (!losesSeats(frame)) return;
      for (const seat of seats) {
        this.#seats.delete(seatKey(seat.match, seat.seat));
        seat.end.reject(LudusError.fromFrame(frame));
      }
      return;
    }
    // A decision number is unique in a match, so the seat that sent it is the one the error is about.
    const seat = seats.find((s) => s.answer?.seq === frame.seq);
    if (!seat || (frame.code !== "illegal_action" && frame.code !== "malformed_action")) return;
    // `retriesLeft` counts illegal answers still forgiven: at 0 one more legal answer still counts, and the
    // error after an answer made at 0 closes the decision (the conduct policy has acted).
    if (seat.forgiven === 0 || seat.turn?.seq !== frame.seq) return;
    seat.forgiven = frame.retriesLeft ?? 0;
    void this.#answer(seat, seat.turn, LudusError.fromFrame(frame));
  }

  /**
   * Every seat of a match ends together, with the same frame but for `seat`: each of this bot's seats there
   * settles with the first one, including seats that a resume could not bring back (withdrawn ones).
   */
  #ended(frame: MatchEndFrame): void {
    for (const seat of [...this.#seats.values()]) {
      if (seat.match !== frame.match) continue;
      this.#seats.delete(seatKey(seat.match, seat.seat));
      seat.end.resolve({ ...frame, seat: seat.seat });
    }
    for (const waiter of this.#waiters.filter((w) => w.target === frame.match)) this.#forget(waiter);
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
