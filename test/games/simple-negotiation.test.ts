import { describe, expect, it } from "vitest";
import type { ActionError } from "../../games/core/action.ts";
import { ConfigError, configure } from "../../games/core/config.ts";
import { NumericFaceError } from "../../games/core/game.ts";
import { maskIds } from "../../games/core/numeric.ts";
import { Rng } from "../../games/core/rng.ts";
import {
  simpleNegotiation as sn,
  type SnAction,
  type SnConfig,
  type SnState,
} from "../../games/simple-negotiation/game.ts";
import { random } from "../../policies/baselines/random.ts";
import { simpleNegotiationStrategies } from "../../policies/baselines/simple-negotiation.ts";
import { playMatch } from "../../policies/simulate.ts";
import type { Strategy } from "../../policies/strategy.ts";
import { actionError as error, must, playInputs } from "../support/actions.ts";

function config(raw: Record<string, unknown> = {}, variant?: string): SnConfig {
  return configure<SnConfig>(sn, raw, variant).config;
}

const standard = config();
const rng = new Rng(0);

/** Parses each input for whoever is to act and applies it; returns the last step's rewards. */
const act = (state: SnState, ...inputs: unknown[]) => playInputs(sn, state, rng, ...inputs);

function strategy(name: string): Strategy {
  return name === "random"
    ? random.create(undefined)
    : simpleNegotiationStrategies.find((d) => d.name === name)!.create(undefined);
}

/** A random action of any kind, offers included (the legal forms list only chat, accept and deny). */
function anyAction(state: SnState, seat: number, picker: Rng): SnAction {
  const legal = sn.legal(state, seat);
  const roll = picker.int(4);
  const answers = legal.filter((form) => form.kind === "fixed");
  if (roll === 0 && answers.length > 0) return (picker.pick(answers) as { action: SnAction }).action;
  if (roll <= 1) return { type: "chat", text: `note ${picker.int(100)}` };
  const obs = sn.observe(state, seat);
  const give = picker.int(2);
  const held = obs.inventories[seat][give];
  if (held === 0) return { type: "chat", text: "nothing to give" };
  return {
    type: "offer",
    give: { [obs.resources[give]]: 1 + picker.int(held) },
    get: { [obs.resources[1 - give]]: 1 + picker.int(12) },
  };
}

describe("simple-negotiation: known answers (games.md §8.2)", () => {
  it("[Offer: 3 Wood -> 2 Gold] accepted pays player 0 +15 and player 1 +35", () => {
    const state = sn.init(standard, rng);
    expect(act(state, "[Offer: 3 Wood -> 2 Gold]")).toEqual([0, 0]);
    expect(act(state, "[Accept]")).toEqual([15, 35]);
    expect(sn.returns(state)).toEqual([15, 35]);
    expect(sn.observe(state, "public").inventories).toEqual([[7, 12], [13, 8]]);
  });

  it("a 1:1 swap gives equal gains: +10 per unit each if player 0 gives Wood, −10 if it gives Gold", () => {
    for (let w = 1; w <= 10; w++) {
      const wood = sn.init(standard, rng);
      act(wood, `[Offer: ${w} Wood -> ${w} Gold]`, "[Accept]");
      expect(sn.returns(wood)).toEqual([10 * w, 10 * w]);
      const gold = sn.init(standard, rng);
      act(gold, "hello", { type: "offer", give: { Wood: w }, get: { Gold: w } }, "accept");
      // Player 1 offered its Wood for player 0's Gold.
      expect(sn.returns(gold)).toEqual([-10 * w, -10 * w]);
    }
  });

  it("no trade is 0/0, and the game ends after exactly maxTurns actions", () => {
    for (const maxTurns of [1, 2, 10, 11]) {
      const state = sn.init(config({ maxTurns }), rng);
      let actions = 0;
      while (sn.toAct(state).length > 0) {
        expect(sn.toAct(state)).toEqual([actions % 2]);
        act(state, `message ${actions++}`);
      }
      expect(actions).toBe(maxTurns);
      expect(sn.returns(state)).toEqual([0, 0]);
      expect(sn.legal(state, 0)).toEqual([]);
      expect(sn.legal(state, 1)).toEqual([]);
      expect(error(sn.parse("[Accept]", state, maxTurns % 2)).code).toBe("not_your_turn");
      expect(sn.observe(state, 0)).toMatchObject({ phase: "over", toMove: null, gains: [0, 0] });
    }
    expect(sn.init(config({}, "long"), rng).config.maxTurns).toBe(30);
  });

  it("an offer made with the last action can never be accepted", () => {
    const state = sn.init(config({ maxTurns: 3 }), rng);
    act(state, "hi", "hi", "[Offer: 1 Wood -> 1 Gold]");
    expect(sn.toAct(state)).toEqual([]);
    expect(sn.returns(state)).toEqual([0, 0]);
  });
});

describe("simple-negotiation: offers and answers", () => {
  it("only the recipient may accept or deny, and the buttons appear only for it", () => {
    const state = sn.init(standard, rng);
    expect(sn.legal(state, 0).map((f) => f.kind)).toEqual(["text", "exchange"]);
    expect(error(sn.parse("[Accept]", state, 0)).message).toBe(
      "there is no offer to accept. Legal now: chat <text of at most 1000 characters> | " +
        "offer <give: Wood 1-10, Gold 1-10> -> <get: Wood 1-20, Gold 1-20>.",
    );
    act(state, "[Offer: 2 Gold -> 2 Wood]");
    expect(sn.legal(state, 1)).toEqual([
      { kind: "text", type: "chat", maxLength: 1000 },
      { kind: "exchange", type: "offer", give: { Wood: 10, Gold: 10 }, get: { Wood: 20, Gold: 20 }, maxText: 1000 },
      { kind: "fixed", action: { type: "accept" } },
      { kind: "fixed", action: { type: "deny" } },
    ]);
    expect(error(sn.parse("[Accept]", state, 0)).code).toBe("not_your_turn");
    act(state, "Let me think.");
    // The offer still waits; its maker cannot accept it.
    expect(sn.observe(state, 0).offer).toEqual({ from: 0, to: 1, give: { Gold: 2 }, get: { Wood: 2 } });
    expect(sn.legal(state, 0).map((f) => f.kind)).toEqual(["text", "exchange"]);
    expect(error(sn.parse({ type: "accept" }, state, 0)).message).toMatch(
      /^the pending offer is your own; only player 1 may accept it\./,
    );
    act(state, "still there?");
    expect(act(state, "Fine. [Accept]")).toEqual([-20, -20]);
    expect(sn.observe(state, 0).offer).toBeNull();
  });

  it("an explicit deny clears the offer; a counter-offer replaces it and is logged as turning it down", () => {
    const state = sn.init(standard, rng);
    act(state, "[Offer: 5 Wood -> 1 Gold]", "No way. [Deny]");
    expect(sn.observe(state, 0).offer).toBeNull();
    expect(error(sn.parse("[Deny]", state, 0)).message).toMatch(/^there is no offer to deny\./);
    act(state, "[Offer: 5 Wood -> 1 Gold]", "[Offer: I give 1 Gold -> 3 Wood.]");
    const obs = sn.observe(state, 0);
    expect(obs.offer).toEqual({ from: 1, to: 0, give: { Gold: 1 }, get: { Wood: 3 } });
    expect(obs.log.map((e) => e.type)).toEqual(["offer", "deny", "offer", "offer"]);
    expect(obs.log[1]).toEqual({ turn: 2, seat: 1, type: "deny", text: "No way." });
    expect(obs.log[3]).toEqual({
      turn: 4,
      seat: 1,
      type: "offer",
      give: { Gold: 1 },
      get: { Wood: 3 },
      countered: true,
    });
    expect(sn.describe(obs)).toContain(
      "- Action 4, the other player: offered 1 Gold for 3 Wood (turning down the offer made to them)",
    );
    expect(act(state, "[Accept]")).toEqual([15 - 15, -5 + 45]);
  });

  it("re-checks holdings at acceptance: no accept when the recipient lacks what is asked", () => {
    const state = sn.init(standard, rng);
    act(state, { type: "offer", give: { Wood: 1 }, get: { Gold: 12 } });
    expect(sn.legal(state, 1).map((f) => (f.kind === "fixed" ? f.action.type : f.type))).toEqual([
      "chat",
      "offer",
      "deny",
    ]);
    expect(error(sn.parse("[Accept]", state, 1)).message).toMatch(
      /^the trade cannot be made: you do not hold what it names\. Legal now: chat .* \| deny\.$/,
    );
    // After a trade the holdings change, and a fresh offer is checked against the new ones.
    const traded = sn.init(standard, rng);
    act(traded, "[Offer: 10 Wood -> 10 Gold]", "[Accept]");
    expect(sn.returns(traded)).toEqual([100, 100]);
    expect(error(sn.parse("[Offer: 1 Wood -> 1 Gold]", traded, 0)).message).toMatch(
      /^you hold 0 Wood, so you cannot offer 1\./,
    );
  });

  it("pays gains by each player's own values, with any inventory and values the config sets", () => {
    const cfg = config({ inventory: [[3, 0], [0, 4]], values: [[2, 7], [1, 1]] });
    const state = sn.init(cfg, rng);
    expect(act(state, "[Offer: 3 Wood -> 4 Gold]", "[Accept]")).toEqual([-6 + 28, 3 - 4]);
    expect(sn.returns(state)).toEqual([22, -1]);
    expect(() => config({ values: [[5, -1], [1, 1]] })).toThrow(ConfigError);
    expect(() => config({ inventory: [[1, 2, 3], [1, 2]] })).toThrow(ConfigError);
    expect(() => config({ turns: 3 })).toThrow(/unknown key `turns`/);
  });
});

describe("simple-negotiation: parsing", () => {
  it("reads tokens inside free text, the generic forms and JSON, all to the same canonical actions", () => {
    const state = sn.init(standard, rng);
    const offer = { type: "offer", give: { Wood: 3 }, get: { Gold: 2 } };
    const same: unknown[] = [
      "[Offer: 3 Wood -> 2 Gold]",
      "[offer: 3 woods -> 2 gold.]",
      "[Offer: I give 3 Wood -> 2 Gold]",
      "[Offer: 1 Wood, 2 Wood -> 2 Gold]",
      "offer 3 Wood -> 2 Gold",
      offer,
      { type: "offer", give: { wood: 3 }, get: { Gold: 2 } },
      JSON.stringify(offer),
    ];
    for (const input of same) expect(sn.parse(input, state, 0)).toEqual(offer);
    expect(sn.parse("Here is a deal: [Offer: 3 Wood -> 2 Gold] Think about it.", state, 0)).toEqual({
      ...offer,
      text: "Here is a deal: Think about it.",
    });
    expect(sn.parse({ ...offer, text: "deal?" }, state, 0)).toEqual({ ...offer, text: "deal?" });
    expect(sn.parse("[Offer: 3 Wood and 1 Gold -> 4 Wood]", state, 0)).toEqual({
      type: "offer",
      give: { Wood: 3, Gold: 1 },
      get: { Wood: 4 },
    });
    expect(sn.parse("I'm open to negotiation.", state, 0)).toEqual({ type: "chat", text: "I'm open to negotiation." });
    expect(sn.parse("chat: hello", state, 0)).toEqual({ type: "chat", text: "hello" });
    expect(sn.parse("Chat hello there", state, 0)).toEqual({ type: "chat", text: "hello there" });
    // A word that only starts with a type word is free text, kept whole.
    expect(sn.parse("chatting about wood", state, 0)).toEqual({ type: "chat", text: "chatting about wood" });
    expect(sn.parse("offering wood?", state, 0)).toEqual({ type: "chat", text: "offering wood?" });
    // No offer is waiting, so accept is not legal: the text is a chat.
    expect(sn.parse("accept my terms", state, 0)).toEqual({ type: "chat", text: "accept my terms" });
    expect(sn.parse({ type: "chat", text: "" }, state, 0)).toEqual({ type: "chat", text: "" });
  });

  it("reads the generic form of a legal action over free text: `offer …`, `accept …`, `deny …`", () => {
    const state = sn.init(standard, rng);
    expect(error(sn.parse("Offer you a fair deal", state, 0)).message).toMatch(
      /^an offer names what you give, then `->`/,
    );
    act(state, "offer: 3 Wood -> 2 Gold");
    expect(sn.parse("accept sounds good", state, 1)).toEqual({ type: "accept", text: "sounds good" });
    expect(sn.parse("Accept: deal", state, 1)).toEqual({ type: "accept", text: "deal" });
    expect(sn.parse("deny no thanks", state, 1)).toEqual({ type: "deny", text: "no thanks" });
    expect(sn.parse("deny", state, 1)).toEqual({ type: "deny" });
    expect(sn.parse("acceptable, maybe", state, 1)).toEqual({ type: "chat", text: "acceptable, maybe" });
    expect(sn.parse("[Deny] accept nothing", state, 1)).toEqual({ type: "deny", text: "accept nothing" });
    expect(error(sn.parse(`accept ${"x".repeat(1001)}`, state, 1)).message).toMatch(/1001 characters long/);
  });

  it("refuses malformed offers, offers beyond one's holdings and several tokens, saying what is legal", () => {
    const state = sn.init(standard, rng);
    const cases: [unknown, string, RegExp][] = [
      ["[Offer: 3 Wood -> ]", "malformed_action", /^an offer names what you give, then `->`, then what you ask for/],
      ["[Offer: 3 Wood]", "malformed_action", /^an offer names what you give, then `->`/],
      [
        "[Offer 3 Wood -> 2 Gold]",
        "malformed_action",
        /^write an offer as \[Offer: 3 Wood -> 2 Gold\], with the colon/,
      ],
      ["[Offer: 3 Sheep -> 2 Gold]", "malformed_action", /^`Sheep` is not a resource here \(resources: Wood, Gold\)/],
      ["[Offer: some Wood -> 2 Gold]", "malformed_action", /^could not read "some Wood" in an offer/],
      ["[Offer: 0 Wood -> 2 Gold]", "malformed_action", /^an offer names at least 1 of each resource/],
      ["[Offer: 12 Wood -> 2 Gold]", "illegal_action", /^you hold 10 Wood, so you cannot offer 12\./],
      [
        "[Offer: 1 Wood -> 1 Gold] [Accept]",
        "malformed_action",
        /^use at most one of \[Offer: …\], \[Accept\] and \[Deny\]/,
      ],
      [
        { type: "offer", give: {}, get: { Gold: 1 } },
        "malformed_action",
        /^an offer gives at least one resource and asks/,
      ],
      [{ type: "offer", give: { Wood: 1 } }, "malformed_action", /^`get` \(what you ask for\) must be an object/],
      [
        { type: "offer", give: { Wood: 1.5 }, get: { Gold: 1 } },
        "malformed_action",
        /^the Wood count in `give` must be a whole/,
      ],
      [{ type: "offer", give: { Wood: 1 }, get: { Gold: 1 }, to: 1 }, "malformed_action", /^unexpected field `to`/],
      [{ type: "trade" }, "illegal_action", /^`trade` is not an action of this game/],
      [{ text: "hi" }, "malformed_action", /^an action is a JSON object with a string field `type`/],
      [{ type: "chat", text: 5 }, "malformed_action", /^the `text` of a chat must be a string/],
      ["x".repeat(1001), "illegal_action", /^the text is 1001 characters long; at most 1000 are allowed/],
      ["{oops", "malformed_action", /^the text starts with `\{` but is not valid JSON/],
    ];
    for (const [input, code, message] of cases) {
      const e = error(sn.parse(input, state, 0));
      expect(e.code).toBe(code);
      expect(e.message).toMatch(message);
      expect(e.message).toContain("Legal now: chat <text of at most 1000 characters> | offer <give: Wood 1-10");
    }
    expect(error(sn.parse("[Accept]", state, 1)).code).toBe("not_your_turn");
  });
});

describe("simple-negotiation: hidden information", () => {
  it("a seat's view and text do not depend on the other's values until the game is over", () => {
    const other = [[15, 5], [7, 3], [0, 40]];
    let checked = 0;
    for (const hidden of [0, 1]) {
      const viewer = 1 - hidden;
      for (let seed = 0; seed < 60; seed++) {
        const configs = other.map((v) => {
          const values = [[5, 15], [15, 5]];
          values[hidden] = v;
          return config({ values, maxTurns: 12 });
        });
        const states = configs.map((c) => sn.init(c, rng));
        const picker = new Rng(`hidden-${seed}`);
        while (sn.toAct(states[0]).length > 0) {
          const views = states.map((s) => sn.observe(s, viewer));
          for (const view of views.slice(1)) {
            expect(view).toEqual(views[0]);
            expect(sn.describe(view)).toBe(sn.describe(views[0]));
          }
          const publicViews = states.map((s) => JSON.stringify(sn.observe(s, "public")));
          expect(new Set(publicViews).size).toBe(1);
          expect(views[0].values[hidden]).toBeNull();
          expect(views[0].gains[hidden]).toBeNull();
          const [seat] = sn.toAct(states[0]);
          const action = anyAction(states[0], seat, picker);
          for (const s of states) sn.apply(s, Object.assign([], { [seat]: must(sn.parse(action, s, seat)) }), rng);
          checked++;
        }
        states.forEach((s, i) => expect(sn.observe(s, viewer).values[hidden]).toEqual(other[i]));
      }
    }
    expect(checked).toBe(2 * 60 * 12);
  });
});

describe("simple-negotiation: strategies", () => {
  it("play only actions that parse back as themselves", () => {
    for (
      const names of [["greedy", "welfare-max"], ["welfare-max", "greedy"], ["greedy", "random"], [
        "welfare-max",
        "welfare-max",
      ]]
    ) {
      const strategies = names.map(strategy);
      const state = sn.init(config({ maxTurns: 20 }), rng);
      while (sn.toAct(state).length > 0) {
        const [seat] = sn.toAct(state);
        const action = strategies[seat].act({
          seat,
          legal: sn.legal(state, seat),
          observation: () => sn.observe(state, seat),
          rng,
        }) as SnAction;
        const wire = JSON.parse(JSON.stringify(action));
        expect(must(sn.parse(wire, state, seat))).toEqual(wire);
        sn.apply(state, Object.assign([], { [seat]: action }), rng);
      }
    }
  });

  it("welfare-max pairs swap everything for +100 each; greedy pairs never trade; greedy exploits welfare-max", () => {
    const play = (a: string, b: string) => playMatch(sn, standard, [strategy(a), strategy(b)], 1).returns;
    expect(play("welfare-max", "welfare-max")).toEqual([100, 100]);
    expect(play("greedy", "greedy")).toEqual([0, 0]);
    // Greedy asks 1 Wood for all 10 Gold; welfare-max, guessing greedy values Gold at 15, takes it.
    expect(play("greedy", "welfare-max")).toEqual([145, -35]);
    // Welfare-max offers 10 Wood for 10 Gold, which gains greedy 100, so it accepts.
    expect(play("welfare-max", "greedy")).toEqual([100, 100]);
    expect(play("random", "random")).toEqual([0, 0]);
  });
});

describe("simple-negotiation: the numeric face", () => {
  const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
  const mask = (state: SnState, seat: number) => {
    const out = new Uint8Array(sn.actionCount(state.config)).fill(7);
    sn.legalMask(state, seat, out);
    return maskIds(out);
  };
  /** The tensor's nonzero entries, by index. */
  const tensor = (state: SnState, seat: number) => {
    const out = new Float32Array(sn.observationShape(state.config)[0]).fill(Number.NaN);
    sn.encode(sn.observe(state, seat), out);
    return Object.fromEntries([...out.entries()].filter(([, x]) => x !== 0));
  };

  it("has pass, accept, deny and every swap of one resource for the other; no chance", () => {
    // 20 Wood and 20 Gold in all: 400 swaps of Wood for Gold, then 400 of Gold for Wood.
    expect(sn.actionCount(standard)).toBe(803);
    expect(sn.observationShape(standard)).toEqual([130]);
    expect(sn.observationShape(config({}, "long"))).toEqual([350]);
    const small = config({ inventory: [[3, 0], [1, 5]] });
    expect(sn.actionCount(small)).toBe(3 + 2 * 4 * 5);
    const state = sn.start(standard);
    expect(sn.chance(state)).toEqual([]);
    expect(() => sn.resolve(state, 0)).toThrow(RangeError);
    expect(sn.actionOf(0, state, 0)).toEqual({ type: "chat", text: "" });
    expect(sn.actionOf(3, state, 0)).toEqual({ type: "offer", give: { Wood: 1 }, get: { Gold: 1 } });
    expect(sn.actionOf(3 + 2 * 20 + 1, state, 0)).toEqual({ type: "offer", give: { Wood: 3 }, get: { Gold: 2 } });
    expect(sn.actionOf(403 + 20 + 4, state, 0)).toEqual({ type: "offer", give: { Gold: 2 }, get: { Wood: 5 } });
    // Asking for all 20 Wood of the game is allowed (it cannot be accepted while the other holds only 10).
    expect(sn.actionOf(403 + 9 * 20 + 19, state, 0)).toEqual({ type: "offer", give: { Gold: 10 }, get: { Wood: 20 } });
  });

  it("has no face where the swaps would be too many", () => {
    const huge = config({ inventory: [[1000, 1000], [0, 0]] });
    expect(() => sn.actionCount(huge)).toThrow(NumericFaceError);
    expect(() => sn.observationShape(huge)).toThrow(/simple-negotiation has no numeric face here: .*2000000 swaps/);
  });

  it("masks the pass, offers of what the seat holds, and the answers to an offer made to it", () => {
    const state = sn.init(standard, rng);
    expect(mask(state, 0)).toEqual([0, ...range(3, 203), ...range(403, 603)]);
    expect(mask(state, 1)).toEqual([]);
    act(state, { type: "offer", give: { Wood: 3 }, get: { Gold: 12 } });
    // Player 1 holds only 10 Gold: it may deny, not accept.
    expect(mask(state, 1)).toEqual([0, 2, ...range(3, 203), ...range(403, 603)]);
    act(state, { type: "deny" }, "[Offer: 3 Wood -> 2 Gold]");
    expect(mask(state, 1)).toEqual([0, 1, 2, ...range(3, 203), ...range(403, 603)]);
    act(state, "[Accept]");
    // Player 0 now holds 7 Wood and 12 Gold.
    expect(mask(state, 0)).toEqual([0, ...range(3, 143), ...range(403, 643)]);
  });

  it("gives ids only to the pass, bare answers and swaps, and refuses ids not legal now", () => {
    const state = sn.init(standard, rng);
    act(state, "[Offer: 3 Wood -> 2 Gold]");
    const id = (action: SnAction) => sn.actionId(action, state, 1);
    expect(id({ type: "chat", text: "" })).toBe(0);
    expect(id({ type: "chat", text: "hello" })).toBe(-1);
    expect(id({ type: "accept" })).toBe(1);
    expect(id({ type: "accept", text: "deal" })).toBe(-1);
    expect(id({ type: "deny" })).toBe(2);
    expect(id({ type: "offer", give: { Wood: 3 }, get: { Gold: 2 } })).toBe(44);
    expect(id({ type: "offer", give: { Gold: 20 }, get: { Wood: 20 } })).toBe(802);
    expect(id({ type: "offer", give: { Wood: 3 }, get: { Gold: 2 }, text: "fair?" })).toBe(-1);
    expect(id({ type: "offer", give: { Wood: 1, Gold: 1 }, get: { Gold: 3 } })).toBe(-1);
    expect(id({ type: "offer", give: { Wood: 1 }, get: { Gold: 21 } })).toBe(-1);
    expect(sn.actionOf(1, state, 1)).toEqual({ type: "accept" });
    const stale = sn.actionOf(1, state, 0) as ActionError;
    expect(stale.code).toBe("not_your_turn");
    act(state, "[Deny]");
    const none = sn.actionOf(1, state, 0) as ActionError;
    expect(none.code).toBe("illegal_action");
    expect(none.message).toMatch(/^action id 1 is not legal now\. Legal now: ids 0, 3, 4, /);
    expect((sn.actionOf(803, state, 0) as ActionError).message).toMatch(/out of range: ids are integers in \[0, 802\]/);
  });

  it("encodes seat, progress, inventories, own values, gains, the offer waiting and the log", () => {
    const state = sn.init(standard, rng);
    act(state, "[Offer: 3 Wood -> 2 Gold] deal?");
    // Player 1: seat 1, one action taken, 10 of each held by both, its values 15 and 5, player 0's offer of
    // 3 Wood for 2 Gold waiting, and in the log an offer (3 Wood given, 2 Gold asked) with text.
    expect(tensor(state, 1)).toEqual({
      1: 1,
      3: 1,
      13: 10,
      14: 10,
      15: 10,
      16: 10,
      17: 15,
      18: 5,
      24: 1,
      26: 3,
      29: 2,
      31: 1,
      34: 3,
      37: 2,
      39: 1,
    });
    act(state, "[Accept]");
    // Player 0 after the trade: 7 Wood and 12 Gold (player 1: 13 and 8), a gain of 15, and an accept logged.
    expect(tensor(state, 0)).toEqual({
      0: 1,
      4: 1,
      13: 7,
      14: 12,
      15: 13,
      16: 8,
      17: 5,
      18: 15,
      22: 15,
      31: 1,
      34: 3,
      37: 2,
      39: 1,
      42: 1,
    });
  });

  it("shows the other's values and gain once the game is over", () => {
    const state = sn.init(config({ maxTurns: 2 }), rng);
    act(state, { type: "offer", give: { Gold: 1 }, get: { Wood: 1 } }, "accept");
    // 20 + 11·2 = 42 entries. Player 1 gave 1 Wood (worth 15 to it) for 1 Gold (5); player 0 gave 1 Gold (15 to
    // it) for 1 Wood (5): both lost 10, and both values are shown. The log's slots start at 22 and 32.
    expect(tensor(state, 1)).toEqual({
      1: 1,
      4: 1,
      5: 11,
      6: 9,
      7: 9,
      8: 11,
      9: 15,
      10: 5,
      11: 5,
      12: 15,
      13: 1,
      14: -10,
      15: -10,
      23: 1,
      27: 1,
      28: 1,
      34: 1,
    });
  });
});
