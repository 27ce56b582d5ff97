import { isDeepStrictEqual } from "node:util";
import type { Action } from "../../games/core/action.ts";
import type { AttemptRecord } from "../../db/records.ts";

/** One decision a seat was asked for: open until its action is taken (or the conduct policy takes it). */
export interface Decision {
  readonly seq: number;
  readonly seat: number;
  /** When the seat was asked: reset when its `turn` frame actually goes out. */
  startedAt: number;
  /** The epoch ms its `turn` frame announces, fixed when the turn goes out (a resend shows the same). */
  deadline?: number;
  retriesLeft: number;
  /** Whether its `turn` went out and its clock runs (see SeatClocks.run). */
  running?: boolean;
  timer?: unknown;
  /** Refused attempts, for the record. */
  readonly attempts: AttemptRecord[];
  /** What the seat sees while the decision is open (the state cannot change until it is taken). */
  observation?: unknown;
  /** The text its turn frame showed the seat, when it asked for text: kept as shown for the record. */
  prompt?: string;
  /** Its tensor and legal ids, once a seat that asked for the numeric face was sent them (resends show the same). */
  numeric?: { readonly tensor: readonly number[]; readonly legalIds: number[] };
}

/** A decision already taken: who took it, as what, and the input that was sent (to recognise a resend). */
export interface Taken {
  readonly seat: number;
  readonly action: Action;
  readonly input: unknown;
}

/** What an `act` naming decision `seq` is, before its action is read. */
export type Answering =
  /** The same act again (same input, or the action it was read as): acknowledged again, nothing more. */
  | { readonly kind: "resend"; readonly action: Action }
  /** Another seat's decision, already taken. */
  | { readonly kind: "foreign"; readonly seat: number }
  /** This seat's decision, taken already as something else. */
  | { readonly kind: "stale"; readonly action: Action }
  /** Not taken yet: the caller checks that it is this seat's open decision (see `openFor`). */
  | { readonly kind: "new" };

/**
 * The decision book: issues each decision its sequence number, keeps the open ones (one per seat at most) and
 * those taken (so that a resent act is idempotent), and counts each open decision's retries. It knows no
 * clock, no game and no transport.
 */
export class DecisionBook {
  private readonly open = new Map<number, Decision>();
  private readonly taken = new Map<number, Taken>();
  private nextSeq = 1;

  constructor(private readonly retries: number) {}

  /** Decisions issued so far (the last sequence number). */
  get issued(): number {
    return this.nextSeq - 1;
  }

  /** Open decisions. */
  get openCount(): number {
    return this.open.size;
  }

  /** Opens the next decision, for `seat` (which has none open), asked at `now`. */
  issue(seat: number, now: number): Decision {
    const decision: Decision = { seq: this.nextSeq++, seat, startedAt: now, retriesLeft: this.retries, attempts: [] };
    this.open.set(seat, decision);
    return decision;
  }

  /** The seat's open decision, if any. */
  openFor(seat: number): Decision | undefined {
    return this.open.get(seat);
  }

  /** Whether `decision` is still the open one of its seat (not taken, timed out or replaced). */
  isOpen(decision: Decision): boolean {
    return this.open.get(decision.seat) === decision;
  }

  openDecisions(): Decision[] {
    return [...this.open.values()];
  }

  /** Closes a decision without recording it as taken (the match ends, or it is remembered separately). */
  close(decision: Decision): void {
    if (this.open.get(decision.seat) === decision) this.open.delete(decision.seat);
  }

  /** Closes every open decision. */
  closeAll(): void {
    this.open.clear();
  }

  /** Records decision `seq` as taken (for resends, and for restore to check the whole log was replayed). */
  remember(seq: number, taken: Taken): void {
    this.taken.set(seq, taken);
  }

  /** Whether `seq` was recorded as taken. */
  remembers(seq: number): boolean {
    return this.taken.has(seq);
  }

  /** Forgets the taken decisions: nobody resends to a match whose seats all play in-process. */
  forget(): void {
    this.taken.clear();
  }

  /** Which seat decision `seq` belongs to (open or taken), if it was issued. */
  seatOf(seq: number): number | undefined {
    const past = this.taken.get(seq);
    if (past) return past.seat;
    for (const decision of this.open.values()) if (decision.seq === seq) return decision.seat;
    return undefined;
  }

  /** What `seat`'s act for `seq` (sent as `input`) is, as far as taken decisions tell. */
  answering(seat: number, seq: number, input: unknown): Answering {
    const past = this.taken.get(seq);
    if (!past) return { kind: "new" };
    if (past.seat !== seat) return { kind: "foreign", seat: past.seat };
    if (isDeepStrictEqual(input, past.input) || isDeepStrictEqual(input, past.action)) {
      return { kind: "resend", action: past.action };
    }
    return { kind: "stale", action: past.action };
  }

  /** Why `seq` is not `seat`'s open decision: another seat's, or never issued. */
  misdirected(seq: number): string {
    const owner = [...this.open.values()].find((d) => d.seq === seq);
    return owner ? `decision ${seq} belongs to seat ${owner.seat}` : `no decision ${seq} has been issued`;
  }

  /** Counts a refused attempt against its decision: the retries left after it (negative: none were). */
  refuse(decision: Decision, attempt: AttemptRecord): number {
    decision.attempts.push(attempt);
    return --decision.retriesLeft;
  }
}
