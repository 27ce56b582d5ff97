import { describe, expect, it } from "vitest";
import { ActionError } from "../../games/core/action.ts";
import { configure } from "../../games/core/config.ts";
import { Rng } from "../../games/core/rng.ts";
import {
  setHands,
  type TasAction,
  type TasConfig,
  type TasObservation,
  type TasState,
  trustAndSplit as tas,
} from "../../games/trust-and-split/game.ts";
import { createStrategy, strategiesFor } from "../../policies/baselines/index.ts";
import { playMatch, simulate } from "../../policies/simulate.ts";
import type { Strategy } from "../../policies/strategy.ts";

const ROCK = 0;
const SCISSORS = 2;

function config(variant?: string, raw: Record<string, unknown> = {}): TasConfig {
  return configure<TasConfig>(tas, raw, variant).config;
}

/** What `strategy` does at `seat` now. */
function act(strategy: Strategy, state: TasState, seat: number): TasAction {
  return strategy.act({
    seat,
    legal: tas.legal(state, seat),
    observation: () => tas.observe(state, seat),
    rng: new Rng(0),
  }) as TasAction;
}

/** Plays a match with `names` and checks every action the strategies choose is legal as chosen. */
function playChecked(cfg: TasConfig, names: [string, string], seed: number): TasState {
  const strategies = names.map((name) => createStrategy(tas.id, name));
  const rng = new Rng(seed);
  const state = tas.init(cfg, rng);
  for (let toAct = tas.toAct(state); toAct.length > 0; toAct = tas.toAct(state)) {
    const moves: TasAction[] = [];
    for (const seat of toAct) {
      const action = act(strategies[seat], state, seat);
      const wire = JSON.parse(JSON.stringify(action));
      const parsed = tas.parse(wire, state, seat);
      if (parsed instanceof ActionError) throw new Error(`${names[seat]}: ${parsed.message}`);
      expect(parsed).toEqual(wire);
      moves[seat] = action;
    }
    tas.apply(state, moves, rng);
  }
  return state;
}

/** The most two seats can score in a round with these values: every unit to whoever values it more. */
function bestTotal(h: TasObservation["history"][number], quantity: number): number {
  return h.values[0].reduce((sum, v, i) => sum + quantity * Math.max(v, h.values[1][i]), 0);
}

describe("trust-and-split strategies", () => {
  it("are listed for the game", () => {
    const names = strategiesFor(tas.id).map((s) => s.name);
    for (const name of ["random", "greedy", "welfare", "fair"]) expect(names).toContain(name);
    expect(() => createStrategy(tas.id, "welfare:2")).toThrow(/takes no argument/);
  });

  it("always choose legal actions, in every variant and pairing", () => {
    const names = ["greedy", "welfare", "fair", "random"];
    for (const variant of ["rps", "alternating", "no-press"]) {
      for (const cfg of [config(variant), config(variant, { quantity: 7, messages: 2, rounds: 3 })]) {
        for (const a of names) {
          for (const b of names) playChecked(cfg, [a, b], 3);
        }
      }
    }
  });

  it("welfare tells its hand and takes all exactly when it holds the upper hand", () => {
    const state = playChecked(config(), ["welfare", "welfare"], 5);
    const obs = tas.observe(state, "public");
    for (const [r, h] of obs.history.entries()) {
      const said = obs.chat.filter((m) => m.round === r + 1);
      for (const m of said) expect(m.text).toBe(`My hand is ${h.hands![m.seat]}.`);
      expect(h.claims).toEqual(h.standing!.map((s) => [s === "upper" ? 10 : 0]));
      expect(h.rewards[0] + h.rewards[1]).toBe(100);
    }
  });

  it("welfare trusts the hand the other names, and claims half when none is named", () => {
    const welfare = createStrategy(tas.id, "welfare");
    const claimAfter = (otherSays: string): TasAction => {
      const rng = new Rng(1);
      const state = tas.init(config(), rng);
      setHands(state, ROCK, SCISSORS);
      while (tas.toAct(state).length === 1) {
        const [seat] = tas.toAct(state);
        const moves: TasAction[] = [];
        moves[seat] = seat === 1 ? { type: "message", text: otherSays } : act(welfare, state, 0);
        tas.apply(state, moves, rng);
      }
      return act(welfare, state, 0);
    };
    expect(claimAfter("My hand is scissors.")).toEqual({ type: "split", take: [10] });
    // A lie: rock loses to paper, so welfare gives everything away.
    expect(claimAfter("I hold PAPER")).toEqual({ type: "split", take: [0] });
    expect(claimAfter("I have the upper hand.")).toEqual({ type: "split", take: [5] });
    expect(claimAfter("rock or paper?")).toEqual({ type: "split", take: [5] });
  });

  it("welfare splits public values by who values each item more", () => {
    const cfg = config("no-press");
    for (let seed = 0; seed < 20; seed++) {
      const state = playChecked(cfg, ["welfare", "welfare"], seed);
      for (const h of tas.observe(state, 0).history) {
        expect(h.rewards[0] + h.rewards[1]).toBe(bestTotal(h, 10));
        h.values[0].forEach((v, i) => {
          const w = h.values[1][i];
          expect([h.claims[0][i], h.claims[1][i]]).toEqual(v > w ? [10, 0] : v < w ? [0, 10] : [5, 5]);
        });
      }
    }
    // Odd quantities: ties go one unit more to seat 0, so no unit is lost or over-claimed.
    const odd = playChecked(config("no-press", { quantity: 7 }), ["welfare", "welfare"], 1);
    for (const h of tas.observe(odd, 0).history) {
      expect(h.rewards[0] + h.rewards[1]).toBe(bestTotal(h, 7));
    }
  });

  it("greedy claims everything and fair half, in every item", () => {
    const state = playChecked(config("no-press", { quantity: 9 }), ["greedy", "fair"], 2);
    for (const h of tas.observe(state, 0).history) expect(h.claims).toEqual([[9, 9, 9], [4, 4, 4]]);
    const talk = tas.observe(playChecked(config(), ["greedy", "fair"], 2), 0).chat;
    expect(new Set(talk.map((m) => m.text))).toEqual(new Set(["I have the upper hand.", "Let's split evenly."]));
  });

  it("known totals: welfare 1000 and greedy 550 a match; welfare against greedy gets a third of the coins", async () => {
    const welfare = await simulate({ game: tas, seats: ["welfare"], matches: 200, seed: 1 });
    expect(welfare.meanReturns[0] + welfare.meanReturns[1]).toBeCloseTo(1000, 9);
    // Each seat holds the upper hand half the time: 500 expected, σ of a match ≈ 158.
    for (const m of welfare.meanReturns) expect(Math.abs(m - 500)).toBeLessThan(60);
    const greedy = await simulate({ game: tas, seats: ["greedy"], matches: 50, seed: 1 });
    expect(greedy.meanReturns[0] + greedy.meanReturns[1]).toBeCloseTo(550, 9);
    const strategies = [createStrategy(tas.id, "welfare"), createStrategy(tas.id, "greedy")];
    const seen: number[] = [];
    playMatch(tas, config(), strategies, 4, (moves, rewards) => {
      if (moves[0]?.type !== "split") return;
      // Claims 5 against 10: welfare receives 10/3 coins and greedy 20/3, each at its own value.
      expect([rewards[0] / (10 / 3), rewards[1] / (20 / 3)].map(Math.round).sort((a, b) => a - b)).toEqual([1, 10]);
      seen.push(rewards[0]);
    });
    expect(seen).toHaveLength(10);
  });
});
