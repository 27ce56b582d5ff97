import { type Command, InvalidArgumentError, Option } from "commander";
import type { ChatOptions, LlmAgentOptions } from "../../clients/llm/index.ts";
import process from "node:process";
import { appendFileSync } from "node:fs";
import { games } from "../../games/registry.ts";
import type { MatchEndFrame } from "../../protocol/frames.ts";
import {
  type Advice,
  type Fallback,
  type LlmAgent,
  renderer,
  RENDERER_NAMES,
  type RendererName,
  runLlm,
  type StrategyRecord,
} from "../../clients/llm/index.ts";
import type { FrameFormat } from "../../clients/sdk/index.ts";
import { type Io, matchLine } from "../io.ts";
import { endpointOf, endpointOptions, seatsOption, type SeatSpec } from "../model-options.ts";
import { integerIn, jsonObject, numberIn, readText, textOrFile, websocketUrl } from "../options.ts";
import {
  cliMsgpack,
  cliWebSocket,
  type MatchFlags,
  matchOptions,
  type MatchPlan,
  matchPlan,
  matchSummary,
} from "./bot.ts";

interface LlmFlags extends MatchFlags {
  url: string;
  token?: string;
  game: string;
  variant?: string;
  config?: Record<string, unknown>;
  group?: string;
  seats?: SeatSpec[];
  baseUrl?: string;
  model?: string;
  apiKey?: string;
  renderer: RendererName;
  temperature?: number;
  maxTokens?: number;
  stop: string[];
  seed?: number;
  reasoningEffort?: "low" | "medium" | "high";
  stream?: boolean;
  extraBody?: Record<string, unknown>;
  logprobs?: number | true;
  systemPrompt?: string;
  retries: number;
  fallback: Fallback;
  history: number;
  historyWindow?: number;
  maxInFlight?: number;
  requestTimeout: number;
  advice?: Advice[];
  strategiesOut?: string;
  strategyStep?: boolean;
  format: FrameFormat;
  json?: boolean;
}

/** The endpoint failed for good: the seats it hit were withdrawn and no more matches were started. */
export class LlmRunError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LlmRunError";
  }
}

/** Earlier strategies: a JSON array of {strategy, score?}, or JSON lines of them (what --strategies-out writes). */
function adviceFile(value: string): Advice[] {
  const text = readText(value).trim();
  let rows: unknown[];
  try {
    rows = text.startsWith("[") ? JSON.parse(text) : text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
  } catch (cause) {
    throw new InvalidArgumentError(
      `expected a JSON array or JSON lines of {"strategy": "...", "score": n}: ${(cause as Error).message}.`,
    );
  }
  return rows.map((row, i) => {
    const r = row as { strategy?: unknown; score?: unknown };
    if (typeof r?.strategy !== "string" || !r.strategy) {
      throw new InvalidArgumentError(
        `entry ${i + 1} has no "strategy" text; expected {"strategy": "...", "score": n}.`,
      );
    }
    return { strategy: r.strategy, ...(typeof r.score === "number" ? { score: r.score } : {}) };
  });
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** A seed group's name: an id as the protocol takes one (1-128 characters). */
function groupName(value: string): string {
  if (value.length < 1 || value.length > 128) throw new InvalidArgumentError("expected a name of 1 to 128 characters.");
  return value;
}

/**
 * The plan of a `--seats` run: private matches between the file's models, every seat theirs; `--seat` places the
 * first of them (the others follow in order), alternating by default.
 */
function playersPlan(flags: LlmFlags, command: Command): MatchPlan {
  if (flags.opponent !== undefined && flags.opponent !== "self") {
    command.error("error: --seats seats a model in every seat of private matches; leave out --opponent (or say self)");
  }
  if (flags.selfPlay) command.error("error: --seats plays private matches; --self-play is for queued ones");
  return {
    matches: flags.matches,
    concurrency: flags.concurrency,
    opponent: "self",
    seat: flags.seat,
    ...(flags.matchSeed === undefined ? {} : { seed: flags.matchSeed }),
  };
}

export function registerLlm(program: Command, io: Io): void {
  const command = endpointOptions(
    program
      .command("llm")
      .description("seat a language model (any OpenAI-compatible chat-completions endpoint) at Ludus matches")
      .requiredOption("--url <ws-url>", "the server's bot gateway, e.g. ws://127.0.0.1:2567/bot", websocketUrl)
      .option("--token <token>", "an LLM token (`ludus token create --kind llm`); default $LUDUS_TOKEN")
      .addOption(new Option("--game <id>", "the game to play").choices(games.map((g) => g.id)).makeOptionMandatory())
      .option("--variant <name>", "a variant of the game (default: the game's default variant)")
      .option(
        "--config <json>",
        "with --opponent (or --seats): overrides of the variant's config, e.g. '{\"agents\": 6}' or @file.json; " +
          "the seat count follows it",
        jsonObject,
      ),
  )
    .option("--model <name>", "the model to ask, as the endpoint names it (the default of every --seats entry)")
    .option(
      "--seats <json>",
      "a model per seat (a JSON array or @file.json, 2 to 32 entries in seat order: model, baseUrl, apiKeyEnv, " +
        "temperature, maxTokens, seed, reasoningEffort, extraBody, renderer, systemPrompt; what an entry leaves " +
        "out comes from the flags): private matches between them, --seat placing the first",
      seatsOption,
    )
    .option(
      "--group <name>",
      "a seed group: queued, the group's matches start from one seed and meet only the group; private, they are " +
        "recorded under its name",
      groupName,
    );
  matchOptions(command, "the model")
    .addOption(
      new Option("--renderer <name>", "the answer format asked for").choices([...RENDERER_NAMES]).default("ludus"),
    )
    .option("--temperature <t>", "sampling temperature", numberIn(0, 2))
    .option("--max-tokens <n>", "longest reply, in tokens", integerIn(1, 1_000_000))
    .option("--stop <text>", "a stop sequence (repeat for several)", collect, [])
    .option("--seed <n>", "sampling seed, where the endpoint supports one", integerIn(0, 2 ** 31 - 1))
    .addOption(
      new Option("--reasoning-effort <level>", "reasoning budget of reasoning models").choices([
        "low",
        "medium",
        "high",
      ]),
    )
    .option("--stream", "read replies as server-sent events")
    .option("--extra-body <json>", "further request fields, e.g. '{\"top_p\": 0.9}' or @file.json", jsonObject)
    .option(
      "--logprobs [k]",
      "ask for each answer's per-token log-probabilities (and the k likeliest alternatives, 0 to 20), kept in the " +
        "replay and the datasets where the endpoint returns them",
      integerIn(0, 20),
    )
    .option("--system-prompt <text>", "your own system prompt (or @file) instead of the server's rules", textOrFile)
    .option("--retries <n>", "re-asks after an unusable answer before the fallback", integerIn(0, 20), 2)
    .addOption(
      new Option("--fallback <kind>", "what to play when no usable answer came").choices(["default", "random"]).default(
        "default",
      ),
    )
    .option("--history <n>", "earlier turns of the match kept in the chat", integerIn(0, 1000), 0)
    .option(
      "--history-window <n>",
      "past rounds kept in a turn's text (the dilemma and Trust-and-Split list every round): the last n",
      integerIn(0, 100_000),
    )
    .option(
      "--max-in-flight <n>",
      "requests in flight at once (default: 4 per match played at once)",
      integerIn(1, 10_000),
    )
    .option("--request-timeout <ms>", "longest wait for one reply", integerIn(100, 3_600_000), 120_000)
    .option("--strategy-step", "write a strategy before each match (always on in the Donor Game)")
    .option("--advice <file>", "earlier strategies for the strategy prompt (JSON array or JSON lines)", adviceFile)
    .option("--strategies-out <file>", "append each strategy written to this JSON lines file")
    .addOption(new Option("--format <format>", "how frames travel").choices(["json", "msgpack"]).default("json"))
    .option("--json", "after the match lines, print one JSON summary line")
    .addHelpText(
      "after",
      "\nSeat order: with --opponent <strategy>, --seat n always takes seat n; alternate (the default) takes seat\n" +
        "i mod seats in match i; random draws it (from --match-seed when given, so a run repeats seat for seat).\n" +
        "With --seats, --seat places the file's first model the same way and the others follow it round the table.\n" +
        "\nThe replay keeps each action's prompt messages, raw reply, token usage, latency and attempts.\n" +
        "Ctrl-C once: finish the matches under way, start no more. Twice: withdraw the seats now.",
    )
    .action(async (flags: LlmFlags, command: Command) => {
      const token = flags.token ?? process.env.LUDUS_TOKEN;
      if (!token) {
        command.error("error: give --token or set LUDUS_TOKEN (make one with `ludus token create --kind llm`)");
      }
      if (flags.model === undefined && !flags.seats?.every((seat) => seat.model !== undefined)) {
        command.error("error: required option '--model <name>' not specified (or name a model in every --seats entry)");
      }
      const endpoint = flags.seats?.every((seat) => seat.baseUrl !== undefined)
        ? undefined
        : endpointOf(flags, command);
      const plan = flags.seats ? playersPlan(flags, command) : matchPlan(flags, command);
      if (flags.config !== undefined && plan.opponent === undefined) {
        command.error("error: --config needs --opponent (or --seats): queued matches play the variant's own config");
      }
      const base: LlmAgentOptions = {
        chat: {
          baseUrl: endpoint?.baseUrl ?? "",
          model: flags.model ?? "",
          apiKey: endpoint?.apiKey ?? flags.apiKey ?? process.env.OPENAI_API_KEY,
          temperature: flags.temperature,
          maxTokens: flags.maxTokens,
          stop: flags.stop,
          seed: flags.seed,
          reasoningEffort: flags.reasoningEffort,
          stream: flags.stream ?? false,
          extraBody: logprobsRequest(flags),
        },
        renderer: flags.renderer,
        ...(flags.systemPrompt ? { systemPrompt: () => flags.systemPrompt! } : {}),
        retries: flags.retries,
        fallback: flags.fallback,
        history: flags.history,
        ...(flags.historyWindow === undefined ? {} : { historyWindow: flags.historyWindow }),
        maxInFlight: flags.maxInFlight ?? 4 * flags.concurrency,
        requestTimeoutMs: flags.requestTimeout,
        strategy: {
          ...(flags.strategyStep ? { enabled: true } : {}),
          advice: flags.advice,
          onStrategy: (strategy: StrategyRecord) => {
            if (flags.strategiesOut) appendFileSync(flags.strategiesOut, JSON.stringify(strategy) + "\n");
          },
        },
        log: (line) => io.err(`ludus: ${line}\n`),
      };
      const players = flags.seats?.map((seat) => playerOptions(base, seat));
      try {
        for (const player of players ?? [base]) renderer(player.renderer ?? "ludus", flags.game);
      } catch (error) {
        command.error(`error: ${(error as Error).message}`);
      }
      const stopping = new AbortController();
      const agents: LlmAgent[] = [];
      const onSignal = () => {
        if (!stopping.signal.aborted) {
          stopping.abort();
          io.err("ludus: stopping: finishing the matches under way (Ctrl-C again to withdraw from them now)\n");
        } else {
          for (const agent of agents) agent.stop("the agent was stopped by its operator");
        }
      };
      Deno.addSignalListener("SIGINT", onSignal);
      const who = (players ?? [base]).map((p) => `${p.chat.model} at ${p.chat.baseUrl}`);
      io.err(`ludus: ${who.join(", ")} ${who.length > 1 ? "play" : "plays"} ${flags.game} on ${flags.url}\n`);
      let result;
      try {
        result = await runLlm({
          url: flags.url,
          token: token!,
          game: flags.game,
          variant: flags.variant,
          ...(flags.config === undefined ? {} : { config: flags.config }),
          ...(flags.group === undefined ? {} : { group: flags.group }),
          ...plan,
          format: flags.format,
          msgpack: cliMsgpack(flags.format),
          WebSocket: cliWebSocket,
          signal: stopping.signal,
          onAgent: (a) => agents.push(a),
          onMatchEnd: (end: MatchEndFrame) => io.out(matchLine(end)),
          agent: base,
          ...(players ? { players } : {}),
        });
      } finally {
        Deno.removeSignalListener("SIGINT", onSignal);
      }
      const { ends, failure, strategies, lineups } = result;
      const stats = totalStats(agents);
      const { results, ...summary } = matchSummary(plan, ends);
      const model = (chat: ChatOptions) => ({ model: chat.model, endpoint: chat.baseUrl });
      if (flags.json) {
        io.out(
          JSON.stringify({
            game: flags.game,
            ...(players
              ? { players: players.map((p) => ({ ...model(p.chat), renderer: p.renderer ?? "ludus" })) }
              : { model: flags.model, renderer: flags.renderer }),
            ...(flags.config === undefined ? {} : { config: flags.config }),
            group: flags.group ?? null,
            ...summary,
            ...stats,
            ...(strategies.length ? { strategies: strategies.map((s) => s.strategy) } : {}),
            ...(failure ? { failure: failure.message } : {}),
            // With --seats, each seat's result names the player (an index into `players`) that sat there.
            results: players
              ? (results as { match: string; seat: number }[]).map((r) => ({
                ...r,
                player: lineups.get(r.match)?.[r.seat] ?? null,
              }))
              : results,
          }) + "\n",
        );
      }
      io.err(
        `ludus: ${summary.matches} match(es); ${stats.requests} replies, ${stats.promptTokens} prompt and ` +
          `${stats.completionTokens} completion tokens; ${stats.reasks} re-asked, ${stats.fallbacks} fallback(s)\n`,
      );
      if (failure) {
        throw new LlmRunError(
          `the model endpoint failed: ${
            failure.message.replace(/\.+$/, "")
          }. The seats it hit were withdrawn (status ERROR) and no ` +
            "more matches were started.",
        );
      }
    });
}

/** A `--seats` entry over the command's flags: its own model, endpoint, key, sampling, renderer and prompt. */
function playerOptions(base: LlmAgentOptions, seat: SeatSpec): LlmAgentOptions {
  const { chat } = base;
  return {
    ...base,
    chat: {
      ...chat,
      model: seat.model ?? chat.model,
      baseUrl: seat.baseUrl ?? chat.baseUrl,
      apiKey: seat.apiKeyEnv === undefined ? chat.apiKey : process.env[seat.apiKeyEnv],
      temperature: seat.temperature ?? chat.temperature,
      maxTokens: seat.maxTokens ?? chat.maxTokens,
      seed: seat.seed ?? chat.seed,
      reasoningEffort: seat.reasoningEffort ?? chat.reasoningEffort,
      extraBody: seat.extraBody ?? chat.extraBody,
    },
    renderer: seat.renderer ?? base.renderer,
    ...(seat.systemPrompt === undefined ? {} : { systemPrompt: () => seat.systemPrompt! }),
  };
}

/** The run's totals over every agent (one per player with --seats). */
function totalStats(agents: readonly LlmAgent[]): LlmAgent["stats"] {
  const total = { requests: 0, promptTokens: 0, completionTokens: 0, reasks: 0, fallbacks: 0, withdrawals: 0 };
  for (const { stats } of agents) {
    for (const key of Object.keys(total) as (keyof typeof total)[]) total[key] += stats[key];
  }
  return total;
}

/** OpenAI's request fields for `--logprobs [k]`, under what `--extra-body` says (which wins where both name one). */
function logprobsRequest(flags: LlmFlags): Record<string, unknown> | undefined {
  if (flags.logprobs === undefined) return flags.extraBody;
  const top = flags.logprobs === true ? 0 : flags.logprobs;
  return { logprobs: true, ...(top > 0 ? { top_logprobs: top } : {}), ...flags.extraBody };
}
