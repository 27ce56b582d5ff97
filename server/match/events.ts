import type { Action } from "../../games/core/action.ts";
import type { EndReason, SeatStatus } from "../../protocol/frames.ts";

/** One step as it happened: for tests, spectators and (later) the replay store. */
export interface StepRecord {
  readonly index: number;
  /** The decision sequence number of each acting seat's move. */
  readonly seqs: readonly (number | undefined)[];
  readonly moves: readonly (Action | undefined)[];
  readonly rewards: readonly number[];
  /** Seats whose move the conduct policy chose for them. */
  readonly defaulted: readonly number[];
  /** The free fields each seat attached to its act (an LLM's prompt and response). */
  readonly meta: readonly (Record<string, unknown> | undefined)[];
}

export type MatchEvent =
  | { readonly kind: "start" }
  | { readonly kind: "step"; readonly step: StepRecord }
  | { readonly kind: "seat"; readonly seat: number }
  /** A decision's turn went out: its seat's clock runs from now. */
  | { readonly kind: "turn"; readonly seat: number }
  /** A seat moved in a step that still waits for other seats (simultaneous moves): it is no longer to act. */
  | { readonly kind: "moved"; readonly seat: number }
  | { readonly kind: "end"; readonly end: MatchResult }
  /** Another server process took the match over: this one has put it to rest and lets it go. */
  | { readonly kind: "handed_over" };

export interface MatchResult {
  readonly returns: readonly number[];
  readonly statuses: readonly SeatStatus[];
  readonly reason: EndReason;
  readonly culprit: number | null;
  readonly steps: number;
}

/** A match's listeners: each event goes to every one, in order of subscription. */
export class Emitter {
  private readonly listeners = new Set<(event: MatchEvent) => void>();

  subscribe(listener: (event: MatchEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: MatchEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}
