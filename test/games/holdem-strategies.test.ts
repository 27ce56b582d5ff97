import { describe, expect, it } from "vitest";
import { ActionError } from "../../games/core/action.ts";
import { configure } from "../../games/core/config.ts";
import type { AnyGame } from "../../games/core/game.ts";
import { Rng } from "../../games/core/rng.ts";
import { parseCards } from "../../games/holdem/cards.ts";
import { holdem, type HoldemAction, type HoldemConfig, type HoldemState, setCards } from "../../games/holdem/game.ts";
import { chenScore, equity, holdemStrategies } from "../../policies/baselines/holdem.ts";
import { playMatch } from "../../policies/simulate.ts";
import type { Strategy } from "../../policies/strategy.ts";

const game = holdem as unknown as AnyGame;

function config(variant: string, raw: Record<string, unknown> = {}): HoldemConfig {
  return configure<HoldemConfig>(game, raw, variant).config;
}

function strategy(name: string): Strategy {
  return holdemStrategies.find((d) => d.name === name)!.create(undefined);
}

/** Plays a match with `names`, checking that every action the strategies choose parses back as itself. */
function playChecked(
  cfg: HoldemConfig,
  names: [string, string],
  seed: number,
): { state: HoldemState; actions: HoldemAction[] } {
  const strategies = names.map(strategy);
  const rng = new Rng(seed);
  const picker = new Rng(`${seed}-strategies`);
  const state = holdem.init(cfg, rng);
  const actions: HoldemAction[] = [];
  for (let toAct = holdem.toAct(state); toAct.length > 0; toAct = holdem.toAct(state)) {
    const seat = toAct[0];
    const action = strategies[seat].act({
      seat,
      legal: holdem.legal(state, seat),
      observation: () => holdem.observe(state, seat),
      rng: picker,
    }) as HoldemAction;
    const wire = JSON.parse(JSON.stringify(action));
    const parsed = holdem.parse(wire, state, seat);
    if (parsed instanceof ActionError) throw new Error(`${names[seat]}: ${parsed.message}`);
    expect(parsed).toEqual(wire);
    actions.push(action);
    const moves: (HoldemAction | undefined)[] = [];
    moves[seat] = action;
    holdem.apply(state, moves, rng);
  }
  return { state, actions };
}

describe("holdem strategies", () => {
  it("always choose legal actions, in every variant and seat", () => {
    const names = holdemStrategies.map((d) => d.name);
    for (const variant of ["hunl", "hulhe", "small"]) {
      const cfg = config(variant, { hands: 4 });
      for (const a of names) {
        for (const b of names) {
          for (let seed = 0; seed < 3; seed++) playChecked(cfg, [a, b], seed);
        }
      }
    }
  });

  it("always-call never folds or raises; always-raise raises by the minimum whenever it may", () => {
    const cfg = config("hunl", { hands: 6 });
    const { actions } = playChecked(cfg, ["always-call", "always-call"], 1);
    expect(new Set(actions.map((a) => a.type))).toEqual(new Set(["check", "call"]));
    const rng = new Rng(2);
    const state = holdem.init(cfg, rng);
    const raiser = strategy("always-raise");
    const act = () =>
      raiser.act({
        seat: holdem.toAct(state)[0],
        legal: holdem.legal(state, holdem.toAct(state)[0]),
        observation: () => holdem.observe(state, holdem.toAct(state)[0]),
        rng,
      }) as HoldemAction;
    expect(act()).toEqual({ type: "raise", amount: 200 });
    holdem.apply(state, [undefined, { type: "raise", amount: 19000 }], rng);
    expect(act()).toEqual({ type: "raise", amount: 20000 });
    holdem.apply(state, [{ type: "raise", amount: 20000 }, undefined], rng);
    expect(act()).toEqual({ type: "call" });
  });

  it("scores preflop hands by Chen's formula", () => {
    const score = (text: string) => {
      const [a, b] = parseCards(text);
      return chenScore(a, b);
    };
    expect(score("AsAd")).toBe(20);
    expect(score("AsKs")).toBe(12);
    expect(score("JsJd")).toBe(12);
    expect(score("Ts9s")).toBe(8);
    expect(score("5s5d")).toBe(5);
    expect(score("7s7d")).toBe(7);
    expect(score("2s2d")).toBe(5);
    expect(score("7s2d")).toBe(-1);
  });

  it("estimates equity against a random hand", () => {
    const rng = new Rng(3);
    const state = holdem.init(config("hunl"), rng);
    setCards(state, ["2c7d", "AsKs"], "QsJsTs3h4d");
    holdem.apply(state, [undefined, { type: "call" }], rng);
    holdem.apply(state, [{ type: "check" }, undefined], rng);
    // Seat 1 holds a royal flush from the flop on: nothing beats or ties it.
    expect(equity(holdem.observe(state, 1), new Rng(4), 500)).toBe(1);
    const weak = equity(holdem.observe(state, 0), new Rng(5), 2000);
    expect(weak).toBeGreaterThan(0.05);
    expect(weak).toBeLessThan(0.3);
  });

  it("hand-strength beats a calling station over many hands", () => {
    const cfg = config("hunl", { hands: 200 });
    const outcome = playMatch(game, cfg, [strategy("hand-strength"), strategy("always-call")], "hand-strength");
    expect(outcome.returns[0]).toBeGreaterThan(0);
    expect(outcome.returns[0] + outcome.returns[1]).toBe(0);
  });
});
