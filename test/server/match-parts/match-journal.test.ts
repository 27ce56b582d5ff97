import { describe, expect, it } from "vitest";
import type { FixedForm } from "../../../games/core/action.ts";
import { configure } from "../../../games/core/config.ts";
import { getGame } from "../../../games/registry.ts";
import { createStrategy } from "../../../policies/baselines/index.ts";
import type { StepRecordRow } from "../../../db/records.ts";
import type { ServerFrame, TurnFrame } from "../../../protocol/frames.ts";
import {
  Match,
  type MatchJournal,
  type MatchOptions,
  type SeatLink,
  type StepRecord,
} from "../../../server/match/match.ts";
import { fakeTimers } from "./fake-timers.ts";

/**
 * What a match hands its journal, as it arrives: a row is never changed after that, so every step's rewards must
 * be on a row when it arrives, whether the match writes a row per decision or in bulk.
 */

const kuhn = getGame("kuhn-poker");
const { config } = configure(kuhn, { rounds: 6 });

function capturing(): { journal: MatchJournal; rows: StepRecordRow[] } {
  const rows: StepRecordRow[] = [];
  const journal: MatchJournal = {
    writeMatch: () => Promise.resolve(),
    appendStep: (arrived) => {
      rows.push(...structuredClone([arrived].flat()));
      return Promise.resolve();
    },
    behind: false,
    caughtUp: () => Promise.resolve(),
    closeInError: () => Promise.resolve(),
  };
  return { journal, rows };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A Kuhn match of `participants` writing to a capturing journal, and the steps it applies. */
function kuhnMatch(id: string, participants: MatchOptions["participants"]) {
  const { journal, rows } = capturing();
  const match = new Match({
    id,
    game: kuhn,
    variant: "standard",
    config,
    seed: "rewards",
    invite: "i",
    journal,
    timers: fakeTimers(),
    participants,
  });
  const steps: StepRecord[] = [];
  match.subscribe((event) => event.kind === "step" && steps.push(event.step));
  return { match, rows, steps };
}

describe("a match's rows as its journal receives them", () => {
  it("carry every step's rewards when each decision is written on its own", async () => {
    const { match, rows, steps } = kuhnMatch("rows", [{ kind: "bot", name: "a" }, { kind: "bot", name: "b" }]);
    const frames: ServerFrame[][] = [[], []];
    const links: SeatLink[] = frames.map((to) => ({ text: false, send: (frame) => to.push(frame) }));
    match.connect(0, links[0]);
    match.connect(1, links[1]);
    match.open();
    const answered = new Set<number>();
    while (!match.ended) {
      await tick();
      for (const seat of [0, 1]) {
        const turn = frames[seat].findLast((f): f is TurnFrame => f.type === "turn");
        if (!turn || answered.has(turn.seq)) continue;
        answered.add(turn.seq);
        match.act(seat, turn.seq, (turn.legal[0] as FixedForm).action, undefined, links[seat]);
      }
    }
    expect(steps.length).toBeGreaterThan(6);
    const completing = steps.map((step) =>
      rows.find((row) => row.seq === Math.max(...step.seqs.filter((s) => s !== undefined)))
    );
    expect(completing.map((row) => row?.rewards)).toEqual(steps.map((step) => step.rewards));
    expect(rows.filter((row) => row.rewards !== null)).toHaveLength(steps.length);
  });

  it("carry every step's rewards when an in-process match writes them in bulk", async () => {
    const first = createStrategy("kuhn-poker", "always-fold");
    const builtins = [0, 1].map(() => ({ kind: "builtin" as const, name: "always-fold", strategy: first }));
    const { match, rows, steps } = kuhnMatch("bulk", builtins);
    match.open();
    await match.durableEnd();
    expect(rows.filter((row) => row.rewards !== null).map((row) => row.rewards)).toEqual(steps.map((s) => s.rewards));
  });
});
