import { type Command, Option } from "commander";
import { games, getGame } from "../../games/registry.ts";
import { simulate, type SimulationSummary } from "../../policies/simulate.ts";
import type { Io } from "../io.ts";
import { integerIn, jsonObject, nameList, policyServerOption, storeLocation } from "../options.ts";
import type { PolicyRuntime } from "../../policies/onnx/runtime.ts";
import { withPoliciesIfNamed } from "../policies.ts";

interface SimulateFlags {
  game: string;
  variant?: string;
  config?: Record<string, unknown>;
  seats: string[];
  matches: number;
  seed: string;
  groupSize: number;
  dataDir: string;
  databaseUrl?: string;
  server?: URL;
  json?: boolean;
}

function table(summary: SimulationSummary): string {
  const rows = summary.seats.map((name, seat) => [
    String(seat),
    name,
    summary.meanReturns[seat].toFixed(4),
    summary.stderr[seat].toFixed(4),
  ]);
  const header = ["seat", "strategy", "mean return", "std. error"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  return [
    `${summary.game} v${summary.version} (${summary.variant}), ${summary.matches} match(es)${
      summary.groupSize > 1 ? ` in seed groups of ${summary.groupSize}` : ""
    }, seed ${summary.seed}`,
    line(header),
    ...rows.map(line),
    `${summary.steps} steps, ${summary.actions} actions, ${
      Math.round(summary.stepsPerSecond).toLocaleString("en")
    } steps/s`,
  ].join("\n") + "\n";
}

export function registerSimulate(program: Command, io: Io): void {
  program
    .command("simulate")
    .description(
      "play matches between built-in strategies and registered policies in-process and summarise the returns",
    )
    .addOption(
      new Option("--game <id>", "the game to play").choices(games.map((g) => g.id)).makeOptionMandatory(),
    )
    .option("--variant <name>", "a variant of the game (default: the game's default variant)")
    .option("--config <json>", "config overrides as a JSON object, or @file.json", jsonObject)
    .requiredOption(
      "--seats <strategies>",
      "one strategy per seat, comma-separated (name or name:arg), or one strategy for every seat",
      nameList,
    )
    .option("--matches <n>", "how many matches", integerIn(1, 100_000_000), 100)
    .option("--seed <seed>", "the run's seed: a 64-bit integer or any string", "1")
    .option(
      "--group-size <k>",
      "play the same start k times (a seed group: same deals, the strategies' coin flips apart); --matches is a " +
        "multiple of it",
      integerIn(1, 100_000),
      1,
    )
    .option("--data-dir <dir>", "with policy seats: the data directory whose store registers them", "data")
    .option("--database-url <url>", "with policy seats: a PostgreSQL store instead (default: $DATABASE_URL)")
    .addOption(policyServerOption())
    .option("--json", "print exactly one JSON object on stdout")
    .addHelpText(
      "after",
      "\nList a game's strategies with `ludus strategies --game <id>`; a registered policy sits as policy:<name>, " +
        "policy:<name>@<version>, either with :greedy to play its most likely action.",
    )
    .action(async (flags: SimulateFlags, command: Command) => {
      if (flags.matches % flags.groupSize !== 0) {
        command.error(
          `error: --matches (${flags.matches}) must be a multiple of --group-size (${flags.groupSize}): whole groups only`,
        );
      }
      const run = (policies?: PolicyRuntime) =>
        simulate({
          game: getGame(flags.game),
          variant: flags.variant,
          config: flags.config,
          seats: flags.seats,
          matches: flags.matches,
          seed: flags.seed,
          groupSize: flags.groupSize,
          policies,
        });
      const summary = await withPoliciesIfNamed(flags.seats, () => storeLocation(flags, command), flags.server, run);
      io.out(flags.json ? JSON.stringify(summary) + "\n" : table(summary));
    });
}
