import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CrossPlayTable } from "../../policies/crossplay.ts";
import { ludus } from "../support/cli.ts";
import { strategyAsNetwork } from "../support/policy-models.ts";

/** `ludus crossplay`: everyone against everyone in both seats, as a researcher comparing trained policies runs it. */

const dir = mkdtempSync(join(tmpdir(), "ludus-crossplay-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function table(...argv: string[]): Promise<CrossPlayTable> {
  const { code, out, err } = await ludus("crossplay", ...argv, "--json");
  expect(err, err).toBe("");
  expect(code).toBe(0);
  expect(out.trim().split("\n")).toHaveLength(1);
  return JSON.parse(out);
}

describe("ludus crossplay", () => {
  it("gives each row player's reward per round against each column player, both seatings averaged", async () => {
    const result = await table("--game", "ipd", "--players", "tit-for-tat,always-defect,always-cooperate");
    expect(result).toMatchObject({ game: "ipd", variant: "classic", per: "round", matches: 200 });
    expect(result.players).toEqual(["tit-for-tat", "always-defect", "always-cooperate"]);
    // Ten rounds: tit-for-tat is suckered once by always-defect (0 then 1 × 9), which earns 5 then 1 × 9.
    const means = result.cells.map((row) => row.map((c) => c.mean));
    expect(means).toEqual([[3, 0.9, 3], [1.4, 1, 5], [3, 0, 3]]);
    expect(result.cells.flat().every((c) => c.ci95 === 0)).toBe(true);
  });

  it("in a zero-sum game the table is antisymmetric, with intervals that shrink with more matches", async () => {
    const run = (matches: string) =>
      table("--game", "kuhn-poker", "--players", "random,nash,always-raise", "--matches", matches, "--seed", "5");
    const few = await run("400");
    expect(few.per).toBe("round"); // Kuhn counts hands as rounds: one per match by default
    for (let i = 0; i < 3; i++) {
      expect(few.cells[i][i].mean).toBeCloseTo(0, 12);
      for (let j = 0; j < 3; j++) expect(few.cells[i][j].mean).toBeCloseTo(-few.cells[j][i].mean, 12);
    }
    const many = await run("3600");
    // Nash beats uniform random play; nine times the matches narrow the interval about three times.
    expect(many.cells[1][0].mean).toBeGreaterThan(0);
    expect(many.cells[1][0].ci95).toBeGreaterThan(0);
    expect(many.cells[1][0].ci95).toBeLessThan(few.cells[1][0].ci95 / 2);
    expect(Math.abs(many.cells[1][0].mean - few.cells[1][0].mean)).toBeLessThan(
      1.5 * (many.cells[1][0].ci95 + few.cells[1][0].ci95),
    );
  });

  it("seats registered policies beside built-ins, named by their version", async () => {
    const dataDir = join(dir, "data");
    const nash = join(dir, "nash.onnx");
    writeFileSync(nash, strategyAsNetwork("kuhn-poker", "nash"));
    const added = await ludus(
      "policy",
      "add",
      nash,
      "--game",
      "kuhn-poker",
      "--name",
      "nash-net",
      "--data-dir",
      dataDir,
    );
    expect(added.code, added.err).toBe(0);
    const result = await table(
      "--game",
      "kuhn-poker",
      "--players",
      "policy:nash-net,nash,random",
      "--matches",
      "2000",
      "--data-dir",
      dataDir,
    );
    expect(result.players).toEqual(["policy:nash-net@1", "nash", "random"]);
    // The network is the built-in's policy: against random they earn the same, within the intervals.
    const [net, builtIn] = [result.cells[0][2], result.cells[1][2]];
    expect(Math.abs(net.mean - builtIn.mean)).toBeLessThan(net.ci95 + builtIn.ci95);
  });

  it("prints a table a person can read", async () => {
    const { code, out } = await ludus("crossplay", "--game", "ipd", "--players", "tit-for-tat,always-defect");
    expect(code).toBe(0);
    expect(out).toContain("mean reward per round against the column player, ± a 95 % confidence interval");
    expect(out).toMatch(/1 always-defect\s+1\.400 ± 0\.000\s+1\.000 ± 0\.000/);
  });

  it("refuses games of more than two seats and unknown players, saying what is allowed", async () => {
    const refused = async (argv: string[], message: RegExp) => {
      const { code, out, err } = await ludus("crossplay", ...argv);
      expect(code).not.toBe(0);
      expect(out).toBe("");
      expect(err).toMatch(message);
    };
    await refused(["--game", "donor-game", "--players", "random"], /needs a two-seat game; donor-game .* 12 seats/);
    await refused(
      ["--game", "kuhn-poker", "--players", "random,bluffer"],
      /unknown strategy `bluffer` for kuhn-poker \(strategies: random, /,
    );
    await refused(["--game", "ipd", "--players", "random", "--matches", "0"], /--matches/);
  });
});
