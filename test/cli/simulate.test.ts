import { describe, expect, it } from "vitest";
import { Episode } from "../../games/core/episode.ts";
import { games as registry } from "../../games/registry.ts";
import { groupSeeds } from "../../policies/simulate.ts";
import { ludus } from "../support/cli.ts";

describe("ludus simulate", () => {
  it("prints exactly one JSON object with the summary", async () => {
    const { code, out, err } = await ludus(
      "simulate",
      "--game",
      "ipd",
      "--seats",
      "tit-for-tat,always-defect",
      "--matches",
      "3",
      "--seed",
      "7",
      "--json",
    );
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out.trim().split("\n")).toHaveLength(1);
    const summary = JSON.parse(out);
    expect(summary).toMatchObject({
      game: "ipd",
      variant: "classic",
      matches: 3,
      seed: "7",
      seats: ["tit-for-tat", "always-defect"],
      meanReturns: [9, 14],
      stderr: [0, 0],
    });
    expect(summary.stepsPerSecond).toBeGreaterThan(0);
  });

  it("plays seed groups: the same start k times, the strategies' coin flips apart", async () => {
    const json = async (...args: string[]) =>
      JSON.parse((await ludus("simulate", "--game", "kuhn-poker", "--seats", "random", "--json", ...args)).out);
    const grouped = await json("--matches", "40", "--group-size", "4", "--seed", "3");
    expect(grouped).toMatchObject({ matches: 40, groupSize: 4 });
    // Groups of one are the plain run, match for match.
    const plain = await json("--matches", "40", "--seed", "3");
    const ones = await json("--matches", "40", "--group-size", "1", "--seed", "3");
    expect({ ...ones, stepsPerSecond: 0 }).toEqual({ ...plain, stepsPerSecond: 0 });
    // Within a group every match deals the same cards; the random strategies still choose apart.
    const kuhn = registry.find((g) => g.id === "kuhn-poker")!;
    const config = kuhn.schema.parse({});
    const deals = [0, 1, 2, 3].map((i) => new Episode(kuhn, config, groupSeeds("3", i, 4).game).observe(0));
    for (const deal of deals) expect(deal).toEqual(deals[0]);
    const strategySeeds = new Set([0, 1, 2, 3].map((i) => groupSeeds("3", i, 4).strategies));
    expect(strategySeeds.size).toBe(4);
    const refused = await ludus(
      "simulate",
      "--game",
      "ipd",
      "--seats",
      "random",
      "--matches",
      "10",
      "--group-size",
      "4",
    );
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/--matches \(10\) must be a multiple of --group-size \(4\)/);
  });

  it("gives identical output for the same seed, apart from stepsPerSecond", async () => {
    const args = [
      "simulate",
      "--game",
      "trust-and-split",
      "--seats",
      "random",
      "--matches",
      "20",
      "--seed",
      "abc",
      "--json",
    ];
    const strip = (text: string) => ({ ...JSON.parse(text), stepsPerSecond: 0 });
    const a = strip((await ludus(...args)).out);
    expect(strip((await ludus(...args)).out)).toEqual(a);
    const other = strip((await ludus(...args.slice(0, -2), "abd", "--json")).out);
    expect(other.meanReturns).not.toEqual(a.meanReturns);
  });

  it("fills every donor-game agent from one strategy, or takes one per agent", async () => {
    const one = JSON.parse(
      (await ludus("simulate", "--game", "donor-game", "--seats", "donate:0", "--matches", "2", "--json")).out,
    );
    expect(one.seats).toHaveLength(12);
    expect(one.meanReturns).toEqual(new Array(12).fill(20)); // two games, nothing given: 10 + 10
    const many = await ludus(
      "simulate",
      "--game",
      "donor-game",
      "--config",
      '{"agents": 2}',
      "--seats",
      "donate:1,donate:0",
      "--matches",
      "1",
    );
    expect(many.code).toBe(0);
    expect(many.out).toMatch(/donor-game v2 \(standard\), 1 match\(es\), seed 1/);
  });

  it("prints a readable table without --json", async () => {
    const { code, out } = await ludus("simulate", "--game", "ipd", "--seats", "always-cooperate", "--matches", "2");
    expect(code).toBe(0);
    expect(out).toMatch(/seat\s+strategy\s+mean return\s+std. error/);
    expect(out).toMatch(/0\s+always-cooperate\s+30.0000\s+0.0000/);
  });

  it("explains every bad flag and value, with exit code 2", async () => {
    const cases: [string[], RegExp][] = [
      [
        ["simulate", "--game", "chess", "--seats", "random"],
        /argument 'chess' is invalid. Allowed choices are ipd, donor-game, trust-and-split, /,
      ],
      [["simulate", "--seats", "random"], /required option '--game <id>' not specified/],
      [["simulate", "--game", "ipd"], /required option '--seats <strategies>' not specified/],
      [
        ["simulate", "--game", "ipd", "--seats", "random", "--matches", "0"],
        /expected a whole number in \[1, 100000000\]/,
      ],
      [["simulate", "--game", "ipd", "--seats", "random", "--matches", "ten"], /expected a whole number/],
      [["simulate", "--game", "ipd", "--seats", "random", "--config", "{rounds:3}"], /expected a JSON object/],
      [["simulate", "--game", "ipd", "--seats", "random", "--config", "[1]"], /expected a JSON object/],
      [
        ["simulate", "--game", "ipd", "--seats", "random", "--config", '{"rounds":-1}'],
        /invalid config for ipd: `rounds`: Too small/,
      ],
      [
        ["simulate", "--game", "ipd", "--seats", "random", "--config", '{"turns":3}'],
        /unknown key `turns` \(allowed: payoffs, rounds/,
      ],
      [
        ["simulate", "--game", "ipd", "--seats", "random", "--variant", "x"],
        /unknown variant `x` \(variants: classic, lola\)/,
      ],
      [
        ["simulate", "--game", "ipd", "--seats", "nice"],
        /unknown strategy `nice` for ipd \(strategies: random, always-cooperate/,
      ],
      [
        ["simulate", "--game", "ipd", "--seats", "random,random,random"],
        /has 2 seats: name one strategy per seat, or one for all; got 3/,
      ],
      [["simulate", "--game", "ipd", "--seats", "random,"], /none empty/],
      [["simulate", "--game", "ipd", "--seats", "random", "--bogus"], /unknown option '--bogus'/],
      [
        ["serve", "--port", "70000"],
        /option '--port <n>' argument '70000' is invalid. expected a whole number in \[0, 65535\]/,
      ],
      [["serve", "--host"], /option '--host <address>' argument missing/],
      [
        ["serve", "--fill-strategy", "tit-for-tat"],
        /would fill seats of every game; strategies every game has: random/,
      ],
      [["serve", "--fill-strategy", "random,chess=random"], /"chess" is not a game; games: ipd/],
      [["serve", "--fill-strategy", "random,random:x"], /name at most one strategy for every game/],
      [
        ["serve", "--policy-device", "gpu"],
        /option '--policy-device <device>' argument 'gpu' is invalid. expected one of: cpu, cuda/,
      ],
      [["simulate", "--game", "kuhn-poker", "--seats", "policy:a:b"], /is not a policy seat: write policy:<name>/],
      [["serve", "--hold", "0"], /option '--hold <s>' argument '0' is invalid. expected a whole number in \[1, 3600\]/],
      [["serve", "--fill-after", "-5"], /option '--fill-after <ms>' argument '-5' is invalid/],
      [
        ["serve", "--room-creates", "0"],
        /option '--room-creates <n>' argument '0' is invalid. expected a whole number in \[1, 100000\]/,
      ],
      [
        ["serve", "--max-connections", "0"],
        /option '--max-connections <n>' argument '0' is invalid. expected a whole number in \[1, 1000000\]/,
      ],
      [["simulat"], /unknown command 'simulat'\n\(Did you mean simulate\?\)/],
    ];
    for (const [argv, message] of cases) {
      const { code, err, out } = await ludus(...argv);
      expect(err, argv.join(" ")).toMatch(message);
      expect(err).not.toMatch(/\n\s+at /); // no stack traces
      expect(code, argv.join(" ")).toBe(2);
      expect(out).toBe("");
    }
  });
});

describe("ludus help and listings", () => {
  it("has --help on every command, exit 0", async () => {
    for (
      const argv of [["--help"], ["simulate", "--help"], ["serve", "--help"], ["games", "--help"], [
        "strategies",
        "--help",
      ]]
    ) {
      const { code, out } = await ludus(...argv);
      expect(code).toBe(0);
      expect(out).toMatch(/^Usage: ludus/);
    }
    expect((await ludus("--version")).out.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("lists games and strategies", async () => {
    const games = await ludus("games");
    expect(games.out).toMatch(/ipd v1 — Iterated prisoner's dilemma \(2 seats\)/);
    expect(games.out).toMatch(/lola: /);
    expect(games.out).toMatch(
      /tic-tac-toe v1 — .*\n.*\n {2}zero-sum, deterministic, perfect information, sequential\n/,
    );
    expect(games.out).toMatch(/rounds \(default 10\): rounds per match/);
    expect(games.out).toMatch(/names \(optional\): the agents' names/);
    const json = JSON.parse((await ludus("games", "--json")).out);
    expect(json.games.map((g: { id: string }) => g.id)).toEqual(registry.map((g) => g.id));
    // Every variant of every game has a numeric face: a tensor shape and a number of action ids (OpenSpiel's for
    // Kuhn and Leduc).
    for (const game of json.games) {
      expect(game.versions).toContain(game.version);
      for (const variant of Object.values(game.variants) as { observationShape: number[]; actionCount: number }[]) {
        expect(variant.observationShape.every((n) => Number.isInteger(n) && n > 0)).toBe(true);
        expect(Number.isInteger(variant.actionCount)).toBe(true);
      }
    }
    const ttt = json.games.find((g: { id: string }) => g.id === "tic-tac-toe");
    expect(ttt).toMatchObject({ utility: "zero-sum", chanceMode: "deterministic", information: "perfect" });
    const kuhn = json.games.find((g: { id: string }) => g.id === "kuhn-poker");
    const leduc = json.games.find((g: { id: string }) => g.id === "leduc-poker");
    expect(kuhn.variants.standard).toMatchObject({ observationShape: [11], actionCount: 2 });
    expect(leduc.variants.standard).toMatchObject({ observationShape: [30], actionCount: 3 });
    expect(games.out).toMatch(/standard \(default\): .*\n {6}tensors: observation \[11\], 2 action ids/);
    const strategies = await ludus("strategies", "--game", "donor-game");
    expect(strategies.out).toMatch(/donate\[:f\]/);
    expect((await ludus("strategies", "--game", "go")).code).toBe(2);
  });
});
