import { describe, expect, it } from "vitest";
import { bestResponse, expectedValue, exploitability } from "../../games/analysis/evaluate.ts";
import { profile, strategyPolicy, type TabularPolicy } from "../../games/analysis/policy.ts";
import { buildTree } from "../../games/analysis/tree.ts";
import { ActionError } from "../../games/core/action.ts";
import { ConfigError, configure } from "../../games/core/config.ts";
import { Rng } from "../../games/core/rng.ts";
import {
  deal,
  DEALS,
  type KuhnAction,
  type KuhnConfig,
  kuhnPoker as kuhn,
  kuhnPokerExact,
  type KuhnState,
  play as playAction,
  start,
} from "../../games/kuhn-poker/game.ts";
import { kuhnPokerStrategies } from "../../policies/baselines/kuhn-poker.ts";
import { random } from "../../policies/baselines/random.ts";
import { playMatch } from "../../policies/simulate.ts";
import { type Strategy, StrategyError } from "../../policies/strategy.ts";

function config(raw: Record<string, unknown> = {}, variant?: string): KuhnConfig {
  return configure<KuhnConfig>(kuhn, raw, variant).config;
}

function strategy(spec: string): Strategy {
  const [name, arg] = spec.split(":");
  return name === "random" ? random.create(undefined) : kuhnPokerStrategies.find((d) => d.name === name)!.create(arg);
}

const standard = config();
const tree = buildTree(kuhnPokerExact, standard);
const policy = (spec: string): TabularPolicy => strategyPolicy(tree, kuhn, strategy(spec));
/** Seat 0's expected payoff with `a` in seat 0 and `b` in seat 1. */
const value = (a: string, b: string) => expectedValue(tree, profile(tree, [policy(a), policy(b)]));

/** A match with the given deals, one per hand, instead of the Rng's. */
function dealt(cfg: KuhnConfig, c0: number, c1: number): KuhnState {
  const state = start(cfg);
  deal(state, c0, c1);
  return state;
}

/** Applies text or JSON inputs as the seats to act send them; each later hand gets the next of `deals`. */
function play(state: KuhnState, inputs: unknown[], deals: [number, number][] = []): (readonly number[])[] {
  return inputs.map((input) => {
    const seat = kuhn.toAct(state)[0];
    const action = kuhn.parse(input, state, seat);
    if (action instanceof ActionError) throw new Error(action.message);
    const rewards = playAction(state, action);
    if (!state.dealt && deals.length > 0) deal(state, ...deals.shift()!);
    return rewards;
  });
}

describe("kuhn-poker: OpenSpiel's known answers (games.md §5.1)", () => {
  it("has 12 information sets, 54 non-chance histories and 30 terminal ones", () => {
    expect(tree.infosets).toHaveLength(12);
    expect(tree.infosets.filter((s) => s.seat === 0)).toHaveLength(6);
    expect(new Set(tree.infosets.map((s) => s.key))).toEqual(
      new Set(["0", "1", "2", "0pb", "1pb", "2pb", "0p", "1p", "2p", "0b", "1b", "2b"]),
    );
    expect(tree.counts.decision + tree.counts.terminal).toBe(54);
    expect(tree.counts.terminal).toBe(30);
    expect(tree.counts.chance).toBe(1);
  });

  it("values every equilibrium of the α family at −1/18 for player 0, and none is exploitable", () => {
    for (const alpha of [0, 0.1, 0.2, 1 / 3]) {
      const result = exploitability(tree, policy(`nash:${alpha}`));
      expect(result.values[0]).toBeCloseTo(-1 / 18, 12);
      expect(result.values[1]).toBeCloseTo(1 / 18, 12);
      expect(result.nashConv).toBeCloseTo(0, 12);
    }
  });

  it("finds uniform play exploitable by 11/24, best responses worth 1/2 and 5/12", () => {
    const result = exploitability(tree, policy("random"));
    expect(result.exploitability).toBeCloseTo(11 / 24, 12);
    expect(result.nashConv).toBeCloseTo(11 / 12, 12);
    expect(result.bestResponseValues[0]).toBeCloseTo(1 / 2, 12);
    expect(result.bestResponseValues[1]).toBeCloseTo(5 / 12, 12);
  });

  it("finds always-pass (OpenSpiel's first action) exploitable by 1, NashConv 2", () => {
    const result = exploitability(tree, policy("always-fold"));
    expect(result.exploitability).toBeCloseTo(1, 12);
    expect(result.nashConv).toBeCloseTo(2, 12);
  });

  it("values the pairings of the table for player 0", () => {
    expect(value("random", "random")).toBeCloseTo(1 / 8, 12);
    expect(value("always-fold", "always-fold")).toBeCloseTo(0, 12);
    expect(value("always-raise", "always-raise")).toBeCloseTo(0, 12);
    expect(value("always-raise", "always-fold")).toBeCloseTo(1, 12);
    expect(value("always-fold", "always-raise")).toBeCloseTo(-1, 12);
    expect(value("nash:0", "random")).toBeCloseTo(1 / 18, 12);
    expect(value("random", "nash:0")).toBeCloseTo(-1 / 6, 12);
  });

  it("gives a best response 1/3 against always-bet in either seat", () => {
    const bet = policy("always-raise");
    expect(bestResponse(tree, bet, 0).value).toBeCloseTo(1 / 3, 12);
    expect(bestResponse(tree, bet, 1).value).toBeCloseTo(1 / 3, 12);
  });

  it("settles OpenSpiel's single-deal tests, in OpenSpiel's own action words", () => {
    expect(play(dealt(standard, 1, 2), ["Pass", "Pass"]).at(-1)).toEqual([-1, 1]);
    expect(play(dealt(standard, 2, 0), ["Bet", "Bet"]).at(-1)).toEqual([2, -2]);
    expect(play(dealt(standard, 0, 1), ["Pass", "Bet", "Pass"]).at(-1)).toEqual([-1, 1]);
    expect(play(dealt(standard, 0, 2), ["Bet", "Pass"]).at(-1)).toEqual([1, -1]);
    const state = dealt(standard, 0, 2);
    play(state, ["Bet", "Pass"]);
    expect(kuhn.returns(state)).toEqual([1, -1]);
    expect(kuhn.toAct(state)).toEqual([]);
  });
});

describe("kuhn-poker: the textarena variant (games.md §5.2)", () => {
  const textarena = config({}, "textarena");

  it("plays three hands, player 1 first in hand 1, then alternating", () => {
    expect(textarena).toEqual({ rounds: 3, firstPlayer: 1, fixedPot: true });
    const state = dealt(textarena, 2, 0);
    const firsts: number[] = [];
    for (let hand = 0; hand < 3; hand++) {
      firsts.push(kuhn.toAct(state)[0]);
      play(state, ["[check]", "[check]"], hand < 2 ? [[2, 0]] : []);
    }
    expect(firsts).toEqual([1, 0, 1]);
    expect(kuhn.returns(state)).toEqual([3, -3]);
  });

  it("keeps the pot at 2: a called bet still moves exactly one chip", () => {
    const state = dealt(textarena, 0, 2);
    const rewards = play(state, ["[bet]", "[call]"], [[0, 2]]);
    expect(rewards.at(-1)).toEqual([-1, 1]);
    expect(kuhn.observe(state, 0).pot).toBe(2);
    play(state, ["[bet]", "[fold]"], [[0, 2]]);
    play(state, ["[check]", "[bet]", "[call]"]);
    expect(kuhn.returns(state)).toEqual([-1, 1]);
    expect(kuhn.observe(state, "public").history.map((h) => h.rewards[0])).toEqual([-1, 1, -1]);
  });

  it("is worth ±1 a hand in every outcome", () => {
    for (let seed = 0; seed < 200; seed++) {
      const outcome = playMatch(kuhn, textarena, [strategy("random"), strategy("random")], seed);
      expect(Math.abs(outcome.returns[0]) % 2).toBe(1); // three hands of ±1
    }
  });
});

describe("kuhn-poker: actions", () => {
  it("offers check or bet with no bet out, fold or call facing one", () => {
    const state = dealt(standard, 0, 1);
    expect(kuhn.legal(state, 0)).toEqual([
      { kind: "fixed", action: { type: "check" } },
      { kind: "fixed", action: { type: "bet" } },
    ]);
    expect(kuhn.legal(state, 1)).toEqual([]);
    play(state, ["check", "bet"]);
    expect(kuhn.legal(state, 0).map((f) => (f as { action: KuhnAction }).action.type)).toEqual(["fold", "call"]);
  });

  it("reads every alias by context", () => {
    const open = dealt(standard, 0, 1);
    const facing = dealt(standard, 0, 1);
    play(facing, ["bet"]);
    const read = (state: KuhnState, input: unknown) => kuhn.parse(input, state, kuhn.toAct(state)[0]);
    const cases: [unknown, KuhnAction | null, KuhnAction | null][] = [
      ["[check]", { type: "check" }, null],
      ["I will [Bet] now", { type: "bet" }, null],
      ["[call]", null, { type: "call" }],
      ["[fold]", null, { type: "fold" }],
      ["<answer><PASS></answer>", { type: "check" }, { type: "fold" }],
      ["<BET>", { type: "bet" }, { type: "call" }],
      ["Pass", { type: "check" }, { type: "fold" }],
      ["Bet", { type: "bet" }, { type: "call" }],
      ["c", { type: "check" }, { type: "call" }],
      ["r", { type: "bet" }, null],
      ["f", null, { type: "fold" }],
      ["check", { type: "check" }, null],
      ['{"type":"call"}', null, { type: "call" }],
      [{ type: "bet" }, { type: "bet" }, null],
    ];
    for (const [input, whenOpen, whenFacing] of cases) {
      const a = read(open, input);
      const b = read(facing, input);
      if (whenOpen) expect(a).toEqual(whenOpen);
      else expect(a).toBeInstanceOf(ActionError);
      if (whenFacing) expect(b).toEqual(whenFacing);
      else expect(b).toBeInstanceOf(ActionError);
    }
  });

  it("explains what is wrong and what is legal", () => {
    const state = dealt(standard, 0, 1);
    const notYours = kuhn.parse({ type: "check" }, state, 1) as ActionError;
    expect(notYours.code).toBe("not_your_turn");
    expect(notYours.message).toBe("it is player 0's turn.");
    const call = kuhn.parse({ type: "call" }, state, 0) as ActionError;
    expect(call.code).toBe("illegal_action");
    expect(call.message).toBe("there is no bet to call. Legal now: check | bet.");
    expect((kuhn.parse("f", state, 0) as ActionError).message).toMatch(/no bet to fold to.*Legal now: check \| bet/);
    play(state, ["bet"]);
    expect((kuhn.parse("[check]", state, 1) as ActionError).message).toBe(
      "you face a bet, so you cannot check. Legal now: fold | call.",
    );
    expect((kuhn.parse({ type: "bet" }, state, 1) as ActionError).message).toMatch(/only one.*fold \| call/);
    expect((kuhn.parse({ type: "raise" }, state, 1) as ActionError).code).toBe("illegal_action");
    expect((kuhn.parse({ kind: "call" }, state, 1) as ActionError).code).toBe("malformed_action");
    play(state, ["call"]);
    expect((kuhn.parse({ type: "check" }, state, 0) as ActionError).message).toBe("the match is over.");
  });
});

describe("kuhn-poker: observations", () => {
  it("shows a seat its own card and OpenSpiel's information state, and the public no card", () => {
    const state = dealt(standard, 0, 2);
    play(state, ["check", "bet"]);
    const p0 = kuhn.observe(state, 0);
    expect(p0).toMatchObject({ card: "J", infoState: "0pb", betting: "pb", actions: ["check", "bet"], toAct: 0 });
    expect(p0).toMatchObject({ pot: 3, contributions: [1, 2], legal: ["fold", "call"] });
    expect(kuhn.observe(state, 1)).toMatchObject({ card: "K", infoState: "2pb", legal: [] });
    const pub = kuhn.observe(state, "public");
    expect(pub).toMatchObject({ card: null, infoState: null });
    expect(JSON.stringify(pub)).not.toMatch(/"[JQK]"/);
  });

  it("never reveals a card after a fold, and shows both at showdown", () => {
    const cfg = config({ rounds: 2 });
    const state = dealt(cfg, 0, 2);
    play(state, ["bet", "fold"], [[1, 2]]);
    play(state, ["bet", "call"]);
    const [folded, shown] = kuhn.observe(state, 1).history;
    expect(folded.cards).toEqual([null, "K"]);
    expect(kuhn.observe(state, 0).history[0].cards).toEqual(["J", null]);
    expect(kuhn.observe(state, "public").history[0].cards).toEqual([null, null]);
    expect(folded).toMatchObject({ showdown: false, winner: 0, rewards: [1, -1], betting: "bp" });
    expect(shown).toMatchObject({ cards: ["Q", "K"], showdown: true, winner: 1, rewards: [-2, 2], first: 1 });
    expect(kuhn.observe(state, "public").history[1].cards).toEqual(["Q", "K"]);
    expect(kuhn.describe(kuhn.observe(state, 0))).toMatch(/the other player had an unseen card/);
  });

  it("describes the move for the seat to act", () => {
    const state = dealt(standard, 1, 0);
    const text = kuhn.describe(kuhn.observe(state, 0));
    expect(text).toMatch(/Your card is Q/);
    expect(text).toMatch(/\[check\] or \[bet\]/);
    expect(kuhn.describe(kuhn.observe(state, 1))).toMatch(/Wait for the other player/);
  });
});

describe("kuhn-poker: matches of several hands", () => {
  it("alternates the first move from seat 0 and sums the hands", () => {
    const cfg = config({ rounds: 4 });
    const state = dealt(cfg, 2, 1);
    const firsts: number[] = [];
    const rewards: (readonly number[])[] = [];
    for (let hand = 0; hand < 4; hand++) {
      firsts.push(kuhn.toAct(state)[0]);
      rewards.push(...play(state, ["bet", "call"], hand < 3 ? [[2, 1]] : []));
    }
    expect(firsts).toEqual([0, 1, 0, 1]);
    expect(rewards.filter((_, i) => i % 2 === 1)).toEqual([[2, -2], [2, -2], [2, -2], [2, -2]]);
    expect(kuhn.returns(state)).toEqual([8, -8]);
  });

  it("draws the six deals uniformly from the Rng", () => {
    const counts = new Map<string, number>();
    const rng = new Rng("kuhn-deals");
    for (let i = 0; i < 6000; i++) {
      const state = kuhn.init(standard, rng);
      const key = `${state.log[0]}${state.log[1]}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual(DEALS.map(([a, b]) => `${a}${b}`).sort());
    for (const n of counts.values()) expect(Math.abs(n - 1000)).toBeLessThan(150);
  });

  it("refuses configs outside the rules, naming what is allowed", () => {
    expect(() => config({ rounds: 0 })).toThrow(ConfigError);
    expect(() => config({ firstPlayer: 2 })).toThrow(/firstPlayer/);
    expect(() => config({ pot: 3 })).toThrow(/allowed: rounds, firstPlayer, fixedPot/);
    expect(() => deal(start(standard), 1, 1)).toThrow(/distinct/);
  });
});

describe("kuhn-poker: strategies", () => {
  it("play legal moves and state distributions that sum to 1", () => {
    for (const spec of ["always-call", "always-raise", "always-fold", "nash:0.25", "nash:0"]) {
      const s = strategy(spec);
      const state = kuhn.init(config({ rounds: 50 }), new Rng(spec));
      const rng = new Rng(1);
      for (let toAct = kuhn.toAct(state); toAct.length > 0; toAct = kuhn.toAct(state)) {
        const seat = toAct[0];
        const ctx = { seat, legal: kuhn.legal(state, seat), observation: () => kuhn.observe(state, seat), rng };
        const action = s.act(ctx) as KuhnAction;
        expect(kuhn.parse(action, state, seat)).toEqual(action);
        const dist = s.distribution!(ctx);
        expect(dist.reduce((sum, d) => sum + d.probability, 0)).toBeCloseTo(1, 12);
        const moves: (KuhnAction | undefined)[] = [undefined, undefined];
        moves[seat] = action;
        kuhn.apply(state, moves, rng);
      }
    }
  });

  it("earns about −1/18 a hand as first mover when nash meets nash", () => {
    const single = config();
    const nash = [strategy("nash:0"), strategy("nash:0")];
    let sum = 0;
    for (let seed = 0; seed < 20_000; seed++) sum += playMatch(kuhn, single, nash, seed).returns[0];
    expect(sum / 20_000).toBeCloseTo(-1 / 18, 1);
    // Over a match the first move alternates, so neither seat keeps the edge.
    const rounds = 300;
    const outcome = playMatch(kuhn, config({ rounds }), nash, 3);
    expect(Math.abs(outcome.returns[0] / rounds)).toBeLessThan(0.15);
  });

  it("refuses an α outside [0, 1/3]", () => {
    expect(() => strategy("nash:0.5")).toThrow(StrategyError);
    expect(() => strategy("nash:x")).toThrow(/\[0, 0.333/);
  });
});
