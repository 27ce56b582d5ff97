import type { Timers } from "../../../server/match/clock.ts";

/** Timers a test moves by hand: nothing runs until `advance` says so. */
export function fakeTimers(): Timers & { advance(ms: number): void; readonly pending: number } {
  let now = 0;
  let nextId = 1;
  const due = new Map<number, { at: number; run: () => void }>();
  return {
    set: (run, ms) => {
      due.set(nextId, { at: now + ms, run });
      return nextId++;
    },
    clear: (handle) => void due.delete(handle as number),
    now: () => now,
    wall: () => 1_000_000 + now,
    advance(ms) {
      now += ms;
      for (const [id, timer] of [...due].sort((a, b) => a[1].at - b[1].at)) {
        if (timer.at > now || !due.has(id)) continue;
        due.delete(id);
        timer.run();
      }
    },
    get pending() {
      return due.size;
    },
  };
}
