import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { games } from "../../games/registry.ts";
import { type LlmAgentOptions, type LlmRunOptions, runLlm } from "../../clients/llm/index.ts";
import { Bot, randomAction } from "../../clients/sdk/index.ts";
import type { StepRecordRow } from "../../db/records.ts";
import { ludus } from "../support/cli.ts";
import {
  type ChatRequestBody,
  type FakeOpenAI,
  lastUser,
  legalAnswer,
  type Script,
  startFakeOpenAI,
} from "../support/openai-server.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const MODEL = "ludus-test-model";
const STRATEGY = "My strategy will be to give half of what I have to agents whose trace shows generosity.";

/** A model that follows the `ludus` format: a legal option from the turn's list, chosen in turn. */
const oracle: Script = (request, index) => {
  if (lastUser(request).includes("The game has not started yet")) {
    return { content: `I think generosity pays. ${STRATEGY}` };
  }
  return { content: legalAnswer(request, (n) => index % n) };
};

interface LlmMeta {
  model: string;
  endpoint: string;
  prompt: { role: string; content: string }[];
  response: string | null;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  latency_ms: number;
  attempts: { response: string; error?: string; usage: unknown; latency_ms: number }[];
  fallback?: string;
  strategy?: string;
}

const metaOf = (row: StepRecordRow) => row.meta as unknown as LlmMeta;

describe("the LLM agent against an OpenAI-compatible endpoint", () => {
  let server: TestServer;
  let token: string;
  const models: FakeOpenAI[] = [];
  const model = async (script: Script, extra: { apiKey?: string } = {}) => {
    const fake = await startFakeOpenAI({ script, models: [MODEL], ...extra });
    models.push(fake);
    return fake;
  };
  const run = (
    fake: FakeOpenAI,
    options: Partial<Omit<LlmRunOptions, "agent">> & {
      agent?: Partial<Omit<LlmAgentOptions, "chat">> & { chat?: Partial<LlmAgentOptions["chat"]> };
    } = {},
  ) =>
    runLlm({
      url: server.wsUrl,
      token,
      game: "kuhn-poker",
      opponent: "random",
      ...options,
      agent: {
        backoff: { baseDelayMs: 5, maxDelayMs: 50 },
        ...options.agent,
        chat: { baseUrl: fake.baseUrl, model: MODEL, ...options.agent?.chat },
      },
    });
  const llmSteps = async (match: string) => (await server.server.store.steps(match)).filter((row) => row.seat === 0);

  beforeAll(async () => {
    server = await startTestServer();
    token = await server.token("model-seat", "llm", 100);
  });
  afterEach(async () => {
    await Promise.all(models.splice(0).map((fake) => fake.close()));
  });
  afterAll(async () => {
    await server.close();
  });

  it("plays a full match of every registered game, and the replay keeps prompt, reply, usage and latency", async () => {
    for (const game of games) {
      const fake = await model(oracle);
      // A fixed seed: in hold'em a random opponent may fold before the LLM seat ever acts.
      const { ends, failure } = await run(fake, { game: game.id, seed: "every-game" });
      expect(failure, game.id).toBeUndefined();
      expect(ends, game.id).toHaveLength(1);
      const [end] = ends;
      expect(end.reason, game.id).toBe("completed");
      expect(end.statuses.every((s) => s === "DONE"), game.id).toBe(true);
      const record = await server.server.store.match(end.match);
      expect(record?.seats[0]).toMatchObject({ kind: "llm", name: "model-seat" });
      expect(record?.returns).toEqual(end.returns);
      const steps = await llmSteps(end.match);
      expect(steps.length, game.id).toBeGreaterThan(0);
      for (const row of steps) {
        expect(row.defaulted, `${game.id} step ${row.seq}`).toBeNull();
        expect(row.legal).toBe(true);
        const meta = metaOf(row);
        expect(meta.model).toBe(MODEL);
        expect(meta.endpoint).toBe(`${fake.baseUrl}/chat/completions`);
        expect(meta.prompt[0].role).toBe("system");
        expect(meta.prompt[0].content).toContain("The rules:");
        expect(meta.prompt.at(-1)?.content).toContain("Legal now:");
        expect(meta.response).toContain("Answer:");
        expect(meta.usage?.prompt_tokens).toBeGreaterThan(0);
        expect(meta.usage?.completion_tokens).toBeGreaterThan(0);
        expect(meta.latency_ms).toBeGreaterThan(0);
        expect(meta.attempts.length, `${game.id} step ${row.seq}`).toBeGreaterThanOrEqual(1);
      }
      // The request the endpoint saw for the last decision is the prompt the replay keeps.
      const last = steps.at(-1)!;
      expect(fake.requests.map((r) => JSON.stringify(r.messages))).toContain(JSON.stringify(metaOf(last).prompt));
    }
  });

  it("records who plays: the model, the endpoint and the sampling, never the key", async () => {
    const fake = await model(oracle);
    const { ends } = await run(fake, {
      agent: {
        chat: { apiKey: "secret", temperature: 0.7, maxTokens: 64, seed: 3, stop: ["\n\n"], extraBody: { top_p: 0.9 } },
      },
    });
    const record = await server.server.store.match(ends[0].match);
    expect(record?.seats[0]).toMatchObject({
      kind: "llm",
      model: MODEL,
      endpoint: fake.baseUrl,
      sampling: { temperature: 0.7, max_tokens: 64, seed: 3, stop: JSON.stringify(["\n\n"]), top_p: 0.9 },
    });
    expect(JSON.stringify(record?.seats)).not.toContain("secret");
  });

  it("writes the Donor Game strategy first, follows it in every prompt, and passes advice on", async () => {
    const fake = await model(oracle);
    const written: string[] = [];
    const advice = [{ strategy: "My strategy will be to give everything.", score: 31.5 }];
    const { ends, strategies } = await run(fake, {
      game: "donor-game",
      agent: { strategy: { advice, onStrategy: (r) => written.push(r.strategy) } },
    });
    expect(ends[0].reason).toBe("completed");
    expect(strategies).toHaveLength(1);
    expect(strategies[0]).toMatchObject({ strategy: STRATEGY, game: "donor-game", generation: 1 });
    expect(strategies[0].name).toMatch(/^agent-\d+$/);
    expect(written).toEqual([STRATEGY]);
    const strategyPrompt = lastUser(fake.requests[0]);
    expect(strategyPrompt).toContain(`Your name is ${strategies[0].name}`);
    expect(strategyPrompt).toContain("- My strategy will be to give everything. (final score 31.5)");
    for (const row of await llmSteps(ends[0].match)) {
      expect(metaOf(row).strategy).toBe(STRATEGY);
      expect(metaOf(row).prompt.at(-1)?.content).toContain(`the strategy you decided to follow: ${STRATEGY}`);
    }
  });

  it("asks for the strategy again while a reply holds no strategy sentence", async () => {
    const fake = await model((request, index) =>
      index === 0 ? { content: "I would give generously." } : oracle(request, index)
    );
    const { ends, strategies } = await run(fake, { game: "donor-game" });
    expect(ends[0].reason).toBe("completed");
    expect(strategies[0].strategy).toBe(STRATEGY);
    expect(strategies[0].error).toBeUndefined();
    const retry = fake.requests[1].messages;
    expect(retry.at(-2)).toEqual({ role: "assistant", content: "I would give generously." });
    expect(retry.at(-1)?.content).toMatch(
      /^That reply could not be used: it has no sentence starting "My strategy will be"/,
    );
  });

  it("re-asks with the reason after unreadable, cut-off and refused answers, then plays its fallback", async () => {
    // Decision 1: no Answer line, then cut off at the token limit, then an action the server refuses, then good.
    // Every later decision: never usable, so the fallback plays after 1 + retries attempts.
    const replies = [
      { content: "I am thinking about this\nat great length, and I never say what I do." },
      { content: `Let me consider every line of play ${"very ".repeat(300)}`, finishReason: "length" },
      { content: "Answer: fly to the moon" },
      { content: "Answer: [bet]" },
    ];
    const fake = await model((_request, index) => replies[index] ?? { content: "Hmm.\nStill thinking." });
    const { ends } = await run(fake, { agent: { retries: 3 } });
    const [first, ...rest] = await llmSteps(ends[0].match);
    const meta = metaOf(first);
    expect(first.action).toEqual({ type: "bet" });
    expect(meta.attempts.map((a) => a.response)).toEqual(replies.map((r) => r.content));
    expect(meta.attempts[0].error).toContain("no `Answer:` line");
    expect(meta.attempts[1].error).toContain("cut off at the token limit");
    expect(meta.attempts[2].error).toMatch(/^the server refused it: could not read an action in "fly to the moon"/);
    expect(meta.attempts[3].error).toBeUndefined();
    // The server kept its own record of the refused action, with the meta sent beside it.
    expect(first.attempts).toHaveLength(1);
    expect(first.attempts[0]).toMatchObject({ input: "fly to the moon", code: "illegal_action" });
    // The last prompt carries each failed try and why, so the model can mend its answer.
    const finalPrompt = meta.prompt.map((m) => m.content).join("\n");
    expect(finalPrompt).toContain("That answer could not be used: the server refused it");
    expect(meta.prompt.filter((m) => m.role === "assistant")).toHaveLength(3);
    for (const row of rest) {
      expect(metaOf(row).fallback).toBe("no usable answer in 4 attempt(s)");
      expect(metaOf(row).attempts).toHaveLength(4);
      expect(metaOf(row).response).toBeNull();
      expect(row.legal).toBe(true); // the fallback is the seat's first legal action, chosen by the agent
      expect(row.defaulted).toBeNull();
    }
  });

  it("keeps every request sent and every reply when the server refuses the last try and the fallback plays", async () => {
    // Every reply is an action the server refuses: after 1 + retries of them the agent plays its fallback.
    const fake = await model(() => ({ content: "I have thought it over.\nAnswer: fly to the moon" }));
    const { ends } = await run(fake, { agent: { retries: 1 } });
    const [first] = await llmSteps(ends[0].match);
    const meta = metaOf(first);
    expect(meta.fallback).toBe("no usable answer in 2 attempt(s)");
    expect(first.action).toEqual({ type: "check" }); // the seat's first legal action
    expect(first.attempts.map((a) => a.input)).toEqual(["fly to the moon", "fly to the moon"]);
    const sent = fake.requests.slice(0, 2).map((r) => r.messages);
    // The last request sent is the prompt kept; the first is where it starts; each reply is in the attempts.
    expect(meta.prompt).toEqual(sent[1]);
    expect(meta.prompt.slice(0, sent[0].length)).toEqual(sent[0]);
    expect(meta.prompt.at(-1)?.content).toMatch(/^That answer could not be used: the server refused it/);
    expect(meta.attempts.map((a) => a.response)).toEqual(
      Array(2).fill("I have thought it over.\nAnswer: fly to the moon"),
    );
    expect(meta.attempts.map((a) => a.error)).toEqual(
      Array(2).fill(expect.stringMatching(/^the server refused it: could not read an action in "fly to the moon"/)),
    );
    expect(meta.response).toBeNull();
  });

  it("waits out 429 and 500 answers with backoff, honouring Retry-After", async () => {
    const statuses = [{ status: 429, retryAfterS: 0.3 }, { status: 500 }, { status: 503 }];
    const fake = await model((request, index) => statuses[index] ?? { content: legalAnswer(request, () => 0) });
    const log: string[] = [];
    const started = performance.now();
    const { ends } = await run(fake, { agent: { log: (line) => log.push(line) } });
    expect(ends[0].reason).toBe("completed");
    expect(performance.now() - started).toBeGreaterThanOrEqual(300); // Retry-After: 0.3 s, then short backoffs
    expect(log[0]).toContain("rate limited (HTTP 429): Scripted failure 429.; try 2 in 300 ms");
    expect(log[1]).toContain("server error (HTTP 500)");
    const [first] = await llmSteps(ends[0].match);
    expect(metaOf(first).attempts).toHaveLength(1); // retried requests are not attempts: no answer came
  });

  it("caps requests in flight across concurrent matches", async () => {
    const fake = await model((request) => ({ content: legalAnswer(request, () => 1), delayMs: 40 }));
    const { ends } = await run(fake, { game: "ipd", matches: 6, concurrency: 6, agent: { maxInFlight: 2 } });
    expect(ends).toHaveLength(6);
    expect(fake.maxConcurrent).toBe(2);
    expect(new Set(ends.map((e) => e.match)).size).toBe(6);
  });

  it("stops cleanly: no new match once stopped, and `stop` withdraws the seats under way", async () => {
    const fake = await model((request) => ({ content: legalAnswer(request, () => 0), delayMs: 20 }));
    const stopping = new AbortController();
    const { ends } = await run(fake, {
      game: "ipd",
      matches: 50,
      concurrency: 2,
      signal: stopping.signal,
      onMatchEnd: () => stopping.abort(),
    });
    expect(ends.length).toBeGreaterThanOrEqual(1);
    expect(ends.length).toBeLessThanOrEqual(2); // the two under way finish; none starts after
    expect(ends.every((end) => end.reason === "completed" && end.statuses[0] === "DONE")).toBe(true);

    const slow = await model((request) => ({ content: legalAnswer(request, () => 0), delayMs: 10_000 }));
    const result = await run(slow, {
      game: "ipd",
      matches: 5,
      onAgent: (agent) => setTimeout(() => agent.stop("the agent was stopped by its operator"), 200),
    });
    expect(result.failure).toBeUndefined();
    expect(result.ends).toHaveLength(1);
    // Only a built-in is left once the seat is withdrawn: the server ends the match there.
    expect(result.ends[0]).toMatchObject({ reason: "aborted", statuses: ["ERROR", "DONE"] });
    const [first] = await llmSteps(result.ends[0].match);
    expect(first).toMatchObject({
      action: null,
      error: { code: "withdrawn", message: "the agent was stopped by its operator" },
    });
  });

  it("reads streamed answers (server-sent events) with usage from the last chunk", async () => {
    const fake = await model((request) => ({ content: legalAnswer(request, () => 0), reasoning: "short thought" }));
    const { ends } = await run(fake, {
      game: "leduc-poker",
      agent: { chat: { baseUrl: fake.baseUrl, model: MODEL, stream: true } },
    });
    expect(ends[0].reason).toBe("completed");
    expect(fake.requests.every((r) => r.stream === true)).toBe(true);
    for (const row of await llmSteps(ends[0].match)) {
      expect(metaOf(row).response).toMatch(/^I weigh my options briefly\.\nAnswer: \w+/);
      expect(metaOf(row).usage?.completion_tokens).toBeGreaterThan(0);
      expect((row.meta as { reasoning?: string }).reasoning).toBe("short thought");
    }
  });

  it("asks for and reads the TextArena, SPIRAL and AdAlign answer tokens", async () => {
    const cases: {
      game: string;
      renderer: "textarena" | "spiral" | "adalign";
      reply: (r: ChatRequestBody) => string;
    }[] = [
      {
        game: "kuhn-poker",
        renderer: "textarena",
        reply: (r) => `I hold a card; I will ${/Legal now: check/.test(lastUser(r)) ? "[check]" : "[call]"}.`,
      },
      {
        game: "tic-tac-toe",
        renderer: "spiral",
        reply: (r) => `Reasoning...\n\\boxed{${/Empty cells: \[(\d)\]/.exec(lastUser(r))![1]}}`,
      },
      { game: "ipd", renderer: "adalign", reply: () => "<B>" },
      {
        game: "trust-and-split",
        renderer: "adalign",
        reply: (r) =>
          /Send your message now in <<message_start>>/.test(lastUser(r))
            ? "<<message_start>> I have the upper hand. <<message_end>>"
            : "<<proposal_start>> 6 <<proposal_end>>",
      },
    ];
    for (const { game, renderer, reply } of cases) {
      const fake = await model((request) => ({ content: reply(request) }));
      const { ends } = await run(fake, { game, agent: { renderer } });
      expect(ends[0].reason, game).toBe("completed");
      const steps = await llmSteps(ends[0].match);
      for (const row of steps) expect(metaOf(row).attempts, `${renderer} ${game}`).toHaveLength(1);
      const system = fake.requests[0].messages[0].content;
      if (renderer === "spiral") expect(system).toContain("\\boxed{}");
      if (game === "ipd") {
        expect(system).toContain('"<A>"');
        expect(steps.every((row) => (row.action as { type: string }).type === "defect")).toBe(true);
      }
      if (game === "trust-and-split") {
        expect(steps.filter((row) => (row.action as { type: string }).type === "split").map((row) => row.action))
          .toContainEqual({ type: "split", take: [6] });
      }
    }
    await expect(run(await model(oracle), { game: "holdem", agent: { renderer: "spiral" } })).rejects.toThrow(
      "the spiral renderer knows the tokens of kuhn-poker, tic-tac-toe, simple-negotiation, not holdem",
    );
  });

  it("plays all twelve seats of a Donor Game itself: each decision asked as its own player, none defaulted", async () => {
    // Each seat writes a strategy of its own, so a prompt carrying another seat's strategy would show.
    const fake = await model((request, index) => {
      const name = /Your name is (agent-\d+)/.exec(lastUser(request))?.[1];
      return name ? { content: `My strategy will be ${name}'s own: give half.` } : oracle(request, index);
    });
    const { ends, strategies, failure } = await run(fake, { game: "donor-game", opponent: "self" });
    expect(failure).toBeUndefined();
    expect(ends.map((end) => end.seat)).toEqual(Array.from({ length: 12 }, (_, seat) => seat));
    expect(new Set(ends.map((end) => end.match)).size).toBe(1);
    expect(ends.every((end) => end.reason === "completed" && end.statuses.every((s) => s === "DONE"))).toBe(true);
    expect(strategies).toHaveLength(12);
    const bySeat = new Map(strategies.map((record) => [record.seat, record]));
    expect([...bySeat.keys()].sort((a, b) => a - b)).toEqual([...Array(12).keys()]);
    const steps = await server.server.store.steps(ends[0].match);
    expect(steps).toHaveLength(144);
    for (const row of steps) {
      const meta = metaOf(row);
      const { name } = bySeat.get(row.seat)!;
      expect(row.defaulted, `decision ${row.seq}`).toBeNull();
      expect(meta.fallback, `decision ${row.seq}`).toBeUndefined();
      expect(meta.attempts, `decision ${row.seq}`).toHaveLength(1);
      expect(meta.prompt[0].content).toContain(`You are player ${row.seat}. The rules:`);
      expect(meta.prompt.at(-1)?.content).toContain(`You are ${name}, of generation 1.`);
      expect(meta.strategy).toBe(`My strategy will be ${name}'s own: give half.`);
    }
  });

  it("plays Kuhn poker against itself: two queued tickets that may meet, and private self matches at once", async () => {
    const fake = await model(oracle);
    const queued = await run(fake, { opponent: undefined, selfPlay: true, matches: 2, concurrency: 2 });
    expect(queued.ends.map((end) => end.match)).toEqual([queued.ends[0].match, queued.ends[0].match]);
    expect(queued.ends.map((end) => end.seat).sort()).toEqual([0, 1]);
    const own = await run(fake, { opponent: "self", matches: 4, concurrency: 2 });
    expect(own.ends).toHaveLength(8);
    expect(new Set(own.ends.map((end) => end.match)).size).toBe(4);
    for (const end of [...queued.ends, ...own.ends]) {
      expect(end).toMatchObject({ reason: "completed", statuses: ["DONE", "DONE"] });
      for (const row of await server.server.store.steps(end.match)) {
        expect(row.defaulted).toBeNull();
        expect(metaOf(row).fallback).toBeUndefined();
        expect(metaOf(row).prompt[0].content).toContain(`You are player ${row.seat}. The rules:`);
      }
    }
  });

  it("never sends an unusable reply as a message: cut off, refused or unmarked, it is asked again, then falls back", async () => {
    const refusal = (content: string | null, extra: Record<string, unknown>, finish = "stop") => ({
      raw: {
        contentType: "application/json",
        body: JSON.stringify({
          id: "chatcmpl-refused",
          object: "chat.completion",
          created: 1_800_000_000,
          model: MODEL,
          choices: [{ index: 0, message: { role: "assistant", content, ...extra }, finish_reason: finish }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      },
    });
    const unusable = [
      { content: "Answer: message We should both claim fi", finishReason: "length" },
      { content: "I'm sorry, but I can't help with that." },
      refusal(null, { refusal: "I can't assist with that request." }),
      refusal("Answer: message you will regret this", {}, "content_filter"),
    ];
    let messages = 0;
    const fake = await model((request) => {
      // A re-ask's last message is the reason; the turn it is about is the last one with the legal actions.
      const turn = request.messages.findLast((m) => m.role === "user" && m.content.includes("Legal now:"));
      if (!turn?.content.includes("Legal now: message")) return { content: legalAnswer(request, () => 0) };
      return unusable[messages++] ?? { content: "Let me think.\nAnswer: message Let us split evenly." };
    });
    const { ends } = await run(fake, { game: "trust-and-split", opponent: "fair", seat: 0, agent: { retries: 3 } });
    const talk = (await llmSteps(ends[0].match)).filter((row) => (row.action as { type: string }).type === "message");
    expect(talk.length).toBeGreaterThan(1);
    const [first, ...rest] = talk;
    expect(first.action).toEqual({ type: "message", text: "" }); // the fallback: an empty message
    expect(metaOf(first).fallback).toBe("no usable answer in 4 attempt(s)");
    expect(metaOf(first).attempts.map((a) => a.error)).toEqual([
      "your reply was cut off at the token limit, so its answer may be cut too; answer more briefly.",
      "your reply has no `Answer:` line, and only what follows `Answer:` is sent to the other player; end it with " +
      "`Answer:` and your message or action.",
      'you declined to answer ("I can\'t assist with that request."); this is a game: choose one of the legal actions.',
      "the endpoint's content filter stopped your reply; choose one of the legal actions.",
    ]);
    // The type word is not part of the message: `message Let us split evenly.` says "Let us split evenly."
    for (const row of rest) expect(row.action).toEqual({ type: "message", text: "Let us split evenly." });
  });

  it("sends a talk phase's reply as the message it is, without the brackets or box of an action token", async () => {
    const cases = [
      { renderer: "textarena" as const, reply: "I would like some of your gold." },
      { renderer: "spiral" as const, reply: "Reasoning first.\n\\boxed{I would like some of your gold.}" },
    ];
    for (const { renderer, reply } of cases) {
      const fake = await model((request) => ({
        content: /Legal now: chat/.test(lastUser(request)) ? reply : legalAnswer(request, () => 0),
      }));
      const { ends } = await run(fake, { game: "simple-negotiation", opponent: "greedy", agent: { renderer } });
      const chats = (await llmSteps(ends[0].match)).filter((row) => (row.action as { type: string }).type === "chat");
      expect(chats.length, renderer).toBeGreaterThan(0);
      for (const row of chats) {
        expect(row.action, renderer).toEqual({ type: "chat", text: "I would like some of your gold." });
      }
    }
  });

  it("seats as many players as the config says (a Donor Game of six), and records the seed group", async () => {
    const fake = await model(oracle);
    const { ends, failure } = await run(fake, {
      game: "donor-game",
      opponent: "self",
      config: { agents: 6 },
      group: "six-agents",
    });
    expect(failure).toBeUndefined();
    expect(ends.map((end) => end.seat)).toEqual([0, 1, 2, 3, 4, 5]);
    const record = await server.server.store.match(ends[0].match);
    expect(record?.seats).toHaveLength(6);
    expect(record?.group).toBe("six-agents");
    await expect(run(fake, { game: "donor-game", opponent: "self", config: { agents: 7 } })).rejects.toThrow(
      /agents/,
    );
  });

  it("seats two models in one match, each seat asked as its own player by its own model, rotating by match", async () => {
    // Replies that depend only on what the model is shown, so the same matches get the same replies.
    const hash = (text: string) => [...text].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7);
    const script = (name: string): Script => (request) => ({
      content: `${name} thinks.\n${legalAnswer(request, (n) => hash(lastUser(request)) % n).split("\n").at(-1)}`,
    });
    const [a, b] = [await model(script("A")), await model(script("B"))];
    const players = [a, b].map((fake, i) => ({
      chat: { baseUrl: fake.baseUrl, model: MODEL, temperature: i / 2 },
      ...(i === 1 ? { systemPrompt: () => "You are the second model." } : {}),
    }));
    const play = () => run(a, { opponent: "self", matches: 4, concurrency: 2, seed: "mixed", players });
    const first = await play();
    expect(first.failure).toBeUndefined();
    expect(first.ends).toHaveLength(8);
    const lineups = [...first.lineups.values()].map((lineup) => lineup.join(""));
    expect(lineups.sort()).toEqual(["01", "01", "10", "10"]); // alternate: the first model changes seat every match
    /** Each match's decisions, by the seed it was played from. */
    const played = async (matches: Iterable<string>) => {
      const bySeed: Record<string, unknown[]> = {};
      for (const match of matches) {
        const record = await server.server.store.match(match);
        bySeed[record!.seed] = (await server.server.store.steps(match)).map((row) => [row.seat, row.action]);
      }
      return bySeed;
    };
    for (const match of first.lineups.keys()) {
      const lineup = first.lineups.get(match)!;
      const steps = await server.server.store.steps(match);
      for (const row of steps) {
        const meta = metaOf(row);
        const player = lineup[row.seat];
        expect(meta.endpoint).toBe(`${[a, b][player].baseUrl}/chat/completions`);
        expect(meta.response).toMatch(new RegExp(`^${"AB"[player]} thinks`));
        expect(meta.prompt[0].content).toMatch(
          player === 0 ? `You are player ${row.seat}. The rules:` : /^You are the second model\./,
        );
        expect(meta.prompt.at(-1)?.content).toContain(`You are player ${row.seat}.`); // the turn names the seat
      }
      // Each seat is recorded with the model, endpoint and sampling of the player who sat there.
      const record = await server.server.store.match(match);
      expect(record?.seats.map((seat) => [seat?.endpoint, seat?.sampling?.temperature])).toEqual(
        lineup.map((player) => [[a, b][player].baseUrl, player / 2]),
      );
      expect(record?.seats.map((seat) => seat?.model)).toEqual([MODEL, MODEL]);
    }
    // The same seeds and the same replies: the same matches, deal for deal and seat for seat.
    const again = await play();
    expect(Object.keys(await played(first.lineups.keys())).sort()).toEqual([
      "mixed/0",
      "mixed/1",
      "mixed/2",
      "mixed/3",
    ]);
    expect(await played(again.lineups.keys())).toEqual(await played(first.lineups.keys()));
    expect([...again.lineups.values()].map(String).sort()).toEqual(lineups.map((l) => l.split("").join(",")));
  });

  it("keeps the last rounds of a long dilemma's text with a history window", async () => {
    const fake = await model(oracle);
    const long = await run(fake, { game: "ipd", config: { rounds: 100 }, opponent: "tit-for-tat", seat: 0 });
    const windowed = await run(fake, {
      game: "ipd",
      config: { rounds: 100 },
      opponent: "tit-for-tat",
      seat: 0,
      agent: { historyWindow: 5 },
    });
    const lastPrompt = async (match: string) => metaOf((await llmSteps(match)).at(-1)!).prompt;
    const full = await lastPrompt(long.ends[0].match);
    const cut = await lastPrompt(windowed.ends[0].match);
    const size = (prompt: { content: string }[]) => prompt.reduce((n, m) => n + m.content.length, 0);
    expect(size(full)).toBeGreaterThan(7_000);
    expect(size(cut)).toBeLessThan(1_500);
    const user = cut.at(-1)!.content;
    expect(user).toContain("Round 100 of 100.");
    expect(user).toContain("- Rounds 1-94: not shown (only the last 5 are); the totals count them.");
    expect(user.match(/^- Round \d+:/gm)).toEqual([
      "- Round 95:",
      "- Round 96:",
      "- Round 97:",
      "- Round 98:",
      "- Round 99:",
    ]);
    expect(user).toMatch(/Your total is \d+/);
  });

  it("keeps the prompt, response and token counts in the turns.jsonl export", async () => {
    const fake = await model(oracle);
    const { ends } = await run(fake, { game: "ipd" });
    const { code, out, err } = await ludus(
      "export",
      "--server",
      server.url,
      "--format",
      "turns.jsonl",
      "--participant",
      "model-seat",
      "--out",
      "-",
    );
    expect(code, err).toBe(0);
    const rows = out.trim().split("\n").map((line) => JSON.parse(line)).filter((r) => r.match_id === ends[0].match);
    const mine = rows.filter((r) => r.participant_kind === "llm");
    expect(mine).toHaveLength(10);
    const steps = await llmSteps(ends[0].match);
    mine.forEach((row, i) => {
      const meta = metaOf(steps[i]);
      expect(JSON.parse(row.messages)).toEqual(meta.prompt); // JSON text in JSONL, as in Parquet
      expect(row.response).toBe(meta.response);
      expect(row.prompt_tokens).toBe(meta.usage!.prompt_tokens);
      expect(row.completion_tokens).toBe(meta.usage!.completion_tokens);
      expect(row.prompt).toBe(meta.prompt.at(-1)!.content.replace(/\n\nLegal now: .*$/, ""));
    });
  });
});

/** Three matches of the dilemma against tit-for-tat: a failing endpoint stops the run after the first. */
const failing = async (
  on: TestServer,
  baseUrl: string,
  agent: Partial<LlmAgentOptions> = {},
  game = "ipd",
) =>
  await runLlm({
    url: on.wsUrl,
    token: await on.token(undefined, "llm"),
    game,
    opponent: "tit-for-tat",
    matches: 3,
    agent: { chat: { baseUrl, model: MODEL }, backoff: { attempts: 2, baseDelayMs: 5 }, ...agent },
  });

/** The step where seat 0 withdrew. */
const withdrawnRow = async (on: TestServer, match: string) => {
  const steps = (await on.server.store.steps(match)).filter((row) => row.seat === 0);
  return steps.find((row) => row.error?.code === "withdrawn");
};

describe("the LLM agent when the endpoint cannot be used", () => {
  let server: TestServer;
  const fakes: FakeOpenAI[] = [];

  beforeAll(async () => {
    server = await startTestServer({ clocks: { llm: { baseMs: 3_000, incrementMs: 3_000, overageMs: 0 } } });
  });
  afterAll(async () => {
    await Promise.all(fakes.map((fake) => fake.close()));
    await server.close();
  });

  const expectWithdrawn = async (
    result: Awaited<ReturnType<typeof runLlm>>,
    cause: string | RegExp,
    endpoint: string,
  ) => {
    expect(result.failure?.message.startsWith(`${endpoint}/chat/completions: `)).toBe(true);
    expect(result.failure?.message).toMatch(cause);
    // The failure stops the run: one match played, its seat withdrawn; with only a built-in left in the match,
    // the server ends it at once (nobody remains to play on for).
    expect(result.ends).toHaveLength(1);
    const [end] = result.ends;
    expect(end).toMatchObject({ reason: "aborted", culprit: 0, statuses: ["ERROR", "DONE"] });
    const record = await server.server.store.match(end.match);
    expect(record?.statuses).toEqual(["ERROR", "DONE"]);
    const row = await withdrawnRow(server, end.match);
    expect(row).toMatchObject({ defaulted: null, action: null });
    expect(row?.error?.message).toBe(result.failure?.message);
    const later = (await server.server.store.steps(end.match)).filter((r) => r.seat === 0 && r.seq > row!.seq);
    expect(later).toEqual([]);
  };

  it("an unreachable endpoint: the error names it and the cause; the seat is withdrawn", async () => {
    const closed = await startFakeOpenAI({ script: () => ({ content: "" }) });
    const baseUrl = closed.baseUrl;
    await closed.close();
    const result = await failing(server, baseUrl);
    await expectWithdrawn(result, /cannot reach the endpoint \((ECONNREFUSED|.*Connection refused)/, baseUrl);
  });

  it("a wrong model name", async () => {
    const fake = await startFakeOpenAI({ script: oracle, models: ["other-model"] });
    fakes.push(fake);
    const result = await failing(server, fake.baseUrl);
    await expectWithdrawn(
      result,
      `no model \`${MODEL}\` there, or no chat-completions API at this URL (HTTP 404): The model \`${MODEL}\` does not exist`,
      fake.baseUrl,
    );
    expect(fake.requests).toHaveLength(1); // a 404 is not tried again
  });

  it("an invalid key", async () => {
    const fake = await startFakeOpenAI({ script: oracle, apiKey: "right-key" });
    fakes.push(fake);
    const result = await failing(server, fake.baseUrl, {
      chat: { baseUrl: fake.baseUrl, model: MODEL, apiKey: "wrong-key" },
    });
    await expectWithdrawn(result, "the API key was refused (HTTP 401): Incorrect API key provided.", fake.baseUrl);
  });

  it("a response with no choices", async () => {
    const fake = await startFakeOpenAI({ script: () => ({ noChoices: true }) });
    fakes.push(fake);
    const result = await failing(server, fake.baseUrl);
    await expectWithdrawn(result, "the answer has no choices", fake.baseUrl);
  });

  it("server errors past the backoff budget", async () => {
    const fake = await startFakeOpenAI({ script: () => ({ status: 502 }) });
    fakes.push(fake);
    const result = await failing(server, fake.baseUrl);
    await expectWithdrawn(result, "server error (HTTP 502)", fake.baseUrl);
    expect(fake.requests).toHaveLength(2);
  });

  it("a slow model past the seat's clock: the agent plays its fallback before the deadline", async () => {
    const fake = await startFakeOpenAI({
      script: (request, index) =>
        index === 0 ? { content: legalAnswer(request, () => 1), delayMs: 10_000 } : oracle(request, index),
    });
    fakes.push(fake);
    const { ends, failure } = await runLlm({
      url: server.wsUrl,
      token: await server.token(undefined, "llm"),
      game: "ipd",
      opponent: "tit-for-tat",
      agent: { chat: { baseUrl: fake.baseUrl, model: MODEL }, deadlineMarginMs: 500 },
    });
    expect(failure).toBeUndefined();
    expect(ends[0]).toMatchObject({ reason: "completed", statuses: ["DONE", "DONE"] });
    const [first, second] = (await server.server.store.steps(ends[0].match)).filter((row) => row.seat === 0);
    expect(metaOf(first).fallback).toMatch(/^the model did not answer before the seat's deadline/);
    expect(first.defaulted).toBeNull(); // the agent answered in time, so the server had nothing to default
    expect(first.latencyMs).toBeLessThan(3_000);
    expect(metaOf(second).fallback).toBeUndefined();
  });
});

describe("a withdrawn LLM seat with another player at the table", () => {
  for (const onTimeout of ["default", "forfeit"] as const) {
    it(`under ${onTimeout} conduct: ${onTimeout === "default" ? "the match plays on for the seat" : "it forfeits"}`, async () => {
      const table = await startTestServer({ conduct: { onTimeout } });
      const fake = await startFakeOpenAI({ script: oracle, apiKey: "right-key" });
      const other = await Bot.connect({ url: table.wsUrl, token: await table.token() });
      try {
        const [result, [otherEnd]] = await Promise.all([
          runLlm({
            url: table.wsUrl,
            token: await table.token(undefined, "llm"),
            game: "ipd",
            matches: 3,
            agent: { chat: { baseUrl: fake.baseUrl, model: MODEL } },
          }),
          other.play({ game: "ipd", policy: (_observation, legal) => randomAction(legal) }),
        ]);
        expect(result.failure?.message).toContain("the API key was refused (HTTP 401)");
        expect(result.ends).toHaveLength(1); // the failure stops the run
        const [end] = result.ends;
        expect(otherEnd.match).toBe(end.match);
        const statuses = end.seat === 0 ? ["ERROR", "DONE"] : ["DONE", "ERROR"];
        const row = (await table.server.store.steps(end.match)).find((r) => r.error?.code === "withdrawn")!;
        expect(row.seat).toBe(end.seat);
        expect(row.error?.message).toBe(result.failure?.message);
        if (onTimeout === "forfeit") {
          expect(end).toMatchObject({ reason: "forfeit", culprit: end.seat, statuses });
          expect(row).toMatchObject({ action: null, defaulted: null });
        } else {
          expect(end).toMatchObject({ reason: "completed", statuses });
          const mine = (await table.server.store.steps(end.match)).filter((r) => r.seat === end.seat);
          expect(mine.at(-1)?.observation).toMatchObject({ round: 10 }); // played to the end
          for (const later of mine.filter((r) => r.seq >= row.seq)) expect(later.defaulted).toBe("withdrawn");
        }
      } finally {
        await other.close();
        await fake.close();
        await table.close();
      }
    });
  }
});
