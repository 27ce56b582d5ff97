import type { Usage } from "./chat.ts";

/**
 * The strategy step of Vallinder & Hughes's Donor Game: before a game the agent writes its strategy as
 * one sentence, follows it in every decision, and the sentences of one generation's best agents can be
 * handed to the next generation's strategy prompt as advice. The generations loop itself is a league's
 * business; these are its hooks.
 */

/** A strategy of an earlier generation, with the score its agent finished with. */
export interface Advice {
  readonly strategy: string;
  readonly score?: number;
}

export interface StrategyOptions {
  /** Write a strategy before each match (default: on for the Donor Game, off elsewhere). */
  readonly enabled?: boolean;
  /** The previous generation's surviving strategies, shown in the strategy prompt. */
  readonly advice?: readonly Advice[];
  /**
   * Strategies agents already hold, by their name in the game: a survivor of the last generation keeps its own and
   * is not asked to write another.
   */
  readonly keep?: Readonly<Record<string, string>>;
  /** Hears each strategy as it is written (to pass on to a later generation). */
  readonly onStrategy?: (record: StrategyRecord) => void;
}

/** A strategy the agent wrote, with the exchange that produced it. */
export interface StrategyRecord {
  readonly match: string;
  readonly seat: number;
  readonly game: string;
  /** The agent's name in the game, when the game names its players (the Donor Game does). */
  readonly name?: string;
  readonly generation?: number;
  /** The sentence, from "My strategy will be". Empty when no reply held one. */
  readonly strategy: string;
  readonly response: string;
  readonly usage: Usage | null;
  /** Why no strategy could be read, when none could. */
  readonly error?: string;
}

const OPENING = "My strategy will be";

/** Who the seat is in the game: the Donor Game's observation names the agent and its generation. */
export function identity(observation: unknown): { name?: string; generation?: number } {
  const o = observation as { you?: { name?: unknown }; generation?: unknown } | null;
  return {
    ...(typeof o?.you?.name === "string" ? { name: o.you.name } : {}),
    ...(typeof o?.generation === "number" ? { generation: o.generation } : {}),
  };
}

/** The prompt that asks for a strategy, with the earlier generation's advice when there is some. */
export function strategyPrompt(name: string | undefined, advice: readonly Advice[] = []): string {
  const who = name ? `Your name is ${name}. ` : "";
  const inherited = advice.length
    ? "\nHere is the advice of the best-performing agents of the previous generation, with their final scores:\n" +
      advice.map((a) => `- ${a.strategy}${a.score === undefined ? "" : ` (final score ${a.score})`}`).join("\n") +
      "\nImprove on their strategies to create your own."
    : "";
  return `${who}The game has not started yet. Based on the rules, create a strategy for the whole game.` +
    `${inherited}\nThink briefly, step by step, about what will serve you best; then state your strategy, ` +
    `without explanation, in one sentence that starts "${OPENING}".`;
}

/** The strategy sentence of a reply: from the last "My strategy will be" to the end of its sentence. */
export function parseStrategy(reply: string): string | undefined {
  const at = reply.lastIndexOf(OPENING);
  if (at < 0) return undefined;
  const rest = reply.slice(at).replace(/\s+/g, " ").trim();
  const end = rest.search(/[.!?](\s|$)/);
  const sentence = end < 0 ? rest : rest.slice(0, end + 1);
  return sentence.length > OPENING.length + 1 ? sentence : undefined;
}

/** The reminder every decision prompt carries once a strategy is written. */
export function strategyReminder(strategy: string): string {
  return `As you will recall, here is the strategy you decided to follow: ${strategy}`;
}
