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

/** The timers a match's parts schedule with: the real ones, or a test's own (no part waits on wall time itself). */
export interface Timers {
  set(run: () => void, ms: number): unknown;
  clear(handle: unknown): void;
  /** A monotonic clock, ms (performance.now). */
  now(): number;
  /** Wall time, epoch ms (Date.now). */
  wall(): number;
}

export const REAL_TIMERS: Timers = {
  set: (run, ms) => setTimeout(run, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  now: () => performance.now(),
  wall: () => Date.now(),
};

/** What SeatClocks needs of a decision: when its seat was asked, and its running clock. */
export interface Timed {
  readonly seat: number;
  startedAt: number;
  deadline?: number;
  running?: boolean;
  timer?: unknown;
}

/**
 * The seats' clocks in a match: each seat's SeatClock (by its kind's spec), and the clock of each open decision,
 * which runs from when its `turn` goes out until it is taken or its deadline passes.
 */
export class SeatClocks {
  private readonly clocks: (SeatClock | undefined)[];

  constructor(
    private readonly specs: Readonly<Record<SeatKind, ClockSpec>>,
    seats: number,
    readonly timers: Timers = REAL_TIMERS,
  ) {
    this.clocks = Array.from({ length: seats }, () => undefined);
  }

  /** Gives a newly taken seat its kind's clock. */
  seat(seat: number, kind: SeatKind): void {
    this.clocks[seat] = new SeatClock(this.specs[kind]);
  }

  /** Starts a decision's clock now: its deadline is fixed, and `onTimeout` runs once the seat's budget is spent. */
  run(decision: Timed, onTimeout: () => void): void {
    const budget = this.clocks[decision.seat]!.budgetMs;
    decision.startedAt = this.timers.now();
    decision.deadline = Math.round(this.timers.wall() + budget);
    decision.running = true;
    decision.timer = this.timers.set(onTimeout, budget);
  }

  /** Stops a decision's clock (it was taken, or the match stops). */
  stop(decision: Timed): void {
    if (decision.timer !== undefined) this.timers.clear(decision.timer);
  }

  /** Time spent on a decision so far. */
  spent(decision: Timed): number {
    return this.timers.now() - decision.startedAt;
  }

  /** Charges a taken decision to its seat's clock, stopping it; the time it took. */
  charge(decision: Timed): number {
    this.stop(decision);
    const used = this.spent(decision);
    this.clocks[decision.seat]!.charge(used);
    return used;
  }

  /** A seat's clock as its frames show it; `open`, its open decision (time spent on it is counted). */
  view(seat: number, open?: Timed): ClockView {
    return this.clocks[seat]!.view(open ? this.spent(open) : 0);
  }

  /** Each seat's time left, and whether it runs: `open` gives each seat's open decision; none run unless `playing`. */
  times(open: (seat: number) => Timed | undefined, playing: boolean): { remainingMs: number; running: boolean }[] {
    const now = this.timers.now();
    return this.clocks.map((clock, seat) => {
      const decision = open(seat);
      const running = decision?.running === true && playing;
      const remainingMs = clock ? clock.budgetMs - (running ? now - decision!.startedAt : 0) : 0;
      return { remainingMs: Math.max(0, Math.round(remainingMs)), running };
    });
  }
}
