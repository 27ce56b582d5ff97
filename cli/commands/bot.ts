import { type Command, Option } from "commander";
import type { ActionSpace } from "../../games/core/action.ts";
import { configure } from "../../games/core/config.ts";
import { Rng } from "../../games/core/rng.ts";
import { games, getGame } from "../../games/registry.ts";
import { createStrategy } from "../../policies/baselines/index.ts";
import { STRATEGY_STREAM } from "../../policies/simulate.ts";
import { Bot, type FrameFormat, LudusError, type MatchEndFrame, type Policy } from "../../clients/sdk/index.ts";
import { type Io, matchLine } from "../io.ts";
import { integerIn, websocketUrl } from "../options.ts";

interface BotFlags {
  url: string;
  token: string;
  game: string;
  variant?: string;
  strategy: string;
  matches: number;
  format: FrameFormat;
  seed?: string;
  json?: boolean;
}

/** A fresh 64-bit seed, written as a decimal string so the summary can name it. */
function randomSeed(): string {
  const [high, low] = crypto.getRandomValues(new Uint32Array(2));
  return ((BigInt(high) << 32n) | BigInt(low)).toString();
}

export function registerBot(program: Command, io: Io): void {
  program
    .command("bot")
    .description("play matches on a Ludus server as a remote bot, with a built-in strategy, through the bot SDK")
    .requiredOption("--url <ws-url>", "the server's bot gateway, e.g. ws://127.0.0.1:2567/bot", websocketUrl)
    .requiredOption("--token <token>", "a bot token (`ludus token create --name <bot>`)")
    .addOption(
      new Option("--game <id>", "the game to queue for").choices(games.map((g) => g.id)).makeOptionMandatory(),
    )
    .option("--variant <name>", "a variant of the game (default: the game's default variant)")
    .requiredOption("--strategy <name>", "the built-in strategy that plays (name or name:arg)")
    .option("--matches <n>", "how many matches to play, one after another", integerIn(1, 1_000_000), 1)
    .addOption(new Option("--format <format>", "how frames travel").choices(["json", "msgpack"]).default("json"))
    .option(
      "--seed <seed>",
      "the seed of the strategy's random stream: a 64-bit integer or any string (default: random)",
    )
    .option("--json", "after the match lines, print one JSON summary line")
    .addHelpText("after", "\nList a game's strategies with `ludus strategies --game <id>`.")
    .action(async (flags: BotFlags, command: Command) => {
      // Refuse a bad variant or strategy before touching the network.
      const game = getGame(flags.game);
      const { variant } = configure(game, {}, flags.variant);
      const strategy = createStrategy(game.id, flags.strategy);
      const seed = flags.seed ?? randomSeed();
      const rng = new Rng(seed, STRATEGY_STREAM);
      const policy: Policy = (observation, legal, turn) =>
        strategy.act({ seat: turn.seat, legal: legal as ActionSpace, observation: () => observation, rng });

      let bot: Bot;
      try {
        bot = await Bot.connect({ url: flags.url, token: flags.token, format: flags.format });
      } catch (error) {
        if (error instanceof LudusError && error.code === "bad_token") {
          command.error(`error: ${flags.url} refused the token: ${error.message}`);
        }
        throw error;
      }
      io.err(
        `ludus: connected to ${flags.url} as ${bot.connection.welcome.bot.name}; playing ${game.id} (${variant})\n`,
      );
      let ends: MatchEndFrame[];
      try {
        ends = await bot.play({
          game: game.id,
          variant,
          policy,
          matches: flags.matches,
          onMatchEnd: (end) => io.out(matchLine(end)),
        });
      } finally {
        await bot.close();
      }
      if (flags.json) {
        const own = ends.map((end) => end.returns[end.seat]);
        io.out(
          JSON.stringify({
            game: game.id,
            variant,
            strategy: flags.strategy,
            seed,
            matches: ends.length,
            meanReturn: own.reduce((a, b) => a + b, 0) / own.length,
            results: ends.map(({ match, seat, returns, reason }) => ({ match, seat, returns, reason })),
          }) + "\n",
        );
      }
    });
}
