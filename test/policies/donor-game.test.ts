import { describe, expect, it } from "vitest";
import { configure } from "../../games/core/config.ts";
import { Rng } from "../../games/core/rng.ts";
import { type DonorAction, type DonorConfig, donorGame, type DonorState } from "../../games/donor-game/game.ts";
import { createStrategy } from "../../policies/baselines/index.ts";
import { StrategyError } from "../../policies/strategy.ts";

function start(variant = "standard"): DonorState {
  const { config } = configure<DonorConfig>(donorGame, { shuffle: false }, variant);
  return donorGame.init(config, new Rng(1));
}

function act(spec: string, state: DonorState, seat: number): DonorAction {
  return createStrategy("donor-game", spec).act({
    seat,
    legal: donorGame.legal(state, seat),
    observation: () => donorGame.observe(state, seat),
    rng: new Rng(2),
  }) as DonorAction;
}

/** Plays one round: `moves` for the named donors, nothing given by the rest. */
function playRound(state: DonorState, moves: Record<number, DonorAction>): void {
  const all: DonorAction[] = [];
  for (const seat of donorGame.toAct(state)) all[seat] = moves[seat] ?? { type: "donate", amount: 0 };
  donorGame.apply(state, all, new Rng(0));
}

describe("donor-game strategies", () => {
  it("donate:f gives the fraction f of current resources", () => {
    const state = start();
    expect(act("donate:0.25", state, 0)).toEqual({ type: "donate", amount: 2.5 });
    expect(act("donate", state, 0)).toEqual({ type: "donate", amount: 5 });
    expect(() => createStrategy("donor-game", "donate:1.5")).toThrow(StrategyError);
  });

  it("reciprocator mirrors the recipient's latest share, with its own default for newcomers", () => {
    const state = start("costly-punishment");
    // Round 1: seat 0 → 6 (no history yet); seat 1 gives 30% to 7; seat 2 punishes 8.
    expect(act("reciprocator:0.1", state, 0)).toEqual({ type: "donate", amount: 1 });
    playRound(state, { 1: { type: "donate", amount: 3 }, 2: { type: "punish", amount: 1 } });
    // Round 2: seat 6 → 1 and seat 7 → 2 (see the schedule table).
    expect(act("reciprocator", state, 6)).toEqual({ type: "donate", amount: 3 });
    expect(act("reciprocator", state, 7)).toEqual({ type: "donate", amount: 0 });
  });

  it("every strategy's actions parse as legal", () => {
    for (const variant of ["standard", "costly-punishment", "partner-choice"]) {
      for (const spec of ["donate:1", "reciprocator:1", "random"]) {
        const state = start(variant);
        while (donorGame.toAct(state).length > 0) {
          const moves: Record<number, DonorAction> = {};
          for (const seat of donorGame.toAct(state)) {
            moves[seat] = act(spec, state, seat);
            expect(donorGame.parse(JSON.parse(JSON.stringify(moves[seat])), state, seat)).toEqual(moves[seat]);
          }
          playRound(state, moves);
        }
      }
    }
  });
});
