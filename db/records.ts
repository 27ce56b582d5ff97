import type { SeatKind } from "../protocol/frames.ts";

/** The replay store's records, as the server writes them and readers get them back. */

/** Who sat in a seat. `policy` is an in-process ONNX policy seat. */
export type ParticipantKind = SeatKind;

export interface SeatRecord {
  readonly kind: ParticipantKind;
  readonly name: string;
  /** The bot token's id (remote bots and LLM seats). */
  readonly tokenId?: string;
  /** The built-in strategy (`name[:arg]`) that plays the seat. */
  readonly strategy?: string;
  /** An LLM seat's model, as its agent reported it. */
  readonly model?: string;
  /** An LLM seat's endpoint, without credentials or query. */
  readonly endpoint?: string;
  /** An LLM seat's sampling parameters (temperature, max tokens, seed, ...). */
  readonly sampling?: Readonly<Record<string, string | number | boolean | null>>;
  /** A policy seat's registered policy: its id (never reused) and its version of the name. */
  readonly policyId?: string;
  readonly policyVersion?: number;
  /** A policy seat that plays its most likely action instead of sampling. */
  readonly greedy?: boolean;
  /**
   * The match was scheduled for this seat's player to learn from (a league's focal learner: a main agent or an
   * exploiter). Its co-players' seats are not: their experience of it is not theirs to learn from.
   */
  readonly learner?: boolean;
}

export const SEAT_STATUSES = ["ACTIVE", "DONE", "ERROR", "INVALID", "TIMEOUT", "DISCONNECTED"] as const;
export type SeatStatusRecord = (typeof SEAT_STATUSES)[number];
export const END_REASONS = ["completed", "forfeit", "aborted", "error"] as const;
export type EndReasonRecord = (typeof END_REASONS)[number];

/** A match: its header (fixed at creation) and its result (once it ends). */
export interface MatchRecord {
  readonly id: string;
  readonly game: string;
  readonly gameVersion: number;
  readonly variant: string;
  readonly config: unknown;
  /** The 64-bit seed as a decimal string (or the string that was hashed to it). */
  readonly seed: string;
  readonly seats: readonly (SeatRecord | null)[];
  /** The conduct policy in force: retries, onIllegal, onTimeout, holdMs. */
  readonly conduct: unknown;
  readonly statuses: readonly SeatStatusRecord[];
  /** Raw payoffs per seat once the match ended; null before. */
  readonly returns: readonly number[] | null;
  readonly endReason: EndReasonRecord | null;
  /** The seat whose conduct ended the match (forfeit, abort), if any. */
  readonly culprit: number | null;
  /** Game steps applied. */
  readonly steps: number;
  readonly createdAt: Date;
  readonly startedAt: Date | null;
  readonly endedAt: Date | null;
  /** Why the match ended with reason `error` (a fault in the server, a write the store refused). */
  readonly error?: string | null;
  /**
   * The invite that takes an open seat: kept so a restarted server honours it, and read back only to
   * restore the match (never served: it is a capability).
   */
  readonly invite?: string | null;
  /**
   * Each browser seat's key as its SHA-256 (hex), null for the others: a page holding the key takes its seat back
   * after a restart. Read back only to restore the match (never served: a credential's digest).
   */
  readonly seatKeys?: readonly (string | null)[] | null;
  /** The seed group it belongs to (the same start played several times), as its creator named it. */
  readonly group?: string | null;
  /** Whether it counts for ratings (the public queue's and tournaments' matches do); false when left out. */
  readonly rated?: boolean;
  /** Its place in the order matches end in (1, 2, ... with gaps): where an incremental export resumes. Null until it ends. */
  readonly endSeq?: number | null;
}

/** A refused attempt at a decision. */
export interface AttemptRecord {
  readonly input: unknown;
  readonly code: string;
  readonly message: string;
  readonly meta?: Record<string, unknown>;
}

/** Why the conduct policy chose a move: the clock ran out, retries ran out, the seat was released or withdrew. */
export type DefaultedReason = "timeout" | "illegal" | "released" | "withdrawn";

/** One decision of one seat: the unit the server acknowledges, and the row trainers learn from. */
export interface StepRecordRow {
  readonly matchId: string;
  readonly seq: number;
  readonly turn: number;
  readonly seat: number;
  readonly observation: unknown;
  readonly action: unknown;
  /**
   * The seat's input exactly as sent (text such as `"raise to 300"`) when it differs from `action`, the
   * canonical JSON it was read as; null when it does not (or the move was defaulted): a resend is recognised by it.
   */
  readonly input?: unknown;
  readonly legal: boolean;
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly attempts: readonly AttemptRecord[];
  readonly defaulted: DefaultedReason | null;
  readonly latencyMs: number;
  readonly meta: Record<string, unknown> | null;
  /** The step's rewards (every seat) on the decision that completed the step; null on the others. */
  readonly rewards: readonly number[] | null;
  readonly at: Date;
  /** The legal action forms the seat was offered (null in records written before they were kept). */
  readonly offered?: unknown;
  /** The legal action ids (the numeric face's mask, as its set ids) where the game has one for the config. */
  readonly legalIds?: readonly number[] | null;
  /** The text the seat was shown (its turn frame's `text`); null for a seat shown JSON only. */
  readonly prompt?: string | null;
}
