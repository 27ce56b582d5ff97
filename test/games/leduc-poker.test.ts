import { describe, expect, it } from "vitest";
import { solve } from "../../games/analysis/cfr.ts";
import { expectedValue, exploitability } from "../../games/analysis/evaluate.ts";
import { profile, strategyPolicy, type TabularPolicy } from "../../games/analysis/policy.ts";
import { buildTree } from "../../games/analysis/tree.ts";
import { ActionError } from "../../games/core/action.ts";
import { ConfigError, configure } from "../../games/core/config.ts";
import { maskIds, shapeSize } from "../../games/core/numeric.ts";
import { Rng } from "../../games/core/rng.ts";
import {
  deal,
  DEALS,
  type LeducAction,
  type LeducConfig,
  leducPoker as leduc,
  type LeducState,
  rankKey,
  revealPublic,
  start,
} from "../../games/leduc-poker/game.ts";
import { leducPokerStrategies } from "../../policies/baselines/leduc-poker.ts";
import { random } from "../../policies/baselines/random.ts";
import { LEDUC_NASH } from "../../policies/nash/leduc-poker.ts";
import { playMatch } from "../../policies/simulate.ts";
import type { Strategy } from "../../policies/strategy.ts";

/** OpenSpiel's value of Leduc for player 0 (sequence-form LP; Lanctot et al. 2017). */
const VALUE = -0.085606424078;

function config(raw: Record<string, unknown> = {}): LeducConfig {
  return configure<LeducConfig>(leduc, raw).config;
}

function strategy(name: string): Strategy {
  return name === "random" ? random.create(undefined) : leducPokerStrategies.find((d) => d.name === name)!.create(
    undefined,
  );
}

const standard = config();
const tree = buildTree(leduc, standard);
const policy = (name: string): TabularPolicy => strategyPolicy(tree, leduc, strategy(name));
const value = (a: string, b: string) => expectedValue(tree, profile(tree, [policy(a), policy(b)]));

/** A hand dealt `c0` and `c1` (OpenSpiel's card numbers: 0 J1, 1 J2, 2 Q1, 3 Q2, 4 K1, 5 K2). */
function dealt(c0: number, c1: number, cfg = standard): LeducState {
  const state = start(cfg);
  deal(state, c0, c1);
  return state;
}

/** Plays `action` for the seat to act, leaving any deal that follows pending. */
function move(state: LeducState, action: LeducAction): readonly number[] {
  const moves: (LeducAction | undefined)[] = [undefined, undefined];
  moves[state.player] = action;
  return leduc.play(state, moves);
}

/** Applies inputs as the seats to act send them; `board` is the public card when round 2 needs one. */
function play(state: LeducState, inputs: unknown[], board?: number): (readonly number[])[] {
  return inputs.map((input) => {
    const action = leduc.parse(input, state, state.player);
    if (action instanceof ActionError) throw new Error(action.message);
    const rewards = move(state, action);
    if (leduc.chance(state).length === 4) revealPublic(state, board!);
    return rewards;
  });
}

describe("leduc-poker: OpenSpiel's known answers (games.md §6)", () => {
  it("has 936 information states", () => {
    expect(tree.infosets).toHaveLength(936);
    expect(tree.counts.chance).toBe(1 + 30 * 5); // the deal, then a public card after each of 5 round-1 closes
  });

  it("finds uniform play exploitable by 2.373611…, best responses worth 167/80 and 383/144", () => {
    const result = exploitability(tree, policy("random"));
    expect(result.exploitability).toBeCloseTo(2.373611111111, 10);
    expect(result.nashConv).toBeCloseTo(4.747222222222, 10);
    expect(result.bestResponseValues[0]).toBeCloseTo(167 / 80, 12);
    expect(result.bestResponseValues[1]).toBeCloseTo(383 / 144, 12);
    expect(result.values[0]).toBeCloseTo(-5 / 64, 12);
  });

  it("values the pure pairings at 0 and always-fold's exploitability at 1", () => {
    expect(value("always-call", "always-call")).toBeCloseTo(0, 12);
    expect(value("always-raise", "always-raise")).toBeCloseTo(0, 12);
    expect(value("always-raise", "always-call")).toBeCloseTo(0, 12);
    expect(value("always-call", "always-raise")).toBeCloseTo(0, 12);
    const fold = exploitability(tree, policy("always-fold"));
    expect(fold.exploitability).toBeCloseTo(1, 12);
    expect(fold.nashConv).toBeCloseTo(2, 12);
  });

  it("solves to the game value −0.0856064 with CFR+", () => {
    const { policy: solved, trace } = solve(tree, { iterations: 1000, every: 250 });
    expect(Math.abs(expectedValue(tree, solved) - VALUE)).toBeLessThan(1e-3);
    expect(trace.map((t) => t.iteration)).toEqual([250, 500, 750, 1000]);
    expect(trace[3].exploitability).toBeLessThan(trace[0].exploitability);
    expect(trace[3].exploitability).toBeLessThan(0.015);
  });

  it("ships an equilibrium for `nash` within 0.001 of unexploitable", () => {
    const result = exploitability(tree, policy("nash"));
    expect(result.exploitability).toBeLessThan(1e-3);
    expect(result.values[0]).toBeCloseTo(VALUE, 3);
    expect(Object.keys(LEDUC_NASH)).toHaveLength(288); // 936 sets with suits dropped
    for (const row of Object.values(LEDUC_NASH)) expect(row.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);
  });

  it("replays OpenSpiel's playthrough: K2 raises, J2 folds", () => {
    const state = dealt(5, 1);
    play(state, ["Raise"]);
    expect(leduc.observe(state, 0).infoState).toBe(
      "[Observer: 0][Private: 5][Round 1][Player: 1][Pot: 4][Money: 97 99][Round1: 2][Round2: ]",
    );
    expect(leduc.observe(state, 1).infoState).toBe(
      "[Observer: 1][Private: 1][Round 1][Player: 1][Pot: 4][Money: 97 99][Round1: 2][Round2: ]",
    );
    expect(play(state, ["Fold"])).toEqual([[1, -1]]);
    expect(leduc.returns(state)).toEqual([1, -1]);
    expect(leduc.toAct(state)).toEqual([]);
  });
});

describe("leduc-poker: rules", () => {
  it("raises 2 in round 1 and 4 in round 2, at most twice a round: 13 chips at most", () => {
    const state = dealt(4, 0); // K1 against J1
    play(state, ["raise", "raise", "call", "raise", "raise", "call"], 3);
    expect(leduc.observe(state, "public").history[0]).toMatchObject({ betting: "rrc/rrc", rewards: [13, -13] });
  });

  it("opens round 2 with the first player, after the public card", () => {
    const state = dealt(0, 2);
    play(state, ["call", "raise", "call"], 5);
    const obs = leduc.observe(state, 1);
    expect(obs).toMatchObject({ round: 2, toAct: 0, publicCard: "K2", betting: "crc/", pot: 6, owed: 0 });
    expect(obs.infoState).toBe(
      "[Observer: 1][Private: 2][Round 2][Player: 0][Pot: 6][Money: 97 97][Public: 5][Round1: 1 2 1][Round2: ]",
    );
  });

  it("ranks a pair above any card, else the higher rank, and splits equal ranks", () => {
    const check = (c0: number, c1: number, board: number) => {
      const state = dealt(c0, c1);
      return play(state, ["call", "call", "call", "call"], board).at(-1);
    };
    expect(check(0, 4, 1)).toEqual([1, -1]); // J1 pairs the J2 board and beats K1
    expect(check(4, 2, 0)).toEqual([1, -1]); // K beats Q
    expect(check(2, 5, 1)).toEqual([-1, 1]);
    expect(check(0, 1, 3)).toEqual([0, 0]); // J1 and J2 split
  });

  it("deals the public card from the four cards left, uniformly through the Rng", () => {
    const state = dealt(0, 5);
    play(state, ["call"]);
    move(state, { type: "call" });
    expect(leduc.chance(state)).toEqual([0.25, 0.25, 0.25, 0.25]);
    expect(leduc.toAct(state)).toEqual([]);
    const boards = [0, 1, 2, 3].map((k) => {
      const copy = leduc.clone(state);
      leduc.resolve(copy, k);
      return leduc.observe(copy, "public").publicCard;
    });
    expect(boards).toEqual(["J2", "Q1", "Q2", "K1"]);
    const counts = new Map<string, number>();
    const rng = new Rng("leduc-board");
    for (let i = 0; i < 4000; i++) {
      const copy = dealt(0, 5);
      leduc.apply(copy, [{ type: "call" }, undefined], rng);
      leduc.apply(copy, [undefined, { type: "call" }], rng);
      const board = leduc.observe(copy, "public").publicCard!;
      counts.set(board, (counts.get(board) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual(["J2", "K1", "Q1", "Q2"]);
    for (const n of counts.values()) expect(Math.abs(n - 1000)).toBeLessThan(120);
  });

  it("alternates the first player from hand to hand and sums the hands", () => {
    const rng = new Rng("hands");
    const state = leduc.init(config({ hands: 4, firstPlayer: 1 }), rng);
    const firsts: number[] = [];
    const rewards: (readonly number[])[] = [];
    for (let hand = 0; hand < 4; hand++) {
      firsts.push(state.player);
      // The first player raises and the other folds, losing its ante.
      for (const type of ["raise", "fold"] as const) {
        const moves: (LeducAction | undefined)[] = [undefined, undefined];
        moves[state.player] = { type };
        rewards.push(leduc.apply(state, moves, rng));
      }
    }
    expect(firsts).toEqual([1, 0, 1, 0]);
    expect(rewards.filter((_, i) => i % 2 === 1)).toEqual([[-1, 1], [1, -1], [-1, 1], [1, -1]]);
    expect(leduc.returns(state)).toEqual([0, 0]);
    expect(leduc.toAct(state)).toEqual([]);
  });
});

describe("leduc-poker: actions", () => {
  it("reads check and bet as call and raise while nothing is owed", () => {
    const state = dealt(0, 2);
    expect(leduc.parse({ type: "check" }, state, 0)).toEqual({ type: "call" });
    expect(leduc.parse("check", state, 0)).toEqual({ type: "call" });
    expect(leduc.parse("[bet]", state, 0)).toEqual({ type: "raise" });
    expect(leduc.parse("<CALL>", state, 0)).toEqual({ type: "call" });
    expect(leduc.parse("<answer><RAISE></answer>", state, 0)).toEqual({ type: "raise" });
    expect(leduc.parse("r", state, 0)).toEqual({ type: "raise" });
    expect(leduc.parse("Call", state, 0)).toEqual({ type: "call" });
    expect(leduc.parse('{"type":"check"}', state, 0)).toEqual({ type: "call" });
  });

  it("offers fold only facing a bet, and raise only under the cap", () => {
    const state = dealt(0, 2);
    const types = () => leduc.observe(state, state.player).legal;
    expect(types()).toEqual(["call", "raise"]);
    play(state, ["raise"]);
    expect(types()).toEqual(["fold", "call", "raise"]);
    play(state, ["raise"]);
    expect(types()).toEqual(["fold", "call"]);
  });

  it("explains each refusal and names what is legal", () => {
    const state = dealt(0, 2);
    const fold = leduc.parse({ type: "fold" }, state, 0) as ActionError;
    expect(fold.code).toBe("illegal_action");
    expect(fold.message).toBe(
      "nothing is owed, so there is nothing to fold: calling is a free check. Legal now: call | raise.",
    );
    const early = leduc.parse("call", state, 1) as ActionError;
    expect(early.code).toBe("not_your_turn");
    expect(early.message).toBe("it is player 0's turn.");
    play(state, ["raise"]);
    expect((leduc.parse("check", state, 1) as ActionError).message).toBe(
      "you owe 2 chip(s), so you cannot check. Legal now: fold | call | raise.",
    );
    play(state, ["raise"]);
    const capped = leduc.parse({ type: "raise" }, state, 0) as ActionError;
    expect(capped.code).toBe("illegal_action");
    expect(capped.message).toBe("this betting round has had its 2 raises, the most allowed. Legal now: fold | call.");
    expect((leduc.parse("<RAISE>", state, 0) as ActionError).message).toMatch(/2 raises/);
    expect((leduc.parse({ type: "call", amount: 4 }, state, 0) as ActionError).code).toBe("illegal_action");
    expect((leduc.parse(42, state, 0) as ActionError).code).toBe("malformed_action");
  });
});

describe("leduc-poker: observations", () => {
  it("hides the other card until showdown, and the public card until round 2", () => {
    const state = dealt(1, 4);
    expect(leduc.observe(state, 0)).toMatchObject({ card: "J2", publicCard: null, owed: 0, raiseSize: 2 });
    expect(leduc.observe(state, "public")).toMatchObject({ card: null, infoState: null });
    expect(JSON.stringify(leduc.observe(state, 0))).not.toMatch(/K1/);
    play(state, ["call", "call"], 2);
    expect(leduc.observe(state, 1)).toMatchObject({ card: "K1", publicCard: "Q1", round: 2, raiseSize: 4 });
    play(state, ["raise", "fold"]);
    const [hand] = leduc.observe(state, 0).history;
    expect(hand).toMatchObject({ cards: ["J2", null], publicCard: "Q1", showdown: false, rewards: [1, -1] });
    expect(leduc.observe(state, "public").history[0].cards).toEqual([null, null]);
  });

  it("shows both cards after a showdown, and keys the equilibrium by rank", () => {
    const state = dealt(3, 4, config({ hands: 2 }));
    play(state, ["call", "raise"]);
    const obs = leduc.observe(state, 0);
    expect(rankKey(obs.card!, obs.publicCard, obs.betting)).toBe("Q:cr");
    play(state, ["call"], 2);
    const paired = leduc.observe(state, 0);
    expect(rankKey(paired.card!, paired.publicCard, paired.betting)).toBe("Q:crc/Q:");
    play(state, ["call", "call"]);
    expect(leduc.observe(state, "public").history[0]).toMatchObject({
      cards: ["Q2", "K1"],
      showdown: true,
      winner: 0,
      rewards: [3, -3],
    });
    expect(leduc.describe(leduc.observe(state, 1))).toMatch(/Hand 1: you had king \(K1\), the other player had queen/);
  });

  it("refuses configs outside the rules, naming what is allowed", () => {
    expect(() => config({ hands: 0 })).toThrow(ConfigError);
    expect(() => config({ raises: 3 })).toThrow(/allowed: hands, firstPlayer/);
    expect(() => deal(start(standard), 2, 2)).toThrow(/distinct/);
    const state = dealt(0, 1);
    play(state, ["call"]);
    move(state, { type: "call" });
    expect(() => revealPublic(state, 1)).toThrow(/neither player holds/);
  });
});

describe("leduc-poker: strategies", () => {
  it("play legal moves with distributions summing to 1, in long matches too", () => {
    for (const name of ["always-call", "always-raise", "always-fold", "nash"]) {
      const s = strategy(name);
      const state = leduc.init(config({ hands: 30 }), new Rng(name));
      const rng = new Rng(2);
      for (let toAct = leduc.toAct(state); toAct.length > 0; toAct = leduc.toAct(state)) {
        const seat = toAct[0];
        const ctx = { seat, legal: leduc.legal(state, seat), observation: () => leduc.observe(state, seat), rng };
        const action = s.act(ctx) as LeducAction;
        expect(leduc.parse(action, state, seat)).toEqual(action);
        expect(s.distribution!(ctx).reduce((sum, d) => sum + d.probability, 0)).toBeCloseTo(1, 12);
        const moves: (LeducAction | undefined)[] = [undefined, undefined];
        moves[seat] = action;
        leduc.apply(state, moves, rng);
      }
    }
  });

  it("nash beats random by a clear margin in play", () => {
    let sum = 0;
    const seats = [strategy("nash"), strategy("random")];
    for (let seed = 0; seed < 4000; seed++) sum += playMatch(leduc, standard, seats, seed).returns[0];
    expect(sum / 4000).toBeGreaterThan(0.5);
  });
});

/**
 * Every decision and terminal state of OpenSpiel's two-player Leduc playthroughs open_spiel/integration_tests/
 * playthroughs/leduc_poker_1540482260.txt, leduc_poker_3977671846.txt and leduc_poker_773740114.txt in
 * google-deepmind/open_spiel at commit 112b77704631fc2ce7ad8e4581f6ca09798ce15a: History() (the private cards,
 * action ids, and the public card once round 1 closes), InformationStateTensor(0) and (1) with ◉ as 1 and ◯ as
 * 0 and `|` between its fields (player, private_card, community_card, then betting round 1 and round 2: the
 * playthrough prints betting [2, 4, 2] as four rows of an action each, round 1 on the left), and LegalActions()
 * of the seat to act (none at the end).
 */
const OPEN_SPIEL_STATES: readonly { history: number[]; tensors: [string, string]; legal: number[] }[] = [
  // leduc_poker_1540482260.txt
  {
    history: [5, 1],
    tensors: ["10|000001|000000|00000000|00000000", "01|010000|000000|00000000|00000000"],
    legal: [1, 2],
  },
  {
    history: [5, 1, 2],
    tensors: ["10|000001|000000|01000000|00000000", "01|010000|000000|01000000|00000000"],
    legal: [0, 1, 2],
  },
  {
    history: [5, 1, 2, 0],
    tensors: ["10|000001|000000|01000000|00000000", "01|010000|000000|01000000|00000000"],
    legal: [],
  },
  // leduc_poker_3977671846.txt
  {
    history: [1, 0],
    tensors: ["10|010000|000000|00000000|00000000", "01|100000|000000|00000000|00000000"],
    legal: [1, 2],
  },
  {
    history: [1, 0, 1],
    tensors: ["10|010000|000000|10000000|00000000", "01|100000|000000|10000000|00000000"],
    legal: [1, 2],
  },
  {
    history: [1, 0, 1, 2],
    tensors: ["10|010000|000000|10010000|00000000", "01|100000|000000|10010000|00000000"],
    legal: [0, 1, 2],
  },
  {
    history: [1, 0, 1, 2, 1, 3],
    tensors: ["10|010000|000100|10011000|00000000", "01|100000|000100|10011000|00000000"],
    legal: [1, 2],
  },
  {
    history: [1, 0, 1, 2, 1, 3, 1],
    tensors: ["10|010000|000100|10011000|10000000", "01|100000|000100|10011000|10000000"],
    legal: [1, 2],
  },
  {
    history: [1, 0, 1, 2, 1, 3, 1, 1],
    tensors: ["10|010000|000100|10011000|10100000", "01|100000|000100|10011000|10100000"],
    legal: [],
  },
  // leduc_poker_773740114.txt
  {
    history: [0, 3],
    tensors: ["10|100000|000000|00000000|00000000", "01|000100|000000|00000000|00000000"],
    legal: [1, 2],
  },
  {
    history: [0, 3, 2],
    tensors: ["10|100000|000000|01000000|00000000", "01|000100|000000|01000000|00000000"],
    legal: [0, 1, 2],
  },
  {
    history: [0, 3, 2, 0],
    tensors: ["10|100000|000000|01000000|00000000", "01|000100|000000|01000000|00000000"],
    legal: [],
  },
];

/** The tensor of `viewer`'s observation as digits, to compare with a `|`-separated expectation. */
function tensorOf(state: LeducState, viewer: number | "public"): string {
  const tensor = new Float32Array(shapeSize(leduc.observationShape(state.config)));
  leduc.encode(leduc.observe(state, viewer), tensor);
  return tensor.join("");
}

const digits = (layout: string) => layout.replaceAll("|", "");

describe("leduc-poker: numeric face", () => {
  it("is OpenSpiel's for one hand: its tensors and legal action ids in every state of its playthroughs", () => {
    expect(leduc.observationShape(standard)).toEqual([30]);
    expect(leduc.actionCount(standard)).toBe(3);
    const mask = new Uint8Array(3);
    for (const { history, tensors, legal } of OPEN_SPIEL_STATES) {
      const [c0, c1] = history;
      const state = start(standard);
      // OpenSpiel deals a private card at a time; one chance event here deals both.
      leduc.resolve(state, DEALS.findIndex(([a, b]) => a === c0 && b === c1));
      for (const entry of history.slice(2)) {
        if (leduc.chance(state).length > 0) {
          // The public card is chance's outcome by OpenSpiel's card number; here, its place among the four left.
          leduc.resolve(state, [0, 1, 2, 3, 4, 5].filter((card) => card !== c0 && card !== c1).indexOf(entry));
        } else move(state, leduc.actionOf(entry, state, state.player) as LeducAction);
      }
      for (const seat of [0, 1]) {
        expect(tensorOf(state, seat), `${history} seat ${seat}`).toBe(digits(tensors[seat]));
        leduc.legalMask(state, seat, mask);
        expect(maskIds(mask)).toEqual(leduc.toAct(state)[0] === seat ? legal : []);
      }
    }
  });

  it("maps ids to fold, call and raise, and back", () => {
    const state = dealt(0, 2);
    const mask = new Uint8Array(3);
    leduc.legalMask(state, 0, mask);
    expect([...mask]).toEqual([0, 1, 1]);
    expect([1, 2].map((id) => leduc.actionOf(id, state, 0))).toEqual([{ type: "call" }, { type: "raise" }]);
    play(state, ["raise", "raise"]);
    leduc.legalMask(state, 0, mask);
    expect([...mask]).toEqual([1, 1, 0]);
    expect(leduc.actionOf(0, state, 0)).toEqual({ type: "fold" });
    const raise = leduc.actionOf(2, state, 0) as ActionError;
    expect(raise.message).toBe("action id 2 is not legal now. Legal now: ids 0, 1.");
    expect((leduc.actionOf(-1, state, 0) as ActionError).message).toMatch(/out of range: ids are integers in \[0, 2\]/);
    expect((leduc.actionOf(1, state, 1) as ActionError).code).toBe("not_your_turn");
    const types: LeducAction["type"][] = ["fold", "call", "raise"];
    expect(types.map((type) => leduc.actionId({ type }, state, 0))).toEqual([0, 1, 2]);
    leduc.legalMask(state, 1, mask);
    expect([...mask]).toEqual([0, 0, 0]);
  });

  it("recalls every hand of a longer match: cards seen, public cards, betting and who acted first", () => {
    const cfg = config({ hands: 2 });
    expect(leduc.observationShape(cfg)).toEqual([104]);
    // Hand 1: Q2 against K1; check, raise, call; the public Q1; raise, call: Q2 pairs and wins at showdown.
    const state = dealt(3, 4, cfg);
    play(state, ["call", "raise", "call"], 2);
    play(state, ["raise", "call"]);
    // Hand 2: J1 against K2, player 1 first raises.
    deal(state, 0, 5);
    play(state, ["raise"]);
    const hand1 = "001000|10011000|01100000|10";
    const later = "0".repeat(36);
    expect(tensorOf(state, 0)).toBe(digits(`10|100000|000000|01000000|00000000|01|000100|000010|${hand1}|${later}`));
    expect(tensorOf(state, 1)).toBe(digits(`01|000001|000000|01000000|00000000|01|000010|000100|${hand1}|${later}`));
    expect(tensorOf(state, "public")).toBe(
      digits(`00|000000|000000|01000000|00000000|01|000100|000010|${hand1}|${later}`),
    );
    // Player 0 folds: its card stays hidden from player 1, and the match is over.
    play(state, ["fold"]);
    expect(tensorOf(state, 1)).toBe(
      digits(`01|000001|000000|01000000|00000000|00|000010|000100|${hand1}|000001|000000|000000|01000000|00000000|01`),
    );
  });

  it("plays whole matches through the ids alone, every legal id a legal action with that id", () => {
    for (const cfg of [standard, config({ hands: 5, firstPlayer: 1 })]) {
      const rng = new Rng(`numeric-${cfg.hands}`);
      const mask = new Uint8Array(leduc.actionCount(cfg));
      for (let match = 0; match < 50; match++) {
        const state = leduc.init(cfg, rng);
        for (let toAct = leduc.toAct(state); toAct.length > 0; toAct = leduc.toAct(state)) {
          const seat = toAct[0];
          leduc.legalMask(state, 1 - seat, mask);
          expect(maskIds(mask)).toEqual([]);
          leduc.legalMask(state, seat, mask);
          const ids = maskIds(mask);
          expect(ids).toEqual(
            leduc.legal(state, seat).map((form) =>
              leduc.actionId((form as { action: LeducAction }).action, state, seat)
            ),
          );
          for (const id of ids) {
            const action = leduc.actionOf(id, state, seat) as LeducAction;
            expect(leduc.parse(action, state, seat)).toEqual(action);
            expect(leduc.actionId(action, state, seat)).toBe(id);
          }
          expect(tensorOf(state, seat)).toBe(tensorOf(leduc.clone(state), seat));
          const moves: (LeducAction | undefined)[] = [undefined, undefined];
          moves[seat] = leduc.actionOf(rng.pick(ids), state, seat) as LeducAction;
          leduc.apply(state, moves, rng);
        }
      }
    }
  });
});
