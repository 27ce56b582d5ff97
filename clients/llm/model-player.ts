import type { AgentInfo } from "../../protocol/frames.ts";
import { Bot } from "../sdk/bot.ts";
import type { WebSocketClass } from "../sdk/connection.ts";
import { LlmAgent, type LlmAgentOptions } from "./agent.ts";
import { agentInfo } from "./runner.ts";

/**
 * A model that plays a run's matches (a tournament's) as one named player: the run makes each match with the
 * model's seats already held by the model's token, and the model's connection takes them by resuming the match.
 * One connection and one agent serve every match the model is in, as many at once as the run plays.
 */
export class ModelPlayer {
  private constructor(
    readonly name: string,
    private readonly tokenId: string,
    private readonly bot: Bot,
    private readonly agent: LlmAgent,
    private readonly info: AgentInfo,
    private readonly log: (line: string) => void,
  ) {}

  static async connect(options: {
    /** The bot gateway, e.g. `ws://127.0.0.1:2567/bot`. */
    readonly url: string;
    /** An LLM token of the model's own (the run's seats are found by it), and its id. */
    readonly token: string;
    readonly tokenId: string;
    /** The player's name, as its seats are recorded and rated (`llm:<name>`). */
    readonly name: string;
    readonly agent: LlmAgentOptions;
    /** The WebSocket class (default: the runtime's; see `LlmRunOptions.WebSocket`). */
    readonly WebSocket?: WebSocketClass;
  }): Promise<ModelPlayer> {
    const info = agentInfo(options.agent.chat);
    const agent = new LlmAgent(options.agent);
    const bot = await Bot.connect({
      url: options.url,
      token: options.token,
      WebSocket: options.WebSocket,
      text: true,
      agent: info,
    });
    agent.attach(bot.connection);
    const log = options.agent.log ?? (() => {});
    return new ModelPlayer(options.name, options.tokenId, bot, agent, info, log);
  }

  /** The seat a run makes for this model: its name, its token, and the model behind it, as the record keeps them. */
  get participant(): { kind: "llm"; name: string; tokenId: string; agent: AgentInfo } {
    return { kind: "llm", name: this.name, tokenId: this.tokenId, agent: this.info };
  }

  /** The endpoint failure that made the model give up, if one did: its later seats are withdrawn at once. */
  get failure(): Error | undefined {
    return this.agent.failure;
  }

  /** Takes the model's seats of `match`; the run waits for the match's end itself. */
  seat(match: string): void {
    this.bot.join(match, this.agent.policy).catch((error: Error) =>
      this.log(`${this.name} could not take its seat in match ${match}: ${error.message}`)
    );
  }

  close(): Promise<void> {
    return this.bot.close();
  }
}
