import { describe, expect, it } from "vitest";
import type { Action, FixedForm } from "../../games/core/action.ts";
import { configure } from "../../games/core/config.ts";
import type { Seat } from "../../games/core/seat.ts";
import { getGame } from "../../games/registry.ts";
import { createStrategy } from "../../policies/baselines/index.ts";
import { playMatch } from "../../policies/simulate.ts";
import { Match, type MatchResult } from "../../server/match/match.ts";

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

function play(seats: [Seat | undefined, Seat | undefined]): Promise<{ result: MatchResult; steps: number }> {
  const match = new Match({
    id: "in-process",
    game: kuhn,
    variant: "standard",
    config,
    seed: "seat-test",
    invite: "unused",
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
      if (event.kind === "end") resolve({ result: event.end, steps });
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
    const mixed = await play([slowFirst, undefined]);
    expect(mixed.result.reason).toBe("completed");
    expect(mixed.result.returns[0] + mixed.result.returns[1]).toBe(0);
  });
});
