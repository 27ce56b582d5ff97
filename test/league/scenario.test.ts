import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScenarioReport } from "../../server/league/scenario.ts";
import { runLudus } from "../support/server-process.ts";
import { emptyStoreOptions } from "../support/stores.ts";

/** `ludus scenario` as a person runs it: focal players among a background population, every match recorded. */

describe("Melting-Pot scenarios", () => {
  let dataDir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => ({ options: { dataDir }, cleanup } = await emptyStoreOptions("pglite")));
  afterAll(() => cleanup?.());

  const scenario = async (args: string[]) => {
    const run = await runLudus(["scenario", ...args, "--json", "--data-dir", dataDir]);
    expect(run.code, run.err).toBe(0);
    return JSON.parse(run.out) as ScenarioReport;
  };

  it("scores a defector among cooperators above the resident it replaced, at the background's cost", async () => {
    const r = await scenario([
      "--game",
      "ipd",
      "--focal",
      "always-defect",
      "--background",
      "always-cooperate",
      "--matches",
      "50",
    ]);
    expect(r).toMatchObject({ seats: 2, focalSeats: 1, matches: 50 });
    // Against always-cooperate, defecting earns the temptation every round; the cooperator the sucker's payoff.
    expect(r.focalVsResident.mean).toBeGreaterThan(0);
    expect(r.backgroundPerCapita.mean).toBeLessThan(r.residentPerCapita.mean);
  });

  it("scores a free rider among reciprocators below the resident it replaced: its reputation follows it", async () => {
    const r = await scenario([
      "--game",
      "donor-game",
      "--focal",
      "donate:0",
      "--background",
      "reciprocator:0.5",
      "--focal-seats",
      "2",
      "--matches",
      "30",
    ]);
    expect(r).toMatchObject({ seats: 12, focalSeats: 2 });
    expect(r.focalVsResident.mean + r.focalVsResident.ci95).toBeLessThan(0);
  });

  it("refuses a scenario it cannot run, saying what is allowed", async () => {
    const refusals: [string[], RegExp][] = [
      [
        ["--game", "ipd", "--focal", "tit-for-tat", "--background", "random", "--focal-seats", "2"],
        /focal seats must be from 1 to 1, got 2/,
      ],
      [["--game", "ipd", "--focal", "bluff", "--background", "random"], /unknown strategy `bluff` for ipd/],
      [["--game", "ipd", "--focal", "tit-for-tat"], /required option '--background <players>' not specified/],
    ];
    for (const [flags, message] of refusals) {
      const run = await runLudus(["scenario", ...flags, "--data-dir", dataDir]);
      expect(run.code, `${flags.join(" ")}: ${run.err}`).toBe(2);
      expect(run.err).toMatch(message);
    }
  });
});
