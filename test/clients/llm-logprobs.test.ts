import { describe, expect, it } from "vitest";
import type { TokenLogprob } from "../../clients/llm/chat.ts";
import { fitMeta } from "../../clients/llm/meta.ts";

/** An act's replay fields with the answer's token log-probabilities, when they no longer fit the frame. */
describe("token log-probabilities in a frame's replay fields", () => {
  const logprobs = (tokens: number, top: number): TokenLogprob[] =>
    Array.from({ length: tokens }, (_, i) => ({
      token: `t${i}`,
      logprob: -i / 100,
      top_logprobs: Array.from({ length: top }, (_, k) => ({ token: `t${i}~${k}`, logprob: -i / 100 - k })),
    }));
  const meta = (chat: number, tokens: number, top: number) => ({
    prompt: [
      { role: "system", content: "rules" },
      { role: "user", content: "old turn ".repeat(chat) },
      { role: "user", content: "this turn" },
    ],
    response: "Answer: bet",
    logprobs: logprobs(tokens, top),
    attempts: [{ response: "Answer: bet" }],
  });
  const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;
  const frame = 64 * 1024;

  it("keeps them whole when they fit", () => {
    expect(fitMeta(meta(10, 50, 5), frame)).toEqual(meta(10, 50, 5));
  });

  it("drops the alternatives first, keeping every token's own log-probability and the chat", () => {
    const fitted = fitMeta(meta(10, 400, 20), frame) as ReturnType<typeof meta> & { truncated: boolean };
    expect(fitted.truncated).toBe(true);
    expect(bytes(fitted)).toBeLessThanOrEqual(frame - 4096);
    expect(fitted.logprobs).toEqual(logprobs(400, 0).map(({ token, logprob }) => ({ token, logprob })));
    expect(fitted.prompt).toEqual(meta(10, 400, 20).prompt);
  });

  it("drops them whole when even the tokens alone do not fit: after the oldest chat turns, before any text is cut", () => {
    const fitted = fitMeta(meta(10, 4000, 2), frame) as Partial<ReturnType<typeof meta>> & { truncated: boolean };
    expect(fitted.truncated).toBe(true);
    expect(fitted.logprobs).toBeUndefined();
    const [system, , last] = meta(10, 0, 0).prompt;
    expect(fitted.prompt).toEqual([system, last]);
    expect(fitted.response).toBe("Answer: bet");
  });
});
