import { describe, expect, it } from "vitest";
import type { Action, FixedForm } from "../../games/core/action.ts";
import { configure } from "../../games/core/config.ts";
import type { Seat } from "../../games/core/seat.ts";
import { getGame } from "../../games/registry.ts";
import { createStrategy } from "../../policies/baselines/index.ts";
import { playMatch } from "../../policies/simulate.ts";
import type { MatchRecord } from "../../db/records.ts";
import { Match, type MatchJournal, type MatchResult } from "../../server/match/match.ts";

/**
 * In-process seats decide through the engine's Seat: at once (a built-in) or with a promise (a policy).
 * A seat that answers later holds up only its own match, and the match comes out as the same game.
 */

const kuhn = getGame("kuhn-poker");
const { config } = configure(kuhn, { rounds: 20 });

/** The first legal action, later: a stand-in for a policy that batches its decisions. */
const slowFirst: Seat = {
  decide: (turn) => new Promise<Action>((resolve) => setImmediate(() => resolve((turn.legal[0] as FixedForm).action))),
};
const first = createStrategy("kuhn-poker", "always-fold"); // check when it can, else fold: the first legal action

function play(
  seats: [Seat | undefined, Seat | undefined],
  clockMs = 5_000,
): Promise<{ result: MatchResult; steps: number; error: string | null }> {
  // What the match writes of itself, kept as its journal would hand it to the store.
  let recorded: MatchRecord | undefined;
  const journal: MatchJournal = {
    writeMatch: (record) => Promise.resolve(void (recorded = record)),
    appendStep: () => Promise.resolve(),
    behind: false,
    caughtUp: () => Promise.resolve(),
    closeInError: () => Promise.resolve(),
  };
  const match = new Match({
    journal,
    id: "in-process",
    game: kuhn,
    variant: "standard",
    config,
    seed: "seat-test",
    invite: "unused",
    clocks: { builtin: { baseMs: clockMs, incrementMs: clockMs, overageMs: 0 } },
    participants: seats.map((seat) => ({
      kind: "builtin" as const,
      name: seat ? "slow-first" : "always-fold",
      strategy: first,
      ...(seat ? { seat } : {}),
    })),
  });
  return new Promise((resolve) => {
    let steps = 0;
    match.subscribe((event) => {
      if (event.kind === "step") steps++;
      if (event.kind === "end") {
        queueMicrotask(() => resolve({ result: event.end, steps, error: recorded?.error ?? null }));
      }
    });
    match.open();
  });
}

describe("in-process seats", () => {
  it("plays a match whose seats answer with promises as the same game as answered at once", async () => {
    const later = await play([slowFirst, slowFirst]);
    const direct = playMatch(kuhn, config, [first, first], "seat-test");
    expect(later.result).toMatchObject({ reason: "completed", returns: direct.returns });
    expect(later.steps).toBe(direct.steps);
  });

  it("mixes a seat that answers later with one that answers at once", async () => {
    // Both seats play the first legal action, so the match is the one always-fold plays against itself.
    const mixed = await play([slowFirst, undefined]);
    const direct = playMatch(kuhn, config, [first, first], "seat-test");
    expect(mixed.result).toMatchObject({ reason: "completed", returns: direct.returns });
    expect(mixed.steps).toBe(direct.steps);
  });

  it("plays for a seat whose answer never comes, once its clock runs out", async () => {
    const silent: Seat = { decide: () => new Promise<Action>(() => {}) };
    const { result } = await play([silent, undefined], 5);
    expect(result.reason).toBe("completed"); // the default conduct plays the default action for it
    expect(result.statuses[0]).toBe("DONE");
  });

  it("ends the match in error, with the cause, when a seat's answer fails", async () => {
    const failing: Seat = { decide: () => Promise.reject(new Error("the model is gone")) };
    const { result, error } = await play([failing, undefined]);
    expect(result.reason).toBe("error");
    expect(error).toMatch(/the model is gone/);
  });
});
