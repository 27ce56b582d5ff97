import type { ClockView, SeatKind } from "../../protocol/frames.ts";

/**
 * A seat's time control: main time that starts at `baseMs` and gains `incrementMs` after each decision
 * (Fischer), capped at `baseMs` so a long match cannot bank hours; behind it an overage bank that is
 * spent only once main time is gone and never refills (Kaggle's overage). A decision's deadline is
 * main time plus the whole bank.
 */
export interface ClockSpec {
  readonly baseMs: number;
  readonly incrementMs: number;
  readonly overageMs: number;
}

/** Defaults per seat kind: what a process on the same machine, a remote program, an LLM and a person need. */
export const DEFAULT_CLOCKS: Readonly<Record<SeatKind, ClockSpec>> = {
  builtin: { baseMs: 50, incrementMs: 50, overageMs: 0 },
  // A batch waits for other matches' decisions, and the first decision of a version waits for it to load.
  policy: { baseMs: 10_000, incrementMs: 1_000, overageMs: 0 },
  bot: { baseMs: 5_000, incrementMs: 5_000, overageMs: 10_000 },
  llm: { baseMs: 60_000, incrementMs: 60_000, overageMs: 120_000 },
  human: { baseMs: 60_000, incrementMs: 10_000, overageMs: 0 },
};

export class SeatClock {
  private mainMs: number;
  private overageMs: number;

  constructor(readonly spec: ClockSpec) {
    this.mainMs = spec.baseMs;
    this.overageMs = spec.overageMs;
  }

  /** Time left for a decision that starts now. */
  get budgetMs(): number {
    return this.mainMs + this.overageMs;
  }

  /** Charges a decision that took `usedMs`: main time first, then the bank. */
  charge(usedMs: number): void {
    const over = usedMs - this.mainMs;
    if (over > 0) {
      this.overageMs = Math.max(0, this.overageMs - over);
      this.mainMs = 0;
    } else {
      this.mainMs -= usedMs;
    }
    this.mainMs = Math.min(this.spec.baseMs, this.mainMs + this.spec.incrementMs);
  }

  /** The clock as a client sees it; `runningForMs` is time already spent on the decision in progress. */
  view(runningForMs = 0): ClockView {
    const main = this.mainMs - runningForMs;
    return {
      mainMs: Math.max(0, Math.round(main)),
      overageMs: Math.max(0, Math.round(main < 0 ? this.overageMs + main : this.overageMs)),
      incrementMs: this.spec.incrementMs,
    };
  }
}
