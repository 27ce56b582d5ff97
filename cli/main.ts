import { Command, CommanderError } from "commander";
import { ConfigError } from "../games/core/config.ts";
import { UnknownGameError } from "../games/registry.ts";
import { QueryError } from "../db/query.ts";
import { StrategyError } from "../policies/strategy.ts";
import { PolicyError } from "../policies/onnx/network.ts";
import { PolicyRegistryError } from "../db/policies.ts";
import { NumericFaceError } from "../games/core/game.ts";
import { TokenError } from "../db/tokens.ts";
import { LudusError } from "../clients/sdk/index.ts";
import { ServeError } from "../server/http.ts";
import { StoreError } from "../db/store.ts";
import { VERSION } from "../server/version.ts";
import { registerBot } from "./commands/bot.ts";
import { registerCatalog } from "./commands/catalog.ts";
import { registerCrossPlay } from "./commands/crossplay.ts";
import { registerExploitability } from "./commands/exploitability.ts";
import { LlmRunError, registerLlm } from "./commands/llm.ts";
import { ExportError, registerExport } from "./commands/export.ts";
import { registerPolicyCommands } from "./commands/policy.ts";
import { registerReplay } from "./commands/replay.ts";
import { registerServe } from "./commands/serve.ts";
import { registerSimulate } from "./commands/simulate.ts";
import { registerToken } from "./commands/token.ts";
import { registerTournament } from "./commands/tournament.ts";
import { registerLeague } from "./commands/league.ts";
import { registerEvolve } from "./commands/evolve.ts";
import { registerScenario } from "./commands/scenario.ts";
import { ScenarioError } from "../server/league/scenario.ts";
import { EvolutionError } from "../server/league/evolution.ts";
import { LeagueError } from "../server/league/scheduler.ts";
import { TournamentError } from "../server/league/tournament/run.ts";
import { registerTrain, TrainError } from "./commands/train.ts";
import { EXIT, type Io, processIo } from "./io.ts";
import { UsageError } from "./options.ts";
import { NodeConflictError } from "../db/nodes.ts";

/** `ludus <command>`: the one entry point to every part of Ludus. */

function program(io: Io): Command {
  const root = new Command("ludus")
    .description("Ludus: an authoritative game server for competitive and social-dilemma self-play")
    .version(VERSION, "-V, --version")
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .showSuggestionAfterError()
    .showHelpAfterError("(run `ludus <command> --help` for usage)")
    .exitOverride();
  registerServe(root, io);
  registerSimulate(root, io);
  registerCrossPlay(root, io);
  registerCatalog(root, io);
  registerExploitability(root, io);
  registerToken(root, io);
  registerBot(root, io);
  registerLlm(root, io);
  registerReplay(root, io);
  registerExport(root, io);
  registerPolicyCommands(root, io);
  registerTrain(root, io);
  registerTournament(root, io);
  registerLeague(root, io);
  registerEvolve(root, io);
  registerScenario(root, io);
  for (const command of root.commands) {
    command.configureOutput({ writeOut: io.out, writeErr: io.err }).showHelpAfterError(
      `(run \`ludus ${command.name()} --help\` for usage)`,
    ).exitOverride();
  }
  return root;
}

/** Errors that mean the input was wrong, not the program. */
const USAGE_ERRORS = [
  ConfigError,
  StrategyError,
  UnknownGameError,
  TokenError,
  QueryError,
  PolicyError,
  PolicyRegistryError,
  NumericFaceError,
  TournamentError,
  LeagueError,
  EvolutionError,
  ScenarioError,
  UsageError,
];
/** Failures a person can act on that arose while running (a port taken, a server refusing or gone). */
const RUN_FAILURES = [
  ServeError,
  LudusError,
  StoreError,
  ExportError,
  LlmRunError,
  TrainError,
  NodeConflictError,
];

/** Runs the CLI and returns its exit code (0 ok, 1 failure, 2 usage). */
export async function run(argv: readonly string[], io: Io = processIo): Promise<number> {
  try {
    await program(io).parseAsync([...argv], { from: "user" });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has printed its message already; help and --version exit 0.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (USAGE_ERRORS.some((kind) => error instanceof kind)) {
      io.err(`ludus: error: ${(error as Error).message}\n`);
      return EXIT.usage;
    }
    if (RUN_FAILURES.some((kind) => error instanceof kind)) {
      io.err(`ludus: error: ${(error as Error).message}\n`);
      return EXIT.failure;
    }
    io.err(`ludus: unexpected failure: ${(error as Error)?.stack ?? error}\n`);
    return EXIT.failure;
  }
}

if (import.meta.main) {
  Deno.exit(await run(Deno.args));
}
