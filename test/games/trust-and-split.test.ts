import { describe, expect, it } from "vitest";
import { type Action, ActionError } from "../../games/core/action.ts";
import { ConfigError, configure } from "../../games/core/config.ts";
import { NumericFaceError } from "../../games/core/game.ts";
import { shapeSize } from "../../games/core/numeric.ts";
import { Rng } from "../../games/core/rng.ts";
import {
  beats,
  HANDS,
  setHands,
  type TasAction,
  type TasConfig,
  type TasObservation,
  type TasState,
  trustAndSplit as tas,
} from "../../games/trust-and-split/game.ts";
import { createStrategy } from "../../policies/baselines/index.ts";
import { randomAction } from "../../policies/baselines/random.ts";
import { playMatch } from "../../policies/simulate.ts";
import { must } from "../support/actions.ts";

function config(raw: Record<string, unknown> = {}, variant?: string): TasConfig {
  return configure<TasConfig>(tas, raw, variant).config;
}

const rps = config();
const noPress = config({}, "no-press");
const alternating = config({}, "alternating");

const ROCK = 0;
const PAPER = 1;
const SCISSORS = 2;

function say(text: string): TasAction {
  return { type: "message", text };
}

function claim(...take: number[]): TasAction {
  return { type: "split", take };
}

/** Sends a message from whoever is to speak, until the split phase. */
function chat(state: TasState, rng: Rng): void {
  while (tas.observe(state, "public").phase === "message") {
    const [seat] = tas.toAct(state);
    const moves: (TasAction | undefined)[] = [];
    moves[seat] = say(`hello from ${seat}`);
    expect(tas.apply(state, moves, rng)).toEqual([0, 0]);
  }
}

/** One round of the default game with fixed hands and claims: its rewards, from the game itself. */
function roundWith(h0: number, h1: number, c0: number, c1: number): readonly number[] {
  const rng = new Rng(7);
  const state = tas.init(rps, rng);
  setHands(state, h0, h1);
  chat(state, rng);
  const rewards = tas.apply(state, [claim(c0), claim(c1)], rng);
  expect(tas.returns(state)).toEqual(rewards);
  expect(tas.observe(state, 0).history[0].rewards).toEqual(rewards);
  return rewards;
}

function parse(state: TasState, seat: number, input: unknown): TasAction {
  return must(tas.parse(input, state, seat));
}

/** Plays random actions to the end, calling `check` before every step. */
function playout(cfg: TasConfig, seed: string, check: (state: TasState) => void): TasState {
  const rng = new Rng(seed);
  const picker = new Rng(`${seed}-picker`);
  const state = tas.init(cfg, rng);
  for (let toAct = tas.toAct(state); toAct.length > 0; toAct = tas.toAct(state)) {
    check(state);
    const moves: (Action | undefined)[] = [];
    for (const seat of toAct) moves[seat] = randomAction(picker.pick(tas.legal(state, seat)), picker);
    tas.apply(state, moves as TasAction[], rng);
  }
  check(state);
  return state;
}

describe("trust-and-split: known answers (games.md §4.1)", () => {
  it("pays the reward table exactly", () => {
    // Rock beats scissors: seat 0 holds the upper hand (10 per coin), seat 1 the lower (1 per coin).
    const upper0: [c0: number, c1: number, r0: number, r1: number][] = [
      [10, 0, 100, 0],
      [10, 10, 50, 5],
      [5, 5, 50, 5],
      [7, 5, 175 / 3, 25 / 6],
      [3, 4, 30, 4],
      [0, 10, 0, 10],
    ];
    for (const [c0, c1, r0, r1] of upper0) {
      const [got0, got1] = roundWith(ROCK, SCISSORS, c0, c1);
      expect(got0).toBeCloseTo(r0, 9);
      expect(got1).toBeCloseTo(r1, 9);
    }
    // Scissors loses to rock: now seat 1 values coins at 10.
    const [a, b] = roundWith(SCISSORS, ROCK, 6, 6);
    expect(a).toBeCloseTo(5, 9);
    expect(b).toBeCloseTo(50, 9);
  });

  it("keeps integer outcomes exact and scales claims in proportion", () => {
    expect(roundWith(PAPER, ROCK, 10, 0)).toEqual([100, 0]);
    expect(roundWith(PAPER, ROCK, 3, 4)).toEqual([30, 4]);
    expect(roundWith(PAPER, ROCK, 7, 5)[0]).toBe(175 / 3);
    const rng = new Rng(1);
    const state = tas.init(rps, rng);
    setHands(state, PAPER, ROCK);
    chat(state, rng);
    tas.apply(state, [claim(7), claim(5)], rng);
    const round = tas.observe(state, 1).history[0];
    expect(round.claims).toEqual([[7], [5]]);
    expect(round.received[0][0]).toBeCloseTo(70 / 12, 12);
    expect(round.received[1][0]).toBeCloseTo(50 / 12, 12);
    expect(round.values).toEqual([[10], [1]]);
  });

  it("sums per item when there are several items", () => {
    const rng = new Rng(1);
    const state = tas.init(noPress, rng);
    // Values by seat and item (hats, books, balls), set directly for a known deal.
    state.values.set([10, 1, 10, 10, 10, 1], 0);
    const rewards = tas.apply(state, [claim(10, 0, 4), claim(5, 10, 8)], rng);
    // hats 10+5 of 10 → 20/3 and 10/3; books 0 and 10; balls 4+8 of 10 → 10/3 and 20/3.
    expect(rewards[0]).toBeCloseTo((20 / 3) * 10 + 0 + (10 / 3) * 10, 9);
    expect(rewards[1]).toBeCloseTo((10 / 3) * 10 + 10 * 10 + (20 / 3) * 1, 9);
  });

  it("welfare pairs score 100 a round, greedy pairs 55, over whole matches", () => {
    const welfare = [createStrategy(tas.id, "welfare"), createStrategy(tas.id, "welfare")];
    const greedy = [createStrategy(tas.id, "greedy"), createStrategy(tas.id, "greedy")];
    for (let seed = 0; seed < 20; seed++) {
      const perRound: number[] = [];
      const onStep = (_: unknown, r: readonly number[]) => r[0] + r[1] > 0 && perRound.push(r[0] + r[1]);
      const w = playMatch(tas, rps, welfare, seed, onStep);
      expect(perRound).toEqual(new Array(10).fill(100));
      expect(w.returns[0] + w.returns[1]).toBe(1000);
      perRound.length = 0;
      const g = playMatch(tas, rps, greedy, seed, onStep);
      expect(perRound).toEqual(new Array(10).fill(55));
      expect(g.returns[0] + g.returns[1]).toBe(550);
      // 3 steps a round: two messages, then the claims of both seats.
      expect(g.steps).toBe(30);
      expect(g.actions).toBe(40);
    }
  });
});

describe("trust-and-split: chance", () => {
  it("always deals distinct hands, each ordered pair with probability 1/6", () => {
    const counts = new Map<string, number>();
    const n = 60_000;
    for (let seed = 0; seed < n; seed++) {
      const state = tas.init(rps, new Rng(seed));
      const key = `${state.hands[0]},${state.hands[1]}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual(["0,1", "0,2", "1,0", "1,2", "2,0", "2,1"]);
    // σ ≈ 91 per cell; 5σ.
    for (const c of counts.values()) expect(Math.abs(c - n / 6)).toBeLessThan(460);
  });

  it("redeals every round and ends after the configured rounds", () => {
    for (let seed = 0; seed < 50; seed++) {
      const state = playout(rps, `deal-${seed}`, () => {});
      expect(tas.toAct(state)).toEqual([]);
      const obs = tas.observe(state, "public");
      expect(obs.phase).toBe("over");
      expect(obs.history).toHaveLength(10);
      for (const h of obs.history) {
        expect(h.hands![0]).not.toBe(h.hands![1]);
        const upper = h.standing![0] === "upper" ? 0 : 1;
        expect(beats(HANDS.indexOf(h.hands![upper]), HANDS.indexOf(h.hands![1 - upper]))).toBe(true);
        expect(h.values[upper]).toEqual([10]);
        expect(h.values[1 - upper]).toEqual([1]);
      }
    }
  });

  it("draws the first speaker at random and alternates it every round", () => {
    const first = [0, 0];
    for (let seed = 0; seed < 400; seed++) {
      const rng = new Rng(seed);
      const state = tas.init(rps, rng);
      const starters: number[] = [];
      for (let r = 0; r < 10; r++) {
        const [seat] = tas.toAct(state);
        expect(tas.observe(state, "public").starter).toBe(seat);
        starters.push(seat);
        chat(state, rng);
        tas.apply(state, [claim(5), claim(5)], rng);
      }
      first[starters[0]]++;
      expect(starters).toEqual(starters.map((_, r) => (starters[0] + r) % 2));
    }
    expect(first[0]).toBeGreaterThan(150);
    expect(first[1]).toBeGreaterThan(150);
  });

  it("no-press: public values, at least one item both value high, all 37 such deals alike", () => {
    const counts = new Map<string, number>();
    const n = 37_000;
    const seen = new Set<string>();
    for (let seed = 0; seed < n; seed++) {
      const state = tas.init(noPress, new Rng(seed));
      const views = [tas.observe(state, 0), tas.observe(state, 1), tas.observe(state, "public")];
      const values = views[0].values!;
      const key = values.flat().join(",");
      counts.set(key, (counts.get(key) ?? 0) + 1);
      // Every seat and the public see the same values, and no hand (collected, not asserted per seed, for speed).
      seen.add(JSON.stringify(views.map((v) => [v.values, v.hand])));
      if (!values[0].some((v, i) => v === 10 && values[1][i] === 10)) throw new Error(`no conflict: ${key}`);
    }
    expect(seen.size).toBe(37);
    for (const view of seen) {
      const [mine, theirs, spectator] = JSON.parse(view);
      expect(theirs).toEqual(mine);
      expect(spectator).toEqual(mine);
      expect(mine[1]).toBeNull();
      for (const v of mine[0].flat()) expect([1, 10]).toContain(v);
    }
    // 2^6 deals minus the 3^3 with no shared high item.
    expect(counts.size).toBe(37);
    // σ ≈ 31 per cell; 5σ.
    for (const c of counts.values()) expect(Math.abs(c - 1000)).toBeLessThan(160);
  });

  it("alternating: the upper hand changes seats every round after a random first round", () => {
    const firstUpper = [0, 0];
    const winningHands = [0, 0, 0];
    for (let seed = 0; seed < 300; seed++) {
      const state = playout(alternating, `alt-${seed}`, () => {});
      const history = tas.observe(state, "public").history;
      const upper = history.map((h) => (h.standing![0] === "upper" ? 0 : 1));
      expect(upper).toEqual(upper.map((_, r) => (upper[0] + r) % 2));
      firstUpper[upper[0]]++;
      for (const [r, h] of history.entries()) {
        expect(h.hands![0]).not.toBe(h.hands![1]);
        if (r > 0) winningHands[HANDS.indexOf(h.hands![upper[r]])]++;
      }
    }
    expect(firstUpper[0]).toBeGreaterThan(110);
    expect(firstUpper[1]).toBeGreaterThan(110);
    for (const c of winningHands) expect(c).toBeGreaterThan(800);
  });
});

describe("trust-and-split: turn order", () => {
  it("asks for the claims only after both messages, then from both seats at once", () => {
    const rng = new Rng(3);
    const state = tas.init(rps, rng);
    const [first] = tas.toAct(state);
    const second = 1 - first;
    expect(tas.legal(state, second)).toEqual([]);
    expect(tas.parse(claim(5), state, first)).toBeInstanceOf(ActionError);
    expect((tas.parse("hi", state, second) as ActionError).code).toBe("not_your_turn");
    tas.apply(state, Object.assign([], { [first]: say("a") }), rng);
    expect(tas.toAct(state)).toEqual([second]);
    expect(tas.observe(state, 0).phase).toBe("message");
    tas.apply(state, Object.assign([], { [second]: say("b") }), rng);
    expect(tas.toAct(state)).toEqual([0, 1]);
    expect(tas.observe(state, 0).phase).toBe("split");
    expect((tas.parse({ type: "message", text: "late" }, state, 0) as ActionError).code).toBe("illegal_action");
    expect(tas.observe(state, 1).chat).toEqual([
      { round: 1, seat: first, text: "a" },
      { round: 1, seat: second, text: "b" },
    ]);
    tas.apply(state, [claim(1), claim(2)], rng);
    expect(tas.toAct(state)).toEqual([second]);
    expect(tas.observe(state, first).round).toBe(2);
  });

  it("takes turns for several messages, and skips the chat when there is none", () => {
    const rng = new Rng(4);
    const state = tas.init(config({ messages: 2 }), rng);
    const [first] = tas.toAct(state);
    const order: number[] = [];
    while (tas.toAct(state).length === 1) {
      const [seat] = tas.toAct(state);
      order.push(seat);
      tas.apply(state, Object.assign([], { [seat]: say("x") }), rng);
    }
    expect(order).toEqual([first, 1 - first, first, 1 - first]);
    const silent = tas.init(noPress, new Rng(4));
    expect(tas.toAct(silent)).toEqual([0, 1]);
    expect(tas.observe(silent, 0).phase).toBe("split");
  });

  it("is over after the last round", () => {
    const state = playout(config({ rounds: 2 }), "over", () => {});
    expect(tas.toAct(state)).toEqual([]);
    expect(tas.legal(state, 0)).toEqual([]);
    expect((tas.parse("5", state, 0) as ActionError).code).toBe("not_your_turn");
    const obs = tas.observe(state, 0);
    expect(obs).toMatchObject({ phase: "over", round: 3, hand: null, starter: null, speaker: null });
    expect(tas.describe(obs)).toMatch(/^The match is over after 2 rounds\./);
  });
});

describe("trust-and-split: hidden information", () => {
  /** The same state with `seat`'s hand moved to the other hand that differs from the viewer's. */
  function otherDeal(state: TasState, seat: number): TasState {
    const copy = tas.clone(state);
    const r = copy.round;
    const viewerHand = copy.hands[2 * r + (1 - seat)];
    const alternative = [0, 1, 2].find((h) => h !== viewerHand && h !== copy.hands[2 * r + seat])!;
    if (seat === 0) setHands(copy, alternative, viewerHand);
    else setHands(copy, viewerHand, alternative);
    return copy;
  }

  it("a seat's view does not depend on the other's hand, over random playouts", () => {
    for (const cfg of [rps, alternating, config({ messages: 2, rounds: 4 })]) {
      for (let seed = 0; seed < 30; seed++) {
        playout(cfg, `hidden-${seed}`, (state) => {
          if (tas.toAct(state).length === 0) return;
          for (const viewer of [0, 1]) {
            const other = 1 - viewer;
            const changed = otherDeal(state, other);
            const obs = tas.observe(state, viewer);
            expect(tas.observe(changed, viewer)).toEqual(obs);
            expect(tas.describe(tas.observe(changed, viewer))).toBe(tas.describe(obs));
            // The check has teeth: the other seat's own view did change.
            expect(tas.observe(changed, other).hand).not.toBe(tas.observe(state, other).hand);
            expect(obs.hand).toBe(HANDS[state.hands[2 * state.round + viewer]]);
            expect(obs.values).toBeNull();
          }
          // Spectators see no hand of the current round: swapping both hands changes nothing.
          const swapped = tas.clone(state);
          setHands(swapped, state.hands[2 * state.round + 1], state.hands[2 * state.round]);
          expect(tas.observe(swapped, "public")).toEqual(tas.observe(state, "public"));
          expect(tas.observe(state, "public").hand).toBeNull();
        });
      }
    }
  });

  it("reveals both hands, standings and claims once the round is over", () => {
    const rng = new Rng(5);
    const state = tas.init(rps, rng);
    setHands(state, SCISSORS, PAPER);
    chat(state, rng);
    const during = [tas.observe(state, 0), tas.observe(state, 1), tas.observe(state, "public")];
    for (const obs of during) expect(obs.history).toEqual([]);
    expect(during[0].hand).toBe("scissors");
    expect(during[1].hand).toBe("paper");
    expect(tas.describe(during[0])).toContain("Your hand this round is scissors.");
    expect(tas.describe(during[0])).not.toContain("paper");
    expect(tas.describe(during[2])).toContain("hidden");
    tas.apply(state, [claim(7), claim(5)], rng);
    for (const viewer of [0, 1, "public"] as const) {
      const [round] = tas.observe(state, viewer).history;
      expect(round.hands).toEqual(["scissors", "paper"]);
      expect(round.standing).toEqual(["upper", "lower"]);
      expect(round.claims).toEqual([[7], [5]]);
      expect(round.rewards[0]).toBeCloseTo(175 / 3, 9);
    }
    const text = tas.describe(tas.observe(state, 1));
    expect(text).toContain("you had paper (lower hand), the other player had scissors (upper hand)");
    expect(text).toContain("you claimed 5 coins and received 4.167 coins");
    expect(text).toContain("points: you 4.167, the other player 58.333");
  });

  it("shows public values to everyone in no-press", () => {
    const state = tas.init(noPress, new Rng(9));
    state.values.set([10, 1, 10, 10, 10, 1], 0);
    const text = tas.describe(tas.observe(state, 1));
    expect(text).toContain("you: hats 10, books 10, balls 1; the other player: hats 10, books 1, balls 10");
    expect(text).toContain("Proposal: x hats, x books, x balls");
    expect(tas.describe(tas.observe(state, "public"))).toContain("player 0: hats 10, books 1, balls 10");
  });
});

describe("trust-and-split: parsing", () => {
  it("reads a message in every form, and refuses one that is too long", () => {
    const state = tas.init(rps, new Rng(1));
    const [seat] = tas.toAct(state);
    const cases: [unknown, string][] = [
      ["<<message_start>>My hand is rock.<<message_end>>", "My hand is rock."],
      ["Sure. <<message_start>> Let's split. <<message_end>>", "Let's split."],
      ["<message>Trust me</message>", "Trust me"],
      ["I have the upper hand.", "I have the upper hand."],
      ['{"type":"message","text":"json text"}', "json text"],
      [{ type: "message", text: "json" }, "json"],
      // The generic form wins over the free-text reading: the type word is not part of the message.
      ["message hello", "hello"],
      ["Message: hello there", "hello there"],
      ["message", ""],
      ["messages are cheap", "messages are cheap"],
      ["split 5", "split 5"],
    ];
    for (const [input, text] of cases) expect(parse(state, seat, input)).toEqual(say(text));
    expect(parse(state, seat, "x".repeat(500))).toEqual(say("x".repeat(500)));
    const long = tas.parse("x".repeat(501), state, seat) as ActionError;
    expect(long).toBeInstanceOf(ActionError);
    expect(long.code).toBe("illegal_action");
    expect(long.message).toBe(
      "the message is 501 characters long; at most 500 are allowed. " +
        "Legal now: message <text of at most 500 characters>.",
    );
    const wrapped = tas.parse(`<message>${"y".repeat(501)}</message>`, state, seat) as ActionError;
    expect(wrapped.message).toMatch(/501 characters long/);
  });

  it("reads a coin claim in every form, and refuses 11 coins", () => {
    const rng = new Rng(1);
    const state = tas.init(rps, rng);
    chat(state, rng);
    const forms: unknown[] = [
      "<<proposal_start>> 7 <<proposal_end>>",
      "<<proposal_start>>7<<proposal_end>>",
      "I keep <<proposal_start>> 7 <<proposal_end>>.",
      "<coins_to_self> 7 </coins_to_self>",
      "7",
      " 7 coins ",
      "split 7",
      "Proposal: 7 coins",
      '{"type":"split","coins":7}',
      { type: "split", coins: 7 },
      { type: "split", take: [7] },
      { type: "split", take: { coins: 7 } },
    ];
    for (const input of forms) expect(parse(state, 0, input)).toEqual(claim(7));
    const eleven = tas.parse("<<proposal_start>> 11 <<proposal_end>>", state, 1) as ActionError;
    expect(eleven.code).toBe("illegal_action");
    expect(eleven.message).toBe("the coins count 11 is outside [0, 10]. Legal now: split <coins: integer in [0, 10]>.");
    expect((tas.parse({ type: "split", coins: 11 }, state, 1) as ActionError).code).toBe("illegal_action");
    expect((tas.parse("11", state, 1) as ActionError).code).toBe("illegal_action");
    expect((tas.parse("3.5", state, 1) as ActionError).message).toMatch(
      /^the coins count must be a whole number, got 3.5/,
    );
    expect((tas.parse("half of it, please", state, 1) as ActionError).message).toMatch(/could not read an action/);
  });

  it("reads several items in every form", () => {
    const state = tas.init(noPress, new Rng(1));
    const forms: unknown[] = [
      "Proposal: 3 hats, 10 books, 0 balls",
      "proposal: 3 hat, 10 book, 0 ball",
      "<<proposal_start>> 3 hats, 10 books, 0 balls <<proposal_end>>",
      "<items_to_self> 3 hats, 10 books, 0 balls </items_to_self>",
      "3 10 0",
      "hats 3 books 10 balls 0",
      "split 3 hats 10 books 0 balls",
      { type: "split", take: [3, 10, 0] },
      { type: "split", hats: 3, books: 10, balls: 0 },
    ];
    for (const input of forms) expect(parse(state, 1, input)).toEqual(claim(3, 10, 0));
    const missing = tas.parse("Proposal: 3 hats, 10 books", state, 1) as ActionError;
    expect(missing.code).toBe("malformed_action");
    expect(missing.message).toMatch(/gives no count for balls/);
    const tooMany = tas.parse("Proposal: 3 hats, 11 books, 0 balls", state, 1) as ActionError;
    expect(tooMany.message).toMatch(/^the books count 11 is outside \[0, 10\]/);
  });
});

describe("trust-and-split: config", () => {
  it("documents its defaults and resolves the variants", () => {
    expect(rps).toEqual({
      rounds: 10,
      items: ["coins"],
      quantity: 10,
      messages: 1,
      messageChars: 500,
      valuation: "rps",
      high: 10,
      low: 1,
    });
    expect(alternating.valuation).toBe("rps-alternating");
    expect(noPress).toMatchObject({ valuation: "ties", items: ["hats", "books", "balls"], messages: 0, quantity: 10 });
    expect(config({ rounds: 3 }, "no-press").rounds).toBe(3);
    const rules = tas.rules(rps);
    for (
      const fact of [
        "10 round(s)",
        "10 coins",
        "at 10",
        "at 1.",
        "500 characters",
        "claims of 7 and 5 give 70/12 and 50/12 units",
      ]
    ) {
      expect(rules).toContain(fact);
    }
    expect(tas.rules(config({ quantity: 3 }))).toContain("claims of 3 and 2 give 9/5 and 6/5 units");
    expect(tas.rules(noPress)).toContain("10 hats, 10 books and 10 balls");
    expect(tas.rules(noPress)).toContain("There is no chat.");
    expect(tas.rules(alternating)).toContain("passes to the other player every round");
  });

  it("refuses bad configs with a ConfigError that says why", () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ rounds: 0 }, /`rounds`/],
      [{ rounds: 2.5 }, /`rounds`/],
      [{ quantity: -1 }, /`quantity`/],
      [{ messages: -1 }, /`messages`/],
      [{ messageChars: 0 }, /`messageChars`/],
      [{ valuation: "dice" }, /`valuation`/],
      [{ high: 1, low: 5 }, /high value must exceed the low value, got high=1 low=5/],
      [{ low: -1 }, /`low`/],
      [{ items: [] }, /`items`/],
      [{ items: ["coins", "coins"] }, /item `coins` is listed twice/],
      [{ items: ["Gold coins"] }, /lowercase letters/],
      [{ items: ["take"] }, /cannot name an item/],
      [{ round: 3 }, /unknown key `round` \(allowed: rounds, items, quantity, messages, messageChars, valuation/],
    ];
    for (const [raw, why] of bad) {
      expect(() => configure(tas, raw)).toThrow(ConfigError);
      expect(() => configure(tas, raw)).toThrow(why);
    }
    expect(() => configure(tas, {}, "chess")).toThrow(
      /unknown variant `chess` \(variants: rps, alternating, no-press\)/,
    );
  });
});

describe("trust-and-split: state", () => {
  it("clones independently", () => {
    const rng = new Rng(11);
    const state = tas.init(rps, rng);
    chat(state, rng);
    const copy = tas.clone(state);
    const copyRng = rng.clone();
    const before = tas.observe(copy, 0);
    tas.apply(state, [claim(10), claim(10)], rng);
    expect(tas.observe(copy, 0)).toEqual(before);
    expect(tas.returns(copy)).toEqual([0, 0]);
    expect(tas.toAct(copy)).toEqual([0, 1]);
    // The copy, fed the same moves and chance, ends up where the original did.
    tas.apply(copy, [claim(10), claim(10)], copyRng);
    expect(tas.observe(copy, "public")).toEqual(tas.observe(state, "public"));
    const dealt = Array.from(state.hands);
    setHands(copy, copy.hands[2] === ROCK ? PAPER : ROCK, copy.hands[2] === ROCK ? SCISSORS : PAPER);
    expect(Array.from(state.hands)).toEqual(dealt);
    expect(Array.from(copy.hands)).not.toEqual(dealt);
  });

  it("replays identically from the same seed, and differently from another", () => {
    const record = (seed: string) => {
      const log: string[] = [];
      const random = [createStrategy(tas.id, "random"), createStrategy(tas.id, "random")];
      const outcome = playMatch(tas, rps, random, seed, (moves, rewards) => log.push(JSON.stringify([moves, rewards])));
      return { log, outcome };
    };
    const a = record("same");
    expect(record("same")).toEqual(a);
    expect(record("other").log).not.toEqual(a.log);
  });

  it("observations are fresh JSON with the documented shape", () => {
    const state = tas.init(rps, new Rng(2));
    const obs: TasObservation = tas.observe(state, 0);
    expect(JSON.parse(JSON.stringify(obs))).toEqual(obs);
    expect(obs).toMatchObject({ game: "trust-and-split", seat: 0, round: 1, rounds: 10, phase: "message" });
    expect(() => tas.observe(state, 2)).toThrow(RangeError);
  });
});

describe("trust-and-split: explicit chance", () => {
  it("draws the first speaker, then each round's hands, with nobody to act until both are drawn", () => {
    const state = tas.start(rps);
    expect(tas.chance(state)).toEqual([0.5, 0.5]);
    expect(tas.toAct(state)).toEqual([]);
    expect(tas.legal(state, 0)).toEqual([]);
    expect(tas.observe(state, 0)).toMatchObject({ starter: null, speaker: null, hand: null });
    tas.resolve(state, 1);
    expect(tas.chance(state)).toEqual(new Array(6).fill(1 / 6));
    expect(tas.toAct(state)).toEqual([]);
    // Outcome k deals hand k >> 1 to seat 0 and hand (k >> 1) + 1 + (k & 1) mod 3 to seat 1.
    tas.resolve(state, 3);
    expect(tas.chance(state)).toEqual([]);
    expect(tas.toAct(state)).toEqual([1]);
    expect(() => tas.resolve(state, 0)).toThrow(/no chance event is due/);
    expect([tas.observe(state, 0).hand, tas.observe(state, 1).hand]).toEqual(["paper", "rock"]);
    chat(state, new Rng(0));
    tas.play(state, [claim(5), claim(5)]);
    expect(tas.chance(state)).toEqual(new Array(6).fill(1 / 6));
    expect(tas.observe(state, 0)).toMatchObject({ round: 2, starter: 0, hand: null });
  });

  it("alternating: after round 1 the outcome is the winning hand, dealt to last round's loser", () => {
    const state = tas.start(alternating);
    tas.resolve(state, 0);
    tas.resolve(state, 0); // rock for seat 0, paper for seat 1: seat 1 wins round 1
    chat(state, new Rng(0));
    tas.play(state, [claim(5), claim(5)]);
    expect(tas.chance(state)).toEqual([1 / 3, 1 / 3, 1 / 3]);
    tas.resolve(state, SCISSORS);
    expect([state.hands[2], state.hands[3]]).toEqual([SCISSORS, PAPER]);
  });

  it("ties: the 37 deals of three items, by code ascending, drawn exactly as the rejection loop drew them", () => {
    const state = tas.start(noPress);
    tas.resolve(state, 0);
    expect(tas.chance(state)).toEqual(new Array(37).fill(1 / 37));
    const first = tas.clone(state);
    tas.resolve(first, 0); // code 9: item 0 high for both
    expect(tas.observe(first, 0).values).toEqual([[10, 1, 1], [10, 1, 1]]);
    tas.resolve(state, 36); // code 63: everything high
    expect(tas.observe(state, 0).values).toEqual([[10, 10, 10], [10, 10, 10]]);
    for (let seed = 0; seed < 200; seed++) {
      const rng = new Rng(seed);
      rng.int(2);
      let bits: number;
      do bits = rng.next(); while ((bits & (bits >>> 3) & 7) === 0);
      const high = (bit: number) => (bits & (1 << bit) ? 10 : 1);
      const values = tas.observe(tas.init(noPress, new Rng(seed)), 0).values;
      expect(values).toEqual([[high(0), high(1), high(2)], [high(3), high(4), high(5)]]);
    }
  });
});

describe("trust-and-split: numeric face", () => {
  function mask(state: TasState, seat: number): number[] {
    const out = new Uint8Array(tas.actionCount(state.config));
    tas.legalMask(state, seat, out);
    return Array.from(out);
  }

  function tensor(state: TasState, viewer: number | "public"): number[] {
    const out = new Float32Array(shapeSize(tas.observationShape(state.config)));
    tas.encode(tas.observe(state, viewer), out);
    return Array.from(out);
  }

  /** A round-1 state of `cfg` with the given first speaker and deal. */
  function dealt(cfg: TasConfig, starter: number, deal: number): TasState {
    const state = tas.start(cfg);
    tas.resolve(state, starter);
    tas.resolve(state, deal);
    return state;
  }

  it("has an id per claim, the items as digits, plus the empty message when there is talk", () => {
    expect(tas.actionCount(rps)).toBe(12);
    expect(tas.actionCount(noPress)).toBe(1331);
    expect(tas.actionCount(config({ quantity: 1000, messages: 0 }))).toBe(1001);
    expect(tas.observationShape(rps)).toEqual([165]);
    expect(tas.observationShape(noPress)).toEqual([289]);
    const tooMany = config({ items: ["a", "b", "c", "d", "e"] });
    expect(() => tas.actionCount(tooMany)).toThrow(NumericFaceError);
    expect(() => tas.actionCount(tooMany)).toThrow(/161051 claims, more than 65536 action ids/);
  });

  it("offers only the empty message in the chat, and every claim after it", () => {
    const state = dealt(rps, 1, 0);
    expect(mask(state, 1)).toEqual([...new Array(11).fill(0), 1]);
    expect(mask(state, 0)).toEqual(new Array(12).fill(0));
    expect(tas.actionOf(11, state, 1)).toEqual({ type: "message", text: "" });
    expect((tas.actionOf(4, state, 1) as ActionError).message).toMatch(
      /action id 4 is not legal now\. Legal now: ids 11\./,
    );
    expect(tas.actionId({ type: "message", text: "" }, state, 1)).toBe(11);
    expect(tas.actionId({ type: "message", text: "I hold rock" }, state, 1)).toBe(-1);
    chat(state, new Rng(0));
    expect(mask(state, 0)).toEqual([...new Array(11).fill(1), 0]);
    expect(tas.actionOf(7, state, 0)).toEqual({ type: "split", take: [7] });
    expect(tas.actionId({ type: "split", take: [7] }, state, 0)).toBe(7);
  });

  it("reads several items' counts as the digits of the id, the first item's most significant", () => {
    const state = dealt(noPress, 0, 0);
    expect(mask(state, 0)).toEqual(new Array(1331).fill(1));
    expect(tas.actionOf(3 * 121 + 10 * 11, state, 1)).toEqual({ type: "split", take: [3, 10, 0] });
    expect(tas.actionId({ type: "split", take: [3, 10, 0] }, state, 1)).toBe(473);
    expect(tas.actionId({ type: "split", take: [10, 10, 10] }, state, 1)).toBe(1330);
    expect((tas.actionOf(1331, state, 0) as ActionError).code).toBe("illegal_action");
  });

  it("encodes the round so far and every finished round, own side first", () => {
    // rock for seat 0, paper for seat 1: seat 1 holds the upper hand.
    const state = dealt(config({ rounds: 2 }), 0, 0);
    tas.play(state, [say("I hold paper")]);
    tas.play(state, [undefined, say("")]);
    tas.play(state, [claim(7), claim(5)]);
    tas.resolve(state, 5); // round 2: scissors for seat 0, paper for seat 1
    // seat | phase | progress | starter (own, other) | talk | low/high | hand | values
    const now = [0, 1, 1, 0, 0, 0.5, 1, 0, 0, 0.1, 0, 1, 0, 0, 0];
    // played | own hand, other hand | own, other high | claims | received | points / (10·1·10)
    const round1 = [1, 0, 1, 0, 1, 0, 0, 1, 0, 0.5, 0.7, 50 / 120, 70 / 120, 500 / 1200, 70 / 1200];
    expect(tensor(state, 1)).toEqual([...now, ...round1, ...new Array(15).fill(0)].map(Math.fround));
    tas.play(state, [undefined, say("")]);
    const seat0 = tensor(state, 0);
    expect(seat0.slice(0, 15)).toEqual([1, 0, 1, 0, 0, 0.5, 0, 1, 0.5, 0.1, 0, 0, 1, 0, 0].map(Math.fround));
    expect(seat0.slice(15, 30)).toEqual(
      [1, 1, 0, 0, 0, 1, 0, 0, 1, 0.7, 0.5, 70 / 120, 50 / 120, 70 / 1200, 500 / 1200].map(Math.fround),
    );
    expect(tensor(state, "public").slice(0, 15)).toEqual(
      [0, 0, 1, 0, 0, 0.5, 0, 1, 0.5, 0.1, 0, 0, 0, 0, 0].map(Math.fround),
    );
  });

  it("encodes public values under ties, 1 for high", () => {
    const state = dealt(config({ rounds: 1, messages: 0 }, "no-press"), 1, 1); // code 11: theirs 0b001, mine 0b011
    expect(tas.observe(state, 0).values).toEqual([[10, 10, 1], [10, 1, 1]]);
    const out = tensor(state, 0);
    expect(out.slice(0, 19)).toEqual([1, 0, 0, 1, 0, 0, 0, 1, 0, 0.1, 0, 0, 0, 1, 1, 0, 1, 0, 0].map(Math.fround));
  });
});
