import type { AgentInfo, MatchEndFrame } from "../../protocol/frames.ts";
import { configure } from "../../games/core/config.ts";
import { getGame } from "../../games/registry.ts";
import { Bot, checkPlayOptions, chooseSeat, type Policy, type SeatChoice } from "../sdk/bot.ts";
import type { FrameFormat, MsgpackCodec } from "../sdk/codec.ts";
import type { WebSocketClass } from "../sdk/connection.ts";
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
  /** With `opponent`: overrides of the variant's config (its seat count follows it: a Donor Game of `agents: 6`). */
  readonly config?: Readonly<Record<string, unknown>>;
  /** Matches in all (default 1): queue tickets, or private matches with `opponent`. */
  readonly matches?: number;
  /** Matches played at once (default 1). */
  readonly concurrency?: number;
  /**
   * Play private matches instead of queueing: every other seat is this built-in strategy, or `self`: every seat
   * is this model (a Donor Game of twelve LLM seats, Kuhn poker against itself).
   */
  readonly opponent?: string;
  /**
   * Against a built-in `opponent`: the model's seat (default `alternate`: match i takes seat i mod seats). With
   * `players`: the seat of `players[0]`, the others following in order (default `alternate`: they rotate a seat
   * every match; a number fixes the order).
   */
  readonly seat?: SeatChoice;
  /** Queued: this token's tickets may meet each other (with `concurrency` ≥ 2). */
  readonly selfPlay?: boolean;
  /** With `opponent`: fix the matches' seeds, match i (from 0) seeded `<seed>/<i>`, for reproducible runs. */
  readonly seed?: string;
  /** A seed group: its matches start from the same seed (queued) or are recorded under its name (private). */
  readonly group?: string;
  /** The model of every seat, or the defaults of `players`. */
  readonly agent: LlmAgentOptions;
  /**
   * Private matches between several models, one per seat (with `opponent: "self"`): each player has its own
   * endpoint, sampling, renderer and prompt, and its own chat per seat. Their order is the seat order when
   * `seat` is 0; by default they rotate (see `seat`).
   */
  readonly players?: readonly LlmAgentOptions[];
  readonly format?: FrameFormat;
  /** The msgpack implementation, with `format: "msgpack"`. */
  readonly msgpack?: MsgpackCodec;
  /**
   * The WebSocket class (default: the runtime's). Under Deno give the `ws` package's: Deno's own leaves Nagle's
   * algorithm on, so each act over ~1 KB (an LLM's, with its prompt and reply) waits ~40 ms for the server's ACK.
   */
  readonly WebSocket?: WebSocketClass;
  /** Once aborted no new match starts; the ones under way finish. `LlmAgent.stop` cuts them short (and starts none). */
  readonly signal?: AbortSignal;
  /** Called as each seat's match ends (a self-play match ends once per seat). */
  readonly onMatchEnd?: (end: MatchEndFrame) => void;
  /** Receives each agent (one, or one per player), to stop it. */
  readonly onAgent?: (agent: LlmAgent) => void;
}

export interface LlmRunResult {
  /** Every seat's `match_end`, as they ended: a match the model played in several seats gives one per seat. */
  readonly ends: MatchEndFrame[];
  /** With `players`: which player (an index into `players`) sat at each seat, by match id. */
  readonly lineups: ReadonlyMap<string, readonly number[]>;
  /** The endpoint failure that stopped the run early, if one did. */
  readonly failure?: ChatError;
  /** Strategies written (the Donor Game's strategy step), in the order written. */
  readonly strategies: StrategyRecord[];
  /** The agents that played: one, or one per player. */
  readonly agents: readonly LlmAgent[];
}

/**
 * How many seats a match of `config` has, where the config is one the game takes; otherwise undefined, and the
 * server's answer to the `create` says what is wrong with it.
 */
function configSeats(game: string, variant: string | undefined, config: Readonly<Record<string, unknown>>) {
  try {
    const played = getGame(game);
    return played.seatCount(configure(played, config, variant).config);
  } catch {
    return undefined;
  }
}

/**
 * Seats an LLM at `matches` matches of a game, `concurrency` at a time, over one connection: queued, or
 * private matches against a built-in `opponent` or itself, or between several `players`. Stops starting matches
 * once `signal` aborts or an endpoint fails for good (the failure is returned, and the seats it hit were withdrawn).
 */
export async function runLlm(options: LlmRunOptions): Promise<LlmRunResult> {
  const { url, token, format, msgpack, WebSocket, signal, agent: _, onAgent: __, players, ...play } = options;
  const configs = players ?? [options.agent];
  // Refuse what cannot be played before connecting: a renderer that does not know the game, contradictory options.
  for (const config of configs) renderer(config.renderer ?? "ludus", options.game);
  const count = players?.length ??
    (options.config === undefined ? undefined : configSeats(options.game, options.variant, options.config));
  if (players) {
    if (options.opponent !== "self") {
      throw new RangeError('`players` seat several models in one match: use them with `opponent: "self"`');
    }
    const seats = options.config === undefined ? undefined : configSeats(options.game, options.variant, options.config);
    if (seats !== undefined && seats !== players.length) {
      throw new RangeError(
        `this config of ${options.game} has ${seats} seats, and ${players.length} players were given`,
      );
    }
  }
  const { seat: seatChoice, ...rest } = play;
  checkPlayOptions({
    ...rest,
    ...(players ? {} : { seat: seatChoice }),
    ...(count === undefined ? {} : { seats: count }),
  });
  const agents = configs.map((config) => new LlmAgent(config));
  for (const agent of agents) options.onAgent?.(agent);
  const halted = AbortSignal.any(agents.map((agent) => agent.halted));
  const bot = await Bot.connect({
    url,
    token,
    format,
    msgpack,
    WebSocket,
    text: true,
    // Several players: each match's `create` names every seat's own (`agents`), so the connection declares none.
    ...(players ? {} : { agent: agentInfo(options.agent.chat) }),
  });
  for (const agent of agents) agent.attach(bot.connection);
  const lineups = new Map<string, readonly number[]>();
  try {
    const ends = await bot.play({
      ...rest,
      ...(players ? {} : { seat: seatChoice }),
      ...(count === undefined ? {} : { seats: count }),
      policy: agents[0].policy,
      ...(players
        ? {
          policyFor: (index: number) =>
            lineupPolicy(agents, lineup(players.length, index, seatChoice, options.seed), lineups),
          agentsFor: (index: number) =>
            Object.fromEntries(
              lineup(players.length, index, seatChoice, options.seed).map((player, seat) => [
                String(seat),
                agentInfo(players[player].chat),
              ]),
            ),
        }
        : {}),
      signal: signal ? AbortSignal.any([signal, halted]) : halted,
    });
    const failure = agents.find((agent) => agent.failure)?.failure;
    return {
      ends,
      lineups,
      strategies: agents.flatMap((agent) => agent.strategies),
      agents,
      ...(failure ? { failure } : {}),
    };
  } finally {
    await bot.close();
  }
}

/**
 * Which player (an index into `players`) sits at each seat of match `index`: `players[0]` where the seat choice
 * puts it, the others following in order, wrapping round.
 */
function lineup(n: number, index: number, choice: SeatChoice = "alternate", seed: string | undefined): number[] {
  const first = chooseSeat(choice, index, n, seed) % n;
  return Array.from({ length: n }, (_, seat) => (seat - first + n) % n);
}

/** The policy of a match between several players seated as `playerAt` says: each turn goes to its seat's agent. */
function lineupPolicy(
  agents: readonly LlmAgent[],
  playerAt: readonly number[],
  lineups: Map<string, readonly number[]>,
): Policy {
  return (observation, legal, turn, error) => {
    if (!lineups.has(turn.match)) lineups.set(turn.match, playerAt);
    return agents[playerAt[turn.seat]].policy(observation, legal, turn, error);
  };
}

/**
 * What the record keeps of the model behind a seat (never a key): the model's name, endpoint and sampling. Several
 * models over one connection each declare their own, per seat (`create.agents`).
 */
export function agentInfo(chat: ChatOptions): AgentInfo {
  const sampling: Record<string, string | number | boolean | null> = {};
  if (chat.temperature !== undefined) sampling.temperature = chat.temperature;
  if (chat.maxTokens !== undefined) sampling.max_tokens = chat.maxTokens;
  if (chat.seed !== undefined) sampling.seed = chat.seed;
  if (chat.reasoningEffort !== undefined) sampling.reasoning_effort = chat.reasoningEffort;
  // Only the stop sequences the request sends (an empty list sends none).
  if (chat.stop?.length) sampling.stop = JSON.stringify(chat.stop);
  for (const [key, value] of Object.entries(chat.extraBody ?? {})) {
    if (value === null || ["string", "number", "boolean"].includes(typeof value)) {
      sampling[key] = value as string | number | boolean | null;
    }
  }
  return { model: chat.model, endpoint: chat.baseUrl, sampling };
}
