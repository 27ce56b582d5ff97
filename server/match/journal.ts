import { isDeepStrictEqual } from "node:util";
import type { ConductPolicy, EndReason, SeatStatus } from "../../protocol/frames.ts";
import type { DefaultedReason, MatchRecord, SeatRecord, StepRecordRow } from "../../db/records.ts";
import { MatchMovedError } from "../../db/group-commit.ts";
import type { Decision } from "./decisions.ts";
import type { MatchOptions } from "./match.ts";
import type { Participant } from "./occupancy.ts";

/**
 * The replay store as a match sees it: each promise resolves once the record is durable. A match
 * acknowledges an action, or shows anyone its consequences, only after that.
 */
export interface MatchJournal {
  writeMatch(record: MatchRecord): Promise<void>;
  /** One decision, or (for a match nobody is acknowledged in) many in bulk, in order. */
  appendStep(rows: StepRecordRow | readonly StepRecordRow[]): Promise<void>;
  /**
   * True while matches whose seats are all in-process must wait: the store cannot take their records now (see
   * GroupCommit.behind). They play on once `caughtUp` resolves.
   */
  readonly behind: boolean;
  caughtUp(): Promise<void>;
  /** Ends a match whose records were refused, writing only server-made values. */
  closeInError(
    matchId: string,
    end: { statuses: readonly string[]; error: string; steps: number; endedAt: Date },
  ): Promise<void>;
}

/**
 * Decisions of a match whose seats are all in-process written per batch (the group commit's statement
 * size); a match waits while two batches are unwritten, so however long it runs it never fills the
 * journal's buffer.
 */
export const BULK_ROWS = 4000;
export const BULK_IN_FLIGHT = 2;

/** A match as it stands, for its record: what it was made with, and how far it is. */
export interface MatchFacts extends Pick<MatchOptions, "id" | "game" | "variant" | "config" | "seed" | "participants"> {
  readonly conduct: ConductPolicy;
  readonly statuses: readonly SeatStatus[];
  readonly result?: {
    readonly returns: readonly number[];
    readonly reason: EndReason;
    readonly culprit: number | null;
  };
  readonly steps: number;
  readonly createdAt: Date;
  readonly startedAt: Date | null;
  readonly endedAt: Date | null;
  readonly error: string | null;
  readonly invite: string;
  readonly group: string | null;
  readonly rated: boolean;
  readonly seatKeys: readonly (string | null)[] | null;
}

/** How one seat is recorded. */
export function seatRecord(p: Participant): SeatRecord {
  return {
    kind: p.kind,
    name: p.name,
    ...(p.tokenId ? { tokenId: p.tokenId } : {}),
    ...(p.kind === "builtin" ? { strategy: p.name } : {}),
    ...(p.policy
      ? { policyId: p.policy.id, policyVersion: p.policy.version, ...(p.policy.greedy ? { greedy: true } : {}) }
      : {}),
    ...(p.learner ? { learner: true } : {}),
    ...p.agent,
  };
}

/** The match's row, as it stands. */
export function matchRecord(m: MatchFacts): MatchRecord {
  return {
    id: m.id,
    game: m.game.id,
    gameVersion: m.game.version,
    variant: m.variant,
    config: m.config,
    seed: m.seed,
    seats: m.participants.map((p) => (p ? seatRecord(p) : null)),
    conduct: m.conduct,
    statuses: [...m.statuses],
    returns: m.result ? [...m.result.returns] : null,
    endReason: m.result?.reason ?? null,
    culprit: m.result?.culprit ?? null,
    steps: m.steps,
    createdAt: m.createdAt,
    startedAt: m.startedAt,
    endedAt: m.endedAt,
    error: m.error,
    invite: m.invite,
    group: m.group,
    rated: m.rated,
    seatKeys: m.seatKeys,
  };
}

/** A decision as it was taken (action null: the seat never moved and its misconduct ends the match). */
export interface DecisionFacts {
  readonly matchId: string;
  readonly decision: Decision;
  /** The step it belongs to (steps applied before it). */
  readonly turn: number;
  readonly action: unknown;
  readonly defaulted: DefaultedReason | null;
  readonly latencyMs: number;
  readonly timedOut: boolean;
  /** The input as sent (null for none). */
  readonly input: unknown;
  readonly meta: Record<string, unknown> | null;
  /** What the seat saw, what it was offered, and its legal ids (null where the game has no numeric face). */
  readonly observation: unknown;
  readonly offered: unknown;
  readonly legalIds: number[] | null;
  readonly at: Date;
}

/** A decision's row; its rewards are those of the step it completes (null when it completes none). */
export function stepRow(f: DecisionFacts, rewards: readonly number[] | null = null): StepRecordRow {
  const { decision, action, defaulted, input } = f;
  const last = decision.attempts.at(-1);
  return {
    matchId: f.matchId,
    seq: decision.seq,
    turn: f.turn,
    seat: decision.seat,
    observation: f.observation,
    action,
    // The input as sent, when it is not already the canonical action (text, another key order).
    input: input === null || defaulted !== null || isDeepStrictEqual(input, action) ? null : input,
    legal: defaulted === null && action !== null,
    error: f.timedOut || defaulted === "timeout"
      ? { code: "timeout", message: "the seat's clock ran out" }
      : last
      ? { code: last.code, message: last.message }
      : null,
    attempts: decision.attempts,
    defaulted,
    latencyMs: Math.round(f.latencyMs * 1000) / 1000,
    meta: f.meta,
    rewards,
    at: f.at,
    offered: f.offered,
    legalIds: f.legalIds,
    prompt: decision.prompt ?? null,
  };
}

/** What the journal needs of its match. */
export interface JournalHooks {
  /** Runs `body` in the match's fault boundary. */
  guard(what: string, body: () => void): void;
  /** A write was refused for good (after the journal stopped writing and dropped what waited on it). */
  refused(error: Error): void;
  /** The store says another process owns the match now. */
  moved(): void;
}

/**
 * A match's journal: it builds the match's records, hands them to the store in order, and holds every
 * output (frames, views) until what was written before it is durable, so that nobody sees a state a crash
 * could take back. A match whose seats are all in-process writes its decisions in bulk instead, acknowledged
 * to nobody. A row is never changed once handed over: the decision that completes a step waits (synchronously,
 * the gate already closed) for the step's rewards, and goes out with them.
 */
export class Journal {
  /** Writes not yet durable; while any are, outputs wait in `outbox`. */
  #unwritten = 0;
  private readonly outbox: (() => void)[] = [];
  /** Decisions of an in-process match not yet handed to the store (see BULK_ROWS). */
  private readonly bulk: StepRecordRow[] = [];
  /** The decision that completes the step being applied: it goes out with the step's rewards. */
  private staged?: StepRecordRow;
  /** What an in-process match does once it may play on (see `wait`). */
  private resume?: () => void;
  /** Set while a restore replays the log: what it replays is written already. */
  muted = false;
  /** Set once every seat plays in-process: decisions go in bulk. */
  bulkMode = false;
  /** Set when the store refused a write for good: nothing more is written. */
  private broken = false;

  constructor(private readonly store: MatchJournal | undefined, private readonly hooks: JournalHooks) {}

  /** Whether records are being written (there is a store, it has not refused, no restore replays). */
  get recording(): boolean {
    return this.store !== undefined && !this.muted && !this.broken;
  }

  /** Writes not yet durable. */
  get unwritten(): number {
    return this.#unwritten;
  }

  /**
   * Whether an in-process match must wait before it plays on: two of its batches are unwritten, or the store is
   * behind (down, or its buffer filled).
   */
  get mustWait(): boolean {
    return !this.muted && this.store !== undefined && (this.#unwritten >= BULK_IN_FLIGHT || this.store.behind);
  }

  /**
   * An in-process match pauses: until one of its two batches is durable, or, while the store is behind, until it
   * has caught up. Its own records then stay bounded, and so do the store's.
   */
  wait(resume: () => void): void {
    this.resume = resume;
    if (this.#unwritten >= BULK_IN_FLIGHT) return;
    void this.store!.caughtUp().then(() => this.playOn());
  }

  private playOn(): void {
    const resume = this.resume;
    this.resume = undefined; // whichever comes first (a batch, or the store catching up) resumes it
    resume?.();
  }

  /**
   * Runs `output` once everything written so far is durable (at once when it is): outputs go out in this order.
   */
  deliver(output: () => void): void {
    if (this.#unwritten === 0) output();
    else this.outbox.push(output);
  }

  /** Writes the match's row; outputs after it wait until it is durable unless `hold` is false. */
  writeMatch(facts: MatchFacts, hold = true): void {
    if (!this.recording) return;
    this.settle();
    const write = this.store!.writeMatch(matchRecord(facts));
    if (hold) this.persist(write);
    else write.catch((error: Error) => this.refuse(error));
  }

  /**
   * Logs a decision. One that completes a step (`completes`) waits for the step's rewards (see `stepApplied`); its
   * write counts as unwritten from now, so outputs already wait for it.
   */
  decision(facts: DecisionFacts, completes: boolean): void {
    if (!this.recording) return;
    this.settle();
    const row = stepRow(facts);
    if (!completes) return this.handOver(row, false);
    this.staged = row;
    if (!this.bulkMode) this.#unwritten++;
  }

  /** The step was applied: the decision that completed it goes out with its rewards. */
  stepApplied(rewards: readonly number[]): void {
    this.settle(rewards);
    if (this.bulk.length >= BULK_ROWS) this.flush();
  }

  /** Hands over what is held back: a staged decision (without rewards, if none came), then the bulk rows. */
  flush(): void {
    this.settle();
    if (this.bulk.length === 0 || !this.store || this.broken) return;
    this.persist(this.store.appendStep(this.bulk.splice(0)));
  }

  /** Forgets what waits to be durable: nothing of it is sent, and nothing counts as unwritten. */
  drop(): void {
    this.outbox.length = 0;
    this.#unwritten = 0;
  }

  /** Ends the match in the store with server-made values only (after a refused write). */
  closeInError(matchId: string, end: Parameters<MatchJournal["closeInError"]>[1]): void {
    this.store!.closeInError(matchId, end).catch((again: Error) =>
      console.error(`ludus: match ${matchId}: recording its end failed too: ${again.message}`)
    );
  }

  private settle(rewards: readonly number[] | null = null): void {
    const row = this.staged;
    if (!row) return;
    this.staged = undefined;
    this.handOver(rewards ? { ...row, rewards } : row, true);
  }

  private handOver(row: StepRecordRow, reserved: boolean): void {
    if (this.bulkMode) this.bulk.push(row);
    else this.persist(this.store!.appendStep(row), reserved);
  }

  /** Counts a write as unwritten until it is durable (`reserved`: it was counted already). */
  private persist(write: Promise<void>, reserved = false): void {
    if (!reserved) this.#unwritten++;
    write.then(() => {
      --this.#unwritten;
      if (this.resume && this.#unwritten < BULK_IN_FLIGHT) this.playOn();
      if (this.#unwritten > 0) return;
      this.hooks.guard("sending what became durable", () => {
        for (const output of this.outbox.splice(0)) output();
      });
    }, (error: Error) => this.refuse(error));
  }

  private refuse(error: Error): void {
    if (error instanceof MatchMovedError) return this.hooks.moved();
    if (this.broken) return;
    this.broken = true;
    this.drop();
    this.hooks.refused(error);
  }
}
