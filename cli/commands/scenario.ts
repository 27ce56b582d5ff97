import { type Command, Option } from "commander";
import { games } from "../../games/registry.ts";
import { runScenario, type ScenarioReport } from "../../server/league/scenario.ts";
import { LiveMatches } from "../../server/match/live-matches.ts";
import type { Io } from "../io.ts";
import { integerIn, jsonObject, nameList, storeLocation } from "../options.ts";
import { withPolicies } from "../policies.ts";

interface ScenarioFlags {
  game: string;
  variant?: string;
  config?: Record<string, unknown>;
  focal: string[];
  background: string[];
  focalSeats: number;
  matches: number;
  seed: string;
  dataDir: string;
  databaseUrl?: string;
  json?: boolean;
}

const show = (e: { mean: number; ci95: number }) => `${e.mean.toFixed(3)} ± ${e.ci95.toFixed(3)}`;

function text(r: ScenarioReport): string {
  return [
    `${r.game} (${r.variant}): ${r.focalSeats} of ${r.seats} seats focal (${r.focal.join(", ")}), the rest from ` +
    `${r.background.join(", ")}; ${r.matches} matches, seed ${r.seed}; per-capita returns, ± 95 %:`,
    ...([
      ["focal", r.focalPerCapita],
      ["background", r.backgroundPerCapita],
      ["residents in its seats", r.residentPerCapita],
      ["focal − residents", r.focalVsResident],
    ] as const).map(([label, e]) => `  ${label.padEnd(24)}${show(e)}`),
  ].join("\n") + "\n";
}

export function registerScenario(program: Command, io: Io): void {
  program
    .command("scenario")
    .description(
      "Melting Pot's evaluation: focal players among a background population; their per-capita return against the " +
        "background's and the residents' they replaced",
    )
    .addOption(new Option("--game <id>", "the game to play").choices(games.map((g) => g.id)).makeOptionMandatory())
    .option("--variant <name>", "a variant of the game (default: the game's default variant)")
    .option("--config <json>", "config overrides as a JSON object, or @file.json", jsonObject)
    .requiredOption(
      "--focal <players>",
      "the focal population: built-ins (name[:arg]) and policies (policy:<name>)",
      nameList,
    )
    .requiredOption("--background <players>", "the background population, drawn seat by seat", nameList)
    .option("--focal-seats <n>", "focal seats in each match", integerIn(1, 1000), 1)
    .option(
      "--matches <n>",
      "matches (each played twice: with the focal players, and with residents)",
      integerIn(1, 1_000_000),
      200,
    )
    .option("--seed <seed>", "fixes every line-up and every match", "1")
    .option("--data-dir <dir>", "the data directory whose store records the matches", "data")
    .option("--database-url <url>", "a PostgreSQL store instead (default: $DATABASE_URL)")
    .option("--json", "print exactly one JSON object on stdout")
    .action(async (flags: ScenarioFlags, command: Command) => {
      const report = await withPolicies(
        storeLocation(flags, command),
        (policies, store) =>
          runScenario(new LiveMatches({ store, policies, lingerMs: 0 }), {
            game: flags.game,
            variant: flags.variant,
            config: flags.config,
            focal: flags.focal,
            background: flags.background,
            focalSeats: flags.focalSeats,
            matches: flags.matches,
            seed: flags.seed,
          }),
      );
      io.out(flags.json ? JSON.stringify(report) + "\n" : text(report));
    });
}
