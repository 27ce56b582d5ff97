import type { Seat as EngineSeat } from "../../games/core/seat.ts";
import type { Strategy } from "../../policies/strategy.ts";
import type { AgentInfo, ParticipantView, SeatKind, SeatStatus, ServerFrame } from "../../protocol/frames.ts";
import { REAL_TIMERS, type Timers } from "./clock.ts";

/** Who sits in a seat, as the replay records it. */
export interface Participant {
  readonly kind: SeatKind;
  readonly name: string;
  /** The bot token's id, for remote bots and LLM seats. */
  readonly tokenId?: string;
  /** Who plays behind the token, as an LLM seat declared it (model, endpoint, sampling). */
  readonly agent?: AgentInfo;
  /** For built-in seats: the strategy that plays. */
  readonly strategy?: Strategy;
  /** For in-process seats that decide otherwise than a strategy (a policy): asked in-process, may answer with a promise. */
  readonly seat?: EngineSeat;
  /** For policy seats: the registered version that plays, recorded with the seat. */
  readonly policy?: { readonly id: string; readonly version: number; readonly greedy: boolean };
  /** The match was scheduled for this seat's player to learn from (see SeatRecord.learner). */
  readonly learner?: boolean;
}

/** Seats the server plays itself (a built-in strategy, a policy network): no client, no hold, always connected. */
export const playsInProcess = (participant: Participant | undefined): boolean =>
  participant?.kind === "builtin" || participant?.kind === "policy";

/** A client connected to a seat: a gateway session or a browser room client. Transports stay thin. */
export interface SeatLink {
  send(frame: ServerFrame): void;
  /** Whether `turn` frames carry the observation's text rendering. */
  readonly text: boolean;
  /** Whether `turn` frames carry the numeric face (tensor, legal ids) and `match_start` its sizes. */
  readonly numeric?: boolean;
}

/** A request about matches that cannot be met, said to the client as is (`code` is the protocol's). */
export class MatchRequestError extends Error {
  constructor(
    readonly code:
      | "unknown_match"
      | "match_full"
      | "match_over"
      | "bad_config"
      | "already_seated"
      | "not_seated"
      | "server_stopping",
    message: string,
  ) {
    super(message);
    this.name = "MatchRequestError";
  }
}

/** One seat: who sits there, through which link, and whether it is held, released or keyed. */
export interface Seat {
  participant?: Participant;
  /** Who decides in-process for a built-in participant (the engine's Seat). */
  inProcess?: EngineSeat;
  link?: SeatLink;
  status: SeatStatus;
  hold?: unknown;
  /** Released after a drop past the hold, or withdrawn (status ERROR): the conduct policy plays for it from then on. */
  released: boolean;
  /** Whether a client ever sat here, so a later connect is a resume. */
  joined: boolean;
  /** Whether the current link has had its `match_start`: turn frames only follow it. */
  greeted?: boolean;
  /** The sequence number of its move in the step being collected. */
  seq?: number;
  /** A browser seat's key, as its SHA-256 (hex): whoever holds the key takes the seat (see `key`). */
  keyHash?: string;
}

/**
 * Seat occupancy: who sits where, their links, the hold that keeps a dropped seat for its player, and the
 * release that gives it up. It knows no game, clock or decision: the match decides what a release means.
 */
export class Occupancy {
  readonly seats: Seat[];

  constructor(
    count: number,
    private readonly matchId: string,
    private readonly timers: Timers = REAL_TIMERS,
  ) {
    this.seats = Array.from({ length: count }, () => ({ status: "ACTIVE", released: false, joined: false }));
  }

  get count(): number {
    return this.seats.length;
  }

  at(seat: number): Seat | undefined {
    return this.seats[seat];
  }

  /** Seats `participant` in an open seat, with who decides for it in-process (built-ins, policies). */
  take(seat: number, participant: Participant, inProcess?: EngineSeat): void {
    const slot = this.seats[seat];
    if (!slot || slot.participant) {
      throw new MatchRequestError("match_full", `seat ${seat} of match ${this.matchId} is not open`);
    }
    slot.participant = participant;
    slot.inProcess = inProcess;
  }

  /** Seats nobody has taken yet. */
  open(): number[] {
    return this.seats.flatMap((s, i) => (s.participant ? [] : [i]));
  }

  /** The bot tokens seated here (each once). */
  tokens(): string[] {
    return [...new Set(this.seats.flatMap((s) => (s.participant?.tokenId ? [s.participant.tokenId] : [])))];
  }

  /** The seats a token sits in. */
  seatsOf(tokenId: string): number[] {
    return this.seats.flatMap((s, seat) => (s.participant?.tokenId === tokenId ? [seat] : []));
  }

  /** Keys a taken seat with a key's SHA-256; false when nothing changed (no such seat, or the same key). */
  key(seat: number, keyHash: string): boolean {
    const slot = this.seats[seat];
    if (!slot?.participant || slot.keyHash === keyHash) return false;
    slot.keyHash = keyHash;
    return true;
  }

  /** The seat whose key has this SHA-256, if any. */
  withKey(keyHash: string): number | undefined {
    const seat = this.seats.findIndex((s) => s.keyHash === keyHash);
    return seat < 0 ? undefined : seat;
  }

  /** Each seat's key hash, or null when no seat is keyed. */
  keys(): (string | null)[] | null {
    return this.seats.some((s) => s.keyHash) ? this.seats.map((s) => s.keyHash ?? null) : null;
  }

  /** Whether every seat decides in-process (built-ins, policies). */
  allInProcess(): boolean {
    return this.seats.every((slot) => slot.inProcess !== undefined);
  }

  /** Whether no player is left: every taken seat plays in-process or was released. */
  nobodyLeft(): boolean {
    return this.seats.every((s) => !s.participant || playsInProcess(s.participant) || s.released);
  }

  /** Whether `seat` is held for a client (taken by a non-built-in that has not been released). */
  resumable(seat: number): boolean {
    const slot = this.seats[seat];
    return slot?.participant !== undefined && !playsInProcess(slot.participant) && !slot.released;
  }

  statuses(): SeatStatus[] {
    return this.seats.map((s) => s.status);
  }

  views(): ParticipantView[] {
    return this.seats.map((s, seat) => ({
      seat,
      kind: s.participant?.kind ?? "bot",
      name: s.participant?.name ?? "(open seat)",
      open: s.participant === undefined,
      connected: playsInProcess(s.participant) || s.link !== undefined,
      status: s.status,
    }));
  }

  /** Attaches a link to its seat, ending any hold; whether it resumes a seat a client sat in before. */
  attach(seat: number, link: SeatLink): boolean {
    const slot = this.seats[seat];
    this.unhold(slot);
    const before = slot.joined;
    slot.link = link;
    slot.greeted = false;
    slot.joined = true;
    return before;
  }

  /** Detaches `link` from its seat; false when a newer link had already taken over. */
  detach(seat: number, link: SeatLink): boolean {
    const slot = this.seats[seat];
    if (slot?.link !== link) return false;
    slot.link = undefined;
    return true;
  }

  /** Holds a seat for its player for `ms`; `onExpiry` runs when nobody came back by then. */
  hold(seat: number, ms: number, onExpiry: () => void): void {
    const slot = this.seats[seat];
    slot.hold = this.timers.set(() => {
      slot.hold = undefined;
      onExpiry();
    }, ms);
  }

  private unhold(slot: Seat): void {
    if (slot.hold !== undefined) this.timers.clear(slot.hold);
    slot.hold = undefined;
  }

  /** Ends every hold. */
  unholdAll(): void {
    for (const slot of this.seats) this.unhold(slot);
  }

  /** Lets go of every link (nothing more is sent to them). */
  detachAll(): void {
    for (const slot of this.seats) slot.link = undefined;
  }

  /** Gives a seat up for good: the conduct policy plays for it from now on. */
  release(seat: number, status: SeatStatus): void {
    const slot = this.seats[seat];
    slot.released = true;
    slot.status = status;
  }

  /** Marks every seat: at the end (ACTIVE seats are DONE) or after a fault (all ERROR). */
  end(fault: boolean): void {
    for (const slot of this.seats) if (fault || slot.status === "ACTIVE") slot.status = fault ? "ERROR" : "DONE";
  }
}
