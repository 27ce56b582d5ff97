/**
 * A client for any OpenAI-compatible chat-completions endpoint (vLLM, Ollama, llama.cpp's server, hosted
 * APIs): `POST {baseUrl}/chat/completions`, plain JSON or server-sent events when `stream` is on. Every
 * failure is a ChatError that names the endpoint, says what went wrong in words, and says whether
 * trying again can help.
 */

export interface ChatMessage {
  readonly role: "system" | "user" | "assistant";
  readonly content: string;
}

/**
 * One token of the answer with its log-probability, as an endpoint returns it when the request asks with
 * `logprobs: true` (and `top_logprobs: k` for the k likeliest alternatives), e.g. in `extraBody`.
 */
export interface TokenLogprob {
  readonly token: string;
  readonly logprob: number;
  readonly top_logprobs?: readonly { readonly token: string; readonly logprob: number }[];
}

/** Token counts as the endpoint reported them (`usage`), with reasoning tokens when it splits them out. */
export interface Usage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
  readonly reasoning_tokens?: number;
}

export interface ChatOptions {
  /** The API root, e.g. `http://127.0.0.1:8000/v1` (vLLM) or `http://127.0.0.1:11434/v1` (Ollama). */
  readonly baseUrl: string;
  readonly model: string;
  /** Sent as `Authorization: Bearer <key>` when given. */
  readonly apiKey?: string;
  readonly temperature?: number;
  readonly maxTokens?: number;
  readonly stop?: readonly string[];
  /** Sampling seed, for endpoints that support one. */
  readonly seed?: number;
  /** The reasoning budget of reasoning models (`reasoning_effort`). */
  readonly reasoningEffort?: "low" | "medium" | "high";
  /** Read the answer as server-sent events (`stream: true`, usage asked for in the last event). */
  readonly stream?: boolean;
  /**
   * Further body fields for endpoint-specific settings (`top_p`, `chat_template_kwargs`, ...); `logprobs: true`
   * (with `top_logprobs`) asks for the answer's per-token log-probabilities, which the completion then carries.
   */
  readonly extraBody?: Readonly<Record<string, unknown>>;
}

export interface Completion {
  /** The answer's text (`choices[0].message.content`, or the streamed deltas joined). */
  readonly text: string;
  /** A reasoning model's separate thinking (`reasoning_content` or `reasoning`), when the endpoint sends it. */
  readonly reasoning?: string;
  /** The model's refusal to answer (`message.refusal`), when the endpoint says so apart from the text. */
  readonly refusal?: string;
  readonly finishReason: string | null;
  readonly usage: Usage | null;
  /** The answer's tokens with their log-probabilities, when the request asked and the endpoint returned them. */
  readonly logprobs?: readonly TokenLogprob[];
  /** The model that answered, as the endpoint names it. */
  readonly model: string;
  readonly latencyMs: number;
}

export type ChatFailure =
  | "unreachable"
  | "timeout"
  | "unauthorized"
  | "unknown_model"
  | "rate_limited"
  | "server_error"
  | "bad_request"
  | "bad_response"
  /** A 200 whose body broke off or is not whole JSON: a server or proxy failing mid-reply, as a 5xx is. */
  | "incomplete"
  | "aborted";

/** Failures worth another try after a wait; the others will fail the same way again. */
const RETRYABLE: ReadonlySet<ChatFailure> = new Set([
  "unreachable",
  "timeout",
  "rate_limited",
  "server_error",
  "incomplete",
]);

export class ChatError extends Error {
  readonly retryable: boolean;

  constructor(
    readonly failure: ChatFailure,
    /** The URL the request went to. */
    readonly endpoint: string,
    cause: string,
    readonly status?: number,
    /** How long the endpoint asked us to wait (`Retry-After`), when it did. */
    readonly retryAfterMs?: number,
  ) {
    super(`${endpoint}: ${cause}`);
    this.name = "ChatError";
    this.retryable = RETRYABLE.has(failure);
  }
}

export class ChatClient {
  readonly endpoint: string;

  constructor(readonly options: ChatOptions) {
    this.endpoint = `${options.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  }

  /** One request: the completion, or a ChatError. `signal` aborts it (a deadline, a stop). */
  async complete(messages: readonly ChatMessage[], signal?: AbortSignal): Promise<Completion> {
    const o = this.options;
    const body = {
      model: o.model,
      messages,
      ...(o.temperature !== undefined ? { temperature: o.temperature } : {}),
      ...(o.maxTokens !== undefined ? { max_tokens: o.maxTokens } : {}),
      ...(o.stop?.length ? { stop: o.stop } : {}),
      ...(o.seed !== undefined ? { seed: o.seed } : {}),
      ...(o.reasoningEffort ? { reasoning_effort: o.reasoningEffort } : {}),
      ...(o.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      ...o.extraBody,
    };
    const started = performance.now();
    let response: Response;
    try {
      response = await fetch(this.endpoint, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}),
        },
        body: JSON.stringify(body),
        signal,
      });
    } catch (error) {
      throw this.#transportError(error, signal);
    }
    if (!response.ok) throw await this.#statusError(response);
    try {
      const read = o.stream ? await this.#readStream(response) : this.#readJson(await response.text());
      return { ...read, latencyMs: performance.now() - started };
    } catch (error) {
      if (error instanceof ChatError) throw error;
      if (signal?.aborted) throw this.#transportError(error, signal);
      // The endpoint answered, then the body broke off (a connection closed before its Content-Length).
      throw new ChatError(
        "incomplete",
        this.endpoint,
        `the answer broke off before its end (${(error as Error)?.message ?? String(error)})`,
      );
    }
  }

  #readJson(text: string): Omit<Completion, "latencyMs"> {
    let payload: Record<string, unknown>;
    try {
      payload = JSON.parse(text);
    } catch {
      throw new ChatError("incomplete", this.endpoint, `the answer is not whole JSON: ${clip(text)}`);
    }
    const choice = firstChoice(payload);
    if (!choice) throw this.#bad(`the answer has no choices: ${clip(text)}`);
    const message = (choice.message ?? {}) as Record<string, unknown>;
    if (typeof message.content !== "string" && message.content !== null && message.content !== undefined) {
      throw this.#bad("choices[0].message.content is not text");
    }
    return {
      text: (message.content as string | null) ?? "",
      ...reasoningOf(message),
      ...refusalOf(message),
      ...logprobsOf(choice),
      finishReason: typeof choice.finish_reason === "string" ? choice.finish_reason : null,
      usage: usageOf(payload.usage),
      model: typeof payload.model === "string" ? payload.model : this.options.model,
    };
  }

  /** Reads `data:` events until `[DONE]`: content deltas, the finish reason, and usage from the last chunk. */
  async #readStream(response: Response): Promise<Omit<Completion, "latencyMs">> {
    if (!response.body) throw this.#bad("the streamed answer has no body");
    let text = "";
    let reasoning = "";
    let refusal = "";
    let finishReason: string | null = null;
    let usage: Usage | null = null;
    const logprobs: TokenLogprob[] = [];
    let model = this.options.model;
    let choices = 0;
    let buffer = "";
    const decoder = new TextDecoder();
    const reader = response.body.getReader();
    const take = (line: string): boolean => {
      if (!line.startsWith("data:")) return false; // comments, `event:` and `id:` lines
      const data = line.slice(5).trim();
      if (data === "[DONE]") return true;
      let chunk: Record<string, unknown>;
      try {
        chunk = JSON.parse(data);
      } catch {
        throw new ChatError("incomplete", this.endpoint, `a streamed event is not whole JSON: ${clip(data)}`);
      }
      if (chunk.error) throw this.#bad(`the stream reported an error: ${errorText(chunk)}`);
      if (typeof chunk.model === "string") model = chunk.model;
      usage = usageOf(chunk.usage) ?? usage;
      const choice = firstChoice(chunk);
      if (!choice) return false;
      choices++;
      const delta = (choice.delta ?? {}) as Record<string, unknown>;
      if (typeof delta.content === "string") text += delta.content;
      const thought = reasoningOf(delta).reasoning;
      if (thought) reasoning += thought;
      refusal += refusalOf(delta).refusal ?? "";
      logprobs.push(...(logprobsOf(choice).logprobs ?? []));
      if (typeof choice.finish_reason === "string") finishReason = choice.finish_reason;
      return false;
    };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline).replace(/\r$/, "");
        buffer = buffer.slice(newline + 1);
        if (take(line)) {
          await reader.cancel();
          return this.#streamed(choices, { text, reasoning, refusal, logprobs, finishReason, usage, model });
        }
      }
    }
    if (buffer.trim()) take(buffer.trim());
    return this.#streamed(choices, { text, reasoning, refusal, logprobs, finishReason, usage, model });
  }

  #streamed(
    choices: number,
    read: Omit<Completion, "latencyMs" | "reasoning" | "refusal" | "logprobs"> & {
      reasoning: string;
      refusal: string;
      logprobs: readonly TokenLogprob[];
    },
  ): Omit<Completion, "latencyMs"> {
    if (choices === 0) throw this.#bad("the streamed answer has no choices");
    const { reasoning, refusal, logprobs, ...rest } = read;
    return {
      ...rest,
      ...(reasoning ? { reasoning } : {}),
      ...(refusal ? { refusal } : {}),
      ...(logprobs.length ? { logprobs } : {}),
    };
  }

  async #statusError(response: Response): Promise<ChatError> {
    const status = response.status;
    const body = await response.text().catch(() => "");
    let detail = clip(body);
    try {
      detail = errorText(JSON.parse(body)) || detail;
    } catch {
      // not JSON: keep the text
    }
    const said = detail ? `: ${detail}` : "";
    if (status === 401 || status === 403) {
      return new ChatError("unauthorized", this.endpoint, `the API key was refused (HTTP ${status})${said}`, status);
    }
    if (status === 404) {
      return new ChatError(
        "unknown_model",
        this.endpoint,
        `no model \`${this.options.model}\` there, or no chat-completions API at this URL (HTTP 404)${said}`,
        status,
      );
    }
    if (status === 429) {
      return new ChatError(
        "rate_limited",
        this.endpoint,
        `rate limited (HTTP 429)${said}`,
        status,
        retryAfter(response.headers),
      );
    }
    if (status >= 500) {
      return new ChatError(
        "server_error",
        this.endpoint,
        `server error (HTTP ${status})${said}`,
        status,
        retryAfter(response.headers),
      );
    }
    return new ChatError("bad_request", this.endpoint, `the request was refused (HTTP ${status})${said}`, status);
  }

  #transportError(error: unknown, signal?: AbortSignal): ChatError {
    if (signal?.aborted) {
      const reason = signal.reason;
      const timedOut = reason instanceof DOMException && reason.name === "TimeoutError";
      return new ChatError(
        timedOut ? "timeout" : "aborted",
        this.endpoint,
        timedOut
          ? "no answer in time"
          : `the request was stopped${reason instanceof Error ? ` (${reason.message})` : ""}`,
      );
    }
    const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
    // Deno's message repeats the URL before the cause: keep only the cause.
    const message = (cause?.message ?? (error as Error)?.message ?? "").replace(
      /^error sending request for url \([^)]*\): /,
      "",
    );
    const why = [cause?.code, message].filter(Boolean).join(" ");
    return new ChatError("unreachable", this.endpoint, `cannot reach the endpoint (${why || String(error)})`);
  }

  #bad(cause: string): ChatError {
    return new ChatError("bad_response", this.endpoint, cause);
  }
}

function firstChoice(payload: Record<string, unknown>): Record<string, unknown> | undefined {
  const choices = payload.choices;
  if (!Array.isArray(choices) || choices.length === 0) return undefined;
  const choice = choices[0];
  return typeof choice === "object" && choice !== null ? choice as Record<string, unknown> : undefined;
}

/** vLLM and DeepSeek say `reasoning_content`; OpenRouter and others `reasoning`. */
function reasoningOf(message: Record<string, unknown>): { reasoning?: string } {
  const value = message.reasoning_content ?? message.reasoning;
  return typeof value === "string" && value ? { reasoning: value } : {};
}

/** OpenAI's structured refusal: the model declined, and `content` is empty or not the answer. */
function refusalOf(message: Record<string, unknown>): { refusal?: string } {
  return typeof message.refusal === "string" && message.refusal ? { refusal: message.refusal } : {};
}

/**
 * OpenAI's `choices[0].logprobs.content` (the whole answer, or a streamed delta's tokens), kept as token, logprob
 * and the alternatives' token and logprob (the `bytes` arrays are left out); nothing when the endpoint sent none.
 */
function logprobsOf(choice: Record<string, unknown>): { logprobs?: TokenLogprob[] } {
  const content = (choice.logprobs as { content?: unknown } | null | undefined)?.content;
  if (!Array.isArray(content) || content.length === 0) return {};
  const token = (raw: unknown) => {
    const t = raw as { token?: unknown; logprob?: unknown };
    return typeof t?.token === "string" && typeof t.logprob === "number"
      ? { token: t.token, logprob: t.logprob }
      : null;
  };
  const logprobs: TokenLogprob[] = [];
  for (const raw of content) {
    const entry = token(raw);
    if (!entry) return {}; // not OpenAI's shape: none rather than a list that no longer lines up with the text
    const top = (raw as { top_logprobs?: unknown }).top_logprobs;
    const alternatives = Array.isArray(top) ? top.map(token).filter((t) => t !== null) : [];
    logprobs.push(alternatives.length ? { ...entry, top_logprobs: alternatives } : entry);
  }
  return logprobs.length ? { logprobs } : {};
}

function usageOf(raw: unknown): Usage | null {
  if (typeof raw !== "object" || raw === null) return null;
  const u = raw as Record<string, unknown>;
  const n = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : 0);
  const details = u.completion_tokens_details as Record<string, unknown> | undefined;
  const reasoning = details?.reasoning_tokens;
  return {
    prompt_tokens: n(u.prompt_tokens),
    completion_tokens: n(u.completion_tokens),
    total_tokens: n(u.total_tokens) || n(u.prompt_tokens) + n(u.completion_tokens),
    ...(typeof reasoning === "number" ? { reasoning_tokens: reasoning } : {}),
  };
}

/** The `error.message` (OpenAI's shape) or `error` string of a failure body. */
function errorText(payload: unknown): string {
  const error = (payload as { error?: unknown })?.error;
  if (typeof error === "string") return error;
  const message = (error as { message?: unknown })?.message;
  return typeof message === "string" ? message : "";
}

/** `Retry-After` in seconds or as a date, or OpenAI's `retry-after-ms`. */
function retryAfter(headers: Headers): number | undefined {
  const ms = Number(headers.get("retry-after-ms"));
  if (ms > 0) return ms;
  const value = headers.get("retry-after");
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function clip(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
