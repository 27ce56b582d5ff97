import type { Command } from "commander";
import { QueryError } from "../../db/query.ts";
import { ReplayStore, StoreError } from "../../db/store.ts";
import { type Difference, type VerifyReport, verifyStore } from "../../db/verify.ts";
import type { Io } from "../io.ts";
import { storeLocation } from "../options.ts";

/** `ludus replay verify`: re-simulates stored matches and reports every record that does not replay. */

interface VerifyFlags {
  match?: string;
  all?: boolean;
  dataDir: string;
  databaseUrl?: string;
  json?: boolean;
}

/** Stored matches that do not replay as recorded: the run itself worked, the store did not pass (exit 1). */
export class ReplayDiffersError extends StoreError {
  constructor(message: string) {
    super(message);
    this.name = "ReplayDiffersError";
  }
}

/** Differences printed per failing match (the JSON output has up to MAX_DIFFERENCES). */
const SHOWN = 3;

const brief = (value: unknown): string => {
  const text = JSON.stringify(value) ?? "undefined";
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
};

function line(report: VerifyReport): string {
  if (!report.verifiable) {
    return `match ${report.matchId} (${report.game}): not verifiable: ${report.differences[0].message}\n`;
  }
  const shown = report.differences.slice(0, SHOWN).map((d: Difference) => {
    const where = d.seq !== undefined ? `seq ${d.seq}` : d.turn !== undefined ? `turn ${d.turn}` : "match";
    // An observation difference names its fields in the message; whole observations would drown it.
    const values = d.what === "rewards" || d.what === "returns" || d.what === "steps"
      ? ` (expected ${brief(d.expected)}, stored ${brief(d.stored)})`
      : "";
    return `  ${where} ${d.what}: ${d.message}${values}\n`;
  });
  const more = report.differenceCount - shown.length;
  const plural = report.differenceCount === 1 ? "" : "s";
  return `match ${report.matchId} (${report.game}): ${report.differenceCount} difference${plural}\n${shown.join("")}` +
    (more > 0 ? `  ... and ${more} more\n` : "");
}

export function registerReplay(program: Command, io: Io): void {
  const replay = program.command("replay").description("check the matches in the replay store");
  replay
    .command("verify")
    .description(
      "re-simulate stored matches from (game, version, config, seed, actions) and report every decision whose " +
        "stored observation or rewards differ; exits 1 when any does, 0 when none does (matches recorded " +
        "with another game version are listed as not verifiable)",
    )
    .option("--match <id>", "verify this match")
    .option("--all", "verify every match in the store, oldest first")
    .option("--data-dir <dir>", "the server's data directory (the embedded store is in <dir>/replay)", "data")
    .option(
      "--database-url <url>",
      "a PostgreSQL store instead of the embedded one (default: $DATABASE_URL, unless --data-dir is given)",
    )
    .option("--json", "print one JSON object: the counts and the report of every match that did not pass")
    .action(async (flags: VerifyFlags, command: Command) => {
      if ((flags.match === undefined) === (flags.all === undefined)) {
        throw new QueryError("give either --match <id> or --all");
      }
      const store = await ReplayStore.open(storeLocation(flags, command));
      let matches = 0;
      let steps = 0;
      let differences = 0;
      let differing = 0;
      let unverifiable = 0;
      const failures: VerifyReport[] = [];
      try {
        for await (const report of verifyStore(store, { matchId: flags.match })) {
          matches++;
          steps += report.stepsChecked;
          if (report.ok) continue;
          if (report.verifiable) {
            differing++;
            differences += report.differenceCount;
          } else unverifiable++;
          if (flags.json) failures.push(report);
          else io.out(line(report));
        }
      } finally {
        await store.close();
      }
      const summary = { matches, steps, differences, differing, unverifiable };
      if (flags.json) io.out(JSON.stringify({ ...summary, failures }, null, 2) + "\n");
      else {
        io.out(
          `checked ${matches} match${matches === 1 ? "" : "es"}, ${steps} steps: ${differences} difference${
            differences === 1 ? "" : "s"
          } in ${differing} match${differing === 1 ? "" : "es"}` +
            (unverifiable ? `; ${unverifiable} not verifiable (their game or game version is not in this build)` : "") +
            "\n",
        );
      }
      if (differing > 0) {
        throw new ReplayDiffersError(
          `${differing} of ${matches} matches do not replay as stored (${differences} differences)`,
        );
      }
    });
  for (const sub of replay.commands) {
    sub.configureOutput({ writeOut: io.out, writeErr: io.err }).showHelpAfterError(
      `(run \`ludus replay ${sub.name()} --help\` for usage)`,
    ).exitOverride();
  }
}
