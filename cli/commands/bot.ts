import { type Command, InvalidArgumentError, Option } from "commander";
import { Packr } from "msgpackr";
import { WebSocket as NodeWebSocket } from "ws";
import type { ActionSpace } from "../../games/core/action.ts";
import { configure } from "../../games/core/config.ts";
import { type AnyGame, NumericFaceError } from "../../games/core/game.ts";
import { Rng, STRATEGY_STREAM } from "../../games/core/rng.ts";
import { games, getGame } from "../../games/registry.ts";
import { createStrategy } from "../../policies/baselines/index.ts";
import { sampleMasked } from "../../policies/onnx/sample.ts";
import {
  ActionId,
  Bot,
  type FrameFormat,
  LudusError,
  type MatchEndFrame,
  type MsgpackCodec,
  type Policy,
  type SeatChoice,
  type WebSocketClass,
} from "../../clients/sdk/index.ts";
import { type Io, matchLine } from "../io.ts";
import { integerIn, websocketUrl } from "../options.ts";
import { fetchPolicy, isModelFile, PolicyRefError, readModel } from "../policy-source.ts";

/** The flags `ludus bot` and `ludus llm` share to say which matches to play. */
export interface MatchFlags {
  matches: number;
  concurrency: number;
  opponent?: string;
  seat: SeatChoice;
  selfPlay?: boolean;
  matchSeed?: string;
}

/** The matches to play, as the bot SDK's `play` takes them. */
export interface MatchPlan {
  readonly matches: number;
  readonly concurrency: number;
  readonly opponent?: string;
  readonly seat?: SeatChoice;
  readonly selfPlay?: boolean;
  readonly seed?: string;
}

function seatChoice(value: string): SeatChoice {
  if (/^\d{1,4}$/.test(value)) return Number(value);
  if (value === "alternate" || value === "random") return value;
  throw new InvalidArgumentError("expected a seat number (0, 1, …), alternate or random.");
}

/** Adds the match flags; `player` names who plays (a strategy, the model). */
export function matchOptions(command: Command, player: string): Command {
  return command
    .option(
      "--matches <n>",
      "how many matches to play (with --self-play: how many queue tickets)",
      integerIn(1, 1_000_000),
      1,
    )
    .option("--concurrency <k>", "matches played at once over the one connection", integerIn(1, 1000), 1)
    .option(
      "--opponent <strategy|self>",
      `play private matches instead of queueing: every other seat this built-in strategy, or self (every seat is ${player})`,
    )
    .option(
      "--seat <n|random|alternate>",
      "with --opponent <strategy>: the seat taken; alternate: match i takes seat i mod seats",
      seatChoice,
      "alternate",
    )
    .option("--self-play", `queued: ${player}'s tickets may meet each other (with --concurrency 2 or more)`)
    .option("--match-seed <seed>", "with --opponent: seed match i with <seed>/<i> (and a random seat), reproducibly");
}

/** The plan the match flags ask for; contradictory flags are a usage error (exit 2). */
export function matchPlan(flags: MatchFlags, command: Command): MatchPlan {
  const { matches, concurrency, opponent, selfPlay, matchSeed: seed } = flags;
  const againstStrategy = opponent !== undefined && opponent !== "self";
  if (seed !== undefined && opponent === undefined) {
    command.error("error: --match-seed needs --opponent (queued matches are seeded by the server)");
  }
  if (command.getOptionValueSource("seat") === "cli" && !againstStrategy) {
    command.error(
      "error: --seat needs --opponent <strategy>: queued matches draw seats at random, and with --opponent self " +
        "every seat is played",
    );
  }
  if (selfPlay && opponent !== undefined) {
    command.error("error: --self-play is for queued matches; for a private self-play match use --opponent self");
  }
  return {
    matches,
    concurrency,
    ...(opponent === undefined ? {} : { opponent }),
    ...(againstStrategy ? { seat: flags.seat } : {}),
    ...(selfPlay ? { selfPlay } : {}),
    ...(seed === undefined ? {} : { seed }),
  };
}

/** The JSON summary's account of the matches: one result per seat played (a self-play match has several). */
export function matchSummary(plan: MatchPlan, ends: readonly MatchEndFrame[]): Record<string, unknown> {
  const own = ends.map((end) => end.returns[end.seat]);
  return {
    matches: new Set(ends.map((end) => end.match)).size,
    opponent: plan.opponent ?? null,
    seat: plan.seat ?? null,
    selfPlay: plan.selfPlay ?? false,
    meanReturn: own.length ? own.reduce((a, b) => a + b, 0) / own.length : null,
    results: ends.map(({ match, seat, returns, reason, statuses }) => ({ match, seat, returns, reason, statuses })),
  };
}

/**
 * The CLI's connections use the `ws` package's client, which turns Nagle's algorithm off, rather than Deno's own,
 * which leaves it on: there an act over ~1 KB (an LLM's, with its prompt and reply) waited ~40 ms for the server's
 * delayed ACK, 44 ms of a 45 ms LLM decision against an endpoint that answers at once.
 */
export const cliWebSocket = NodeWebSocket as unknown as WebSocketClass;

/** msgpack frames for the CLI's bots: plain maps both ways (msgpackr's records are not msgpack others read). */
export function cliMsgpack(format: FrameFormat): MsgpackCodec | undefined {
  return format === "msgpack" ? new Packr({ useRecords: false, int64AsType: "number" }) : undefined;
}

interface BotFlags extends MatchFlags {
  url: string;
  token: string;
  game: string;
  variant?: string;
  strategy?: string;
  policy?: string;
  greedy?: boolean;
  format: FrameFormat;
  seed?: string;
  json?: boolean;
}

/** Who plays the bot's seats: its policy, the variant it plays, what the summary says of it, what to free after. */
interface Player {
  readonly policy: Policy;
  readonly variant: string;
  readonly summary: Record<string, unknown>;
  /** For the connection line: what plays. */
  readonly label: string;
  readonly release?: () => Promise<void>;
}

function strategyPlayer(game: AnyGame, flags: BotFlags, rng: Rng): Player {
  const { variant } = configure(game, {}, flags.variant);
  const strategy = createStrategy(game.id, flags.strategy!);
  return {
    policy: (observation, legal, turn) =>
      strategy.act({ seat: turn.seat, legal: legal as ActionSpace, observation: () => observation, rng }),
    variant,
    summary: { strategy: flags.strategy },
    label: `strategy ${flags.strategy}`,
  };
}

/**
 * A policy network in the bot's seats, over the numeric face: its logits for the turn's `tensor`, an id drawn
 * from their softmax over `legalIds` with `rng` (or the most likely, greedy), answered as an `actionId`.
 * The network comes from a file, loaded for the flags' game and variant, or from the server's registry, whose
 * variant is the default.
 */
async function networkPlayer(game: AnyGame, flags: BotFlags, rng: Rng, command: Command): Promise<Player> {
  // onnxruntime's native library is loaded only by the bots that run a network, not by every `ludus` command.
  const [{ PolicyError, PolicyNetwork }, { PolicyBatcher }] = await Promise.all([
    import("../../policies/onnx/network.ts"),
    import("../../policies/onnx/batcher.ts"),
  ]);
  const ref = flags.policy!;
  let model: Uint8Array;
  let named: Record<string, unknown>;
  let variantName = flags.variant;
  try {
    if (isModelFile(ref)) {
      model = readModel(ref);
      named = { file: ref };
    } else {
      const fetched = await fetchPolicy(flags.url, ref);
      const { meta } = fetched;
      if (meta.game !== game.id) {
        command.error(
          `error: policy ${meta.name}@${meta.version} plays ${meta.game}, not ${game.id}: run it with --game ${meta.game}`,
        );
      }
      model = fetched.model;
      named = { id: meta.id, name: meta.name, version: meta.version };
      variantName ??= meta.variant;
    }
  } catch (error) {
    if (error instanceof PolicyRefError) command.error(`error: ${error.message}`);
    throw error;
  }
  const { variant, config } = configure(game, {}, variantName);
  let network: Awaited<ReturnType<typeof PolicyNetwork.load>>;
  try {
    network = await PolicyNetwork.load(model, game, config);
  } catch (error) {
    if (error instanceof PolicyError || error instanceof NumericFaceError) {
      command.error(`error: policy ${ref} cannot play ${game.id} (${variant}): ${error.message}`);
    }
    throw error;
  }
  const batcher = new PolicyBatcher(network);
  const greedy = flags.greedy ?? false;
  const policy: Policy = async (_observation, _legal, turn) => {
    const { tensor, legalIds } = turn;
    if (!tensor || !legalIds) {
      throw new LudusError(
        "bad_config",
        `match ${turn.match} sent no tensor: its config has no numeric face here, so a network cannot play it`,
      );
    }
    if (tensor.length !== network.size) {
      throw new LudusError(
        "bad_config",
        `match ${turn.match} sent a tensor of ${tensor.length} numbers; the network reads ${network.size}`,
      );
    }
    const mask = new Uint8Array(network.actions);
    for (const id of legalIds) mask[id] = 1;
    const logits = await batcher.logits((row) => row.set(tensor));
    return new ActionId(sampleMasked(logits, 0, mask, greedy ? undefined : rng));
  };
  return {
    policy,
    variant,
    summary: { policy: named, greedy },
    label: `policy ${ref}${greedy ? " (greedy)" : ""}`,
    release: () => network.release(),
  };
}

/** A fresh 64-bit seed, written as a decimal string so the summary can name it. */
function randomSeed(): string {
  const [high, low] = crypto.getRandomValues(new Uint32Array(2));
  return ((BigInt(high) << 32n) | BigInt(low)).toString();
}

export function registerBot(program: Command, io: Io): void {
  const command = program
    .command("bot")
    .description(
      "play matches on a Ludus server as a remote bot, with a built-in strategy or a policy network, through the bot SDK",
    )
    .requiredOption("--url <ws-url>", "the server's bot gateway, e.g. ws://127.0.0.1:2567/bot", websocketUrl)
    .requiredOption("--token <token>", "a bot token (`ludus token create --name <bot>`)")
    .addOption(
      new Option("--game <id>", "the game to play").choices(games.map((g) => g.id)).makeOptionMandatory(),
    )
    .option(
      "--variant <name>",
      "a variant of the game (default: the game's default variant; for a registered policy, the one it was made for)",
    )
    .option("--strategy <name>", "the built-in strategy that plays (name or name:arg)")
    .option(
      "--policy <name|file.onnx>",
      "instead of --strategy, a policy network plays over the numeric face: an ONNX file, or a policy registered " +
        "on the server (name, name@version or id)",
    )
    .option("--greedy", "with --policy: play the most likely legal action id instead of sampling");
  matchOptions(command, "the bot")
    .addOption(new Option("--format <format>", "how frames travel").choices(["json", "msgpack"]).default("json"))
    .option(
      "--seed <seed>",
      "the seed of the strategy's (or the policy's sampler's) random stream: a 64-bit integer or any string " +
        "(default: random)",
    )
    .option("--json", "after the match lines, print one JSON summary line")
    .addHelpText(
      "after",
      "\nList a game's strategies with `ludus strategies --game <id>`. A --policy network reads the game's " +
        "information-state tensor and answers with action ids (the protocol's numeric face).",
    )
    .action(async (flags: BotFlags, command: Command) => {
      // Refuse a bad variant, strategy or flag combination before touching the network.
      const game = getGame(flags.game);
      if (flags.strategy !== undefined && flags.policy !== undefined) {
        command.error("error: --policy and --strategy are exclusive: the bot plays a built-in strategy or a network");
      }
      if (flags.strategy === undefined && flags.policy === undefined) {
        command.error(
          "error: say who plays: --strategy <name> (a built-in strategy) or --policy <name|file.onnx> (a network)",
        );
      }
      if (flags.greedy && flags.policy === undefined) {
        command.error("error: --greedy is for --policy: it makes the network play its most likely action");
      }
      const plan = matchPlan(flags, command);
      const seed = flags.seed ?? randomSeed();
      const rng = new Rng(seed, STRATEGY_STREAM);
      const player = flags.policy === undefined
        ? strategyPlayer(game, flags, rng)
        : await networkPlayer(game, flags, rng, command);
      const { policy, variant } = player;

      let ends: MatchEndFrame[];
      try {
        let bot: Bot;
        try {
          bot = await Bot.connect({
            url: flags.url,
            token: flags.token,
            format: flags.format,
            msgpack: cliMsgpack(flags.format),
            WebSocket: cliWebSocket,
            ...(flags.policy === undefined ? {} : { numeric: true }),
          });
        } catch (error) {
          if (error instanceof LudusError && error.code === "bad_token") {
            command.error(`error: ${flags.url} refused the token: ${error.message}`);
          }
          throw error;
        }
        io.err(
          `ludus: connected to ${flags.url} as ${bot.connection.welcome.bot.name}; playing ${game.id} (${variant}) ` +
            `with ${player.label}\n`,
        );
        try {
          ends = await bot.play({
            game: game.id,
            variant,
            policy,
            ...plan,
            onMatchEnd: (end) => io.out(matchLine(end)),
          });
        } finally {
          await bot.close();
        }
      } finally {
        await player.release?.();
      }
      if (flags.json) {
        io.out(JSON.stringify({ game: game.id, variant, ...player.summary, seed, ...matchSummary(plan, ends) }) + "\n");
      }
    });
}
