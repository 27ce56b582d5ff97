import { describe, expect, it } from "vitest";
import { bestResponse, expectedValue, exploitability } from "../../games/analysis/evaluate.ts";
import { profile, strategyPolicy, type TabularPolicy } from "../../games/analysis/policy.ts";
import { buildTree } from "../../games/analysis/tree.ts";
import { ActionError } from "../../games/core/action.ts";
import { ConfigError, configure } from "../../games/core/config.ts";
import { maskIds, shapeSize } from "../../games/core/numeric.ts";
import { Rng } from "../../games/core/rng.ts";
import {
  deal,
  DEALS,
  type KuhnAction,
  type KuhnConfig,
  kuhnPoker as kuhn,
  type KuhnState,
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
const tree = buildTree(kuhn, standard);
const policy = (spec: string): TabularPolicy => strategyPolicy(tree, kuhn, strategy(spec));
/** Seat 0's expected payoff with `a` in seat 0 and `b` in seat 1. */
const value = (a: string, b: string) => expectedValue(tree, profile(tree, [policy(a), policy(b)]));

/** A match with the given deals, one per hand, instead of the Rng's. */
function dealt(cfg: KuhnConfig, c0: number, c1: number): KuhnState {
  const state = start(cfg);
  deal(state, c0, c1);
  return state;
}

/** Plays `action` for the seat to act, leaving any deal that follows pending. */
function move(state: KuhnState, action: KuhnAction): readonly number[] {
  const moves: (KuhnAction | undefined)[] = [undefined, undefined];
  moves[kuhn.toAct(state)[0]] = action;
  return kuhn.play(state, moves);
}

/** Applies text or JSON inputs as the seats to act send them; each later hand gets the next of `deals`. */
function play(state: KuhnState, inputs: unknown[], deals: [number, number][] = []): (readonly number[])[] {
  return inputs.map((input) => {
    const action = kuhn.parse(input, state, kuhn.toAct(state)[0]);
    if (action instanceof ActionError) throw new Error(action.message);
    const rewards = move(state, action);
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

/**
 * Every decision and terminal state of OpenSpiel's Kuhn playthroughs open_spiel/integration_tests/playthroughs/
 * kuhn_poker_2p.txt, misere(game=kuhn_poker()).txt and add_noise(epsilon=1.,seed=1,game=kuhn_poker()).txt in
 * google-deepmind/open_spiel at commit 112b77704631fc2ce7ad8e4581f6ca09798ce15a (the last two wrap kuhn_poker
 * and change only its payoffs): History() (two deals, then action ids), InformationStateTensor(0) and (1)
 * with ◉ as 1 and ◯ as 0 and `|` between its fields (player, private_card, betting), and LegalActions() of
 * the seat to act (none at the end).
 */
const OPEN_SPIEL_STATES: readonly { history: number[]; tensors: [string, string]; legal: number[] }[] = [
  // kuhn_poker_2p.txt
  { history: [1, 2], tensors: ["10|010|000000", "01|001|000000"], legal: [0, 1] },
  { history: [1, 2, 0], tensors: ["10|010|100000", "01|001|100000"], legal: [0, 1] },
  { history: [1, 2, 0, 0], tensors: ["10|010|101000", "01|001|101000"], legal: [] },
  // misere(game=kuhn_poker()).txt
  { history: [1, 2], tensors: ["10|010|000000", "01|001|000000"], legal: [0, 1] },
  { history: [1, 2, 0], tensors: ["10|010|100000", "01|001|100000"], legal: [0, 1] },
  { history: [1, 2, 0, 1], tensors: ["10|010|100100", "01|001|100100"], legal: [0, 1] },
  { history: [1, 2, 0, 1, 1], tensors: ["10|010|100101", "01|001|100101"], legal: [] },
  // add_noise(epsilon=1.,seed=1,game=kuhn_poker()).txt
  { history: [2, 1], tensors: ["10|001|000000", "01|010|000000"], legal: [0, 1] },
  { history: [2, 1, 1], tensors: ["10|001|010000", "01|010|010000"], legal: [0, 1] },
  { history: [2, 1, 1, 0], tensors: ["10|001|011000", "01|010|011000"], legal: [] },
];

/** The tensor of `viewer`'s observation as digits, to compare with a `|`-separated expectation. */
function tensorOf(state: KuhnState, viewer: number | "public"): string {
  const tensor = new Float32Array(shapeSize(kuhn.observationShape(state.config)));
  kuhn.encode(kuhn.observe(state, viewer), tensor);
  return tensor.join("");
}

const digits = (layout: string) => layout.replaceAll("|", "");
const zeros = (n: number) => "0".repeat(n);

describe("kuhn-poker: numeric face", () => {
  it("is OpenSpiel's for one hand: its tensors and legal action ids in every state of its playthroughs", () => {
    expect(kuhn.observationShape(standard)).toEqual([11]);
    expect(kuhn.actionCount(standard)).toBe(2);
    const mask = new Uint8Array(2);
    for (const { history, tensors, legal } of OPEN_SPIEL_STATES) {
      const state = start(standard);
      // OpenSpiel deals a card at a time; one chance event here deals both.
      kuhn.resolve(state, DEALS.findIndex(([c0, c1]) => c0 === history[0] && c1 === history[1]));
      for (const id of history.slice(2)) move(state, kuhn.actionOf(id, state, kuhn.toAct(state)[0]) as KuhnAction);
      for (const seat of [0, 1]) {
        expect(tensorOf(state, seat), `${history} seat ${seat}`).toBe(digits(tensors[seat]));
        kuhn.legalMask(state, seat, mask);
        expect(maskIds(mask)).toEqual(kuhn.toAct(state)[0] === seat ? legal : []);
      }
    }
  });

  it("maps Pass and Bet to check or fold and bet or call, and back", () => {
    const state = dealt(standard, 0, 1);
    expect([0, 1].map((id) => kuhn.actionOf(id, state, 0))).toEqual([{ type: "check" }, { type: "bet" }]);
    move(state, { type: "bet" });
    expect([0, 1].map((id) => kuhn.actionOf(id, state, 1))).toEqual([{ type: "fold" }, { type: "call" }]);
    const types: KuhnAction["type"][] = ["check", "fold", "bet", "call"];
    expect(types.map((type) => kuhn.actionId({ type }, state, 1))).toEqual([0, 0, 1, 1]);
    const mask = new Uint8Array([7, 7]);
    kuhn.legalMask(state, 0, mask);
    expect([...mask]).toEqual([0, 0]);
    kuhn.legalMask(start(standard), 0, mask); // the deal is pending
    expect([...mask]).toEqual([0, 0]);
  });

  it("refuses ids out of range or out of turn, naming the legal ones", () => {
    const state = dealt(standard, 0, 1);
    const wide = kuhn.actionOf(2, state, 0) as ActionError;
    expect(wide.code).toBe("illegal_action");
    expect(wide.message).toBe("action id 2 is out of range: ids are integers in [0, 1]. Legal now: ids 0, 1.");
    expect((kuhn.actionOf(0.5, state, 0) as ActionError).code).toBe("illegal_action");
    expect((kuhn.actionOf(0, state, 1) as ActionError).code).toBe("not_your_turn");
  });

  it("recalls every hand of a longer match: cards seen, betting and who acted first", () => {
    const textarena = config({}, "textarena");
    expect(kuhn.observationShape(textarena)).toEqual([55]);
    // Hand 1: player 1 (K) bets, player 0 (J) folds; hand 2: Q against J, player 0 checks.
    const state = dealt(textarena, 0, 2);
    play(state, ["[bet]", "[fold]"], [[1, 0]]);
    play(state, ["[check]"]);
    const hand1 = "011000|01";
    expect(tensorOf(state, 0)).toBe(digits(`10|010|100000|10|100|000|${hand1}|${zeros(28)}`));
    expect(tensorOf(state, 1)).toBe(digits(`01|100|100000|10|001|000|${hand1}|${zeros(28)}`));
    expect(tensorOf(state, "public")).toBe(digits(`00|000|100000|10|000|000|${hand1}|${zeros(28)}`));
    // Player 1 bets and player 0 calls: a showdown shows both cards. Hand 3: K against Q, both check.
    play(state, ["[bet]", "[call]"], [[2, 1]]);
    const hand2 = "100101|10";
    expect(tensorOf(state, 1)).toBe(digits(`01|010|000000|01|001|000|${hand1}|100|010|${hand2}|${zeros(14)}`));
    play(state, ["[check]", "[check]"]);
    // Over: the first block shows the last hand, as OpenSpiel's terminal tensor does.
    expect(tensorOf(state, 0)).toBe(
      digits(`10|001|101000|00|100|000|${hand1}|010|100|${hand2}|001|010|101000|01`),
    );
  });

  it("plays whole matches through the ids alone, every legal id a legal action with that id", () => {
    for (const cfg of [standard, config({}, "textarena"), config({ rounds: 4, firstPlayer: 1 })]) {
      const rng = new Rng(`numeric-${cfg.rounds}`);
      const mask = new Uint8Array(kuhn.actionCount(cfg));
      for (let match = 0; match < 50; match++) {
        const state = kuhn.init(cfg, rng);
        for (let toAct = kuhn.toAct(state); toAct.length > 0; toAct = kuhn.toAct(state)) {
          const seat = toAct[0];
          kuhn.legalMask(state, 1 - seat, mask);
          expect(maskIds(mask)).toEqual([]);
          kuhn.legalMask(state, seat, mask);
          const ids = maskIds(mask);
          for (const id of ids) {
            const action = kuhn.actionOf(id, state, seat) as KuhnAction;
            expect(kuhn.parse(action, state, seat)).toEqual(action);
            expect(kuhn.actionId(action, state, seat)).toBe(id);
          }
          expect(tensorOf(state, seat)).toBe(tensorOf(kuhn.clone(state), seat));
          const moves: (KuhnAction | undefined)[] = [undefined, undefined];
          moves[seat] = kuhn.actionOf(rng.pick(ids), state, seat) as KuhnAction;
          kuhn.apply(state, moves, rng);
        }
      }
    }
  });
});

describe("kuhn-poker: long matches list a bounded history", () => {
  it("refuses a match past 300 hands whose observations would list them all, and says why", () => {
    expect(() => config({ rounds: 301 })).toThrow(ConfigError);
    expect(() => config({ rounds: 301 })).toThrow(/must set `history` \(at most 300\)/);
    expect(() => config({ rounds: 100_001, history: 0 })).toThrow(ConfigError);
  });

  it("lists only the last `history` finished hands, numbered as they were played", () => {
    const cfg = config({ rounds: 100_000, history: 2 });
    const rng = new Rng("history");
    const state = kuhn.init(cfg, rng);
    for (let played = 0; played < 5;) {
      const seat = kuhn.toAct(state)[0];
      const moves: (KuhnAction | undefined)[] = [undefined, undefined];
      moves[seat] = { type: "check" };
      kuhn.apply(state, moves, rng);
      if (kuhn.observe(state, 0).actions.length === 0) played++;
    }
    const obs = kuhn.observe(state, 0);
    expect(obs.hand).toBe(6);
    expect(obs.history).toHaveLength(2);
    expect(kuhn.describe(obs)).toMatch(/^- Hand 4: .*\n- Hand 5: /m);
    expect(() => kuhn.observationShape(cfg)).toThrow(/only the last 2 of 100000 hands/);
    // At the end all three hands are finished: a history of two cannot fill the tensor's three hand blocks.
    expect(() => kuhn.observationShape(config({ rounds: 3, history: 2 }))).toThrow(/set it to 3 or more/);
    expect(kuhn.observationShape(config({ rounds: 3, history: 3 }))).toEqual([55]);
    // A history that covers the match gives the tensors of one that is not bounded, to the end.
    const tensors = (cfg: KuhnConfig) => {
      const rng = new Rng("bounded");
      const state = kuhn.init(cfg, rng);
      const out: number[][] = [];
      const tensor = new Float32Array(55);
      for (;;) {
        kuhn.encode(kuhn.observe(state, 0), tensor);
        out.push([...tensor]);
        const toAct = kuhn.toAct(state);
        if (toAct.length === 0) return out;
        const moves: (KuhnAction | undefined)[] = [undefined, undefined];
        moves[toAct[0]] = kuhn.actionOf(1, state, toAct[0]) as KuhnAction;
        kuhn.apply(state, moves, rng);
      }
    };
    expect(tensors(config({ rounds: 3, history: 3 }))).toEqual(tensors(config({ rounds: 3 })));
  });
});
