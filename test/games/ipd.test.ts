import { describe, expect, it } from "vitest";
import { ActionError } from "../../games/core/action.ts";
import { shapeSize } from "../../games/core/numeric.ts";
import { ConfigError, configure } from "../../games/core/config.ts";
import { Rng } from "../../games/core/rng.ts";
import { type MemoryOne, memoryOneValues } from "../../games/ipd/analysis.ts";
import { ipd, type IpdAction, type IpdConfig, type IpdState } from "../../games/ipd/game.ts";
import { createStrategy } from "../../policies/baselines/index.ts";
import { extortion } from "../../policies/baselines/ipd.ts";
import { playMatch } from "../../policies/simulate.ts";

const classic = configure<IpdConfig>(ipd, {}, "classic").config;
const lola = configure<IpdConfig>(ipd, {}, "lola").config;

const TFT: MemoryOne = [1, 1, 0, 1, 0];
const ALLC: MemoryOne = [1, 1, 1, 1, 1];
const ALLD: MemoryOne = [0, 0, 0, 0, 0];

function play(config: IpdConfig, a: string, b: string): readonly number[] {
  return playMatch(ipd, config, [createStrategy("ipd", a), createStrategy("ipd", b)], 1).returns;
}

describe("ipd: known answers", () => {
  it("reproduces the opponent-shaping table (γ = 0.96) to 1e-9", () => {
    const rows: [MemoryOne, MemoryOne, [number, number], [number, number]][] = [
      [TFT, TFT, [-25, -25], [-1, -1]],
      [ALLC, ALLC, [-25, -25], [-1, -1]],
      [ALLD, ALLD, [-50, -50], [-2, -2]],
      [ALLD, TFT, [-48, -51], [-1.92, -2.04]],
      [ALLC, ALLD, [-75, 0], [-3, 0]],
      [ALLD, ALLC, [0, -75], [0, -3]],
    ];
    for (const [p0, p1, discounted, average] of rows) {
      const v = memoryOneValues(p0, p1, lola, 0.96);
      for (const s of [0, 1]) {
        expect(v.discounted[s]).toBeCloseTo(discounted[s], 9);
        expect(v.average[s]).toBeCloseTo(average[s], 9);
      }
    }
  });

  it("reproduces the 10-round 3/0/5/1 table by playing the strategies", () => {
    expect(play(classic, "tit-for-tat", "tit-for-tat")).toEqual([30, 30]);
    expect(play(classic, "always-cooperate", "always-cooperate")).toEqual([30, 30]);
    expect(play(classic, "always-defect", "always-defect")).toEqual([10, 10]);
    expect(play(classic, "always-defect", "tit-for-tat")).toEqual([14, 9]);
    expect(play(classic, "always-defect", "always-cooperate")).toEqual([50, 0]);
    expect(play(classic, "tit-for-tat", "always-cooperate")).toEqual([30, 30]);
  });

  it("grim trigger punishes forever; win-stay-lose-shift recovers", () => {
    expect(play(classic, "grim-trigger", "always-defect")).toEqual([9, 14]);
    // WSLS vs ALLD alternates C, D: rounds 1,3,5,7,9 are (C,D) and 2,4,... are (D,D).
    expect(play(classic, "win-stay-lose-shift", "always-defect")).toEqual([5 * 0 + 5 * 1, 5 * 5 + 5 * 1]);
  });

  it("the extortioner enforces (own − P) = 3 (other − P) against a cooperator", () => {
    const p = extortion(classic.payoffs, 3);
    for (const [got, want] of p.map((x, i) => [x, [1, 11 / 13, 1 / 2, 7 / 26, 0][i]])) {
      expect(got).toBeCloseTo(want, 12);
    }
    const v = memoryOneValues(p, ALLC, classic, 0.999999);
    const P = classic.payoffs.punishment;
    expect((v.average[0] - P) / (v.average[1] - P)).toBeCloseTo(3, 4);
  });

  it("rejects payoffs that are no dilemma, unknown keys and bad types", () => {
    expect(() => configure(ipd, { payoffs: { reward: 3, sucker: 0, temptation: 2, punishment: 1 } }))
      .toThrow(/temptation > reward > punishment > sucker/);
    expect(() => configure(ipd, { round: 5 })).toThrow(/unknown key `round` \(allowed: payoffs, rounds, messages/);
    expect(() => configure(ipd, { rounds: "ten" })).toThrow(/`rounds`: expected number, received string \(got "ten"\)/);
    expect(() => configure(ipd, { rounds: 0 })).toThrow(ConfigError);
    expect(() => configure(ipd, {}, "nope")).toThrow(/unknown variant `nope` \(variants: classic, lola\)/);
    expect(configure<IpdConfig>(ipd, { rounds: 150 }, "lola").config.payoffs.reward).toBe(-1);
  });
});

describe("ipd: rules", () => {
  it("is simultaneous and pays the configured payoffs each round", () => {
    const state = ipd.init(classic, new Rng(1));
    expect(ipd.toAct(state)).toEqual([0, 1]);
    expect(ipd.apply(state, [{ type: "cooperate" }, { type: "defect" }], new Rng(1))).toEqual([0, 5]);
    expect(ipd.returns(state)).toEqual([0, 5]);
    const obs = ipd.observe(state, 1);
    expect(obs.history).toEqual([{ moves: ["C", "D"], rewards: [0, 5] }]);
    expect(obs.state).toBe(1); // CD from seat 0's view
    expect(ipd.observe(ipd.init(classic, new Rng(1)), 0).state).toBe(4);
  });

  it("runs a message phase before every move when configured", () => {
    const config = configure<IpdConfig>(ipd, { messages: 1, rounds: 2, messageChars: 20 }).config;
    const state = ipd.init(config, new Rng(1));
    expect(ipd.toAct(state)).toEqual([0]);
    expect(ipd.legal(state, 1)).toEqual([]);
    const tooLong = ipd.parse("x".repeat(21), state, 0) as ActionError;
    expect(tooLong.message).toMatch(/21 characters long; at most 20/);
    const say = ipd.parse("let's cooperate", state, 0) as IpdAction;
    expect(ipd.apply(state, [say], new Rng(1))).toEqual([0, 0]);
    expect(ipd.toAct(state)).toEqual([1]);
    ipd.apply(state, [undefined, { type: "message", text: "deal" }], new Rng(1));
    expect(ipd.toAct(state)).toEqual([0, 1]);
    expect((ipd.parse("cooperate", state, 0) as IpdAction).type).toBe("cooperate");
    expect(ipd.describe(ipd.observe(state, 1))).toContain("The other player said: let's cooperate");
  });

  it("reads `message hello` as the message hello, and any other text in the talk as the message", () => {
    const config = configure<IpdConfig>(ipd, { messages: 1, rounds: 1 }).config;
    const state = ipd.init(config, new Rng(1));
    const said = (input: string) => (ipd.parse(input, state, 0) as { text: string }).text;
    expect(said("message hello")).toBe("hello");
    expect(said("Message: let's cooperate")).toBe("let's cooperate");
    expect(said("messages matter")).toBe("messages matter");
    expect(said("cooperate")).toBe("cooperate");
    expect(said("<A>")).toBe("<A>");
  });

  it("reads both conventions' text aliases", () => {
    const state = ipd.init(classic, new Rng(1));
    const cases: [string, string][] = [
      ["C", "cooperate"],
      ["d", "defect"],
      ["<A>", "cooperate"],
      ["<B>", "defect"],
      ["[Cooperate]", "cooperate"],
      ["[defect]", "defect"],
      ["0", "cooperate"],
      ["1", "defect"],
      ["I will play <B> this time.", "defect"],
      ['{"type":"cooperate"}', "cooperate"],
    ];
    for (const [text, type] of cases) expect((ipd.parse(text, state, 0) as IpdAction).type).toBe(type);
    const unclear = ipd.parse("<A> or <B>?", state, 0) as ActionError;
    expect(unclear).toBeInstanceOf(ActionError);
    expect(unclear.message).toMatch(/Legal now: cooperate \| defect\./);
    expect((ipd.parse({ type: "message", text: "hi" }, state, 0) as ActionError).code).toBe("illegal_action");
  });

  it("ends after the configured rounds with nobody to act", () => {
    const config = configure<IpdConfig>(ipd, { rounds: 3 }).config;
    const state = ipd.init(config, new Rng(1));
    for (let r = 0; r < 3; r++) ipd.apply(state, [{ type: "defect" }, { type: "defect" }], new Rng(1));
    expect(ipd.toAct(state)).toEqual([]);
    expect(ipd.legal(state, 0)).toEqual([]);
    expect(ipd.observe(state, "public").phase).toBe("over");
    expect((ipd.parse("C", state, 0) as ActionError).code).toBe("not_your_turn");
  });

  it("clones independently", () => {
    const state = ipd.init(classic, new Rng(1));
    const copy = ipd.clone(state);
    ipd.apply(state, [{ type: "defect" }, { type: "defect" }], new Rng(1));
    expect(ipd.returns(copy)).toEqual([0, 0]);
    expect(ipd.observe(copy, 0).history).toEqual([]);
  });
});

describe("ipd: explicit chance", () => {
  it("has none: start is the match, chance is always empty", () => {
    const state = ipd.start(classic);
    expect(ipd.chance(state)).toEqual([]);
    expect(ipd.toAct(state)).toEqual([0, 1]);
    ipd.play(state, [{ type: "defect" }, { type: "cooperate" }]);
    expect(ipd.chance(state)).toEqual([]);
    expect(() => ipd.resolve(state, 0)).toThrow(/no chance events/);
  });
});

describe("ipd: numeric face", () => {
  const talk = configure<IpdConfig>(ipd, { messages: 1, rounds: 2 }).config;
  const short = configure<IpdConfig>(ipd, { rounds: 2 }).config;

  function mask(state: IpdState, seat: number): number[] {
    const out = new Uint8Array(ipd.actionCount(state.config));
    ipd.legalMask(state, seat, out);
    return Array.from(out);
  }

  function tensor(state: IpdState, viewer: number | "public"): number[] {
    const out = new Float32Array(shapeSize(ipd.observationShape(state.config)));
    ipd.encode(ipd.observe(state, viewer), out);
    return Array.from(out);
  }

  it("has 2 ids, and a third for the empty message when there is talk; 11 + 4·rounds entries", () => {
    expect(ipd.actionCount(classic)).toBe(2);
    expect(ipd.actionCount(lola)).toBe(2);
    expect(ipd.actionCount(talk)).toBe(3);
    expect(ipd.observationShape(classic)).toEqual([51]);
    expect(ipd.observationShape(lola)).toEqual([411]);
  });

  it("maps cooperate to 0 and defect to 1, and refuses ids out of range", () => {
    const state = ipd.start(classic);
    expect(mask(state, 0)).toEqual([1, 1]);
    expect(mask(state, 1)).toEqual([1, 1]);
    expect(ipd.actionOf(0, state, 1)).toEqual({ type: "cooperate" });
    expect(ipd.actionOf(1, state, 1)).toEqual({ type: "defect" });
    expect(ipd.actionId({ type: "defect" }, state, 0)).toBe(1);
    const out = ipd.actionOf(2, state, 0) as ActionError;
    expect(out.code).toBe("illegal_action");
    expect(out.message).toMatch(/out of range: ids are integers in \[0, 1\]\. Legal now: ids 0, 1\./);
    for (let r = 0; r < 10; r++) ipd.play(state, [{ type: "cooperate" }, { type: "cooperate" }]);
    expect(mask(state, 0)).toEqual([0, 0]);
    expect((ipd.actionOf(0, state, 0) as ActionError).code).toBe("not_your_turn");
  });

  it("offers only the empty message in the talk, to the seat whose turn it is", () => {
    const state = ipd.start(talk);
    expect(mask(state, 0)).toEqual([0, 0, 1]);
    expect(mask(state, 1)).toEqual([0, 0, 0]);
    expect(ipd.actionOf(2, state, 0)).toEqual({ type: "message", text: "" });
    expect((ipd.actionOf(0, state, 0) as ActionError).message).toMatch(
      /action id 0 is not legal now\. Legal now: ids 2\./,
    );
    expect(ipd.actionId({ type: "message", text: "" }, state, 0)).toBe(2);
    expect(ipd.actionId({ type: "message", text: "let's cooperate" }, state, 0)).toBe(-1);
    ipd.play(state, [{ type: "message", text: "let's cooperate" }]);
    expect(mask(state, 1)).toEqual([0, 0, 1]);
    ipd.play(state, [undefined, { type: "message", text: "" }]);
    expect(mask(state, 0)).toEqual([1, 1, 0]);
  });

  it("encodes the seat, phase, progress, talk, payoffs and every move, own first", () => {
    const state = ipd.start(short);
    ipd.play(state, [{ type: "cooperate" }, { type: "defect" }]);
    // seat | phase (message, move, over) | progress | talk | R S T P | round 1: own C D, other C D | round 2
    expect(tensor(state, 1)).toEqual([0, 1, 0, 1, 0, 0.5, 0, 3, 0, 5, 1, 0, 1, 1, 0, 0, 0, 0, 0]);
    expect(tensor(state, 0)).toEqual([1, 0, 0, 1, 0, 0.5, 0, 3, 0, 5, 1, 1, 0, 0, 1, 0, 0, 0, 0]);
    expect(tensor(state, "public")).toEqual([0, 0, 0, 1, 0, 0.5, 0, 3, 0, 5, 1, 1, 0, 0, 1, 0, 0, 0, 0]);
    ipd.play(state, [{ type: "defect" }, { type: "defect" }]);
    expect(tensor(state, 0)).toEqual([1, 0, 0, 0, 1, 1, 0, 3, 0, 5, 1, 1, 0, 0, 1, 0, 1, 0, 1]);
  });

  it("counts this round's messages, not their text", () => {
    const state = ipd.start(talk);
    ipd.play(state, [{ type: "message", text: "hello" }]);
    expect(tensor(state, 1).slice(0, 11)).toEqual([0, 1, 1, 0, 0, 0, Math.fround(1 / 20), 3, 0, 5, 1]);
    const other = ipd.start(talk);
    ipd.play(other, [{ type: "message", text: "" }]);
    expect(tensor(other, 1)).toEqual(tensor(state, 1));
  });
});

describe("ipd strategies", () => {
  it("explain bad arguments", () => {
    expect(() => createStrategy("ipd", "extort:1")).toThrow(/χ > 1/);
    expect(() => createStrategy("ipd", "memory-one:1/2")).toThrow(/five probabilities/);
    expect(() => createStrategy("ipd", "tit-for-tat:3")).toThrow(/takes no argument/);
    expect(() => createStrategy("ipd", "donate:0.5")).toThrow(/unknown strategy `donate` for ipd \(strategies: random/);
  });

  it("memory-one reproduces tit-for-tat", () => {
    expect(play(classic, "memory-one:1/1/0/1/0", "always-defect")).toEqual(
      play(classic, "tit-for-tat", "always-defect"),
    );
  });
});
