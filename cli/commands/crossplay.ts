import { type Command, Option } from "commander";
import { games, getGame } from "../../games/registry.ts";
import { crossPlay, type CrossPlayTable } from "../../policies/crossplay.ts";
import type { Io } from "../io.ts";
import { integerIn, jsonObject, nameList, policyServerOption, storeLocation } from "../options.ts";
import { withPoliciesIfNamed } from "../policies.ts";

interface CrossPlayFlags {
  game: string;
  variant?: string;
  config?: Record<string, unknown>;
  players: string[];
  matches: number;
  seed: string;
  dataDir: string;
  databaseUrl?: string;
  server?: URL;
  json?: boolean;
}

function table(result: CrossPlayTable): string {
  const header = ["", ...result.players.map((_, j) => `vs ${j}`)];
  const rows = result.players.map((name, i) => [
    `${i} ${name}`,
    ...result.cells[i].map((c) => `${c.mean.toFixed(3)} ± ${c.ci95.toFixed(3)}`),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join("  ");
  return [
    `${result.game} (${result.variant}): the row player's mean reward per ${result.per} against the column player, ` +
    `± a 95 % confidence interval; ${result.matches} match(es) in each seating, seed ${result.seed}`,
    line(header),
    ...rows.map(line),
  ].join("\n") + "\n";
}

export function registerCrossPlay(program: Command, io: Io): void {
  program
    .command("crossplay")
    .description(
      "play every player against every player (itself too) in both seats of a two-seat game and print the table",
    )
    .addOption(
      new Option("--game <id>", "the game to play").choices(games.map((g) => g.id)).makeOptionMandatory(),
    )
    .option("--variant <name>", "a variant of the game (default: the game's default variant)")
    .option("--config <json>", "config overrides as a JSON object, or @file.json", jsonObject)
    .requiredOption(
      "--players <strategies>",
      "built-in strategies (name or name:arg) and registered policies (policy:<name>[@v][:greedy]), comma-separated",
      nameList,
    )
    .option("--matches <n>", "matches in each seating of each pairing", integerIn(1, 10_000_000), 200)
    .option("--seed <seed>", "the run's seed: every pairing plays the same match seeds", "1")
    .option("--data-dir <dir>", "with policy players: the data directory whose store registers them", "data")
    .option("--database-url <url>", "with policy players: a PostgreSQL store instead (default: $DATABASE_URL)")
    .addOption(policyServerOption())
    .option("--json", "print exactly one JSON object on stdout")
    .action(async (flags: CrossPlayFlags, command: Command) => {
      const result = await withPoliciesIfNamed(
        flags.players,
        () => storeLocation(flags, command),
        flags.server,
        (policies) =>
          crossPlay({
            game: getGame(flags.game),
            variant: flags.variant,
            config: flags.config,
            players: flags.players,
            matches: flags.matches,
            seed: flags.seed,
            policies,
          }),
      );
      io.out(flags.json ? JSON.stringify(result) + "\n" : table(result));
    });
}
