import { type ActionForm, defaultAction } from "../../protocol/action-forms.ts";
import type { MatchStartFrame, TurnFrame } from "../../protocol/frames.ts";
import { Answer, type Policy, seatKey, Withdrawal } from "../sdk/bot.ts";
import type { Connection } from "../sdk/connection.ts";
import type { LudusError } from "../sdk/errors.ts";
import { randomAction, type RandomSource } from "../sdk/random.ts";
import { type BackoffOptions, Gate, withBackoff } from "./backoff.ts";
import {
  ChatClient,
  ChatError,
  type ChatMessage,
  type ChatOptions,
  type Completion,
  type TokenLogprob,
  type Usage,
} from "./chat.ts";
import { fitMeta } from "./meta.ts";
import { type MatchView, type Renderer, renderer, type RendererName, type TurnView } from "./renderers.ts";
import {
  identity,
  parseStrategy,
  type StrategyOptions,
  strategyPrompt,
  type StrategyRecord,
  strategyReminder,
} from "./strategy.ts";

const STRATEGY_MISSING = 'it has no sentence starting "My strategy will be"';

/** What the agent plays when no usable answer came: the seat's first legal action, or one at random. */
export type Fallback = "default" | "random";

export interface LlmAgentOptions {
  readonly chat: ChatOptions;
  /** How answers are asked for and read (default `ludus`). */
  readonly renderer?: RendererName;
  /** A system prompt of your own, per game: it replaces the rules the server sends (the answer format is still added). */
  readonly systemPrompt?: (game: string, rules: string) => string;
  /** Re-asks after an answer that cannot be used (unreadable, or refused by the server), before the fallback (default 2). */
  readonly retries?: number;
  readonly fallback?: Fallback;
  /** Earlier turns of the same match kept in the chat, as user/assistant pairs (default 0: each turn's text stands alone). */
  readonly history?: number;
  /**
   * Past rounds kept in the server's turn text, the latest ones (default: all). Games whose text lists every
   * round played (the dilemma, Trust-and-Split) grow with the match; the rounds left out are counted in one line.
   */
  readonly historyWindow?: number;
  /** Requests in flight at once, over every match (default 4). */
  readonly maxInFlight?: number;
  /** Waits and tries for rate limits, server errors and unreachable endpoints. */
  readonly backoff?: BackoffOptions;
  /** One request's longest wait (default 120,000 ms); the seat's deadline cuts it shorter. */
  readonly requestTimeoutMs?: number;
  /** The agent answers (with its fallback if need be) this long before the seat's deadline (default 2,000 ms, at most a quarter of the time left). */
  readonly deadlineMarginMs?: number;
  /** The Donor Game's strategy step (on by default there); `false` turns it off. */
  readonly strategy?: StrategyOptions | false;
  /** Random source of the `random` fallback. */
  readonly random?: RandomSource;
  /** Progress lines (rate-limit waits, fallbacks, withdrawals). */
  readonly log?: (line: string) => void;
}

/** One call to the model while deciding, as the replay keeps it. */
interface AttemptMeta {
  response: string;
  reasoning?: string;
  usage: Usage | null;
  latency_ms: number;
  finish_reason: string | null;
  /** Why the answer was not used: unreadable, or refused by the server. */
  error?: string;
  /** The reply's token log-probabilities, when asked for: kept once, beside the response they score. */
  logprobs?: readonly TokenLogprob[];
}

/** Running totals over everything the agent played. */
export interface AgentStats {
  /** Replies received (each attempt of each decision). */
  requests: number;
  promptTokens: number;
  completionTokens: number;
  /** Replies that could not be used (unreadable, or refused by the server) and were asked again. */
  reasks: number;
  /** Decisions played with the fallback. */
  fallbacks: number;
  /** Seats withdrawn (an endpoint failure, a stop). */
  withdrawals: number;
}

interface Deciding {
  readonly seq: number;
  readonly attempts: AttemptMeta[];
  /**
   * The last request sent: every earlier one is its start, and it holds each earlier reply and why it was not
   * used. Kept across calls, so a fallback after the server refused the last reply still records it.
   */
  prompt: readonly ChatMessage[];
}

/** What the agent keeps per seat: one connection may hold several seats of a match (self-play). */
interface SeatContext {
  readonly start: MatchStartFrame;
  /** The match as the renderer sees it. */
  readonly match: MatchView;
  /** Earlier turns: the text shown and the reply played (one per decision: a refused reply is replaced). */
  readonly history: { readonly seq: number; readonly user: string; readonly reply: string }[];
  deciding?: Deciding;
  strategy?: Promise<StrategyRecord>;
}

/**
 * An LLM seat: it turns each `turn` into chat messages (the server's rules and observation text, the
 * renderer's answer format), asks the endpoint, reads an action from the reply, and re-asks with the
 * reason when the reply cannot be used or the server refuses it. Past its retries it plays its fallback.
 * Every action carries the replay's fields in `meta`: the messages, the raw reply, token usage, latency
 * and every attempt. When the endpoint cannot be used at all (refused key, unknown model, unreachable
 * past its retries) the seat is withdrawn with the endpoint and the cause, and the agent marks itself failed.
 */
export class LlmAgent {
  readonly client: ChatClient;
  readonly #options: LlmAgentOptions;
  /** Each seat's context, by match and seat. */
  readonly #seats = new Map<string, SeatContext>();
  readonly #gate: Gate;
  readonly #stop = new AbortController();
  readonly #failed = new AbortController();
  #frameBytes = 256 * 1024;
  readonly stats: AgentStats = {
    requests: 0,
    promptTokens: 0,
    completionTokens: 0,
    reasks: 0,
    fallbacks: 0,
    withdrawals: 0,
  };
  /** Strategies written (the Donor Game's strategy step), in the order written. */
  readonly strategies: StrategyRecord[] = [];

  constructor(options: LlmAgentOptions) {
    this.#options = options;
    this.client = new ChatClient(options.chat);
    this.#gate = new Gate(options.maxInFlight ?? 4);
  }

  /** The endpoint failure that made the agent give up, if one did. */
  get failure(): ChatError | undefined {
    return this.#failed.signal.aborted ? this.#failed.signal.reason : undefined;
  }

  /** Aborts once the agent is stopped or its endpoint has failed for good: start no more matches. */
  readonly halted: AbortSignal = AbortSignal.any([this.#stop.signal, this.#failed.signal]);

  /** Listens to a connection's `match_start` frames (the rules and who each seat is): call before playing. */
  attach(connection: Connection): void {
    this.#frameBytes = connection.welcome.limits.frameBytes;
    connection.on("match_start", (start) => {
      if (start.resumed && this.#seats.has(seatKey(start.match, start.seat))) return;
      const { game, seat, rules, config, observation, answerExample } = start;
      const match = { game, seat, rules, config, observation, answerExample };
      const context: SeatContext = { start, match, history: [] };
      this.#seats.set(seatKey(start.match, start.seat), context);
    });
    // Every seat of a match ends at once, those the connection no longer holds (withdrawn ones) included.
    connection.on("match_end", (end) => {
      for (const [key, context] of this.#seats) if (context.start.match === end.match) this.#seats.delete(key);
    });
  }

  /** The policy to play with (`Bot.play`, `Bot.create`, `Bot.join`). */
  readonly policy: Policy = (_observation, legal, turn, error) => this.#decide(turn, legal, error);

  /** Stops every decision under way: each open seat is withdrawn with `reason`. */
  stop(reason: string): void {
    this.#stop.abort(new Error(reason));
  }

  #strategyOn(game: string): boolean {
    const option = this.#options.strategy;
    return option !== false && (option?.enabled ?? game === "donor-game");
  }

  async #decide(turn: TurnFrame, legal: readonly ActionForm[], refusal?: LudusError): Promise<unknown> {
    const context = this.#seats.get(seatKey(turn.match, turn.seat));
    if (!context) {
      throw new Error(
        `turn for seat ${turn.seat} of match ${turn.match} before its match_start: attach the agent first`,
      );
    }
    if (this.failure) return this.#withdraw(this.failure.message);
    if (this.#stop.signal.aborted) return this.#withdraw(stopReason(this.#stop.signal));
    const game = context.start.game;
    const text = turn.text ?? JSON.stringify(turn.observation);
    const window = this.#options.historyWindow;
    const view: TurnView = {
      game,
      text: window === undefined ? text : windowRounds(text, window),
      observation: turn.observation,
      legal,
      legalText: turn.legalText,
    };
    const render = renderer(this.#options.renderer ?? "ludus", game);
    if (context.deciding?.seq !== turn.seq) context.deciding = { seq: turn.seq, attempts: [], prompt: [] };
    const deciding = context.deciding;
    const last = deciding.attempts.at(-1);
    if (refusal && last && !last.error) {
      last.error = `the server refused it: ${refusal.message}`;
      this.stats.reasks++;
    }
    // Written at the seat's first decision, by the agent that plays the seat (a run may seat several models).
    if (this.#strategyOn(game)) context.strategy ??= this.#writeStrategy(context);
    const strategy = context.strategy ? await context.strategy : undefined;

    // The seat's own deadline bounds everything, so a slow model costs a fallback, not a timeout.
    // The margin is at most a quarter of the time left, so a short clock still leaves room to ask.
    const left = turn.deadline - Date.now();
    const margin = Math.min(this.#options.deadlineMarginMs ?? 2_000, left / 4);
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new Error("the seat's deadline is near")), left - margin);
    const signal = AbortSignal.any([deadline.signal, this.#stop.signal]);
    const retries = this.#options.retries ?? 2;
    let fallbackReason = `no usable answer in ${retries + 1} attempt(s)`;
    try {
      while (deciding.attempts.length <= retries) {
        const messages = this.#messages(context, render, view, deciding, strategy);
        deciding.prompt = messages;
        let completion: Completion;
        try {
          completion = await this.#complete(messages, signal);
        } catch (error) {
          if (!(error instanceof ChatError)) throw error;
          if (this.#stop.signal.aborted) return this.#withdraw(stopReason(this.#stop.signal));
          if (deadline.signal.aborted) {
            fallbackReason = `the model did not answer before the seat's deadline (${error.message})`;
            break;
          }
          return this.#giveUp(error, context, turn.seq);
        }
        const attempt: AttemptMeta = {
          response: completion.text,
          ...(completion.reasoning ? { reasoning: completion.reasoning } : {}),
          usage: completion.usage,
          latency_ms: round(completion.latencyMs),
          finish_reason: completion.finishReason,
          ...(completion.logprobs ? { logprobs: completion.logprobs } : {}),
        };
        deciding.attempts.push(attempt);
        this.stats.requests++;
        this.stats.promptTokens += completion.usage?.prompt_tokens ?? 0;
        this.stats.completionTokens += completion.usage?.completion_tokens ?? 0;
        const flaw = unusable(completion);
        const read = flaw ? { error: flaw } : render.extract(completion.text, view);
        if ("error" in read) {
          attempt.error = read.error;
          this.stats.reasks++;
          continue;
        }
        if (context.history.at(-1)?.seq === turn.seq) context.history.pop();
        context.history.push({ seq: turn.seq, user: this.#turnText(context, render, view), reply: completion.text });
        return new Answer(read.action, this.#meta(deciding, completion.model, strategy));
      }
    } finally {
      clearTimeout(timer);
    }
    const action = this.#options.fallback === "random"
      ? randomAction(legal, this.#options.random)
      : defaultAction(legal);
    this.stats.fallbacks++;
    this.#options.log?.(
      `${where(turn.match, turn.seat, turn.seq)}: ${fallbackReason}; playing ${JSON.stringify(action)}`,
    );
    return new Answer(action, this.#meta(deciding, this.#options.chat.model, strategy, fallbackReason));
  }

  /** An endpoint failure no retry mends: the seat is withdrawn and the agent stops asking. */
  #giveUp(error: ChatError, context: SeatContext, seq: number): Withdrawal {
    this.#failed.abort(error); // a second failure leaves the first as the reason
    this.#options.log?.(
      `${where(context.start.match, context.start.seat, seq)}: withdrawing the seat: ${error.message}`,
    );
    return this.#withdraw(error.message);
  }

  #withdraw(reason: string): Withdrawal {
    this.stats.withdrawals++;
    return new Withdrawal(reason);
  }

  /**
   * The chat for an attempt: the opening (system message, or the setup's first user message), earlier turns, this
   * turn, then each failed try and why.
   */
  #messages(
    context: SeatContext,
    render: Renderer,
    view: TurnView,
    deciding: Deciding,
    strategy?: StrategyRecord,
  ): ChatMessage[] {
    const messages = this.#opening(context, render);
    const keep = this.#options.history ?? 0;
    for (const turn of keep > 0 ? context.history.slice(-keep) : []) {
      pushUser(messages, turn.user);
      messages.push({ role: "assistant", content: turn.reply });
    }
    const reminder = strategy?.strategy ? `${strategyReminder(strategy.strategy)}\n\n` : "";
    pushUser(messages, reminder + this.#turnText(context, render, view));
    for (const attempt of deciding.attempts) {
      messages.push(
        { role: "assistant", content: attempt.response },
        {
          role: "user",
          content: `That answer could not be used: ${attempt.error}\n${render.instructions(context.match)}`,
        },
      );
    }
    return messages;
  }

  /** What opens every request of a seat: the renderer's (or your own system prompt and the answer format). */
  #opening(context: SeatContext, render: Renderer): ChatMessage[] {
    const { match } = context;
    const own = this.#options.systemPrompt?.(match.game, match.rules);
    if (own !== undefined) return [{ role: "system", content: `${own}\n\n${render.instructions(match)}` }];
    const messages: ChatMessage[] = [];
    const system = render.system(match);
    if (system !== undefined) messages.push({ role: "system", content: system });
    const opening = render.opening(match);
    if (opening !== undefined) messages.push({ role: "user", content: opening });
    return messages;
  }

  /** The turn's user message; the server's own words where a renderer has nothing to say but has no opening either. */
  #turnText(context: SeatContext, render: Renderer, view: TurnView): string {
    const text = render.turn(view, context.match);
    return text || this.#options.systemPrompt === undefined && render.opening(context.match) ? text : userText(view);
  }

  #complete(messages: readonly ChatMessage[], signal: AbortSignal): Promise<Completion> {
    const timeoutMs = this.#options.requestTimeoutMs ?? 120_000;
    return this.#gate.run(
      () =>
        withBackoff(
          () => this.client.complete(messages, AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])),
          this.#options.backoff ?? {},
          signal,
          (error, delay, attempt) =>
            this.#options.log?.(`${error.message}; try ${attempt + 1} in ${Math.round(delay)} ms`),
        ),
      signal,
    ).catch((error) => {
      // An abort while waiting for a place in the gate is an abort of the request.
      if (error instanceof ChatError) throw error;
      throw new ChatError("aborted", this.client.endpoint, "the request was stopped before it was sent");
    });
  }

  /**
   * Asks for the strategy sentence, again with the reason while a reply holds none (up to `retries` times).
   * The first decision waits for it, so it is bounded by the request timeout as any request is.
   */
  async #writeStrategy(context: SeatContext): Promise<StrategyRecord> {
    const { start } = context;
    const options = this.#options.strategy || {};
    const who = identity(start.observation);
    const messages = this.#opening(context, renderer(this.#options.renderer ?? "ludus", start.game));
    pushUser(messages, strategyPrompt(who.name, options.advice));
    const base = { match: start.match, seat: start.seat, game: start.game, ...who };
    const kept = who.name === undefined ? undefined : options.keep?.[who.name];
    let record: StrategyRecord = kept
      ? { ...base, strategy: kept, response: "", usage: null }
      : { ...base, strategy: "", response: "", usage: null, error: "not asked" };
    for (let attempt = 0; !kept && attempt <= (this.#options.retries ?? 2); attempt++) {
      let completion: Completion;
      try {
        completion = await this.#complete(messages, this.#stop.signal);
      } catch (error) {
        if (!(error instanceof ChatError)) throw error;
        record = { ...base, strategy: "", response: "", usage: null, error: error.message };
        break;
      }
      const strategy = parseStrategy(completion.text);
      record = { ...base, strategy: strategy ?? "", response: completion.text, usage: completion.usage };
      if (strategy) break;
      record = { ...record, error: STRATEGY_MISSING };
      messages.push(
        { role: "assistant", content: completion.text },
        { role: "user", content: `That reply could not be used: ${STRATEGY_MISSING}. ${strategyPrompt(undefined)}` },
      );
    }
    this.strategies.push(record);
    options.onStrategy?.(record);
    return record;
  }

  /** The act's replay fields, cut to fit the connection's frame limit. */
  #meta(
    deciding: Deciding,
    model: string,
    strategy?: StrategyRecord,
    fallback?: string,
  ): Record<string, unknown> {
    const final = fallback ? undefined : deciding.attempts.at(-1);
    return fitMeta({
      model,
      endpoint: this.client.endpoint,
      renderer: this.#options.renderer ?? "ludus",
      prompt: deciding.prompt,
      response: final?.response ?? null,
      ...(final?.reasoning ? { reasoning: final.reasoning } : {}),
      ...(final?.logprobs ? { logprobs: final.logprobs } : {}),
      usage: final?.usage ?? null,
      usage_total: sumUsage(deciding.attempts),
      latency_ms: round(deciding.attempts.reduce((sum, a) => sum + a.latency_ms, 0)),
      attempts: deciding.attempts.map(({ logprobs: _, ...attempt }) => attempt),
      ...(fallback ? { fallback } : {}),
      ...(strategy
        ? { strategy: strategy.strategy, ...(strategy.error ? { strategy_error: strategy.error } : {}) }
        : {}),
    }, this.#frameBytes);
  }
}

const where = (match: string, seat: number, seq: number) => `match ${match} seat ${seat} decision ${seq}`;

/**
 * Why a reply cannot be played whatever it says: cut off at the token limit (its answer may be cut too: a
 * message would reach the other player half-written), or refused by the model or the endpoint's filter.
 */
function unusable(completion: Completion): string | undefined {
  if (completion.refusal !== undefined) {
    return `you declined to answer ("${
      clipText(completion.refusal)
    }"); this is a game: choose one of the legal actions.`;
  }
  if (completion.finishReason === "content_filter") {
    return "the endpoint's content filter stopped your reply; choose one of the legal actions.";
  }
  if (completion.finishReason === "length") {
    return "your reply was cut off at the token limit, so its answer may be cut too; answer more briefly.";
  }
  return undefined;
}

const clipText = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text);

/** The turn's text with its legal options spelled out. */
function userText(view: TurnView): string {
  return `${view.text}\n\nLegal now: ${view.legalText}`;
}

/**
 * Adds a user message, joined to a user message just before it (a setup's opening and the first turn are one
 * message in its chat); an empty one adds nothing there.
 */
function pushUser(messages: ChatMessage[], content: string): void {
  const last = messages.at(-1);
  if (last?.role === "user") {
    if (content) messages[messages.length - 1] = { role: "user", content: `${last.content}\n${content}` };
    return;
  }
  messages.push({ role: "user", content });
}

/** A past round as the games' texts list them (the dilemma, Trust-and-Split): `- Round 7: …`. */
const PAST_ROUND = /^- Round (\d+):/;

/**
 * The turn text with only the last `keep` of its listed past rounds; the ones left out are named in one line in
 * their place, so the model knows the totals count more than it sees.
 */
export function windowRounds(text: string, keep: number): string {
  const lines = text.split("\n");
  const rounds = lines.flatMap((line, i) => (PAST_ROUND.test(line) ? [i] : []));
  if (rounds.length <= keep) return text;
  const cut = rounds.slice(0, rounds.length - keep);
  const first = PAST_ROUND.exec(lines[cut[0]])![1];
  const last = PAST_ROUND.exec(lines[cut.at(-1)!])![1];
  const omitted = `- Rounds ${first}-${last}: not shown (only the last ${keep} are); the totals count them.`;
  const dropped = new Set(cut.slice(1));
  return lines.flatMap((line, i) => (i === cut[0] ? [omitted] : dropped.has(i) ? [] : [line])).join("\n");
}

function sumUsage(attempts: readonly AttemptMeta[]): Usage | null {
  const counted = attempts.filter((a) => a.usage);
  if (counted.length === 0) return null;
  const sum = (key: "prompt_tokens" | "completion_tokens" | "total_tokens") =>
    counted.reduce((total, a) => total + a.usage![key], 0);
  return {
    prompt_tokens: sum("prompt_tokens"),
    completion_tokens: sum("completion_tokens"),
    total_tokens: sum("total_tokens"),
  };
}

function stopReason(signal: AbortSignal): string {
  return signal.reason instanceof Error ? signal.reason.message : "the agent was stopped";
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;
