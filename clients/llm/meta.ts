/**
 * An act's replay fields must fit in one frame (`welcome.limits.frameBytes`). When they do not, the
 * least useful text goes first: earlier attempts' replies, then the alternatives of the answer's token
 * log-probabilities (`top_logprobs`), then the oldest chat turns between the system prompt and the last
 * message, then the log-probabilities themselves (whole or not at all: a prefix would not line up with the
 * answer once cut), then what is left of long texts. `truncated` says something was cut.
 */

import type { TokenLogprob } from "./chat.ts";

/** Room left in the frame for the act's other fields (ids, action, JSON syntax). */
const FRAME_RESERVE = 4096;
const CLIP = 2000;

interface Message {
  readonly role: string;
  readonly content: string;
}

const size = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}… [cut]` : text);

export function fitMeta(meta: Record<string, unknown>, frameBytes: number): Record<string, unknown> {
  const budget = frameBytes - FRAME_RESERVE;
  if (size(meta) <= budget) return meta;
  const attempts = (meta.attempts as { response: string; reasoning?: string }[]).map((a, i, all) =>
    i === all.length - 1 ? a : { ...a, response: clip(a.response, CLIP), reasoning: undefined }
  );
  let fitted: Record<string, unknown> = { ...meta, attempts, truncated: true };
  const logprobs = meta.logprobs as readonly TokenLogprob[] | undefined;
  if (logprobs && size(fitted) > budget) {
    fitted = { ...fitted, logprobs: logprobs.map(({ token, logprob }) => ({ token, logprob })) };
  }
  const prompt = [...(meta.prompt as Message[])];
  while (size(fitted) > budget && prompt.length > 2) {
    prompt.splice(1, 1);
    fitted = { ...fitted, prompt };
  }
  if (logprobs && size(fitted) > budget) {
    const { logprobs: _, ...rest } = fitted;
    fitted = rest;
  }
  for (let max = 16_000; size(fitted) > budget && max >= 250; max = Math.floor(max / 2)) {
    fitted = {
      ...fitted,
      prompt: prompt.map((m) => ({ ...m, content: clip(m.content, max) })),
      response: typeof meta.response === "string" ? clip(meta.response, max) : meta.response,
      reasoning: typeof meta.reasoning === "string" ? clip(meta.reasoning, max) : undefined,
      attempts: attempts.map((a) => ({ ...a, response: clip(a.response, max), reasoning: undefined })),
    };
  }
  return fitted;
}
