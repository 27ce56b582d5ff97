import { type Command, InvalidArgumentError, Option } from "commander";
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
import { endpointOf, endpointOptions } from "../model-options.ts";
import { integerIn, jsonObject, numberIn, readText, textOrFile, websocketUrl } from "../options.ts";
import { cliMsgpack, type MatchFlags, matchOptions, matchPlan, matchSummary } from "./bot.ts";

interface LlmFlags extends MatchFlags {
  url: string;
  token?: string;
  game: string;
  variant?: string;
  baseUrl?: string;
  model: string;
  apiKey?: string;
  renderer: RendererName;
  temperature?: number;
  maxTokens?: number;
  stop: string[];
  seed?: number;
  reasoningEffort?: "low" | "medium" | "high";
  stream?: boolean;
  extraBody?: Record<string, unknown>;
  systemPrompt?: string;
  retries: number;
  fallback: Fallback;
  history: number;
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

export function registerLlm(program: Command, io: Io): void {
  const command = endpointOptions(
    program
      .command("llm")
      .description("seat a language model (any OpenAI-compatible chat-completions endpoint) at Ludus matches")
      .requiredOption("--url <ws-url>", "the server's bot gateway, e.g. ws://127.0.0.1:2567/bot", websocketUrl)
      .option("--token <token>", "an LLM token (`ludus token create --kind llm`); default $LUDUS_TOKEN")
      .addOption(new Option("--game <id>", "the game to play").choices(games.map((g) => g.id)).makeOptionMandatory())
      .option("--variant <name>", "a variant of the game (default: the game's default variant)"),
  )
    .requiredOption("--model <name>", "the model to ask, as the endpoint names it");
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
    .option("--system-prompt <text>", "your own system prompt (or @file) instead of the server's rules", textOrFile)
    .option("--retries <n>", "re-asks after an unusable answer before the fallback", integerIn(0, 20), 2)
    .addOption(
      new Option("--fallback <kind>", "what to play when no usable answer came").choices(["default", "random"]).default(
        "default",
      ),
    )
    .option("--history <n>", "earlier turns of the match kept in the chat", integerIn(0, 1000), 0)
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
      "\nThe replay keeps each action's prompt messages, raw reply, token usage, latency and attempts.\n" +
        "Ctrl-C once: finish the matches under way, start no more. Twice: withdraw the seats now.",
    )
    .action(async (flags: LlmFlags, command: Command) => {
      const token = flags.token ?? process.env.LUDUS_TOKEN;
      if (!token) {
        command.error("error: give --token or set LUDUS_TOKEN (make one with `ludus token create --kind llm`)");
      }
      const endpoint = endpointOf(flags, command);
      const plan = matchPlan(flags, command);
      try {
        renderer(flags.renderer, flags.game);
      } catch (error) {
        command.error(`error: ${(error as Error).message}`);
      }
      const stopping = new AbortController();
      let agent: LlmAgent | undefined;
      const onSignal = () => {
        if (!stopping.signal.aborted) {
          stopping.abort();
          io.err("ludus: stopping: finishing the matches under way (Ctrl-C again to withdraw from them now)\n");
        } else {
          agent?.stop("the agent was stopped by its operator");
        }
      };
      Deno.addSignalListener("SIGINT", onSignal);
      const record = (strategy: StrategyRecord) => {
        if (flags.strategiesOut) appendFileSync(flags.strategiesOut, JSON.stringify(strategy) + "\n");
      };
      io.err(`ludus: ${flags.model} at ${endpoint.baseUrl} plays ${flags.game} on ${flags.url}\n`);
      let result;
      try {
        result = await runLlm({
          url: flags.url,
          token: token!,
          game: flags.game,
          variant: flags.variant,
          ...plan,
          format: flags.format,
          msgpack: cliMsgpack(flags.format),
          signal: stopping.signal,
          onAgent: (a) => agent = a,
          onMatchEnd: (end: MatchEndFrame) => io.out(matchLine(end)),
          agent: {
            chat: {
              ...endpoint,
              temperature: flags.temperature,
              maxTokens: flags.maxTokens,
              stop: flags.stop,
              seed: flags.seed,
              reasoningEffort: flags.reasoningEffort,
              stream: flags.stream ?? false,
              extraBody: flags.extraBody,
            },
            renderer: flags.renderer,
            ...(flags.systemPrompt ? { systemPrompt: () => flags.systemPrompt! } : {}),
            retries: flags.retries,
            fallback: flags.fallback,
            history: flags.history,
            maxInFlight: flags.maxInFlight ?? 4 * flags.concurrency,
            requestTimeoutMs: flags.requestTimeout,
            strategy: {
              ...(flags.strategyStep ? { enabled: true } : {}),
              advice: flags.advice,
              onStrategy: record,
            },
            log: (line) => io.err(`ludus: ${line}\n`),
          },
        });
      } finally {
        Deno.removeSignalListener("SIGINT", onSignal);
      }
      const { ends, failure, strategies } = result;
      const stats = agent!.stats;
      const { results, ...summary } = matchSummary(plan, ends);
      if (flags.json) {
        io.out(
          JSON.stringify({
            game: flags.game,
            model: flags.model,
            renderer: flags.renderer,
            ...summary,
            ...stats,
            ...(strategies.length ? { strategies: strategies.map((s) => s.strategy) } : {}),
            ...(failure ? { failure: failure.message } : {}),
            results,
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
