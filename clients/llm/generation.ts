import { Bot } from "../sdk/bot.ts";
import type { WebSocketClass } from "../sdk/connection.ts";
import { LlmAgent, type LlmAgentOptions } from "./agent.ts";
import { agentInfo } from "./runner.ts";
import type { Advice } from "./strategy.ts";

/**
 * One generation of the Donor Game's cultural evolution with LLM agents (Vallinder & Hughes, 2024), from the
 * model's side: one connection creates the generation's match and plays every LLM seat of it (`self`), each agent
 * writing its strategy with the survivors' advice, or keeping the one it survived with; built-in seats are the
 * server's. The league's evolution runner calls this once per generation and reads the result from the match.
 */

/** A seat of the generation: an LLM agent (a survivor keeps its strategy) or a built-in strategy. */
export type GenerationSeat = { readonly llm: true; readonly keep?: string } | { readonly strategy: string };

export interface GenerationOptions {
  /** The bot gateway, e.g. `ws://127.0.0.1:2567/bot`. */
  readonly url: string;
  /** An LLM token. */
  readonly token: string;
  readonly game: string;
  /** The match's config: the Donor Game's `names` and `generation` among it. */
  readonly config: Record<string, unknown>;
  readonly seed: string;
  readonly seats: readonly GenerationSeat[];
  /** The previous generation's surviving strategies, with their scores. */
  readonly advice: readonly Advice[];
  readonly agent: LlmAgentOptions;
  /** The WebSocket class (default: the runtime's; see `LlmRunOptions.WebSocket`). */
  readonly WebSocket?: WebSocketClass;
}

export interface SeatedGeneration {
  readonly match: string;
  /** Once the match has ended: the strategy each LLM seat followed, by seat; rejects with the endpoint's failure. */
  readonly strategies: Promise<ReadonlyMap<number, string>>;
}

export async function seatGeneration(options: GenerationOptions): Promise<SeatedGeneration> {
  const llmSeats = options.seats.flatMap((seat, i) => ("llm" in seat ? [i] : []));
  if (llmSeats.length === 0) throw new RangeError("a generation for the model needs at least one LLM seat");
  const names = (options.config.names as readonly string[] | undefined) ?? [];
  const keep = Object.fromEntries(
    options.seats.flatMap((seat, i) => ("llm" in seat && seat.keep && names[i] ? [[names[i], seat.keep]] : [])),
  );
  const agent = new LlmAgent({
    ...options.agent,
    strategy: { ...(options.agent.strategy || {}), enabled: true, advice: options.advice, keep },
  });
  const bot = await Bot.connect({
    url: options.url,
    token: options.token,
    WebSocket: options.WebSocket,
    text: true,
    agent: agentInfo(options.agent.chat),
  });
  agent.attach(bot.connection);
  const [first] = llmSeats;
  const opponents = Object.fromEntries(
    options.seats.flatMap((
      seat,
      i,
    ) => (i === first ? [] : [[String(i), "llm" in seat ? "self" : `strategy:${seat.strategy}`]])),
  );
  let created;
  try {
    created = await bot.create({
      game: options.game,
      config: options.config,
      seed: options.seed,
      seat: first,
      opponents,
      policy: agent.policy,
    });
  } catch (error) {
    await bot.close();
    throw error;
  }
  const strategies = created.ends.then(() => {
    if (agent.failure) throw agent.failure;
    return new Map(agent.strategies.map((s) => [s.seat, s.strategy]));
  }).finally(() => bot.close());
  strategies.catch(() => {}); // read by the runner once the match has ended
  return { match: created.match, strategies };
}
