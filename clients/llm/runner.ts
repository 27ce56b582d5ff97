import type { MatchEndFrame } from "../../protocol/frames.ts";
import { Bot } from "../sdk/bot.ts";
import type { FrameFormat } from "../sdk/codec.ts";
import { LudusError } from "../sdk/errors.ts";
import { LlmAgent, type LlmAgentOptions } from "./agent.ts";
import type { ChatError } from "./chat.ts";
import { renderer } from "./renderers.ts";
import type { StrategyRecord } from "./strategy.ts";

export interface LlmRunOptions {
  /** The bot gateway, e.g. `ws://127.0.0.1:2567/bot`. */
  readonly url: string;
  /** A token made for an LLM seat (`ludus token create --kind llm`): larger frames, an LLM's clock. */
  readonly token: string;
  readonly game: string;
  readonly variant?: string;
  /** Matches in all (default 1). */
  readonly matches?: number;
  /** Matches played at once (default 1). */
  readonly concurrency?: number;
  /** Play private matches against this built-in strategy (every other seat) instead of queueing. */
  readonly opponent?: string;
  /** With `opponent`: fix the matches' seeds, match i (from 0) seeded `<seed>/<i>`, for reproducible runs. */
  readonly seed?: string;
  readonly agent: LlmAgentOptions;
  readonly format?: FrameFormat;
  /** Once aborted no new match starts; the ones under way finish. `LlmAgent.stop` cuts them short (and starts none). */
  readonly signal?: AbortSignal;
  readonly onMatchEnd?: (end: MatchEndFrame) => void;
  /** Receives the agent, to stop it. */
  readonly onAgent?: (agent: LlmAgent) => void;
}

export interface LlmRunResult {
  readonly ends: MatchEndFrame[];
  /** The endpoint failure that stopped the run early, if one did. */
  readonly failure?: ChatError;
  /** Strategies written (the Donor Game's strategy step), in the order written. */
  readonly strategies: StrategyRecord[];
}

/** The seat count of a game's variant, from the server's catalog (`GET /games/:id`). */
async function seatCount(url: string, game: string, variant?: string): Promise<{ seats: number; variant: string }> {
  const http = new URL(url);
  http.protocol = http.protocol === "wss:" ? "https:" : "http:";
  http.pathname = `/games/${encodeURIComponent(game)}`;
  let response: Response;
  try {
    response = await fetch(http);
  } catch (error) {
    throw new LudusError("connection_failed", `cannot reach ${http}: ${(error as Error).message}`);
  }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new LudusError("unknown_game", body?.message ?? `${http} answered HTTP ${response.status}`);
  const name = variant ?? body.defaultVariant;
  const info = body.variants?.[name];
  if (!info) {
    throw new LudusError(
      "bad_config",
      `${game} has no variant \`${name}\`; variants: ${Object.keys(body.variants ?? {}).join(", ")}`,
    );
  }
  return { seats: info.seats, variant: name };
}

/**
 * Seats an LLM at `matches` matches of a game, `concurrency` at a time, over one connection: queued, or
 * private matches against a built-in `opponent`. Stops starting matches once `signal` aborts or the
 * endpoint fails for good (the failure is returned, and the seats it hit were withdrawn).
 */
export async function runLlm(options: LlmRunOptions): Promise<LlmRunResult> {
  renderer(options.agent.renderer ?? "ludus", options.game); // refuse a renderer that cannot play the game, before connecting
  const total = options.matches ?? 1;
  const concurrency = Math.min(options.concurrency ?? 1, total);
  const agent = new LlmAgent(options.agent);
  options.onAgent?.(agent);
  const opponents = options.opponent ? await seatCount(options.url, options.game, options.variant) : undefined;
  const bot = await Bot.connect({ url: options.url, token: options.token, format: options.format, text: true });
  agent.attach(bot.connection);
  const ends: MatchEndFrame[] = [];
  let started = 0;
  const more = () => started < total && !options.signal?.aborted && !agent.failure && !agent.stopped;
  const lane = async () => {
    while (more()) {
      const index = started++;
      let end: MatchEndFrame | undefined;
      if (opponents) {
        const others = Object.fromEntries(
          Array.from({ length: opponents.seats - 1 }, (_, i) => [String(i + 1), `strategy:${options.opponent}`]),
        );
        const created = await bot.create({
          game: options.game,
          variant: opponents.variant,
          seat: 0,
          opponents: others,
          ...(options.seed === undefined ? {} : { seed: `${options.seed}/${index}` }),
          policy: agent.policy,
        });
        end = await created.result;
      } else {
        [end] = await bot.play({
          game: options.game,
          variant: options.variant,
          policy: agent.policy,
          signal: options.signal,
        });
      }
      if (!end) break;
      ends.push(end);
      options.onMatchEnd?.(end);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, lane));
  } finally {
    await bot.close();
  }
  return { ends, strategies: agent.strategies, ...(agent.failure ? { failure: agent.failure } : {}) };
}
