import { Buffer } from "node:buffer";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local HTTP server that speaks OpenAI's chat-completions wire format (`POST /v1/chat/completions`,
 * JSON or server-sent events with `stream: true`, `usage`, error bodies, `Retry-After`) and answers
 * from a script, so the LLM agent is tested against the real protocol without a model.
 */

export interface ChatRequestBody {
  readonly model: string;
  readonly messages: readonly { readonly role: string; readonly content: string }[];
  readonly stream?: boolean;
  readonly stream_options?: { readonly include_usage?: boolean };
  readonly [field: string]: unknown;
}

/** What the script answers one request with. */
export interface ScriptedReply {
  /** The reply's text (`choices[0].message.content`). */
  readonly content?: string;
  /** An error status instead of an answer (429, 500, ...), with `Retry-After` for 429 when `retryAfterS` is set. */
  readonly status?: number;
  readonly retryAfterS?: number;
  /** Wait this long before answering (a slow model). */
  readonly delayMs?: number;
  readonly finishReason?: string;
  /** Answer 200 with a body that has no choices. */
  readonly noChoices?: boolean;
  /** A reasoning model's separate thinking. */
  readonly reasoning?: string;
  /** Answer 200 with exactly this body and content type (a broken endpoint). */
  readonly raw?: { readonly contentType: string; readonly body: string };
  /**
   * Answer 200 with only the first `cutAt` bytes of the answer, its Content-Length counting the whole, then close the
   * connection (a proxy or server dying mid-reply).
   */
  readonly cutAt?: number;
}

export type Script = (request: ChatRequestBody, index: number) => ScriptedReply | Promise<ScriptedReply>;

export interface FakeOpenAI {
  /** The API root, e.g. http://127.0.0.1:PORT/v1. */
  readonly baseUrl: string;
  /** Every chat request received, in order (including refused ones). */
  readonly requests: ChatRequestBody[];
  /** Requests answered at the same moment, at most. */
  readonly maxConcurrent: number;
  close(): Promise<void>;
}

export interface FakeOpenAIOptions {
  readonly script: Script;
  /** When set, requests must carry `Authorization: Bearer <apiKey>`. */
  readonly apiKey?: string;
  /** Models that exist (default: any). */
  readonly models?: readonly string[];
}

/** Whitespace-separated words: a stand-in tokenizer that gives stable token counts. */
export const countTokens = (text: string): number => text.split(/\s+/).filter(Boolean).length;

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
  cutAt?: number,
): void {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  res.writeHead(status, { "content-type": "application/json", "content-length": String(bytes.length), ...headers });
  if (cutAt === undefined) return void res.end(bytes);
  // The bytes written, then the connection closed: the client reads a body shorter than announced.
  res.write(bytes.subarray(0, cutAt), () => res.socket?.destroy());
}

const error = (message: string, type: string, code: string | null) => ({ error: { message, type, param: null, code } });

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of req) chunks.push(chunk as Uint8Array);
  return new TextDecoder().decode(Buffer.concat(chunks));
}

export async function startFakeOpenAI(options: FakeOpenAIOptions): Promise<FakeOpenAI> {
  const requests: ChatRequestBody[] = [];
  let inFlight = 0;
  let maxConcurrent = 0;
  let created = 1_800_000_000;
  const server = createServer(async (req, res) => {
    if (req.method === "GET" && req.url === "/v1/models") {
      return send(res, 200, { object: "list", data: (options.models ?? []).map((id) => ({ id, object: "model" })) });
    }
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      return send(res, 404, error(`Unknown request URL: ${req.method} ${req.url}`, "invalid_request_error", null));
    }
    let body: ChatRequestBody;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return send(res, 400, error("We could not parse the JSON body of your request.", "invalid_request_error", null));
    }
    const index = requests.push(body) - 1;
    if (options.apiKey && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return send(res, 401, error("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"));
    }
    if (options.models && !options.models.includes(body.model)) {
      return send(
        res,
        404,
        error(
          `The model \`${body.model}\` does not exist or you do not have access to it.`,
          "invalid_request_error",
          "model_not_found",
        ),
      );
    }
    inFlight++;
    maxConcurrent = Math.max(maxConcurrent, inFlight);
    try {
      const reply = await options.script(body, index);
      if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
      if (res.destroyed) return;
      if (reply.raw) {
        res.writeHead(200, { "content-type": reply.raw.contentType });
        return res.end(reply.raw.body);
      }
      if (reply.status) {
        const headers: Record<string, string> = reply.retryAfterS !== undefined
          ? { "retry-after": String(reply.retryAfterS) }
          : {};
        const kind = reply.status === 429 ? "requests" : "server_error";
        return send(res, reply.status, error(`Scripted failure ${reply.status}.`, kind, null), headers);
      }
      const id = `chatcmpl-${index}`;
      const content = reply.content ?? "";
      const usage = {
        prompt_tokens: body.messages.reduce((n, m) => n + countTokens(m.content), 0),
        completion_tokens: countTokens(content),
        total_tokens: 0,
      };
      usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
      const base = { id, created: created++, model: body.model, system_fingerprint: "fp_ludus_test" };
      if (reply.noChoices) return send(res, 200, { ...base, object: "chat.completion", choices: [], usage });
      const finish = reply.finishReason ?? "stop";
      // The answer's tokens (pieces of up to 7 characters, as streamed), scored when the request asks.
      const pieces = content.match(/[\s\S]{1,7}/g) ?? [];
      const scored = (tokens: string[], from: number) =>
        body.logprobs === true
          ? { content: tokens.map((token, i) => logprobOf(token, from + i, body.top_logprobs)) }
          : null;
      if (!body.stream) {
        return send(
          res,
          200,
          {
            ...base,
            object: "chat.completion",
            choices: [{
              index: 0,
              message: {
                role: "assistant",
                content,
                ...(reply.reasoning ? { reasoning_content: reply.reasoning } : {}),
              },
              logprobs: scored(pieces, 0),
              finish_reason: finish,
            }],
            usage,
          },
          {},
          reply.cutAt,
        );
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const event = (chunk: unknown) => res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      const chunk = (delta: unknown, finishReason: string | null, logprobs: unknown = null) => ({
        ...base,
        object: "chat.completion.chunk",
        choices: [{ index: 0, delta, logprobs, finish_reason: finishReason }],
      });
      event(chunk({ role: "assistant", content: "" }, null));
      if (reply.reasoning) event(chunk({ reasoning_content: reply.reasoning }, null));
      pieces.forEach((piece, i) => event(chunk({ content: piece }, null, scored([piece], i))));
      event(chunk({}, finish));
      if (body.stream_options?.include_usage) event({ ...base, object: "chat.completion.chunk", choices: [], usage });
      res.end("data: [DONE]\n\n");
    } finally {
      inFlight--;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    get maxConcurrent() {
      return maxConcurrent;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Token `index`'s log-probability as the fake scores it, with `top` alternatives (OpenAI's shape, `bytes` included):
 * a fixed function of the position, so tests can check every value.
 */
export function logprobOf(token: string, index: number, top: unknown) {
  const bytes = (text: string) => [...new TextEncoder().encode(text)];
  const logprob = -((index % 5) + 1) / 8;
  const alternatives = Array.from({ length: typeof top === "number" ? top : 0 }, (_, k) => {
    const alternative = k === 0 ? token : `${token}~${k}`;
    return { token: alternative, logprob: logprob - k, bytes: bytes(alternative) };
  });
  return { token, logprob, bytes: bytes(token), top_logprobs: alternatives };
}

/** The last user message of a request: the turn the agent is asking about. */
export function lastUser(request: ChatRequestBody): string {
  return [...request.messages].reverse().find((m) => m.role === "user")?.content ?? "";
}

/**
 * A legal answer read from the turn's `Legal now:` line, as a model following the `ludus` format would
 * write it: `pick` chooses among the options. Trades are never offered (a chat or pass is always listed).
 */
export function legalAnswer(request: ChatRequestBody, pick: (n: number) => number): string {
  const line = /Legal now: (.*)$/m.exec(lastUser(request))?.[1];
  if (!line) return "Answer: I do not know";
  const options = line.split(" | ").filter((o) => !o.startsWith("offer "));
  const option = options[pick(options.length)];
  const write = option
    .replace(/<text[^>]*>/, "hello from the model")
    .replace(
      /<(?:\w+: )?(?:integer|number) in \[(\d+(?:\.\d+)?), (\d+(?:\.\d+)?)\]>/g,
      (_, min, max) => String(Math.floor((Number(min) + Number(max)) / 2)),
    );
  return `I weigh my options briefly.\nAnswer: ${write}`;
}
