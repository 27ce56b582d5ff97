import { Command, CommanderError } from "commander";
import { describe, expect, it } from "vitest";
import { measure, registerExploitability } from "../../cli/commands/exploitability.ts";
import { CfrPlus, solve } from "../../games/analysis/cfr.ts";
import { bestResponse, expectedValue, exploitability } from "../../games/analysis/evaluate.ts";
import { policyFrom, policyTable, profile, strategyPolicy, uniformPolicy } from "../../games/analysis/policy.ts";
import { type AnalysableGame, AnalysisError, buildTree, CHANCE, TERMINAL } from "../../games/analysis/tree.ts";
import type { ActionSpace } from "../../games/core/action.ts";
import { ConfigError, configure } from "../../games/core/config.ts";
import { ipd } from "../../games/ipd/game.ts";
import { type KuhnConfig, kuhnPoker } from "../../games/kuhn-poker/game.ts";
import { StrategyError } from "../../policies/strategy.ts";

/**
 * A toy for the solver: seat 0 hides heads or tails, seat 1 guesses; a right guess wins 1 from
 * seat 0, a wrong one loses 1. Its one equilibrium is uniform, worth 0. It has no `infoState`, so its
 * information sets are keyed by the observation, which shows a seat only its own number: one set per seat.
 */
interface PenniesState {
  hidden: number;
  guess: number;
}
type Coin = { readonly type: "heads" } | { readonly type: "tails" };
const COINS: ActionSpace<Coin> = [
  { kind: "fixed", action: { type: "heads" } },
  { kind: "fixed", action: { type: "tails" } },
];
const pennies: AnalysableGame<PenniesState, Coin, null> = {
  id: "hidden-pennies",
  seatCount: () => 2,
  start: () => ({ hidden: -1, guess: -1 }),
  chance: () => [],
  resolve: () => {},
  toAct: (s) => (s.hidden < 0 ? [0] : s.guess < 0 ? [1] : []),
  legal: (s, seat) => (pennies.toAct(s)[0] === seat ? COINS : []),
  play(s, moves) {
    const seat = pennies.toAct(s)[0];
    const side = moves[seat]!.type === "heads" ? 0 : 1;
    if (seat === 0) s.hidden = side;
    else s.guess = side;
    return [0, 0];
  },
  returns: (s) => (s.hidden === s.guess ? [-1, 1] : [1, -1]),
  observe: (_, viewer) => ({ seat: viewer }),
  clone: (s) => ({ ...s }),
};

const kuhnConfig = configure<KuhnConfig>(kuhnPoker, {}).config;
const kuhn = buildTree(kuhnPoker, kuhnConfig);

describe("analysis: the tree", () => {
  it("holds every chance outcome with its probability, and children in consecutive slots", () => {
    const { kind, firstChild, childCount, chanceProb } = kuhn;
    let chanceMass = 0;
    for (let node = 0; node < kind.length; node++) {
      if (kind[node] === TERMINAL) continue;
      expect(firstChild[node]).toBeGreaterThan(node);
      if (kind[node] === CHANCE) {
        for (let j = 0; j < childCount[node]; j++) chanceMass += chanceProb[firstChild[node] + j];
      } else {
        expect(childCount[node]).toBe(kuhn.infosets[kind[node]].actions.length);
      }
    }
    expect(chanceMass).toBeCloseTo(1, 12);
    expect(kuhn.width).toBe(24);
    for (const set of kuhn.infosets) expect(set.nodes).toHaveLength(2); // the two cards the other seat may hold
  });

  it("keys information sets by the game's infoState, else by the observation", () => {
    expect(kuhn.infosets.map((set) => set.key).slice(0, 2)).toEqual(["0", "1p"]); // J, then a Q facing a check
    expect(buildTree(pennies, null).infosets.map((set) => set.key)).toEqual(['{"seat":0}', '{"seat":1}']);
  });

  it("refuses what it cannot analyse exactly, saying why", () => {
    expect(() => buildTree(ipd, configure(ipd, { rounds: 1 }).config)).toThrow(/one seat to act at a time/);
    expect(() => buildTree(kuhnPoker, configure(kuhnPoker, { rounds: 3 }).config, { maxNodes: 1000 })).toThrow(
      /more than 1000 nodes/,
    );
    expect(() => buildTree(kuhnPoker, kuhnConfig, { key: () => "everything" })).toThrow(/groups states/);
    expect(() => buildTree({ ...pennies, returns: () => [1, 1] }, null)).toThrow(/not zero-sum/);
    expect(() => buildTree({ ...pennies, seatCount: () => 3 }, null)).toThrow(/two seats; hidden-pennies has 3/);
    const amounts: ActionSpace<Coin> = [{ kind: "amount", type: "stake", min: 0, max: 1, integer: true }];
    expect(() => buildTree({ ...pennies, legal: () => amounts }, null)).toThrow(/finite choices/);
    expect(() => buildTree(pennies, null, { maxNodes: 3 })).toThrow(AnalysisError);
  });
});

describe("analysis: values, best responses and exploitability", () => {
  const tree = buildTree(pennies, null);
  const heads = policyFrom(tree, () => [1, 0]);

  it("prices a hidden coin: uniform is unexploitable, a fixed side loses 1 to a best response", () => {
    expect(tree.infosets).toHaveLength(2);
    expect(exploitability(tree, uniformPolicy(tree))).toEqual({
      bestResponseValues: [0, 0],
      values: [0, 0],
      nashConv: 0,
      exploitability: 0,
    });
    const fixed = exploitability(tree, heads);
    expect(fixed.bestResponseValues).toEqual([1, 1]);
    expect(fixed.values).toEqual([-1, 1]);
    expect(fixed.exploitability).toBe(1);
  });

  it("returns a best response that earns the value it reports", () => {
    const uniform = policyFrom(kuhn, (set) => set.actions.map(() => 1 / set.actions.length));
    for (const seat of [0, 1]) {
      const br = bestResponse(kuhn, uniform, seat);
      const played = profile(kuhn, seat === 0 ? [br.policy, uniform] : [uniform, br.policy]);
      const v = expectedValue(kuhn, played);
      expect(seat === 0 ? v : -v).toBeCloseTo(br.value, 12);
      for (const set of kuhn.infosets.filter((s) => s.seat === seat)) {
        expect([...br.policy.subarray(set.offset, set.offset + 2)].sort()).toEqual([0, 1]);
      }
    }
  });

  it("checks the policies it is given", () => {
    expect(() => policyFrom(tree, () => [0.5, 0.4])).toThrow(/sum to 0.9/);
    expect(() => policyFrom(tree, () => [1])).toThrow(/2 probabilities needed/);
    expect(() => policyFrom(tree, () => [2, -1])).toThrow(/non-negative/);
    expect(() => strategyPolicy(tree, pennies, { name: "silent" })).toThrow(/does not state its probabilities/);
    const cheat = { name: "cheat", distribution: () => [{ action: { type: "edge" } as never, probability: 1 }] };
    expect(() => strategyPolicy(tree, pennies, cheat)).toThrow(/not legal/);
    expect(policyTable(tree, heads)).toEqual(new Map([['{"seat":0}', [1, 0]], ['{"seat":1}', [1, 0]]]));
  });
});

describe("analysis: CFR+", () => {
  it("converges on Kuhn poker to −1/18 with exploitability falling", () => {
    const { policy, trace, iterations } = solve(kuhn, { iterations: 400, every: 100 });
    expect(iterations).toBe(400);
    expect(trace).toHaveLength(4);
    expect(trace[3].exploitability).toBeLessThan(1e-3);
    expect(trace[3].exploitability).toBeLessThan(trace[0].exploitability * 2);
    expect(expectedValue(kuhn, policy)).toBeCloseTo(-1 / 18, 3);
  });

  it("finds the uniform equilibrium of the hidden coin", () => {
    const tree = buildTree(pennies, null);
    const solver = new CfrPlus(tree);
    expect([...solver.average()]).toEqual([0.5, 0.5, 0.5, 0.5]);
    const average = solver.run(200).run(300).average();
    expect(solver.iteration).toBe(500);
    for (const p of average) expect(p).toBeCloseTo(0.5, 2);
    expect(exploitability(tree, average).exploitability).toBeLessThan(0.01);
  });

  it("measures only at the end when asked for no trace", () => {
    expect(solve(kuhn, { iterations: 10 }).trace.map((t) => t.iteration)).toEqual([10]);
  });
});

/** Runs `ludus exploitability` in-process and returns what it printed. */
async function command(...args: string[]): Promise<string> {
  let out = "";
  const io = { out: (t: string) => void (out += t), err: () => {} };
  const program = new Command("ludus").exitOverride().configureOutput({ writeOut: io.out, writeErr: io.err });
  registerExploitability(program, io);
  for (const sub of program.commands) sub.exitOverride().configureOutput({ writeOut: io.out, writeErr: io.err });
  await program.parseAsync(["exploitability", ...args], { from: "user" });
  return out;
}

describe("ludus exploitability", () => {
  it("prints one JSON object with per-seat best-response values", async () => {
    const out = await command("--game", "kuhn-poker", "--policy", "random", "--json");
    expect(out.trim().split("\n")).toHaveLength(1);
    const report = JSON.parse(out);
    expect(report).toMatchObject({ game: "kuhn-poker", variant: "standard", policy: "random", infoSets: 12 });
    expect(report.exploitability).toBeCloseTo(11 / 24, 12);
    expect(report.nashConv).toBeCloseTo(11 / 12, 12);
    expect(report.bestResponseValues[0]).toBeCloseTo(1 / 2, 12);
    expect(report.bestResponseValues[1]).toBeCloseTo(5 / 12, 12);
  });

  it("prints a sentence without --json", async () => {
    const out = await command("--game", "leduc-poker", "--policy", "always-fold");
    expect(out).toBe(
      "always-fold in leduc-poker (standard), both seats: exploitability 1 (NashConv 2). A best response earns 1 " +
        "as player 0 and 1 as player 1; the policy against itself gives player 0 0 and player 1 0.\n",
    );
    expect(await command("--game", "kuhn-poker", "--policy", "nash:0.1")).toMatch(/exploitability 0 \(NashConv 0\)/);
  });

  it("takes variants and configs", () => {
    const report = measure("kuhn-poker", "always-raise", "textarena");
    expect(report.config).toEqual({ rounds: 3, firstPlayer: 1, fixedPot: true });
    // The pot never grows, so betting always costs nothing: always-raise cannot be beaten.
    expect(report.exploitability).toBeCloseTo(0, 12);
    expect(measure("kuhn-poker", "always-raise", undefined, { fixedPot: true }).exploitability).toBeCloseTo(0, 12);
  });

  it("refuses unknown strategies and games, and says why a game or config has no exact answer", async () => {
    await expect(command("--game", "kuhn-poker", "--policy", "tit-for-tat")).rejects.toThrow(
      "unknown strategy `tit-for-tat` for kuhn-poker (strategies: random, always-call, always-raise, always-fold, " +
        "nash[:alpha])",
    );
    await expect(command("--game", "leduc-poker", "--policy", "nash:2")).rejects.toThrow(StrategyError);
    await expect(command("--game", "chess", "--policy", "random")).rejects.toThrow(CommanderError);
    await expect(command("--game", "kuhn-poker", "--policy", "random", "--config", '{"rounds": 9}')).rejects
      .toThrow("invalid config for kuhn-poker: kuhn-poker has more than 1000000 nodes with this config");
    await expect(command("--game", "ipd", "--policy", "random")).rejects.toThrow(ConfigError);
    expect(() => measure("ipd", "random")).toThrow(
      "invalid config for ipd: exact analysis needs one seat to act at a time; ipd has more",
    );
  });
});
