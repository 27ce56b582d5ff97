import { describe, expect, it } from "vitest";
import { SeatClock, SeatClocks } from "../../../server/match/clock.ts";
import { DEFAULT_CLOCKS } from "../../../server/match/clock.ts";
import { fakeTimers } from "./fake-timers.ts";

describe("a seat's clock", () => {
  it("spends main time, then the overage bank, and adds the increment up to the base", () => {
    const clock = new SeatClock({ baseMs: 1000, incrementMs: 300, overageMs: 500 });
    clock.charge(400);
    expect(clock.view()).toEqual({ mainMs: 900, overageMs: 500, incrementMs: 300 });
    clock.charge(1200);
    expect(clock.view()).toEqual({ mainMs: 300, overageMs: 200, incrementMs: 300 });
    expect(clock.view(400)).toEqual({ mainMs: 0, overageMs: 100, incrementMs: 300 });
  });
});

describe("the seats' clocks", () => {
  it("runs a decision's clock from its turn: deadline fixed, timeout when the budget is spent", () => {
    const timers = fakeTimers();
    const clocks = new SeatClocks(DEFAULT_CLOCKS, 2, timers);
    clocks.seat(0, "bot");
    clocks.seat(1, "human");
    const decision: { seat: number; startedAt: number; deadline?: number; running?: boolean; timer?: unknown } = {
      seat: 0,
      startedAt: 0,
    };
    timers.advance(100);
    let timedOut = false;
    clocks.run(decision, () => timedOut = true);
    expect(decision).toMatchObject({ startedAt: 100, deadline: 1_000_100 + 15_000, running: true });
    timers.advance(2_000);
    expect(clocks.view(0, decision)).toEqual({ mainMs: 3_000, overageMs: 10_000, incrementMs: 5_000 });
    expect(clocks.times((seat) => (seat === 0 ? decision : undefined), true)).toEqual([
      { remainingMs: 13_000, running: true },
      { remainingMs: 60_000, running: false },
    ]);
    expect(clocks.times(() => decision, false)[0]).toEqual({ remainingMs: 15_000, running: false });
    timers.advance(13_000);
    expect(timedOut).toBe(true);
  });

  it("charges a taken decision and stops its timer", () => {
    const timers = fakeTimers();
    const clocks = new SeatClocks(DEFAULT_CLOCKS, 1, timers);
    clocks.seat(0, "bot");
    const decision = { seat: 0, startedAt: 0 };
    clocks.run(decision, () => {
      throw new Error("timed out");
    });
    timers.advance(1_500);
    expect(clocks.charge(decision)).toBe(1_500);
    expect(timers.pending).toBe(0);
    expect(clocks.view(0)).toEqual({ mainMs: 5_000, overageMs: 10_000, incrementMs: 5_000 });
  });
});
