import { describe, expect, it } from "vitest";
import type { Action, ActionError, SplitForm } from "../../games/core/action.ts";
import { ConfigError, configure } from "../../games/core/config.ts";
import { maskIds } from "../../games/core/numeric.ts";
import { Rng } from "../../games/core/rng.ts";
import {
  dealOrNoDeal as dond,
  type DondAction,
  type DondConfig,
  type DondState,
} from "../../games/deal-or-no-deal/game.ts";
import {
  allInstances,
  type Instance,
  instanceProblem,
  pools,
  valuations,
  valuesFit,
  worthOf,
} from "../../games/deal-or-no-deal/instances.ts";
import { dealOrNoDealStrategies } from "../../policies/baselines/deal-or-no-deal.ts";
import { random, randomAction } from "../../policies/baselines/random.ts";
import { playMatch } from "../../policies/simulate.ts";
import type { Strategy } from "../../policies/strategy.ts";
import { actionError as error, must, playInputs } from "../support/actions.ts";

function config(raw: Record<string, unknown> = {}, variant?: string): DondConfig {
  return configure<DondConfig>(dond, raw, variant).config;
}

/** OpenSpiel's `1,2,3 8,1,0 4,0,2`. */
const OPENSPIEL: Instance = { pool: [1, 2, 3], values: [[8, 1, 0], [4, 0, 2]] };
/** The FB validation example: `1 6 3 0 2 2` against the partner's `1 2 3 2 2 1`. */
const FB: Instance = { pool: [1, 3, 2], values: [[6, 0, 2], [2, 2, 1]] };

const offers = config();
const talk = config({}, "dialogue");
const rng = new Rng(0);

/** Parses each input for whoever is to act and applies it; returns the last step's rewards. */
const act = (state: DondState, ...inputs: unknown[]) => playInputs(dond, state, rng, ...inputs);

function propose(...take: number[]): DondAction {
  return { type: "propose", take };
}

function choice(...take: number[]): DondAction {
  return { type: "choice", take };
}

/** Every split of the pool, as what player 0 keeps. */
function splits(pool: readonly number[]): number[][] {
  const out: number[][] = [];
  for (let b = 0; b <= pool[0]; b++) {
    for (let h = 0; h <= pool[1]; h++) for (let l = 0; l <= pool[2]; l++) out.push([b, h, l]);
  }
  return out;
}

/** The best joint score of an instance and the scores that reach it, player 0 first. */
function bestWelfare(instance: Instance): { total: number; scores: number[][] } {
  let total = -1;
  let scores: number[][] = [];
  for (const keep of splits(instance.pool)) {
    const s = [
      worthOf(instance.values[0], keep),
      worthOf(instance.values[1], instance.pool.map((n, i) => n - keep[i])),
    ];
    if (s[0] + s[1] > total) [total, scores] = [s[0] + s[1], [s]];
    else if (s[0] + s[1] === total) scores.push(s);
  }
  return { total, scores };
}

function strategy(name: string): Strategy {
  return name === "random"
    ? random.create(undefined)
    : dealOrNoDealStrategies.find((d) => d.name === name)!.create(undefined);
}

describe("deal-or-no-deal: instances (games.md §8.4)", () => {
  it("has 31 pools and 5,793 valid ordered instances, each obeying the constraints", () => {
    expect(pools()).toHaveLength(31);
    const all = allInstances();
    expect(all).toHaveLength(5793);
    expect(new Set(all.map((i) => JSON.stringify(i))).size).toBe(5793);
    for (const instance of all) expect(instanceProblem(instance)).toBeUndefined();
    // Independently: every pair of valuations of every pool, filtered by the constraints.
    let count = 0;
    for (const pool of pools()) {
      const vs = valuations(pool);
      for (const v0 of vs) for (const v1 of vs) count += Number(valuesFit(v0, v1));
    }
    expect(count).toBe(5793);
  });

  it("draws instances uniformly: every pool as often as its share of the instances", () => {
    const byPool = new Map<string, number>();
    for (const i of allInstances()) byPool.set(i.pool.join(","), (byPool.get(i.pool.join(",")) ?? 0) + 1);
    const seen = new Map<string, number>();
    const n = 40_000;
    for (let seed = 0; seed < n; seed++) {
      const state = dond.init(offers, new Rng(seed));
      const key = state.pool.join(",");
      seen.set(key, (seen.get(key) ?? 0) + 1);
      if (seed < 2000) {
        const instance = { pool: [...state.pool], values: [[...state.values.slice(0, 3)], [...state.values.slice(3)]] };
        expect(instanceProblem(instance as unknown as Instance)).toBeUndefined();
      }
    }
    expect(seen.size).toBe(31);
    for (const [key, instances] of byPool) {
      const p = instances / 5793;
      const sigma = Math.sqrt(n * p * (1 - p));
      expect(Math.abs(seen.get(key)! - n * p)).toBeLessThan(5 * sigma);
    }
  });

  it("plays a fixed instance from the config, and refuses one that breaks the constraints", () => {
    const state = dond.init(config({ instance: OPENSPIEL }), new Rng(1));
    expect(dond.observe(state, 0)).toMatchObject({ pool: [1, 2, 3], values: [[8, 1, 0], null] });
    expect(dond.observe(state, 1).values).toEqual([null, [4, 0, 2]]);
    const bad: [unknown, RegExp][] = [
      [{ pool: [1, 2, 1], values: [[8, 1, 0], [4, 0, 2]] }, /5 to 7 items in all, got 1,2,1/],
      [{ pool: [0, 3, 3], values: [[0, 2, 2], [0, 2, 2]] }, /at least one of each item/],
      [
        { pool: [1, 2, 3], values: [[8, 1, 1], [4, 0, 2]] },
        /player 0's values must make the pool worth 10, but 8,1,1 makes it worth 13/,
      ],
      [{ pool: [1, 2, 3], values: [[10, 0, 0], [0, 5, 0]] }, /every item type must be worth something/],
      [{ pool: [1, 2, 3], values: [[10, 0, 0], [0, 2, 2]] }, /some type to both/],
      [{ pool: [1, 2, 3] }, /values/],
    ];
    for (const [instance, message] of bad) {
      expect(() => config({ instance })).toThrow(ConfigError);
      expect(() => config({ instance })).toThrow(message);
    }
    expect(() => config({ discount: 0.9 }, "dialogue")).toThrow(/discount applies only to the alternating-offers/);
    expect(() => config({ maxTurns: 0 })).toThrow(ConfigError);
    expect(() => config({ rounds: 3 })).toThrow(/unknown key `rounds`/);
  });
});

describe("deal-or-no-deal: known answers", () => {
  it("OpenSpiel 1,2,3 8,1,0 4,0,2: 24 splits, best joint welfare 16 at (10, 6), played through the game", () => {
    const cfg = config({ instance: OPENSPIEL });
    const form = dond.legal(dond.init(cfg, rng), 0).find((f) => f.kind === "split") as SplitForm;
    expect(form.max.reduce((n, m) => n * (m + 1), 1)).toBe(24);
    let best = -1;
    const at: string[] = [];
    for (const keep of splits(OPENSPIEL.pool)) {
      const state = dond.init(cfg, rng);
      act(state, propose(...keep));
      const rewards = act(state, { type: "agree" });
      expect(dond.returns(state)).toEqual(rewards);
      const total = rewards[0] + rewards[1];
      if (total > best) [best, at.length] = [total, 0];
      if (total === best) at.push(`${keep} → ${rewards}`);
    }
    expect(best).toBe(16);
    expect(at).toEqual(["1,2,0 → 10,6"]);
    expect(bestWelfare(OPENSPIEL)).toEqual({ total: 16, scores: [[10, 6]] });
  });

  it("the FB example: best joint welfare 16, the book and both balls to one side, the hats to the other", () => {
    expect(bestWelfare(FB)).toEqual({ total: 16, scores: [[10, 6]] });
    const state = dond.init(config({ instance: FB }, "dialogue"), rng);
    act(state, { type: "select" });
    expect(dond.apply(state, [choice(1, 0, 2), choice(0, 3, 0)], rng)).toEqual([10, 6]);
    expect(dond.observe(state, "public")).toMatchObject({ agreement: true, choices: [[1, 0, 2], [0, 3, 0]] });
  });

  it("pays the proposer its kept share and the other the rest, whichever seat proposed", () => {
    const state = dond.init(config({ instance: OPENSPIEL }), rng);
    act(state, propose(1, 2, 3), propose(0, 0, 3));
    // Player 1 kept the 3 balls (2 each); player 0 agrees to the book and the hats.
    expect(act(state, "agree")).toEqual([10, 6]);
    expect(dond.observe(state, 0)).toMatchObject({ phase: "over", agreement: true, values: [[8, 1, 0], [4, 0, 2]] });
  });

  it("no agreement pays 0/0: after the last offer, on no_agreement, and on takes that do not fit", () => {
    const state = dond.init(config({ instance: OPENSPIEL }), rng);
    for (let k = 0; k < 9; k++) act(state, propose(1, 1, 1));
    expect(dond.describe(dond.observe(state, 1))).toContain("This is the last offer: nobody can accept it.");
    expect(act(state, propose(1, 1, 1))).toEqual([0, 0]);
    expect(dond.toAct(state)).toEqual([]);
    expect(dond.observe(state, "public")).toMatchObject({ phase: "over", agreement: false, returns: [0, 0] });

    const cfg = config({ instance: OPENSPIEL }, "dialogue");
    const cases: [DondAction, DondAction, number[]][] = [
      [choice(1, 2, 0), choice(0, 0, 3), [10, 6]],
      [choice(1, 2, 0), choice(0, 0, 2), [0, 0]],
      [choice(1, 2, 0), choice(1, 0, 3), [0, 0]],
      [{ type: "no_agreement" }, choice(0, 0, 3), [0, 0]],
      [{ type: "no_agreement" }, { type: "no_agreement" }, [0, 0]],
    ];
    for (const [a0, a1, expected] of cases) {
      const s = dond.init(cfg, rng);
      act(s, "hello", "<selection>");
      expect(dond.apply(s, [a0, a1], rng)).toEqual(expected);
      expect(dond.returns(s)).toEqual(expected);
      expect(dond.observe(s, 0).agreement).toBe(expected[0] > 0);
    }
  });

  it("discounts a deal once per offer or agreement after the second, not counting messages", () => {
    const cfg = config({ instance: OPENSPIEL, discount: 0.5 });
    const quick = dond.init(cfg, rng);
    act(quick, "hi", propose(1, 2, 0), "hello", "agree");
    expect(dond.returns(quick)).toEqual([10, 6]);
    const slow = dond.init(cfg, rng);
    act(slow, propose(1, 2, 0), propose(0, 0, 3), "agree");
    expect(dond.returns(slow)).toEqual([5, 3]);
    const slower = dond.init(cfg, rng);
    act(slower, propose(1, 2, 0), propose(0, 0, 3), propose(1, 2, 0), "agree");
    expect(dond.returns(slower)).toEqual([2.5, 1.5]);
  });
});

describe("deal-or-no-deal: turns and parsing", () => {
  it("alternating offers: one optional message, then propose or agree; agree needs an offer", () => {
    const state = dond.init(config({ instance: OPENSPIEL }), rng);
    expect(dond.legal(state, 0).map((f) => f.kind)).toEqual(["text", "split"]);
    expect(error(dond.parse("agree", state, 0)).message).toMatch(/^there is no offer on the table to agree to yet\./);
    expect(error(dond.parse({ type: "agree" }, state, 0)).code).toBe("illegal_action");
    expect(dond.parse("Shall we split it?", state, 0)).toEqual({ type: "message", text: "Shall we split it?" });
    // The generic form wins over reading any text as the message.
    expect(dond.parse("message hello", state, 0)).toEqual({ type: "message", text: "hello" });
    expect(dond.parse("Message: I like books", state, 0)).toEqual({ type: "message", text: "I like books" });
    expect(dond.parse("<message>message kept</message>", state, 0)).toEqual({ type: "message", text: "message kept" });
    expect(dond.parse("messages matter", state, 0)).toEqual({ type: "message", text: "messages matter" });
    act(state, "<message>I like books.</message>");
    expect(dond.observe(state, 1).chat).toEqual([{ turn: 1, seat: 0, text: "I like books." }]);
    expect(dond.toAct(state)).toEqual([0]);
    expect(dond.legal(state, 0).map((f) => f.kind)).toEqual(["split"]);
    expect(error(dond.parse("more talk", state, 0)).message).toMatch(/^could not read an action/);
    expect(error(dond.parse({ type: "message", text: "x" }, state, 0)).code).toBe("illegal_action");
    expect(error(dond.parse("agree", state, 1)).code).toBe("not_your_turn");
    act(state, "Offer: 1 2 0");
    expect(dond.toAct(state)).toEqual([1]);
    expect(dond.legal(state, 1).map((f) => f.kind)).toEqual(["text", "split", "fixed"]);
    const view = dond.describe(dond.observe(state, 1));
    expect(view).toContain(
      "- Offer 1, by the other player: the other player keeps 1 book, 2 hats and 0 balls; you get 0 books, 0 hats and 3 balls.",
    );
    expect(view).toContain("or agree to the other player's last offer: agree.");
  });

  it("reads proposals as JSON (take, keep or item fields), `propose …`, `Offer: b h l` and bare counts", () => {
    const state = dond.init(config({ instance: OPENSPIEL }), rng);
    const inputs = [
      propose(1, 2, 0),
      { type: "propose", keep: [1, 2, 0] },
      '{"type":"propose","keep":[1,2,0]}',
      { type: "propose", books: 1, hats: 2, balls: 0 },
      "propose 1 book, 2 hats and 0 balls",
      "keep: 1 book, 2 hats, 0 balls",
      "Offer: 1 2 0",
      "1 book 2 hats 0 balls",
      "1 2 0",
    ];
    for (const input of inputs) expect(dond.parse(input, state, 0)).toEqual(propose(1, 2, 0));
    expect(error(dond.parse(propose(2, 0, 0), state, 0)).message).toBe(
      "the books count 2 is outside [0, 1]. Legal now: message <text of at most 500 characters> | " +
        "propose <books: integer in [0, 1]> <hats: integer in [0, 2]> <balls: integer in [0, 3]>.",
    );
    expect(error(dond.parse("propose 1 book", state, 0)).message).toMatch(/^the propose gives no count for hats/);
    expect(error(dond.parse({ type: "propose", take: [1, 2] }, state, 0)).code).toBe("malformed_action");
    expect(error(dond.parse({ type: "propose", keep: [1, 2, 0], take: [1, 2, 0] }, state, 0)).code).toBe(
      "malformed_action",
    );
    expect(error(dond.parse({ type: "select" }, state, 0)).code).toBe("illegal_action");
    expect(error(dond.parse("{not json", state, 0)).code).toBe("malformed_action");
  });

  it("dialogue: messages in turn from a random first speaker, select or the cap ends the talk", () => {
    const firsts = [0, 0];
    for (let seed = 0; seed < 200; seed++) firsts[dond.toAct(dond.init(talk, new Rng(seed)))[0]]++;
    expect(Math.min(...firsts)).toBeGreaterThan(60);

    const state = dond.init(config({ instance: OPENSPIEL, maxTurns: 3 }, "dialogue"), new Rng(2));
    const [first] = dond.toAct(state);
    expect(dond.legal(state, first).map((f) => f.kind)).toEqual(["text", "fixed"]);
    expect(dond.parse("propose 1 1 1", state, first)).toEqual({ type: "message", text: "propose 1 1 1" });
    act(state, "a", "b");
    expect(dond.toAct(state)).toEqual([first]);
    act(state, "c");
    expect(dond.toAct(state)).toEqual([0, 1]);
    expect(dond.observe(state, 0)).toMatchObject({ phase: "choose", selectedBy: null });
    expect(dond.observe(state, 0).chat.map((m) => m.seat)).toEqual([first, 1 - first, first]);
    for (
      const input of [
        "choice 1 book, 2 hats, 0 balls",
        "item0=1 item1=2 item2=0",
        "<split><books>1</books><hats>2</hats><balls>0</balls></split>",
        { type: "choice", keep: [1, 2, 0] },
      ]
    ) {
      expect(dond.parse(input, state, 0)).toEqual(choice(1, 2, 0));
    }
    for (const input of ["<no_agreement>", "no agreement", "No deal.", { type: "no_agreement" }]) {
      expect(dond.parse(input, state, 1)).toEqual({ type: "no_agreement" });
    }
    expect(error(dond.parse("hello", state, 0)).code).toBe("illegal_action");

    const selected = dond.init(config({ instance: OPENSPIEL }, "dialogue"), new Rng(2));
    for (const input of ["<selection>", "select", "[Select]"]) {
      expect(dond.parse(input, selected, first)).toEqual({ type: "select" });
    }
    expect(dond.parse("message hello", selected, first)).toEqual({ type: "message", text: "hello" });
    expect(dond.parse("Message: select", selected, first)).toEqual({ type: "message", text: "select" });
    act(selected, "I want the book.", "select");
    expect(dond.observe(selected, first)).toMatchObject({ phase: "choose", selectedBy: 1 - first });
    expect(dond.describe(dond.observe(selected, first))).toContain("The talk is over.");
  });
});

describe("deal-or-no-deal: hidden information", () => {
  /** Pairs of instances that differ only in `seat`'s values. */
  function twins(seat: number): [Instance, Instance][] {
    const groups = new Map<string, Instance[]>();
    for (const instance of allInstances()) {
      const key = `${instance.pool} ${instance.values[1 - seat]}`;
      groups.set(key, [...(groups.get(key) ?? []), instance]);
    }
    return [...groups.values()].filter((g) => g.length > 1).map((g) => [g[0], g[g.length - 1]]);
  }

  it("a seat's view and text do not depend on the other's values until the game is over", () => {
    let checked = 0;
    for (const protocol of ["alternating-offers", "dialogue"]) {
      for (const hidden of [0, 1]) {
        const viewer = 1 - hidden;
        const pairs = twins(hidden);
        for (let k = 0; k < 40; k++) {
          const [a, b] = pairs[(k * 7919) % pairs.length];
          const states = [a, b].map((instance) => dond.init(config({ instance }, protocol), new Rng(k)));
          const picker = new Rng(`pick-${k}`);
          for (let toAct = dond.toAct(states[0]); toAct.length > 0; toAct = dond.toAct(states[0])) {
            const views = states.map((s) => dond.observe(s, viewer));
            expect(views[1]).toEqual(views[0]);
            expect(dond.describe(views[1])).toBe(dond.describe(views[0]));
            expect(dond.observe(states[1], "public")).toEqual(dond.observe(states[0], "public"));
            expect(views[0].values[hidden]).toBeNull();
            expect(dond.observe(states[0], "public").values).toEqual([null, null]);
            const moves: Action[] = [];
            for (const seat of toAct) moves[seat] = randomAction(picker.pick(dond.legal(states[0], seat)), picker);
            for (const s of states) dond.apply(s, moves as DondAction[], rng);
            checked++;
          }
          // Once over, both values are shown to everyone.
          for (const [s, instance] of [[states[0], a], [states[1], b]] as const) {
            for (const v of [0, 1, "public"] as const) expect(dond.observe(s, v).values).toEqual(instance.values);
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(400);
  });
});

describe("deal-or-no-deal: strategies", () => {
  it("play only legal actions that parse back as themselves", () => {
    for (const cfg of [offers, talk]) {
      for (
        const names of [["greedy", "welfare-max"], ["welfare-max", "greedy"], ["greedy", "random"], [
          "welfare-max",
          "random",
        ]]
      ) {
        for (let seed = 0; seed < 30; seed++) {
          const strategies = names.map(strategy);
          const state = dond.init(cfg, new Rng(seed));
          const stratRng = new Rng(seed, 1);
          for (let toAct = dond.toAct(state); toAct.length > 0; toAct = dond.toAct(state)) {
            const moves: DondAction[] = [];
            for (const seat of toAct) {
              const action = strategies[seat].act({
                seat,
                legal: dond.legal(state, seat),
                observation: () => dond.observe(state, seat),
                rng: stratRng,
              }) as DondAction;
              const wire = JSON.parse(JSON.stringify(action));
              expect(must(dond.parse(wire, state, seat))).toEqual(wire);
              moves[seat] = action;
            }
            dond.apply(state, moves, rng);
          }
        }
      }
    }
  });

  it("two welfare-max seats always reach the best joint welfare, in both protocols", () => {
    for (const cfg of [offers, talk]) {
      for (let seed = 0; seed < 300; seed++) {
        const state = dond.init(cfg, new Rng(seed));
        const instance: Instance = {
          pool: [...state.pool] as unknown as Instance["pool"],
          values: [[...state.values.slice(0, 3)], [...state.values.slice(3)]] as unknown as Instance["values"],
        };
        const { returns } = playMatch(dond, cfg, [strategy("welfare-max"), strategy("welfare-max")], seed);
        // playMatch seeds the game's stream 0 with the same seed, so it plays this instance.
        expect(returns[0] + returns[1]).toBe(bestWelfare(instance).total);
      }
    }
  });

  it("greedy keeps whatever it values: two greedy seats deal only at the last chance, and only sometimes", () => {
    const cfg = config({ instance: OPENSPIEL });
    const greedy = strategy("greedy");
    const seen: DondAction[] = [];
    const { returns } = playMatch(
      dond,
      cfg,
      [greedy, greedy],
      1,
      (m) => seen.push(...m.filter(Boolean) as DondAction[]),
    );
    // Player 0 wants the book and hats, player 1 the book and balls; player 0's offers leave
    // player 1 the 3 balls (6), which it takes at the last chance.
    expect(seen.slice(0, 2)).toEqual([propose(1, 2, 0), propose(1, 0, 3)]);
    expect(seen).toHaveLength(10);
    expect(seen[9]).toEqual({ type: "agree" });
    expect(returns).toEqual([10, 6]);
    // Against welfare-max it gets everything it values at once.
    const against = playMatch(dond, cfg, [greedy, strategy("welfare-max")], 1);
    expect(against.returns[0]).toBe(10);
  });
});

describe("deal-or-no-deal: chance and the numeric face", () => {
  const mask = (state: DondState, seat: number) => {
    const out = new Uint8Array(dond.actionCount(state.config)).fill(7);
    dond.legalMask(state, seat, out);
    return maskIds(out);
  };
  /** The indices of the tensor's nonzero entries (every entry is 0 or 1). */
  const tensor = (state: DondState, seat: number) => {
    const out = new Float32Array(dond.observationShape(state.config)[0]).fill(Number.NaN);
    dond.encode(dond.observe(state, seat), out);
    expect(out.every((x) => x === 0 || x === 1)).toBe(true);
    return Array.from(out.keys()).filter((i) => out[i] === 1);
  };
  /** The ids of the 24 splits of OpenSpiel's pool 1, 2, 3 (books counting fastest, at most 7 items). */
  const openspielSplits = [0, 1, 8, 9, 15, 16, 36, 37, 43, 44, 49, 50, 64, 65, 70, 71, 75, 76, 85, 86, 90, 91, 94, 95];

  it("deals an instance uniformly, then draws who opens the dialogue, consuming the rng as it always has", () => {
    const state = dond.start(offers);
    const odds = dond.chance(state);
    expect(odds).toHaveLength(5793);
    expect(odds.every((p) => p === 1 / 5793)).toBe(true);
    expect(dond.toAct(state)).toEqual([]);
    dond.resolve(state, 4000);
    expect(Array.from(state.pool)).toEqual([...allInstances()[4000].pool]);
    expect(Array.from(state.values)).toEqual(allInstances()[4000].values.flat());
    expect(dond.chance(state)).toEqual([]);
    expect(dond.toAct(state)).toEqual([0]);

    const fixed = dond.start(config({ instance: FB }, "dialogue"));
    expect(dond.chance(fixed)).toEqual([0.5, 0.5]);
    dond.resolve(fixed, 1);
    expect(dond.toAct(fixed)).toEqual([1]);
    expect(() => dond.resolve(fixed, 0)).toThrow(RangeError);

    for (let seed = 0; seed < 50; seed++) {
      const drawn = new Rng(seed);
      const instance = drawn.pick(allInstances());
      const opener = drawn.int(2);
      const played = dond.init(talk, new Rng(seed));
      expect(Array.from(played.pool)).toEqual([...instance.pool]);
      expect(dond.toAct(played)).toEqual([opener]);
    }
  });

  it("has OpenSpiel bargaining's 120 splits and agree, and the dialogue's pass, select and no_agreement", () => {
    expect(dond.actionCount(offers)).toBe(121);
    expect(dond.actionCount(talk)).toBe(123);
    expect(dond.observationShape(offers)).toEqual([354]);
    expect(dond.observationShape(talk)).toEqual([231]);
    const state = dond.init(config({ instance: OPENSPIEL }), rng);
    expect(dond.actionOf(16, state, 0)).toEqual(propose(1, 2, 0));
    expect(dond.actionId(propose(1, 2, 0), state, 0)).toBe(16);
    expect(dond.actionId(propose(0, 0, 0), state, 0)).toBe(0);
    expect(dond.actionId(propose(7, 0, 0), state, 0)).toBe(7);
    expect(dond.actionId(propose(0, 1, 0), state, 0)).toBe(8);
    expect(dond.actionId(propose(0, 0, 7), state, 0)).toBe(119);
    expect(dond.actionId({ type: "agree" }, state, 0)).toBe(120);
    expect(dond.actionId({ type: "message", text: "" }, state, 0)).toBe(-1);
    expect(dond.actionId({ type: "message", text: "hi" }, state, 0)).toBe(-1);
  });

  it("alternating offers: masks the splits that fit the pool, and agree once an offer is on the table", () => {
    const state = dond.init(config({ instance: OPENSPIEL }), rng);
    expect(mask(state, 0)).toEqual(openspielSplits);
    expect(mask(state, 1)).toEqual([]);
    const early = dond.actionOf(120, state, 0) as ActionError;
    expect(early.code).toBe("illegal_action");
    expect(early.message).toBe(`action id 120 is not legal now. Legal now: ids ${openspielSplits.join(", ")}.`);
    expect((dond.actionOf(2, state, 0) as ActionError).message).toMatch(/^action id 2 is not legal now/);
    act(state, "hello");
    act(state, dond.actionOf(16, state, 0));
    expect(mask(state, 1)).toEqual([...openspielSplits, 120]);
    expect(dond.actionOf(120, state, 1)).toEqual({ type: "agree" });
    expect((dond.actionOf(16, state, 0) as ActionError).code).toBe("not_your_turn");
  });

  it("dialogue: pass or select in the talk, then a take or no_agreement for both seats at once", () => {
    const state = dond.start(config({ instance: OPENSPIEL }, "dialogue"));
    dond.resolve(state, 0);
    expect(mask(state, 0)).toEqual([120, 121]);
    expect(mask(state, 1)).toEqual([]);
    expect(dond.actionOf(120, state, 0)).toEqual({ type: "message", text: "" });
    expect(dond.actionId({ type: "message", text: "" }, state, 0)).toBe(120);
    expect(dond.actionId({ type: "message", text: "hi" }, state, 0)).toBe(-1);
    act(state, dond.actionOf(120, state, 0));
    act(state, dond.actionOf(121, state, 1));
    expect(dond.observe(state, 0).chat).toEqual([{ turn: 1, seat: 0, text: "" }]);
    for (const seat of [0, 1]) expect(mask(state, seat)).toEqual([...openspielSplits, 122]);
    expect(dond.actionOf(16, state, 1)).toEqual(choice(1, 2, 0));
    expect(dond.actionId(choice(1, 2, 0), state, 1)).toBe(16);
    expect(dond.actionOf(122, state, 0)).toEqual({ type: "no_agreement" });
    expect(dond.actionId({ type: "no_agreement" }, state, 0)).toBe(122);
    dond.apply(state, [dond.actionOf(16, state, 0) as DondAction, dond.actionOf(85, state, 1) as DondAction], rng);
    expect(dond.returns(state)).toEqual([10, 6]);
    for (const seat of [0, 1]) expect(mask(state, seat)).toEqual([]);
  });

  it("alternating offers: OpenSpiel's information-state tensor, then the seat, the other's values and messages", () => {
    const state = dond.init(config({ instance: OPENSPIEL }), rng);
    act(state, "hi", propose(1, 2, 0), propose(0, 0, 3));
    expect(tensor(state, 0)).toEqual([
      // Two offers made.
      3,
      // The pool 1, 2, 3: ones at 0…n for each count, 8 wide.
      ...[12, 13, 20, 21, 22, 28, 29, 30, 31],
      // Player 0's values 8, 1, 0, 11 wide.
      ...[36, 37, 38, 39, 40, 41, 42, 43, 44, 47, 48, 58],
      // Offer 1 keeps 1, 2, 0; offer 2 keeps 0, 0, 3.
      ...[69, 70, 77, 78, 79, 85, 93, 101, 109, 110, 111, 112],
      // Seat 0; player 1's values still hidden; a message in turn 1.
      309,
      344,
    ]);
  });

  it("dialogue: the talk, who selected, and both stated takes once over", () => {
    const state = dond.start(config({ instance: FB, maxTurns: 3 }, "dialogue"));
    dond.resolve(state, 1);
    act(state, "hello", "select");
    dond.apply(state, [choice(1, 0, 2), choice(0, 3, 0)], rng);
    expect(tensor(state, 0)).toEqual([
      // A deal; one message sent.
      0,
      2,
      // The pool 1, 3, 2 and player 0's values 6, 0, 2.
      ...[5, 6, 13, 14, 15, 16, 21, 22, 23],
      ...[29, 30, 31, 32, 33, 34, 35, 40, 51, 52, 53],
      // Seat 0; player 1's values 2, 2, 1, shown at the end; the phase is over.
      62,
      ...[64, 65, 66, 75, 76, 77, 86, 87],
      99,
      // Message 1 by player 1, with text; player 0 selected.
      103,
      104,
      111,
      // The takes: player 0's 1, 0, 2 and player 1's 0, 3, 0.
      ...[113, 114, 121, 129, 130, 131],
      ...[138, 146, 147, 148, 149, 154],
    ]);
  });
});
