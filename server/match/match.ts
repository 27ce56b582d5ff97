import { clearImmediate, setImmediate } from "node:timers";
import { isDeepStrictEqual } from "node:util";
import { type Action, ActionError, defaultAction } from "../../games/core/action.ts";
import { Episode } from "../../games/core/episode.ts";
import type { AnyGame } from "../../games/core/game.ts";
import { Rng, STRATEGY_STREAM } from "../../games/core/rng.ts";
import { turnOf } from "../../games/core/seat.ts";
import { strategySeat } from "../../policies/strategy.ts";
import type {
  ConductPolicy,
  EndReason,
  ErrorCode,
  MatchEndFrame,
  Outcome,
  ParticipantView,
  SeatKind,
  ServerFrame,
  TurnFrame,
} from "../../protocol/frames.ts";
import type { DefaultedReason, MatchRecord, StepRecordRow } from "../../db/records.ts";
import { storableText } from "../../db/storable.ts";
import { type ClockSpec, DEFAULT_CLOCKS, REAL_TIMERS, SeatClocks, type Timers } from "./clock.ts";
import { DEFAULT_CONDUCT, endingBy, leftAs, loggedMisconduct, noRetriesLeft, onLeave } from "./conduct.ts";
import { type Decision, DecisionBook } from "./decisions.ts";
import { ackFrame, matchEndFrame, matchErrorFrame, matchStartFrame, turnFrame } from "./frames.ts";
import { Journal, type MatchFacts, type MatchJournal } from "./journal.ts";
import { Emitter, type MatchEvent, type MatchResult, type StepRecord } from "./events.ts";
import { NumericFace } from "./numeric-face.ts";
import {
  MatchRequestError,
  Occupancy,
  type Participant,
  playsInProcess,
  type Seat,
  type SeatLink,
} from "./occupancy.ts";
import { replayLog, RestoreError } from "./restore.ts";

export { MatchRequestError, type Participant, playsInProcess, type SeatLink } from "./occupancy.ts";
export type { MatchJournal } from "./journal.ts";
export { RestoreError } from "./restore.ts";
export type { MatchEvent, MatchResult, StepRecord } from "./events.ts";

export interface MatchOptions {
  readonly id: string;
  readonly game: AnyGame;
  readonly variant: string;
  readonly config: unknown;
  /** A decimal string of the 64-bit seed, or any string (hashed). */
  readonly seed: string;
  /** One entry per seat; `undefined` leaves the seat open for `claim`. */
  readonly participants: readonly (Participant | undefined)[];
  readonly clocks?: Partial<Record<SeatKind, ClockSpec>>;
  readonly conduct?: Partial<ConductPolicy>;
  /** Where the match's record goes; its frames wait until what they report is durable there. */
  readonly journal?: MatchJournal;
  /** When it was created (a restored match keeps its original time). */
  readonly createdAt?: Date;
  /** The capability that takes an open seat (kept in the record, so it outlives a restart). */
  readonly invite: string;
  /** A match still waiting for open seats this long is aborted (0 or absent: never). */
  readonly waitingTtlMs?: number;
  /** The seed group it belongs to, recorded with it. */
  readonly group?: string;
  /** Whether it counts for ratings (recorded with it). */
  readonly rated?: boolean;
  /** The clocks its timers run on (tests give their own). */
  readonly timers?: Timers;
}

/** `suspended`: put to rest by a stopping server, its log kept for the next start to restore. */
type Phase = "waiting" | "playing" | "ended" | "suspended";

/**
 * Steps a match plays in one go without anyone to wait for (built-ins, released seats) before it lets the
 * event loop run: no single match holds up the server.
 */
const STEPS_PER_TURN_OF_THE_LOOP = 64;

/**
 * Decisions one match may hold. Each game caps its length, but some (hold'em players raising the minimum
 * against each other) can still make very many long decisions: past this the match is aborted, its
 * record saying why, so no match grows without bound.
 */
export const MAX_DECISIONS = 20_000;
/** The same bound for a match whose seats are all in-process: its log goes in bulk and nobody waits on it. */
const MAX_IN_PROCESS_DECISIONS = 1_000_000;

/** A fault's message, fit for the record: one line, bounded, nothing the store would refuse. */
function faultText(error: unknown): string {
  return storableText(String((error as Error)?.message ?? error).split("\n")[0].slice(0, 500));
}

/**
 * One live match, authoritative: the session around an Episode. Its parts keep the rest: who sits where
 * (Occupancy), the decisions and their sequence numbers (DecisionBook), the clocks (SeatClocks), what is
 * written and when frames may go out (Journal); the match applies the conduct policy for illegal actions,
 * timeouts and dropped seats. Transports (the bot gateway, the browser rooms) only pass frames in and out
 * through `connect`, `act` and `disconnect`.
 *
 * A match is its own fault boundary: anything that throws while it runs (a game rule, a listener, a
 * timer) ends this match with reason `error`, its cause recorded, and touches nothing else.
 */
export class Match {
  readonly id: string;
  readonly game: AnyGame;
  readonly variant: string;
  readonly config: unknown;
  readonly seed: string;
  readonly conduct: ConductPolicy;
  readonly createdAt: Date;
  readonly invite: string;
  readonly group: string | null;
  readonly rated: boolean;

  private phase: Phase = "waiting";
  private opened = false;
  /** The game in play, once started. */
  private episode?: Episode;
  private readonly strategyRng: Rng;
  private readonly timers: Timers;
  private readonly occupancy: Occupancy;
  private readonly seats: Seat[];
  private readonly clocks: SeatClocks;
  private readonly book: DecisionBook;
  private readonly journal: Journal;
  private readonly numeric: NumericFace;
  private readonly moves: (Action | undefined)[];
  private readonly meta: (Record<string, unknown> | undefined)[];
  private readonly defaulted: number[] = [];
  private steps = 0;
  /** True while `advance` runs, so a decision taken inside it does not start another. */
  private advancing = false;
  /** A later turn of the event loop that goes on advancing (see STEPS_PER_TURN_OF_THE_LOOP). */
  private continuation?: ReturnType<typeof setImmediate>;
  private result?: MatchResult;
  private readonly events = new Emitter();
  private readonly spectators = new Set<SeatLink>();
  /** Whether every seat decides in-process (built-ins, policies): nothing is acknowledged to anyone. */
  private inProcessOnly = false;
  /** While `restore` runs: the logged decisions of the turn its log ends inside, by sequence number. */
  private log?: Map<number, StepRecordRow>;
  private startedAt: Date | null = null;
  private endedAt: Date | null = null;
  /** Why the match ended in error, for the record. */
  private error: string | null = null;
  /** Set when another server process took the match over (see handOver). */
  private handedOver = false;
  private readonly waitingTtlMs: number;
  private expiry?: unknown;

  constructor(options: MatchOptions) {
    this.id = options.id;
    this.game = options.game;
    this.variant = options.variant;
    this.config = options.config;
    this.seed = options.seed;
    this.invite = options.invite;
    this.group = options.group ?? null;
    this.rated = options.rated ?? false;
    this.waitingTtlMs = options.waitingTtlMs ?? 0;
    this.conduct = { ...DEFAULT_CONDUCT, ...options.conduct };
    this.timers = options.timers ?? REAL_TIMERS;
    this.createdAt = options.createdAt ?? new Date();
    const count = this.game.seatCount(this.config);
    if (options.participants.length !== count) {
      throw new RangeError(`${this.game.id} has ${count} seats here, got ${options.participants.length} participants`);
    }
    this.occupancy = new Occupancy(count, this.id, this.timers);
    this.seats = this.occupancy.seats;
    this.clocks = new SeatClocks({ ...DEFAULT_CLOCKS, ...options.clocks }, count, this.timers);
    this.book = new DecisionBook(this.conduct.retries);
    this.journal = new Journal(options.journal, {
      guard: (what, body) => this.guarded(what, body),
      moved: () => this.handOver(),
      refused: (error) => this.journalFailed(error),
    });
    this.numeric = new NumericFace(this.game, this.config);
    // Packed arrays, cleared seat by seat after each step (fill() on holey ones is slow in long in-process runs).
    this.moves = Array.from({ length: count }, () => undefined);
    this.meta = Array.from({ length: count }, () => undefined);
    this.strategyRng = new Rng(this.seed, STRATEGY_STREAM);
    options.participants.forEach((p, seat) => p && this.seatParticipant(seat, p));
  }

  /**
   * Lets the match begin: at once if every seat is taken, else when the last open seat is claimed. A match that
   * waits for seats, or is `announced` (see NewMatch), is recorded before anything about it is sent.
   */
  open(announced = false): void {
    this.guarded("opening the match", () => {
      this.opened = true;
      const full = this.openSeats().length === 0;
      if (announced || !full) this.writeRecord();
      if (full && this.phase === "waiting") return this.start();
      this.expireIfUnclaimed();
    });
  }

  /**
   * Rebuilds a match the server was running when it stopped, from its stored log: the match is played
   * again from its seed with the logged decisions, through the re-simulation every stored match goes through
   * (db/replay.ts; built-in seats recompute theirs, which must agree), without writing or sending anything. Then the open decisions wait for their seats, which count as
   * dropped: each is held for `holdMs` to resume, after which the conduct policy applies.
   *
   * The log may miss open decisions of a simultaneous step: a seat's later decision (seq 8) can be
   * durable while an earlier one (seq 7, another seat's) was still open when the server stopped. Replay
   * leaves such a decision open again, with the same number; only a logged decision that replay never
   * reaches is an error.
   */
  restore(record: MatchRecord, steps: readonly StepRecordRow[]): void {
    this.opened = true;
    record.seatKeys?.forEach((hash, seat) => {
      if (hash && this.seats[seat]) this.seats[seat].keyHash = hash;
    });
    this.journal.muted = true;
    this.startedAt = record.startedAt;
    this.log = new Map(steps.map((row) => [row.seq, row])); // a match still waiting for seats replays nothing
    if (this.openSeats().length === 0) this.start(() => this.replay(record, steps));
    const unplayed = [...this.log.keys()].filter((seq) => !this.book.remembers(seq));
    this.log = undefined;
    this.journal.muted = false;
    if (this.inProcessOnly) this.book.forget();
    if (unplayed.length > 0) {
      throw new RestoreError(this.id, `logged decision ${unplayed[0]} was never asked for on replay`);
    }
    if (this.phase === "ended") return this.writeRecord(); // it ended as the log says; only the record was missing
    for (let seat = 0; seat < this.seats.length; seat++) {
      const slot = this.seats[seat];
      if (playsInProcess(slot.participant) || !slot.participant || slot.released) continue;
      slot.joined = true;
      this.holdSeat(seat);
    }
    this.writeRecord();
    if (this.phase === "waiting") this.expireIfUnclaimed();
    for (const decision of this.book.openDecisions()) {
      const slot = this.seats[decision.seat];
      // An in-process seat plays on from where the log ends; a player's turn waits for it to come back.
      if (slot.inProcess) this.guarded("playing on after a restore", () => this.playInProcess(decision, slot));
      else this.deliver(() => this.openTurn(decision));
    }
  }

  get seatCount(): number {
    return this.seats.length;
  }

  get started(): boolean {
    return this.phase !== "waiting";
  }

  get ended(): boolean {
    return this.phase === "ended";
  }

  /** Put to rest by a stopping server: it takes nothing more, and the next start restores it from its log. */
  get suspended(): boolean {
    return this.phase === "suspended";
  }

  /** Seats nobody has taken yet. */
  openSeats(): number[] {
    return this.occupancy.open();
  }

  participant(seat: number): Participant | undefined {
    return this.seats[seat]?.participant;
  }

  /** The bot tokens seated here (each once). */
  tokens(): string[] {
    return this.occupancy.tokens();
  }

  /** The seats a token sits in. */
  seatsOf(tokenId: string): number[] {
    return this.occupancy.seatsOf(tokenId);
  }

  /**
   * Keys a browser's seat: a page that later presents the key (its SHA-256 here) takes the seat back, as a bot's token
   * does, and the key is kept with the match's record so that it still works after a restart, when the browser's
   * Colyseus reconnection token no longer does.
   */
  keySeat(seat: number, keyHash: string): void {
    if (this.phase === "ended" || this.suspended || !this.occupancy.key(seat, keyHash)) return;
    this.guarded("keying a seat", () => this.writeRecord());
  }

  /** The seat whose key has this SHA-256, if any. */
  seatWithKey(keyHash: string): number | undefined {
    return this.occupancy.withKey(keyHash);
  }

  /** Which seat decision `seq` belongs to (open or taken), if it was issued. */
  decisionSeat(seq: number): number | undefined {
    return this.book.seatOf(seq);
  }

  /** Every event, in order: start, each step, seat changes, end. */
  subscribe(listener: (event: MatchEvent) => void): () => void {
    return this.events.subscribe(listener);
  }

  /** Seats a participant; the match starts once every seat is taken. */
  claim(seat: number, participant: Participant): void {
    if (this.phase !== "waiting") {
      throw new MatchRequestError("match_full", `match ${this.id} is not waiting for players`);
    }
    this.seatParticipant(seat, participant);
    this.guarded("seating a player", () => {
      this.writeRecord();
      this.emit({ kind: "seat", seat });
      if (this.opened && this.openSeats().length === 0) this.start();
    });
  }

  private seatParticipant(seat: number, participant: Participant): void {
    const inProcess = playsInProcess(participant)
      ? participant.seat ?? strategySeat(participant.strategy!, this.strategyRng)
      : undefined;
    this.occupancy.take(seat, participant, inProcess);
    this.clocks.seat(seat, participant.kind);
  }

  participants(): ParticipantView[] {
    return this.occupancy.views();
  }

  /**
   * Attaches a client to its seat (a first join or a resume): it gets the full state, then its
   * pending turn if it has one. A resume within the hold keeps the seat; past it the seat is gone.
   */
  connect(seat: number, link: SeatLink): void {
    const slot = this.seats[seat];
    if (!slot) throw new MatchRequestError("not_seated", `match ${this.id} has no seat ${seat}`);
    if (slot.released) {
      throw new MatchRequestError("not_seated", `your seat in match ${this.id} was released after its hold expired`);
    }
    if (this.suspended) {
      throw new MatchRequestError("server_stopping", this.restingWhy());
    }
    this.guarded("connecting a seat", () => {
      const resumed = this.occupancy.attach(seat, link) && this.started;
      this.emit({ kind: "seat", seat });
      if (this.phase === "waiting") return;
      this.deliver(() => {
        if (slot.link !== link || slot.greeted) return; // gone again, or greeted when the match started
        this.sendStart(seat, resumed);
        if (this.phase === "ended") return link.send(this.endFrame(seat));
        const decision = this.book.openFor(seat);
        if (decision?.running) link.send(this.turnFrame(decision));
      });
    });
  }

  /** The link of a seat dropped. The seat is held; past the hold the timeout policy applies. */
  disconnect(seat: number, link: SeatLink): void {
    if (this.seats[seat]?.link !== link) return; // a newer link already took over
    this.guarded("a seat's drop", () => {
      this.occupancy.detach(seat, link);
      this.emit({ kind: "seat", seat });
      if (this.phase === "ended" || this.suspended) return;
      this.holdSeat(seat);
    });
  }

  /** Holds a dropped seat for its player; past the hold, it is released. */
  private holdSeat(seat: number): void {
    this.occupancy.hold(seat, this.conduct.holdMs, () => this.guarded("a seat's hold", () => this.release(seat)));
  }

  watch(link: SeatLink): () => void {
    this.spectators.add(link);
    return () => this.spectators.delete(link);
  }

  /** Whether `seat` is held for a client (taken by a non-built-in that has not been released). */
  resumable(seat: number): boolean {
    return this.occupancy.resumable(seat);
  }

  /** The public view of the match: what spectators and the table see (null before it started). */
  publicObservation(): unknown {
    return this.episode?.observe("public") ?? null;
  }

  observation(seat: number): unknown {
    return this.episode?.observe(seat) ?? null;
  }

  /** Each seat's clock now: time left for its decision, and whether that decision's clock is running. */
  clockTimes(): { readonly remainingMs: number; readonly running: boolean }[] {
    return this.clocks.times((seat) => this.book.openFor(seat), this.phase === "playing");
  }

  /** Seats whose move the match waits for now (in a simultaneous step, a seat that has moved is no longer listed). */
  toAct(): readonly number[] {
    return this.phase === "playing" ? this.episode!.toAct.filter((seat) => this.moves[seat] === undefined) : [];
  }

  /** Steps applied so far. */
  get stepsPlayed(): number {
    return this.steps;
  }

  get outcome(): MatchResult | undefined {
    return this.result;
  }

  /** Handles an `act` for `seat` (its action as JSON or text); answers `link` with an ack or an error frame. */
  act(
    seat: number,
    seq: unknown,
    input: unknown,
    meta: Record<string, unknown> | undefined,
    link: SeatLink,
  ): void {
    this.take(seat, seq, input, meta, link, () => this.episode!.parse(input, seat));
  }

  /**
   * Handles an `act` that names an action id of the game's numeric face: the game's `actionOf` reads it now,
   * and an id out of range or not legal is an illegal action like any other. Recorded as the action it stands
   * for, its input kept as `{actionId}` (so a resend is recognised, after a restart too).
   */
  actById(
    seat: number,
    seq: unknown,
    actionId: number,
    meta: Record<string, unknown> | undefined,
    link: SeatLink,
  ): void {
    this.take(seat, seq, { actionId }, meta, link, () => {
      const face = this.numeric.info;
      if ("numericFace" in face) {
        return new ActionError("malformed_action", `${face.numericFace}; answer with \`action\``, "");
      }
      return this.episode!.actionOf(actionId, seat);
    });
  }

  /** An act's answer: its decision checked (sequence, seat, resends), then `read` gives the action or why not. */
  private take(
    seat: number,
    seq: unknown,
    input: unknown,
    meta: Record<string, unknown> | undefined,
    link: SeatLink,
    read: () => Action | ActionError,
  ): void {
    const fail = (code: ErrorCode, message: string, retriesLeft?: number): void => {
      this.send(link, matchErrorFrame(this.id, code, message, { seq, retriesLeft }));
    };
    if (typeof seq !== "number" || !Number.isInteger(seq) || seq < 1) {
      return fail("bad_frame", "`seq` must be the whole number from the `turn` frame you are answering");
    }
    if (this.phase === "waiting") return fail("not_your_turn", "the match has not started: seats are still open");
    if (this.seats[seat]?.link !== link) {
      return fail("not_seated", `another connection has taken over seat ${seat}; act from the one that resumed it`);
    }
    const past = this.book.answering(seat, seq, input);
    if (past.kind === "foreign") {
      return fail("wrong_sequence", `decision ${seq} belonged to seat ${past.seat}, not ${seat}`);
    }
    if (past.kind === "resend") return this.send(link, ackFrame(this.id, seq, past.action, true));
    if (past.kind === "stale") {
      return fail(
        "stale_sequence",
        `decision ${seq} was already taken as ${JSON.stringify(past.action)}; ${this.nowFor(seat)}`,
      );
    }
    if (this.phase === "ended") return fail("match_over", `match ${this.id} is over`);
    if (this.suspended) return fail("server_stopping", this.restingWhy());
    const decision = this.book.openFor(seat);
    if (decision?.seq !== seq) return fail("wrong_sequence", `${this.book.misdirected(seq)}; ${this.nowFor(seat)}`);
    this.guarded("taking an action", () => {
      const parsed = read();
      if (parsed instanceof ActionError) {
        const attempt = { input, code: parsed.code, message: parsed.message, ...(meta ? { meta } : {}) };
        const retriesLeft = this.book.refuse(decision, attempt);
        if (retriesLeft >= 0) return fail(parsed.code, parsed.message, retriesLeft);
        fail(parsed.code, noRetriesLeft(this.conduct, parsed.message), 0);
        return this.misconduct(decision, "INVALID", this.conduct.onIllegal);
      }
      this.meta[seat] = meta;
      this.resolve(decision, parsed, link, null, input);
    });
  }

  /**
   * The seat's player cannot go on (`reason` says why): its status becomes ERROR and the timeout policy
   * applies at once, as if its clock had run out, to its open decision and, under `default`, to every
   * later one. The reason is kept as a refused attempt of the open decision.
   */
  withdraw(seat: number, reason: string, link: SeatLink): void {
    const refuse = (code: ErrorCode, message: string) => this.send(link, matchErrorFrame(this.id, code, message));
    if (this.seats[seat]?.link !== link) {
      return refuse(
        "not_seated",
        `another connection has taken over seat ${seat}; withdraw from the one that resumed it`,
      );
    }
    if (this.phase === "ended") return refuse("match_over", `match ${this.id} is over`);
    if (this.suspended) {
      return refuse("server_stopping", this.restingWhy());
    }
    this.guarded("a withdrawal", () => {
      this.book.openFor(seat)?.attempts.push({ input: null, code: "withdrawn", message: reason });
      this.leave(seat, "ERROR");
    });
  }

  /** Ends the match now in error, `why` recorded (a seat that can no longer play: a quarantined policy). */
  fail(why: string): void {
    if (this.phase !== "ended" && this.phase !== "suspended") this.fault("a seat", new Error(why));
  }

  /** Ends the match now (an operator's abort). */
  abort(): void {
    if (this.phase !== "ended" && this.phase !== "suspended") {
      this.guarded("aborting", () => this.finish("aborted", null));
    }
  }

  /**
   * Puts the match to rest for a restart: every timer stops and every link is let go, nothing more is
   * written or sent. Its log is in the store (the journal is drained after this), so the next start
   * restores it and its players resume as after any drop.
   */
  suspend(): void {
    if (this.phase === "ended" || this.phase === "suspended") return;
    this.phase = "suspended";
    this.journal.flush(); // acknowledged to nobody, but what is written need not be played again
    this.stopTimers();
    this.occupancy.detachAll();
    this.spectators.clear();
  }

  /**
   * Puts the match to rest because another server process took it over (this one lost its lease, see
   * db/nodes.ts): nothing more of it is written or sent here, and its transports find it again where it went.
   */
  handOver(): void {
    // An end that is durable is nothing to move; one still being written is the next owner's to play again.
    if (this.phase === "suspended" || this.handedOver || (this.phase === "ended" && this.journal.unwritten === 0)) {
      return;
    }
    this.handedOver = true;
    // What waits to be durable is not sent: the new owner has it if it was written, and the seats resume there.
    this.journal.drop();
    this.suspend();
    this.emit({ kind: "handed_over" });
  }

  /** Why a match put to rest takes nothing: the server restarts, or another process plays it now. */
  private restingWhy(): string {
    return this.handedOver
      ? `match ${this.id} is now played by another server process: reconnect (to any of them) and resume it`
      : `the server is restarting; resume match ${this.id} afterwards`;
  }

  /** Stops every clock, hold, expiry and continuation: nothing of this match runs by itself any more. */
  private stopTimers(): void {
    for (const decision of this.book.openDecisions()) this.clocks.stop(decision);
    this.occupancy.unholdAll();
    if (this.expiry !== undefined) this.timers.clear(this.expiry);
    clearImmediate(this.continuation);
  }

  private nowFor(seat: number): string {
    const decision = this.book.openFor(seat);
    if (decision) return `your open decision is ${decision.seq}`;
    const toAct = this.toAct();
    return toAct.length ? `waiting for seat ${toAct.join(" and ")}` : "nothing is open";
  }

  /** A match whose open seats nobody takes within its waiting time is aborted (invites expire). */
  private expireIfUnclaimed(): void {
    if (this.waitingTtlMs <= 0 || this.expiry !== undefined) return;
    this.expiry = this.timers.set(() =>
      this.guarded("an expired invite", () => {
        if (this.phase === "waiting") this.finish("aborted", null);
      }), this.waitingTtlMs);
  }

  /** Starts the game: it plays on from its first decision, or (`replay`, restoring) from where its log ends. */
  private start(replay?: () => void): void {
    if (this.expiry !== undefined) this.timers.clear(this.expiry);
    this.phase = "playing";
    this.episode = new Episode(this.game, this.config, this.seed);
    this.inProcessOnly = this.occupancy.allInProcess();
    this.journal.bulkMode = this.inProcessOnly;
    this.startedAt ??= new Date();
    // The first frames do not wait for this write: they acknowledge nothing. The first decision's ack waits for
    // its own write, which lands with or after this one (a match's records are written in order).
    this.writeRecord(false);
    this.emit({ kind: "start" });
    this.deliver(() => this.seats.forEach((slot, seat) => slot.link && !slot.greeted && this.sendStart(seat, false)));
    if (replay) replay();
    this.advance();
  }

  /**
   * Replays the log's complete turns through the stored matches' re-simulation (see restore.ts); the turn it ends
   * inside is left in `log`, for `advance` to take its logged decisions and leave the others open.
   */
  private replay(record: MatchRecord, steps: readonly StepRecordRow[]): void {
    this.advancing = true; // each turn is applied by the replay, not by `advance`
    try {
      const tail = replayLog(record, steps, this.episode!, {
        retake: (rows, toAct) => {
          for (const seat of toAct) {
            const decision = this.book.issue(seat, this.timers.now());
            const row = rows.find((row) => row.seq === decision.seq);
            if (!row) throw new RestoreError(this.id, `decision ${decision.seq} (seat ${seat}) is not in the log`);
            this.retake(decision, row);
          }
          return this.moves;
        },
        stepped: (toAct, rewards) => this.stepped(toAct, rewards),
      });
      this.log = new Map(tail.map((row) => [row.seq, row]));
    } finally {
      this.advancing = false;
    }
  }

  /** Takes a logged decision again: a built-in decides again (and must agree), any other as logged. */
  private retake(decision: Decision, row: StepRecordRow): void {
    const slot = this.seats[decision.seat];
    if (slot.inProcess && slot.participant!.kind === "builtin") this.playInProcess(decision, slot, row);
    else this.replayDecision(decision, row);
  }

  /** Opens decisions for the seats to act, playing built-in and released seats at once, until someone must answer. */
  private advance(): void {
    if (this.advancing) return;
    this.advancing = true;
    try {
      this.advanceLoop();
    } finally {
      this.advancing = false;
    }
  }

  private advanceLoop(): void {
    let played = 0;
    while (this.phase === "playing") {
      const toAct = this.episode!.toAct;
      if (toAct.length === 0) return this.finish("completed", null);
      if (this.inProcessOnly && this.journal.mustWait) {
        return this.journal.wait(() => this.guarded("playing on", () => this.advance()));
      }
      if (!this.log && played++ >= STEPS_PER_TURN_OF_THE_LOOP) {
        // Nobody to wait for (built-ins, released seats): go on after others have had the event loop. Not a
        // setTimeout(0): timers nested this deep are held back 4 ms each.
        this.continuation = setImmediate(() => this.guarded("playing on", () => this.advance()));
        return;
      }
      for (const seat of toAct) {
        if (this.book.openFor(seat) || this.moves[seat] !== undefined) continue;
        const limit = this.inProcessOnly ? MAX_IN_PROCESS_DECISIONS : MAX_DECISIONS;
        if (this.book.issued >= limit) {
          this.error = `the match reached its limit of ${limit} decisions`;
          return this.finish("aborted", null);
        }
        const decision = this.book.issue(seat, this.timers.now());
        const slot = this.seats[seat];
        const logged = this.log?.get(decision.seq);
        // While restoring, an in-process seat replays what the log has and waits past it (see restore): a
        // built-in recomputes its logged decisions (which must agree), a policy's are taken as logged, since
        // its answers arrive later and the log replays at once.
        if (logged) this.retake(decision, logged);
        else if (slot.inProcess && !this.log) this.playInProcess(decision, slot);
        else if (slot.released) {
          this.resolve(decision, defaultAction(this.episode!.legal(seat)), undefined, leftAs(slot.status));
        } else if (!this.log) this.deliver(() => this.openTurn(decision));
        if (this.phase !== "playing") return;
      }
      if (this.book.openCount > 0) return;
      this.applyStep(toAct);
    }
  }

  /**
   * An in-process seat decides: a built-in at once; one that answers with a promise (a policy) later, while
   * the match waits for it as for any seat, its clock running: past it the conduct policy plays for it.
   */
  private playInProcess(decision: Decision, slot: Seat, logged?: StepRecordRow): void {
    const answer = slot.inProcess!.decide(turnOf(this.episode!, decision.seat));
    if (!(answer instanceof Promise)) return this.takeInProcess(decision, answer, logged);
    this.openTurn(decision);
    // An answer the clock overtook, or that comes after the match was put to rest, is moot, whatever it is.
    const open = () => this.phase === "playing" && this.book.isOpen(decision);
    answer.then(
      (action) => this.guarded("an in-process seat's decision", () => open() && this.takeInProcess(decision, action)),
      (error) =>
        this.guarded("an in-process seat's decision", () => {
          if (open()) throw error;
        }),
    );
  }

  private takeInProcess(decision: Decision, action: Action, logged?: StepRecordRow): void {
    if (logged && !isDeepStrictEqual(logged.action, action)) {
      throw new RestoreError(
        this.id,
        `built-in seat ${decision.seat} now plays ${JSON.stringify(action)} at step ${decision.seq}, the log has ${
          JSON.stringify(logged.action)
        }`,
      );
    }
    this.resolve(decision, action);
  }

  /** Takes a logged decision again while restoring, as it was taken. */
  private replayDecision(decision: Decision, row: StepRecordRow): void {
    if (row.seat !== decision.seat) {
      throw new RestoreError(
        this.id,
        `step ${row.seq} was seat ${row.seat}'s, the game now asks seat ${decision.seat}`,
      );
    }
    decision.startedAt = this.timers.now() - row.latencyMs;
    decision.attempts.push(...row.attempts);
    const slot = this.seats[decision.seat];
    if (row.defaulted === "withdrawn" || row.error?.code === "withdrawn") {
      slot.released = true;
      slot.status = "ERROR";
    }
    if (row.action === null) {
      // The seat never moved: its misconduct ended the match.
      const { status, outcome } = loggedMisconduct(this.conduct, row.error?.code);
      return this.misconduct(decision, status, outcome);
    }
    const parsed = this.episode!.parse(row.action, decision.seat);
    if (parsed instanceof ActionError) throw new RestoreError(this.id, `step ${row.seq}: ${parsed.message}`);
    this.meta[decision.seat] = row.meta ?? undefined;
    this.resolve(decision, parsed, undefined, row.defaulted, row.input ?? row.action);
  }

  /** Sends a decision's `turn` frame and starts its clock: only now may the seat see it. */
  private openTurn(decision: Decision): void {
    if (!this.book.isOpen(decision) || decision.running) return;
    this.clocks.run(decision, () => this.guarded("a decision's clock", () => this.timeout(decision)));
    const slot = this.seats[decision.seat];
    if (slot.greeted) slot.link?.send(this.turnFrame(decision));
    this.emit({ kind: "turn", seat: decision.seat });
  }

  /**
   * Takes a decision's action: charges the clock, acks, and moves the match on once every seat has
   * moved. The deadline timer is the only judge of time: an act that beats it counts.
   */
  private resolve(
    decision: Decision,
    action: Action,
    link?: SeatLink,
    byPolicy: DefaultedReason | null = null,
    input: unknown = null,
  ): void {
    const { seat, seq } = decision;
    this.book.close(decision);
    const latencyMs = this.clocks.charge(decision);
    this.seats[seat].seq = seq;
    this.moves[seat] = action;
    // For resends, and for restore to check that the whole log was replayed; nobody resends to an in-process match.
    if (!this.inProcessOnly || this.log) this.book.remember(seq, { seat, action, input });
    if (byPolicy) this.defaulted.push(seat);
    // The step is complete once every seat to act has moved: it is applied next, and its rewards go with this row.
    const completes = this.episode!.toAct.every((s) => this.moves[s] !== undefined);
    this.writeStep(decision, action, byPolicy, latencyMs, { input, completes });
    if (link) this.send(link, ackFrame(this.id, seq, action, false));
    if (this.book.openCount > 0) this.emit({ kind: "moved", seat });
    this.advance();
  }

  private applyStep(toAct: readonly number[]): void {
    this.stepped(toAct, this.episode!.step(this.moves));
  }

  /** A step was applied to the episode: it is recorded and told, and the next one is collected. */
  private stepped(toAct: readonly number[], rewards: readonly number[]): void {
    const step: StepRecord = {
      index: this.steps++,
      seqs: this.seats.map((slot, seat) => (toAct.includes(seat) ? slot.seq : undefined)),
      moves: [...this.moves],
      rewards: [...rewards],
      defaulted: [...this.defaulted],
      meta: [...this.meta],
    };
    this.journal.stepApplied(step.rewards);
    for (const seat of toAct) {
      this.moves[seat] = undefined;
      this.meta[seat] = undefined;
    }
    this.defaulted.length = 0;
    this.emit({ kind: "step", step });
  }

  private timeout(decision: Decision): void {
    if (!this.book.isOpen(decision)) return;
    this.misconduct(decision, "TIMEOUT", this.conduct.onTimeout);
  }

  /** A seat ran out of time or of retries, or withdrew: the policy plays for it, or ends the match. */
  private misconduct(decision: Decision, status: "TIMEOUT" | "INVALID" | "ERROR", outcome: Outcome): void {
    const seat = decision.seat;
    if (outcome === "default") {
      const reason = status === "TIMEOUT" ? "timeout" : "illegal";
      this.resolve(decision, defaultAction(this.episode!.legal(seat)), undefined, reason);
      return;
    }
    const spent = this.clocks.spent(decision);
    this.writeStep(decision, null, null, spent, { timedOut: status === "TIMEOUT" });
    this.clocks.stop(decision);
    this.book.close(decision);
    this.seats[seat].status = status;
    this.finish(endingBy(outcome), seat);
  }

  /** The hold of a dropped seat expired. */
  private release(seat: number): void {
    if (this.phase === "ended" || this.suspended || this.seats[seat].link) return;
    this.leave(seat, "DISCONNECTED");
  }

  /** A seat's player is gone: dropped past its hold, or withdrawn. The timeout policy applies to it at once (see onLeave). */
  private leave(seat: number, status: "DISCONNECTED" | "ERROR"): void {
    this.occupancy.release(seat, status);
    this.writeRecord();
    this.emit({ kind: "seat", seat });
    const decision = this.book.openFor(seat);
    const verdict = onLeave(this.conduct, {
      status,
      waiting: this.phase === "waiting",
      open: decision !== undefined,
      nobodyLeft: this.occupancy.nobodyLeft(),
    });
    if (verdict.kind === "default") {
      if (decision) this.resolve(decision, defaultAction(this.episode!.legal(seat)), undefined, leftAs(status));
    } else if (verdict.kind === "misconduct") this.misconduct(decision!, "ERROR", verdict.outcome);
    else {
      if (decision) {
        this.clocks.stop(decision);
        this.book.close(decision);
      }
      this.finish(verdict.reason, seat);
    }
  }

  private finish(reason: EndReason, culprit: number | null): void {
    this.phase = "ended";
    this.stopTimers();
    this.book.closeAll();
    this.occupancy.end(false);
    let returns = this.seats.map(() => 0);
    try {
      if (this.episode) returns = [...this.episode.returns()];
    } catch (error) {
      // A game that cannot say its returns: the match is over anyway, in error.
      reason = "error";
      this.error ??= `the game's returns failed: ${faultText(error)}`;
    }
    this.result = { returns, statuses: this.occupancy.statuses(), reason, culprit, steps: this.steps };
    this.endedAt = new Date();
    this.journal.flush();
    this.writeRecord();
    this.deliver(() => this.seats.forEach((slot, seat) => slot.link?.send(this.endFrame(seat))));
    this.emit({ kind: "end", end: this.result });
  }

  /**
   * Runs `body` inside the match's fault boundary: a throw ends this match in error (every seat ERROR,
   * the cause in the record), tells its seats, and goes no further.
   */
  private guarded(what: string, body: () => void): void {
    try {
      body();
    } catch (error) {
      this.fault(what, error);
    }
  }

  private fault(what: string, error: unknown): void {
    console.error(`ludus: match ${this.id} (${this.game.id}): ${what} failed; the match ends in error:`, error);
    if (this.phase === "ended" || this.phase === "suspended") return;
    this.error = `${what} failed: ${faultText(error)}`;
    this.occupancy.end(true);
    try {
      this.finish("error", null);
    } catch (again) {
      console.error(`ludus: match ${this.id}: ending it after the fault failed too:`, again);
    }
  }

  private endFrame(seat: number): MatchEndFrame {
    return matchEndFrame({ match: this.id, seed: this.seed, ...this.result! }, seat);
  }

  private sendStart(seat: number, resumed: boolean): void {
    const slot = this.seats[seat];
    slot.greeted = true;
    slot.link?.send(matchStartFrame({
      match: this.id,
      game: this.game,
      variant: this.variant,
      config: this.config,
      seat,
      participants: this.participants(),
      clock: this.clocks.view(seat, this.book.openFor(seat)),
      conduct: this.conduct,
      observation: this.episode!.observe(seat),
      resumed,
      ...(slot.link?.numeric ? { numeric: this.numeric.info } : {}),
    }));
  }

  private turnFrame(decision: Decision): TurnFrame {
    const { seat } = decision;
    const slot = this.seats[seat];
    const observation = this.observationOf(decision);
    return turnFrame({
      match: this.id,
      seq: decision.seq,
      seat,
      observation,
      ...(slot.link?.text ? { text: decision.prompt ??= this.game.describe(observation) } : {}),
      legal: this.episode!.legal(seat),
      ...(slot.link?.numeric
        ? { numeric: decision.numeric ??= this.numeric.encode(this.episode!, seat, observation) }
        : {}),
      deadline: decision.deadline!,
      clock: this.clocks.view(seat, decision),
      retriesLeft: decision.retriesLeft,
    });
  }

  /** The observation a decision shows its seat: computed once for its `turn` frames and its record. */
  private observationOf(decision: Decision): unknown {
    return decision.observation ??= this.episode!.observe(decision.seat);
  }

  private emit(event: MatchEvent): void {
    this.events.emit(event);
  }

  /** Sends a frame in order with the frames still waiting for the journal. */
  private send(link: SeatLink, frame: ServerFrame): void {
    this.deliver(() => link.send(frame));
  }

  /**
   * Runs `output` once everything the match has written so far is durable (at once when it is): frames
   * and views go out in this order, and nobody sees a state that a crash could take back.
   */
  deliver(output: () => void): void {
    this.journal.deliver(output);
  }

  /**
   * How the match ended, once its end is durable (what a crash could take back is not counted): for those that run
   * matches in-process and count them (tournaments, the league, evolutions). A match of built-ins may be over
   * before `create` returns; this covers that too.
   */
  durableEnd(): Promise<MatchResult> {
    return new Promise((resolve) => {
      const settle = () => this.deliver(() => resolve(this.result!));
      if (this.result) return settle();
      const off = this.subscribe((event) => {
        if (event.kind !== "end") return;
        off();
        settle();
      });
    });
  }

  /**
   * A write was refused for good (not a passing outage, which the journal retries): nothing waiting can
   * be acknowledged, so the match ends in error, its seats are told why, and the store gets an end of its
   * own that holds only server-made values.
   */
  private journalFailed(error: Error): void {
    if (this.phase === "suspended") return; // the server stopped before these were written: the log has the rest
    console.error(`ludus: match ${this.id}: the replay store refused a write: ${error.message}`);
    this.guarded("ending after a refused write", () => {
      if (this.phase !== "ended") {
        this.error = `the replay store refused a write: ${faultText(error)}`;
        this.occupancy.end(true);
        this.finish("error", null);
      }
    });
    this.journal.closeInError(this.id, {
      statuses: this.occupancy.statuses(),
      error: this.error ?? `the replay store refused a write: ${faultText(error)}`,
      steps: this.steps,
      endedAt: this.endedAt ?? new Date(),
    });
  }

  /** The match as it stands, for its record. */
  private facts(): MatchFacts {
    return {
      id: this.id,
      game: this.game,
      variant: this.variant,
      config: this.config,
      seed: this.seed,
      participants: this.seats.map((s) => s.participant),
      conduct: this.conduct,
      statuses: this.occupancy.statuses(),
      result: this.result,
      steps: this.steps,
      createdAt: this.createdAt,
      startedAt: this.startedAt,
      endedAt: this.endedAt,
      error: this.error,
      invite: this.invite,
      group: this.group,
      rated: this.rated,
      seatKeys: this.occupancy.keys(),
    };
  }

  /** Writes the match's row as it stands; frames sent after this wait until it is durable unless `hold` is false. */
  private writeRecord(hold = true): void {
    if (this.journal.recording) this.journal.writeMatch(this.facts(), hold);
  }

  /** Logs a decision (action null: the seat never moved and its misconduct ends the match). */
  private writeStep(
    decision: Decision,
    action: Action | null,
    defaulted: DefaultedReason | null,
    latencyMs: number,
    { timedOut = false, input = null, completes = false }: { timedOut?: boolean; input?: unknown; completes?: boolean },
  ): void {
    if (!this.journal.recording) return;
    this.journal.decision({
      matchId: this.id,
      decision,
      turn: this.steps,
      action,
      defaulted,
      latencyMs,
      timedOut,
      input,
      meta: this.meta[decision.seat] ?? null,
      observation: this.observationOf(decision),
      at: new Date(),
      offered: this.episode!.legal(decision.seat),
      legalIds: decision.numeric?.legalIds ?? this.numeric.legalIds(this.episode!, decision.seat),
    }, completes);
  }
}
