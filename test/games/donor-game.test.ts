import { describe, expect, it } from "vitest";
import { ActionError, describeSpace } from "../../games/core/action.ts";
import { ConfigError, configure } from "../../games/core/config.ts";
import { shapeSize } from "../../games/core/numeric.ts";
import { Rng } from "../../games/core/rng.ts";
import {
  type DonorAction,
  type DonorConfig,
  donorGame,
  type DonorObservation,
  type DonorState,
} from "../../games/donor-game/game.ts";
import { createStrategy } from "../../policies/baselines/index.ts";
import { playMatch } from "../../policies/simulate.ts";

function config(raw: Record<string, unknown> = {}, variant?: string): DonorConfig {
  return configure<DonorConfig>(donorGame, raw, variant).config;
}

function start(raw: Record<string, unknown> = {}, variant?: string, seed = 1): DonorState {
  return donorGame.init(config(raw, variant), new Rng(seed));
}

/** The round's (donor, recipient) pairs, in toAct order. */
function pairs(state: DonorState): [number, number][] {
  const obs = donorGame.observe(state, "public");
  return obs.pairs!.map((p) => [p.donor, p.recipient]);
}

/** Plays one round with the same action for every donor. */
function playRound(state: DonorState, act: (seat: number) => DonorAction): readonly number[] {
  const moves: (DonorAction | undefined)[] = [];
  for (const seat of donorGame.toAct(state)) moves[seat] = act(seat);
  return donorGame.apply(state, moves, new Rng(0));
}

function give(state: DonorState, seat: number, amount: number): DonorAction {
  const action = donorGame.parse({ type: "donate", amount }, state, seat);
  if (action instanceof ActionError) throw new Error(action.message);
  return action;
}

// The table of §3.2 of the spec, agents 0–5 in group A and 6–11 in group B.
const TABLE: [number, number][][] = [
  [[0, 6], [1, 7], [2, 8], [3, 9], [4, 10], [5, 11]],
  [[11, 0], [6, 1], [7, 2], [8, 3], [9, 4], [10, 5]],
  [[0, 10], [1, 11], [2, 6], [3, 7], [4, 8], [5, 9]],
  [[9, 0], [10, 1], [11, 2], [6, 3], [7, 4], [8, 5]],
  [[0, 8], [1, 9], [2, 10], [3, 11], [4, 6], [5, 7]],
  [[7, 0], [8, 1], [9, 2], [10, 3], [11, 4], [6, 5]],
  [[6, 0], [7, 1], [8, 2], [9, 3], [10, 4], [11, 5]],
  [[0, 11], [1, 6], [2, 7], [3, 8], [4, 9], [5, 10]],
  [[10, 0], [11, 1], [6, 2], [7, 3], [8, 4], [9, 5]],
  [[0, 9], [1, 10], [2, 11], [3, 6], [4, 7], [5, 8]],
  [[8, 0], [9, 1], [10, 2], [11, 3], [6, 4], [7, 5]],
  [[0, 7], [1, 8], [2, 9], [3, 10], [4, 11], [5, 6]],
];

/** An independent replay of the table: everyone gives fraction f of current resources. */
function referenceGame(rounds: [number, number][][], f: number): number[] {
  const r = new Array(12).fill(10);
  for (const round of rounds) {
    for (const [d, c] of round) {
      const x = f * r[d];
      r[d] -= x;
      r[c] += 2 * x;
    }
  }
  return r;
}

/** Every round of every game played until the end, as (donor, recipient) pairs. */
function fullSchedule(state: DonorState): [number, number][][] {
  const rounds: [number, number][][] = [];
  while (donorGame.toAct(state).length > 0) {
    rounds.push(pairs(state));
    playRound(state, (seat) => give(state, seat, 0));
  }
  return rounds;
}

describe("donor game schedule (§3.2)", () => {
  it("matches the spec's table exactly without shuffling", () => {
    const rounds = fullSchedule(start({ shuffle: false, games: 1 }));
    expect(rounds).toEqual(TABLE);
    expect(rounds[0]).toEqual([[0, 6], [1, 7], [2, 8], [3, 9], [4, 10], [5, 11]]);
    expect(rounds[6]).toEqual([[6, 0], [7, 1], [8, 2], [9, 3], [10, 4], [11, 5]]);
  });

  it("has the table's structure under any shuffle", () => {
    for (const seed of [1, 2, 3, 99]) {
      const state = start({ games: 1 }, undefined, seed);
      const groups = donorGame.observe(state, "public").agents!.map((a) => a.group);
      expect(groups.filter((g) => g === "A")).toHaveLength(6);
      const rounds = fullSchedule(state);
      expect(rounds).toHaveLength(12);
      const given = new Array(12).fill(0);
      const meetings = new Map<string, number>();
      rounds.forEach((round, r) => {
        expect(round).toHaveLength(6);
        expect(new Set(round.flat()).size).toBe(12);
        for (const [d, c] of round) {
          expect(groups[d]).not.toBe(groups[c]);
          given[d]++;
          meetings.set(`${d}>${c}`, (meetings.get(`${d}>${c}`) ?? 0) + 1);
        }
        // Group B donates in rounds 6 and 7 (1-based).
        if (r === 5 || r === 6) expect(round.every(([d]) => groups[d] === "B")).toBe(true);
      });
      expect(given).toEqual(new Array(12).fill(6));
      // 36 unordered A–B pairs, each met once in each direction.
      expect(meetings.size).toBe(72);
      expect([...meetings.values()].every((count) => count === 1)).toBe(true);
      for (const key of meetings.keys()) {
        const [d, c] = key.split(">");
        expect(meetings.has(`${c}>${d}`)).toBe(true);
      }
    }
  });

  it("shuffles with the seed: same seed, same groups; some seed differs from the identity", () => {
    const groupsOf = (seed: number) =>
      donorGame.observe(start({}, undefined, seed), "public").agents!.map((a) => a.group);
    expect(groupsOf(7)).toEqual(groupsOf(7));
    const identity = [..."AAAAAABBBBBB"];
    expect([1, 2, 3, 4, 5].some((seed) => groupsOf(seed).join("") !== identity.join(""))).toBe(true);
  });

  it("generalises to other even sizes: N rounds, N/2 disjoint pairs, every A–B pair once each way", () => {
    for (const agents of [2, 4, 10, 20]) {
      const state = start({ agents, games: 1, shuffle: false });
      const rounds = fullSchedule(state);
      expect(rounds).toHaveLength(agents);
      const seen = new Set<string>();
      for (const round of rounds) {
        expect(new Set(round.flat()).size).toBe(agents);
        for (const [d, c] of round) {
          expect(d < agents / 2).not.toBe(c < agents / 2);
          seen.add(`${d}>${c}`);
        }
      }
      expect(seen.size).toBe(2 * (agents / 2) ** 2);
    }
  });
});

describe("donor game known answers (§3.7)", () => {
  function everyoneGives(f: number, raw: Record<string, unknown> = {}) {
    const cfg = config({ games: 1, ...raw });
    const strategies = new Array(cfg.agents).fill(0).map(() => createStrategy("donor-game", `donate:${f}`));
    return playMatch(donorGame, cfg, strategies, 42);
  }
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

  it("f = 0 keeps everyone at the endowment", () => {
    const { returns, actions, steps } = everyoneGives(0);
    expect(returns).toEqual(new Array(12).fill(10));
    expect(steps).toBe(12);
    expect(actions).toBe(72);
  });

  it("f = 1/2 averages 21835/64: group A 182.96875, group B 499.375", () => {
    const { returns } = everyoneGives(0.5, { shuffle: false });
    expect(mean(returns)).toBe(21835 / 64);
    expect(returns).toEqual([...new Array(6).fill(182.96875), ...new Array(6).fill(499.375)]);
    expect(referenceGame(TABLE, 0.5)).toEqual(returns);
    const shuffled = everyoneGives(0.5).returns;
    expect([...shuffled].sort((a, b) => a - b)).toEqual(returns);
  });

  it("f = 1 averages 15360: group A 0, group B 30720", () => {
    const { returns } = everyoneGives(1, { shuffle: false });
    expect(mean(returns)).toBe(15360);
    expect(returns).toEqual([...new Array(6).fill(0), ...new Array(6).fill(30720)]);
  });

  it("two games: returns add both games' final resources", () => {
    const cfg = config({ shuffle: false });
    const strategies = new Array(12).fill(0).map(() => createStrategy("donor-game", "donate:0.5"));
    const rewardSums = new Array(12).fill(0);
    const { returns, steps } = playMatch(donorGame, cfg, strategies, 5, (_, rewards) => {
      rewards.forEach((r, seat) => (rewardSums[seat] += r));
    });
    expect(steps).toBe(24);
    const game1 = referenceGame(TABLE, 0.5);
    const game2 = referenceGame(TABLE.map((round) => round.map(([d, c]) => [c, d] as [number, number])), 0.5);
    expect(returns).toEqual(game1.map((r, seat) => r + game2[seat]));
    // Rewards are resource changes plus each game's endowment on its first step, so they sum to the returns.
    rewardSums.forEach((sum, seat) => expect(sum).toBeCloseTo(returns[seat], 9));
  });
});

describe("donor game transfers (§3.3)", () => {
  it("donating 4 of 10 leaves 6 and gives the recipient 8", () => {
    const state = start({ shuffle: false });
    const rewards = playRound(state, (seat) => give(state, seat, seat === 0 ? 4 : 0));
    const agents = donorGame.observe(state, "public").agents!;
    expect(agents[0].resources).toBe(6);
    expect(agents[6].resources).toBe(18);
    // The game's first step also credits every agent's endowment of 10.
    expect(rewards[0]).toBe(10 - 4);
    expect(rewards[6]).toBe(10 + 8);
    expect(rewards.filter((r) => r !== 10)).toHaveLength(2);
    expect(donorGame.returns(state)[6]).toBe(18);
    const second = playRound(state, (seat) => give(state, seat, seat === 11 ? 2 : 0));
    expect(second[11]).toBe(-2);
    expect(second[0]).toBe(4);
    expect(second.filter((r) => r !== 0)).toHaveLength(2);
  });

  it("allows real amounts up to everything held", () => {
    const state = start({ shuffle: false });
    playRound(state, (seat) => give(state, seat, seat === 0 ? 10 : 2.25));
    const agents = donorGame.observe(state, "public").agents!;
    expect(agents[0].resources).toBe(0);
    expect(agents[6].resources).toBe(30);
    expect(agents[1].resources).toBe(7.75);
    expect(agents[7].resources).toBe(14.5);
  });

  it("punishing 3 on a recipient with 5 leaves the donor 7 and the recipient 0", () => {
    const state = start({ shuffle: false }, "costly-punishment");
    // Round 1: seat 0 gives 5 of its 10 to seat 6, keeping 5.
    playRound(state, (seat) => give(state, seat, seat === 0 ? 5 : 0));
    // Round 2: seat 11 (10 units) punishes seat 0 (5 units) with 3.
    expect(pairs(state)[0]).toEqual([11, 0]);
    const punish = donorGame.parse("Punish, 3", state, 11);
    expect(punish).toEqual({ type: "punish", amount: 3 });
    const rewards = playRound(state, (seat) => (seat === 11 ? punish as DonorAction : give(state, seat, 0)));
    const agents = donorGame.observe(state, "public").agents!;
    expect(agents[11].resources).toBe(7);
    expect(agents[0].resources).toBe(0);
    expect(rewards[11]).toBe(-3);
    expect(rewards[0]).toBe(-5);
  });

  it("refusing changes nothing", () => {
    const state = start({ shuffle: false }, "partner-choice");
    const rewards = playRound(state, () => ({ type: "refuse" }));
    expect(rewards).toEqual(new Array(12).fill(10));
    expect(donorGame.returns(state)).toEqual(new Array(12).fill(10));
    expect(playRound(state, () => ({ type: "refuse" }))).toEqual(new Array(12).fill(0));
  });

  it("refuses an amount above the donor's resources, naming the range", () => {
    const state = start({ shuffle: false });
    const result = donorGame.parse({ type: "donate", amount: 11 }, state, 0);
    expect(result).toBeInstanceOf(ActionError);
    const error = result as ActionError;
    expect(error.code).toBe("illegal_action");
    expect(error.message).toContain("[0, 10]");
    expect((donorGame.parse({ type: "donate", amount: -1 }, state, 0) as ActionError).code).toBe("illegal_action");
    expect((donorGame.parse("11", state, 0) as ActionError).code).toBe("illegal_action");
  });

  it("refuses moves outside the variant and moves from recipients", () => {
    const state = start({ shuffle: false });
    expect((donorGame.parse({ type: "punish", amount: 1 }, state, 0) as ActionError).code).toBe("illegal_action");
    expect((donorGame.parse({ type: "refuse" }, state, 0) as ActionError).code).toBe("illegal_action");
    expect((donorGame.parse({ type: "donate", amount: 1 }, state, 6) as ActionError).code).toBe("not_your_turn");
    expect(donorGame.legal(state, 6)).toEqual([]);
    expect(() => donorGame.apply(state, [{ type: "donate", amount: 11 }], new Rng(0))).toThrow(RangeError);
  });

  it("offers exactly the variant's forms, capped at the donor's resources", () => {
    const amount = (type: string) => ({ kind: "amount", type, min: 0, max: 10, integer: false });
    expect(donorGame.legal(start({ shuffle: false }), 0)).toEqual([amount("donate")]);
    expect(donorGame.legal(start({ shuffle: false }, "costly-punishment"), 0)).toEqual([
      amount("donate"),
      amount("punish"),
    ]);
    expect(donorGame.legal(start({ shuffle: false }, "partner-choice"), 0)).toEqual([
      amount("donate"),
      { kind: "fixed", action: { type: "refuse" } },
    ]);
  });
});

describe("donor game: game 2", () => {
  it("resets resources to the endowment and reverses every pair", () => {
    const state = start({ shuffle: false, endowment: 7 });
    for (let r = 0; r < 12; r++) playRound(state, (seat) => give(state, seat, 1));
    const obs = donorGame.observe(state, "public");
    expect(obs.gameNumber).toBe(2);
    expect(obs.round).toBe(1);
    expect(obs.agents!.map((a) => a.resources)).toEqual(new Array(12).fill(7));
    expect(obs.finals).toHaveLength(1);
    const rounds = fullSchedule(state);
    expect(rounds).toEqual(TABLE.map((round) => round.map(([d, c]) => [c, d])));
    expect(donorGame.toAct(state)).toEqual([]);
    expect(donorGame.observe(state, "public").finals).toHaveLength(2);
  });

  it("plays one game when games = 1", () => {
    const state = start({ games: 1 });
    expect(fullSchedule(state)).toHaveLength(12);
    expect(donorGame.observe(state, 0).phase).toBe("over");
  });
});

describe("donor game traces (§3.4)", () => {
  const names = ["Ann", "Bo", "Cy", "Di", "Ed", "Fay", "Gus", "Hal", "Ivy", "Jo", "Kim", "Lu"];

  it("starts with no interactions and chains the recipient's trace, newest first", () => {
    const state = start({ shuffle: false, names }, "costly-punishment");
    // Round 1: Ann (0) → Gus (6). Ann sees Gus's starting trace.
    const first = donorGame.observe(state, 0).you!;
    expect(first.role).toBe("donor");
    expect(first.partner).toEqual({ name: "Gus", resources: 10 });
    expect(first.recipientTrace.map((e) => e.sentence)).toEqual(["Gus did not have any previous interactions."]);
    expect(first.recipientTrace[0].kind).toBe("start");
    expect(donorGame.observe(state, 6).you!.recipientTrace).toEqual([]);
    playRound(state, (seat) => give(state, seat, seat === 0 ? 4 : 0));
    // Round 2: Lu (11) → Ann (0): Ann's trace is Gus's plus her donation of 4 of 10.
    const second = donorGame.observe(state, 11).you!;
    expect(second.partner).toEqual({ name: "Ann", resources: 6 });
    expect(second.recipientTrace.map((e) => e.sentence)).toEqual([
      "In round 1, Ann donated 40.00% of their resources to Gus.",
      "Gus did not have any previous interactions.",
    ]);
    expect(second.recipientTrace[0]).toMatchObject({
      kind: "donate",
      game: 1,
      round: 1,
      donor: "Ann",
      recipient: "Gus",
      amount: 4,
      percent: 40,
    });
    playRound(state, (seat) => (seat === 11 ? { type: "punish", amount: 1.5 } : give(state, seat, 0)));
    // Round 3: Bo (1) → Lu (11): Lu's trace is Ann's plus Lu's punishment.
    const third = donorGame.observe(state, 1).you!;
    expect(third.partner).toEqual({ name: "Lu", resources: 8.5 });
    expect(third.recipientTrace.map((e) => e.sentence)).toEqual([
      "In round 2, Lu punished Ann by spending 1.5 units to take away 3 units from their resources.",
      "In round 1, Ann donated 40.00% of their resources to Gus.",
      "Gus did not have any previous interactions.",
    ]);
    expect(third.recipientTrace[0]).toMatchObject({ kind: "punish", amount: 1.5, donor: "Lu", recipient: "Ann" });
    playRound(state, (seat) => give(state, seat, 0));
    // Round 4: Lu (11) gives Cy (2) a quarter of its 8.5. Round 5: Di (3) → Lu reads Lu's new trace: Cy's
    // trace (Cy gave to Gus in round 3, Gus to Bo in round 2) plus Lu's gift, so the punishment is gone.
    playRound(state, (seat) => give(state, seat, seat === 11 ? 2.125 : 0));
    const fifth = donorGame.observe(state, 3).you!;
    expect(fifth.partner!.name).toBe("Lu");
    expect(fifth.recipientTrace.map((e) => e.sentence)).toEqual([
      "In round 4, Lu donated 25.00% of their resources to Cy.",
      "In round 3, Cy donated 0.00% of their resources to Gus.",
      "In round 2, Gus donated 0.00% of their resources to Bo.",
    ]);
  });

  it("keeps traces into game 2 by default, and starts afresh when asked", () => {
    const lastTrace = (carryTraces: boolean) => {
      const state = start({ shuffle: false, names, carryTraces });
      for (let r = 0; r < 12; r++) playRound(state, (seat) => give(state, seat, 1));
      // Game 2, round 1: Gus (6) → Ann (0).
      const you = donorGame.observe(state, 6).you!;
      expect(you.partner!.name).toBe("Ann");
      return you.recipientTrace;
    };
    const kept = lastTrace(true);
    expect(kept).toHaveLength(3);
    // Ann last gave in round 12 of game 1, to Hal (7).
    expect(kept[0]).toMatchObject({ kind: "donate", game: 1, round: 12, donor: "Ann", recipient: "Hal", amount: 1 });
    expect(kept[0].sentence).toMatch(/^In round 12, Ann donated \d+\.\d\d% of their resources to Hal\.$/);
    expect(lastTrace(false).map((e) => e.sentence)).toEqual(["Ann did not have any previous interactions."]);
  });

  it("names game 2 in the sentences of game 2", () => {
    const state = start({ shuffle: false, names });
    for (let r = 0; r < 13; r++) playRound(state, (seat) => give(state, seat, 0));
    // Game 2 round 2 reverses game 1 round 2: Ann (0) → Lu (11). Game 2 round 1 had Lu → Fay (5).
    const you = donorGame.observe(state, 0).you!;
    expect(you.partner!.name).toBe("Lu");
    expect(you.recipientTrace[0].sentence).toBe("In round 1 of game 2, Lu donated 0.00% of their resources to Fay.");
  });

  it("describes the donor's situation with the trace and the allowed range", () => {
    const state = start({ shuffle: false, names, generation: 3 }, "partner-choice");
    const text = donorGame.describe(donorGame.observe(state, 0));
    expect(text).toContain("You are Ann, of generation 3.");
    expect(text).toContain("Game 1 of 2, round 1 of 12.");
    expect(text).toContain("You have 10 units.");
    expect(text).toContain("Gus did not have any previous interactions.");
    expect(text).toContain("any number from 0 to 10 (inclusive)");
    expect(text).toContain("refuse");
    expect(donorGame.describe(donorGame.observe(state, 6))).toContain("you are the recipient");
    const spectator = donorGame.describe(donorGame.observe(state, "public"));
    expect(spectator).toContain("- Ann → Gus");
    const rules = donorGame.rules(state.config);
    expect(rules).toContain("12 agents");
    expect(rules).toContain("10 units");
    expect(rules).toContain("receives 2·x");
    expect(rules).toContain("refuse");
  });

  it("observations are fresh JSON that does not alias the state", () => {
    const state = start({ shuffle: false, names });
    const obs: DonorObservation = donorGame.observe(state, 0);
    expect(JSON.parse(JSON.stringify(obs))).toEqual(obs);
    obs.you!.recipientTrace.length = 0;
    expect(donorGame.observe(state, 0).you!.recipientTrace).toHaveLength(1);
    expect(obs.agents).toBeNull();
    expect(obs.you!.name).toBe("Ann");
  });
});

describe("donor game text input", () => {
  const standard = () => start({ shuffle: false });
  const costly = () => start({ shuffle: false }, "costly-punishment");
  const choice = () => start({ shuffle: false }, "partner-choice");

  it("reads the notebook's answer forms", () => {
    expect(donorGame.parse("3.5", standard(), 0)).toEqual({ type: "donate", amount: 3.5 });
    expect(donorGame.parse("  7 units", standard(), 0)).toEqual({ type: "donate", amount: 7 });
    expect(donorGame.parse("Justification: be kind.\nAnswer: 2,5", standard(), 0)).toEqual({
      type: "donate",
      amount: 2.5,
    });
    expect(donorGame.parse("Answer: 1 of 2. Answer: 9", standard(), 0)).toEqual({ type: "donate", amount: 1 });
    expect(donorGame.parse("Donate, 3", costly(), 0)).toEqual({ type: "donate", amount: 3 });
    expect(donorGame.parse("PUNISH, 2,5", costly(), 0)).toEqual({ type: "punish", amount: 2.5 });
    expect(donorGame.parse("I think so.\nAnswer: Punish, 2.5", costly(), 0)).toEqual({ type: "punish", amount: 2.5 });
    expect(donorGame.parse("Answer: Refuse to play.", choice(), 0)).toEqual({ type: "refuse" });
    expect(donorGame.parse("refuse", choice(), 0)).toEqual({ type: "refuse" });
    expect(donorGame.parse("Answer: 4", choice(), 0)).toEqual({ type: "donate", amount: 4 });
  });

  it("reads the generic and JSON forms", () => {
    expect(donorGame.parse("donate 4", standard(), 0)).toEqual({ type: "donate", amount: 4 });
    expect(donorGame.parse('{"type":"donate","amount":1.25}', standard(), 0)).toEqual({ type: "donate", amount: 1.25 });
    expect(donorGame.parse("punish 2", costly(), 0)).toEqual({ type: "punish", amount: 2 });
  });

  it("leaves legality to the space", () => {
    expect((donorGame.parse("Punish, 2", standard(), 0) as ActionError).code).toBe("illegal_action");
    expect((donorGame.parse("Donate, 12", costly(), 0) as ActionError).message).toContain("[0, 10]");
    expect((donorGame.parse("-2", standard(), 0) as ActionError).code).toBe("illegal_action");
    expect((donorGame.parse("refuse", standard(), 0) as ActionError).code).toBe("illegal_action");
    expect((donorGame.parse("Answer: maybe", standard(), 0) as ActionError).code).toBe("illegal_action");
  });
});

describe("donor game amounts", () => {
  /** A donor holding an awkward amount, as donations and gains leave it. */
  function awkward(variant = "standard"): DonorState {
    const state = start({ shuffle: false }, variant);
    state.resources[0] = 22.875641912345;
    return state;
  }
  const held = 22.875641912345;

  it("accepts the largest amount exactly as any text prints it", () => {
    const state = awkward();
    const legal = describeSpace(donorGame.legal(state, 0));
    const fromLegal = /donate <number in \[0, (\S+)\]>/.exec(legal)![1];
    const fromText =
      /any number from 0 to (\S+) \(inclusive\)/.exec(donorGame.describe(donorGame.observe(state, 0)))![1];
    const refusal = (donorGame.parse({ type: "donate", amount: 23 }, state, 0) as ActionError).reason;
    const fromRefusal = /outside \[0, (\S+)\]/.exec(refusal)![1];
    for (const printed of new Set([fromLegal, fromText, fromRefusal])) {
      expect(Number(printed)).toBeLessThanOrEqual(held);
      for (
        const input of [`donate ${printed}`, `Answer: ${printed}`, printed, { type: "donate", amount: Number(printed) }]
      ) {
        expect(donorGame.parse(input, state, 0), JSON.stringify(input)).toEqual({
          type: "donate",
          amount: Number(printed),
        });
      }
    }
  });

  it("reads all, everything and max as everything the donor holds", () => {
    const state = awkward("costly-punishment");
    for (const input of ["donate all", "Answer: all", "all", "Answer: Donate, everything", "donate max", "ALL."]) {
      expect(donorGame.parse(input, state, 0), input).toEqual({ type: "donate", amount: held });
    }
    expect(donorGame.parse("Answer: punish all", state, 0)).toEqual({ type: "punish", amount: held });
    // Only as the answer, or right after the verb: other sentences keep their numbers.
    expect(donorGame.parse("All right, I donate 3.", state, 0)).toEqual({ type: "donate", amount: 3 });
    expect(donorGame.parse("I will donate nothing at all: 0", state, 0)).toEqual({ type: "donate", amount: 0 });
  });

  it("reads a percentage as that share of the donor's resources, and refuses more than all of them", () => {
    const state = awkward("costly-punishment");
    expect(donorGame.parse("donate 10%", state, 0)).toEqual({ type: "donate", amount: held * 0.1 });
    expect(donorGame.parse("Answer: 50 %", state, 0)).toEqual({ type: "donate", amount: held * 0.5 });
    expect(donorGame.parse("Answer: Donate, 100%", state, 0)).toEqual({ type: "donate", amount: held });
    expect(donorGame.parse("punish 25 percent", state, 0)).toEqual({ type: "punish", amount: held * 0.25 });
    expect(donorGame.parse("Answer: 0%", state, 0)).toEqual({ type: "donate", amount: 0 });
    const over = donorGame.parse("donate 150%", state, 0) as ActionError;
    expect(over.code).toBe("illegal_action");
    expect(over.message).toMatch(/^150% of 22\.875641 is .*, outside \[0, 22\.875641\]/);
    expect((donorGame.parse("punish 10%", awkward(), 0) as ActionError).message).toMatch(/`punish` is not a legal/);
  });
});

describe("donor game rewards", () => {
  it("add up to the returns at every step, for every seat and variant, and pay recipients their gains", () => {
    for (const variant of Object.keys(donorGame.variants)) {
      for (let seed = 0; seed < 6; seed++) {
        const cfg = config({ agents: 8 + 2 * seed, games: seed % 3 === 0 ? 1 : 2 }, variant);
        const sums = new Array(cfg.agents).fill(0);
        let positive = 0;
        const strategies = sums.map(() => createStrategy("donor-game", "random"));
        const { returns } = playMatch(donorGame, cfg, strategies, `rewards-${seed}`, (_, rewards) => {
          rewards.forEach((r, seat) => (sums[seat] += r));
          positive += rewards.filter((r) => r > 0).length;
        });
        sums.forEach((sum, seat) => expect(sum).toBeCloseTo(returns[seat], 9));
        expect(positive).toBeGreaterThan(cfg.agents);
      }
    }
  });

  it("credit each game's endowment on its first step, so the returns so far are the rewards so far", () => {
    const state = start({ agents: 4, shuffle: false });
    const sums = [0, 0, 0, 0];
    expect(donorGame.returns(state)).toEqual(sums);
    for (let step = 0; donorGame.toAct(state).length > 0; step++) {
      const rewards = playRound(state, (seat) => give(state, seat, 1));
      rewards.forEach((r, seat) => (sums[seat] += r));
      expect(donorGame.returns(state)).toEqual(sums);
      // Every step but a game's first moves only what is given and received: 1 out, 2 in.
      const credit = step % 4 === 0 ? 10 : 0;
      expect([...rewards].sort()).toEqual([credit - 1, credit - 1, credit + 2, credit + 2].sort());
    }
    expect(sums).toEqual(donorGame.returns(state));
  });
});

describe("donor game config", () => {
  it("has the documented defaults", () => {
    const cfg = config();
    expect(cfg).toMatchObject({
      agents: 12,
      games: 2,
      endowment: 10,
      cooperationGain: 2,
      punishmentLoss: 2,
      mechanism: "standard",
      shuffle: true,
      carryTraces: true,
      traceDepth: 3,
      generation: 1,
    });
    expect(donorGame.seatCount(cfg)).toBe(12);
    expect(config({}, "costly-punishment").mechanism).toBe("costly-punishment");
    expect(config({}, "partner-choice").mechanism).toBe("partner-choice");
  });

  it("names agents by default and by config", () => {
    expect(donorGame.observe(start({ agents: 4 }), 3).you!.name).toBe("agent-4");
    expect(donorGame.observe(start({ agents: 2, names: ["x", "y"] }), 1).you!.name).toBe("y");
  });

  it("refuses bad configs with a ConfigError", () => {
    const bad = (raw: Record<string, unknown>, variant?: string) => () => configure(donorGame, raw, variant);
    expect(bad({ agents: 11 })).toThrow(ConfigError);
    expect(bad({ agents: 11 })).toThrow(/even/);
    expect(bad({ agents: 0 })).toThrow(ConfigError);
    expect(bad({ turns: 3 })).toThrow(/unknown key `turns`/);
    expect(bad({ endowment: "10" })).toThrow(ConfigError);
    expect(bad({ games: 3 })).toThrow(ConfigError);
    expect(bad({ agents: 2, names: ["a"] })).toThrow(/one name per agent/);
    expect(bad({ agents: 2, names: ["a", "a"] })).toThrow(/distinct/);
    expect(bad({ agents: 2, names: ["a", " "] })).toThrow(ConfigError);
    expect(bad({ generation: 0 })).toThrow(ConfigError);
    expect(bad({}, "no-such-variant")).toThrow(/unknown variant/);
  });
});

describe("donor game state", () => {
  it("clones independently", () => {
    const state = start({ shuffle: false });
    const copy = donorGame.clone(state);
    playRound(state, (seat) => give(state, seat, 5));
    expect(donorGame.returns(copy)).toEqual(new Array(12).fill(0));
    expect(donorGame.observe(copy, 0).you!.role).toBe("donor");
    expect(donorGame.observe(copy, 6).you!.recipientTrace).toEqual([]);
    playRound(copy, (seat) => give(copy, seat, 1));
    expect(donorGame.observe(state, "public").agents![0].resources).toBe(5);
    expect(donorGame.observe(copy, "public").agents![0].resources).toBe(9);
    expect(donorGame.observe(copy, 11).you!.recipientTrace[0].amount).toBe(1);
  });

  it("same seed, same returns, with random and reciprocating players", () => {
    for (const variant of ["standard", "costly-punishment", "partner-choice"]) {
      const cfg = config({}, variant);
      const specs = ["random", "reciprocator", "donate:0.3", "random"];
      const players = () => new Array(12).fill(0).map((_, seat) => createStrategy("donor-game", specs[seat % 4]));
      const a = playMatch(donorGame, cfg, players(), "seed-1");
      const b = playMatch(donorGame, cfg, players(), "seed-1");
      const c = playMatch(donorGame, cfg, players(), "seed-2");
      expect(a.returns).toEqual(b.returns);
      expect(a.returns).not.toEqual(c.returns);
      expect(a.steps).toBe(24);
      expect(a.actions).toBe(144);
    }
  });
});

describe("donor game: explicit chance", () => {
  it("draws the seating one Fisher–Yates swap at a time, as rng.shuffle did", () => {
    const cfg = config();
    const state = donorGame.start(cfg);
    const rng = new Rng(5);
    const sizes: number[] = [];
    for (let odds = donorGame.chance(state); odds.length > 0; odds = donorGame.chance(state)) {
      expect(odds).toEqual(new Array(odds.length).fill(1 / odds.length));
      expect(donorGame.toAct(state)).toEqual([]);
      sizes.push(odds.length);
      donorGame.resolve(state, rng.int(odds.length));
    }
    expect(sizes).toEqual([12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2]);
    const drawn = donorGame.init(cfg, new Rng(5));
    expect(fullSchedule(state)).toEqual(fullSchedule(drawn));
    expect(() => donorGame.resolve(state, 0)).toThrow(/no chance event is due/);
  });

  it("swaps the outcome's position with the last one still to draw", () => {
    const groups = (outcome: number) => {
      const state = donorGame.start(config({ agents: 2 }));
      expect(donorGame.chance(state)).toEqual([0.5, 0.5]);
      donorGame.resolve(state, outcome);
      expect(donorGame.chance(state)).toEqual([]);
      return donorGame.observe(state, "public").agents!.map((a) => a.group);
    };
    expect(groups(0)).toEqual(["B", "A"]);
    expect(groups(1)).toEqual(["A", "B"]);
  });

  it("has no chance event when the seating is not shuffled", () => {
    const state = donorGame.start(config({ shuffle: false }));
    expect(donorGame.chance(state)).toEqual([]);
    expect(pairs(state)).toEqual(TABLE[0]);
  });
});

describe("donor game: numeric face", () => {
  function mask(state: DonorState, seat: number): number[] {
    const out = new Uint8Array(donorGame.actionCount(state.config));
    donorGame.legalMask(state, seat, out);
    return Array.from(out);
  }

  function tensor(state: DonorState, viewer: number | "public"): number[] {
    const out = new Float32Array(shapeSize(donorGame.observationShape(state.config)));
    donorGame.encode(donorGame.observe(state, viewer), out);
    return Array.from(out);
  }

  const f32 = (values: number[]) => values.map(Math.fround);

  it("has 11 donation ids, 11 more to punish or 1 to refuse; 8 + 2·games + 8·traceDepth entries", () => {
    expect(donorGame.actionCount(config({}, "standard"))).toBe(11);
    expect(donorGame.actionCount(config({}, "costly-punishment"))).toBe(22);
    expect(donorGame.actionCount(config({}, "partner-choice"))).toBe(12);
    expect(donorGame.observationShape(config())).toEqual([36]);
    expect(donorGame.observationShape(config({ games: 1, traceDepth: 5 }))).toEqual([50]);
  });

  it("gives tenths of the donor's resources, exactly, and no id off that grid", () => {
    const state = start({ shuffle: false }, "costly-punishment");
    expect(mask(state, 0)).toEqual(new Array(22).fill(1));
    expect(mask(state, 6)).toEqual(new Array(22).fill(0));
    expect(donorGame.actionOf(3, state, 0)).toEqual({ type: "donate", amount: 3 });
    expect(donorGame.actionOf(10, state, 0)).toEqual({ type: "donate", amount: 10 });
    expect(donorGame.actionOf(13, state, 0)).toEqual({ type: "punish", amount: 2 });
    expect(donorGame.actionId({ type: "donate", amount: 7 }, state, 0)).toBe(7);
    expect(donorGame.actionId({ type: "punish", amount: 0 }, state, 0)).toBe(11);
    expect(donorGame.actionId({ type: "donate", amount: 2.5 }, state, 0)).toBe(-1);
    expect((donorGame.actionOf(22, state, 0) as ActionError).code).toBe("illegal_action");
    expect((donorGame.actionOf(0, state, 6) as ActionError).code).toBe("not_your_turn");
    state.resources[1] = 7.5;
    expect(donorGame.actionOf(7, state, 1)).toEqual({ type: "donate", amount: 5.25 });
    expect(donorGame.actionId({ type: "donate", amount: 5.25 }, state, 1)).toBe(7);
  });

  it("offers one id per distinct amount: a donor with nothing has only the zero ones", () => {
    const state = start({ shuffle: false }, "costly-punishment");
    state.resources[0] = 0;
    expect(mask(state, 0)).toEqual([1, ...new Array(10).fill(0), 1, ...new Array(10).fill(0)]);
    expect((donorGame.actionOf(4, state, 0) as ActionError).message).toMatch(/Legal now: ids 0, 11\./);
    expect(donorGame.actionId({ type: "donate", amount: 0 }, state, 0)).toBe(0);
  });

  it("refuses with id 11 in partner choice", () => {
    const state = start({ shuffle: false }, "partner-choice");
    expect(mask(state, 0)).toEqual(new Array(12).fill(1));
    expect(donorGame.actionOf(11, state, 0)).toEqual({ type: "refuse" });
    expect(donorGame.actionId({ type: "refuse" }, state, 0)).toBe(11);
  });

  it("encodes role, progress, resources, results, the config and the recipient's trace", () => {
    // Two agents unshuffled: seat 0 gives in round 1, seat 1 in round 2.
    const state = start({ agents: 2, shuffle: false });
    expect(tensor(state, 1)).toEqual([
      ...[0, 1, 0, 1, 0, 0, 1, 1, 0, 0, 2, 2],
      ...new Array(24).fill(0),
    ]);
    playRound(state, (seat) => give(state, seat, 4));
    // role (donor, recipient, over) | game 1, 2 | round progress | own, partner resources | results | gain, loss
    const header = [1, 0, 0, 1, 0, 0.5, 1.8, 0.6, 0, 0, 2, 2];
    // newest first: seat 0 gave 40% (4 units) to this seat in round 1 of 4; then seat 1's own start
    const trace = [0, 1, 0, 0, 0.4, 0.4, 1, 0.25, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    expect(tensor(state, 1)).toEqual(f32([...header, ...trace]));
    expect(tensor(state, "public")).toEqual([0, 0, 0, 1, 0, 0.5, 0, 0, 0, 0, 2, 2, ...new Array(24).fill(0)]);
    playRound(state, (seat) => give(state, seat, 0));
    playRound(state, (seat) => give(state, seat, 0));
    playRound(state, (seat) => give(state, seat, 0));
    expect(tensor(state, 0)).toEqual(f32([0, 0, 1, 0, 1, 0.5, 1, 0, 0.6, 1, 2, 2, ...new Array(24).fill(0)]));
  });
});
