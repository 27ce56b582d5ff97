import type { AgentInfo, MatchEndFrame } from "../../protocol/frames.ts";
import { Bot, checkPlayOptions, type SeatChoice } from "../sdk/bot.ts";
import type { FrameFormat, MsgpackCodec } from "../sdk/codec.ts";
import { LlmAgent, type LlmAgentOptions } from "./agent.ts";
import type { ChatError, ChatOptions } from "./chat.ts";
import { renderer } from "./renderers.ts";
import type { StrategyRecord } from "./strategy.ts";

export interface LlmRunOptions {
  /** The bot gateway, e.g. `ws://127.0.0.1:2567/bot`. */
  readonly url: string;
  /** A token made for an LLM seat (`ludus token create --kind llm`): larger frames, an LLM's clock. */
  readonly token: string;
  readonly game: string;
  readonly variant?: string;
  /** Matches in all (default 1): queue tickets, or private matches with `opponent`. */
  readonly matches?: number;
  /** Matches played at once (default 1). */
  readonly concurrency?: number;
  /**
   * Play private matches instead of queueing: every other seat is this built-in strategy, or `self`: every seat
   * is this model (a Donor Game of twelve LLM seats, Kuhn poker against itself).
   */
  readonly opponent?: string;
  /** Against a built-in `opponent`: the model's seat (default `alternate`: match i takes seat i mod seats). */
  readonly seat?: SeatChoice;
  /** Queued: this token's tickets may meet each other (with `concurrency` ≥ 2). */
  readonly selfPlay?: boolean;
  /** With `opponent`: fix the matches' seeds, match i (from 0) seeded `<seed>/<i>`, for reproducible runs. */
  readonly seed?: string;
  readonly agent: LlmAgentOptions;
  readonly format?: FrameFormat;
  /** The msgpack implementation, with `format: "msgpack"`. */
  readonly msgpack?: MsgpackCodec;
  /** Once aborted no new match starts; the ones under way finish. `LlmAgent.stop` cuts them short (and starts none). */
  readonly signal?: AbortSignal;
  /** Called as each seat's match ends (a self-play match ends once per seat). */
  readonly onMatchEnd?: (end: MatchEndFrame) => void;
  /** Receives the agent, to stop it. */
  readonly onAgent?: (agent: LlmAgent) => void;
}

export interface LlmRunResult {
  /** Every seat's `match_end`, as they ended: a match the model played in several seats gives one per seat. */
  readonly ends: MatchEndFrame[];
  /** The endpoint failure that stopped the run early, if one did. */
  readonly failure?: ChatError;
  /** Strategies written (the Donor Game's strategy step), in the order written. */
  readonly strategies: StrategyRecord[];
}

/**
 * Seats an LLM at `matches` matches of a game, `concurrency` at a time, over one connection: queued, or
 * private matches against a built-in `opponent` or itself. Stops starting matches once `signal` aborts or
 * the endpoint fails for good (the failure is returned, and the seats it hit were withdrawn).
 */
export async function runLlm(options: LlmRunOptions): Promise<LlmRunResult> {
  // Refuse what cannot be played before connecting: a renderer that does not know the game, contradictory options.
  renderer(options.agent.renderer ?? "ludus", options.game);
  const { url, token, format, msgpack, signal, agent: _, onAgent: __, ...play } = options;
  checkPlayOptions(play);
  const agent = new LlmAgent(options.agent);
  options.onAgent?.(agent);
  const bot = await Bot.connect({ url, token, format, msgpack, text: true, agent: agentInfo(options.agent.chat) });
  agent.attach(bot.connection);
  try {
    const ends = await bot.play({
      ...play,
      policy: agent.policy,
      signal: signal ? AbortSignal.any([signal, agent.halted]) : agent.halted,
    });
    return { ends, strategies: agent.strategies, ...(agent.failure ? { failure: agent.failure } : {}) };
  } finally {
    await bot.close();
  }
}

/** What the record keeps of the model behind the seats: its name, endpoint and sampling (never the key). */
export function agentInfo(chat: ChatOptions): AgentInfo {
  const sampling: Record<string, string | number | boolean | null> = {};
  if (chat.temperature !== undefined) sampling.temperature = chat.temperature;
  if (chat.maxTokens !== undefined) sampling.max_tokens = chat.maxTokens;
  if (chat.seed !== undefined) sampling.seed = chat.seed;
  if (chat.reasoningEffort !== undefined) sampling.reasoning_effort = chat.reasoningEffort;
  if (chat.stop !== undefined) sampling.stop = JSON.stringify(chat.stop);
  for (const [key, value] of Object.entries(chat.extraBody ?? {})) {
    if (value === null || ["string", "number", "boolean"].includes(typeof value)) {
      sampling[key] = value as string | number | boolean | null;
    }
  }
  return { model: chat.model, endpoint: chat.baseUrl, sampling };
}
