/**
 * The Ludus LLM agent: seats a language model behind any OpenAI-compatible chat-completions endpoint at
 * any Ludus table, through the bot gateway, with everything a researcher needs kept in the replay.
 *
 * ```ts
 * const { ends } = await runLlm({
 *   url: "ws://127.0.0.1:2567/bot", token, game: "kuhn-poker", matches: 10, concurrency: 4,
 *   agent: { chat: { baseUrl: "http://127.0.0.1:8000/v1", model: "Qwen/Qwen3-8B" } },
 * });
 * ```
 */
export { type Fallback, LlmAgent, type LlmAgentOptions } from "./agent.ts";
export { backoffDelay, type BackoffOptions, Gate, withBackoff } from "./backoff.ts";
export {
  ChatClient,
  ChatError,
  type ChatFailure,
  type ChatMessage,
  type ChatOptions,
  type Completion,
  type Usage,
} from "./chat.ts";
export { type Renderer, renderer, RENDERER_NAMES, type RendererName, type TurnView } from "./renderers.ts";
export { type GenerationOptions, type GenerationSeat, type SeatedGeneration, seatGeneration } from "./generation.ts";
export { ModelPlayer } from "./model-player.ts";
export { type LlmRunOptions, type LlmRunResult, runLlm } from "./runner.ts";
export { type Advice, parseStrategy, type StrategyOptions, strategyPrompt, type StrategyRecord } from "./strategy.ts";
