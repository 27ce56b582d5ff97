import { describe, expect, it } from "vitest";
import {
  backoffDelay,
  ChatClient,
  ChatError,
  Gate,
  parseStrategy,
  renderer,
  strategyPrompt,
} from "../../clients/llm/index.ts";
import { fitMeta } from "../../clients/llm/meta.ts";
import { windowRounds } from "../../clients/llm/agent.ts";
import { type MatchView, type TurnView } from "../../clients/llm/renderers.ts";
import { games } from "../../games/registry.ts";
import { configure } from "../../games/core/config.ts";
import { Rng } from "../../games/core/rng.ts";
import { ActionError } from "../../games/core/action.ts";
import { startFakeOpenAI } from "../support/openai-server.ts";

const turn = (game: string, legalText = "check | bet", kind: "fixed" | "text" | "split" = "fixed"): TurnView => ({
  game,
  text: "the turn",
  legalText,
  legal: kind === "text"
    ? [{ kind: "text", type: "message", maxLength: 500 }]
    : kind === "split"
    ? [{ kind: "split", type: "split", items: ["coins"], max: [10] }]
    : [{ kind: "fixed", action: { type: "check" } }],
});

describe("renderers read the answer a reply holds", () => {
  it("ludus: what follows the last `Answer:`, thinking removed; a bare one-liner; otherwise a reason", () => {
    const ludus = renderer("ludus", "holdem");
    const read = (reply: string) => ludus.extract(reply, turn("holdem"));
    expect(read("I could bet. Answer: check\nNo wait.\n**Answer:** raise 400")).toEqual({ action: "raise 400" });
    expect(read("<think>Answer: fold</think>Answer: `call`")).toEqual({ action: "call" });
    expect(read("[bet]")).toEqual({ action: "[bet]" });
    expect(read("Answer:   ")).toEqual({ error: "nothing follows `Answer:`; write your action after it." });
    expect(read("I think\nI will bet")).toEqual({
      error: "your reply has no `Answer:` line; end it with `Answer:` and your action.",
    });
  });

  it("textarena brackets a bare reply; spiral reads the last \\boxed{}; adalign its tokens", () => {
    expect(renderer("textarena", "kuhn-poker").extract("bet", turn("kuhn-poker"))).toEqual({ action: "[bet]" });
    expect(renderer("textarena", "kuhn-poker").extract("ok [bet] then", turn("kuhn-poker"))).toEqual({
      action: "ok [bet] then",
    });
    const spiral = renderer("spiral", "kuhn-poker");
    expect(spiral.extract("maybe \\boxed{check}... no: \\boxed{bet}", turn("kuhn-poker"))).toEqual({ action: "[bet]" });
    expect(spiral.extract("\\boxed{[call]}", turn("kuhn-poker"))).toEqual({ action: "[call]" });
    expect(spiral.extract("I bet", turn("kuhn-poker"))).toEqual({ action: "[I bet]" }); // ≤ 5 words, as SPIRAL does
    expect(spiral.extract("I will think about this for a long while", turn("kuhn-poker"))).toHaveProperty("error");
    const adalign = renderer("adalign", "ipd");
    expect(adalign.extract("<A> ... actually <B>", turn("ipd"))).toEqual({ action: "<B>" });
    expect(adalign.extract("cooperate", turn("ipd"))).toEqual({ error: 'write "<A>" or "<B>" and nothing else.' });
    const tas = renderer("adalign", "trust-and-split");
    expect(tas.extract("x <<message_start>> hi <<message_end>> y", turn("trust-and-split", "", "text"))).toEqual({
      action: "<<message_start>> hi <<message_end>>",
    });
    expect(tas.extract("<<proposal_start>> 10 <<proposal_end>>", turn("trust-and-split", "", "split"))).toEqual({
      action: "<<proposal_start>> 10 <<proposal_end>>",
    });
    expect(tas.extract("<<proposal_start>> 11 <<proposal_end>>", turn("trust-and-split", "", "split"))).toHaveProperty(
      "error",
    );
  });

  it("in a talk phase, sends only an answer the reply marks as one, and the message as written", () => {
    const talk = (game: string, legalText = "message <text of at most 500 characters>") =>
      turn(game, legalText, "text");
    const ludus = renderer("ludus", "trust-and-split");
    expect(ludus.extract("Answer: message Let us split evenly.", talk("trust-and-split"))).toEqual({
      action: "message Let us split evenly.",
    });
    for (const reply of ["I'm sorry, but I can't help with that.", "Let us split evenly."]) {
      expect(ludus.extract(reply, talk("trust-and-split"))).toEqual({
        error: "your reply has no `Answer:` line, and only what follows `Answer:` is sent to the other player; " +
          "end it with `Answer:` and your message or action.",
      });
    }
    const chat = talk("simple-negotiation", "chat <text of at most 1000 characters>");
    expect(renderer("textarena", "simple-negotiation").extract("I want gold.", chat)).toEqual({
      action: "I want gold.",
    });
    const spiral = renderer("spiral", "simple-negotiation");
    expect(spiral.extract("Hmm.\n\\boxed{I want gold.}", chat)).toEqual({ action: "I want gold." });
    expect(spiral.extract("\\boxed{[Accept]}", chat)).toEqual({ action: "[Accept]" });
    expect(spiral.extract("I want gold", chat)).toHaveProperty("error"); // no box: never sent as chat
    expect(renderer("adalign", "ipd").extract("<<message_start>> I will cooperate <<message_end>>", talk("ipd")))
      .toEqual({ action: "<<message_start>> I will cooperate <<message_end>>" });
  });

  it("a renderer refuses a game whose tokens it does not know", () => {
    expect(() => renderer("adalign", "kuhn-poker")).toThrow(
      "the adalign renderer knows the tokens of ipd, trust-and-split, not kuhn-poker; use --renderer ludus",
    );
  });
});

describe("renderers word the prompt", () => {
  const match = (game: string, seat: number, config: unknown = {}, observation: unknown = {}): MatchView => ({
    game,
    seat,
    rules: "The rules.",
    config,
    observation,
  });

  it("ludus: each game's example is an action its own parser takes at some point of a match", () => {
    for (const game of games) {
      const example = game.answerExample;
      expect(renderer("ludus", game.id).instructions({ game: game.id, answerExample: example }))
        .toContain(`for example \`Answer: ${example}\``);
      const g = game as unknown as {
        init(config: unknown, rng: Rng): unknown;
        toAct(state: unknown): readonly number[];
        legal(state: unknown, seat: number): readonly { kind: string; action?: unknown; type?: string }[];
        parse(input: unknown, state: unknown, seat: number): unknown;
        apply(state: unknown, moves: unknown[], rng: Rng): void;
      };
      const { config } = configure(game, {}, undefined);
      const rng = new Rng("examples");
      const state = g.init(config, rng);
      let taken = false;
      for (let step = 0; step < 200 && !taken; step++) {
        const toAct = g.toAct(state);
        if (toAct.length === 0) break;
        taken = toAct.some((seat) => !(g.parse(example, state, seat) instanceof ActionError));
        // Play on with each seat's first legal action (a talk phase says nothing).
        const moves: unknown[] = [];
        for (const seat of toAct) {
          const form = g.legal(state, seat)[0];
          const input = form.kind === "fixed" ? form.action : form.kind === "text" ? { type: form.type, text: "" } : "";
          const move = g.parse(input, state, seat);
          moves[seat] = move instanceof ActionError ? g.parse(example, state, seat) : move;
        }
        if (moves.some((m) => m instanceof ActionError)) break;
        g.apply(state, moves, rng);
      }
      expect(taken, `${game.id}: ${example}`).toBe(true);
    }
    const ipd = games.find((g) => g.id === "ipd")!;
    expect(renderer("ludus", "ipd").instructions({ game: "ipd", answerExample: ipd.answerExample })).not.toContain(
      "bet",
    );
  });

  it("textarena: TextArena's system prompt, and its game prompt before the server's turn", () => {
    const ta = renderer("textarena", "ipd");
    expect(ta.system(match("ipd", 1))).toBe(
      "You are a competitive game player. Make sure you read the game instructions carefully, and always follow the " +
        "required format.",
    );
    const config = { rounds: 7, messages: 1, payoffs: { reward: 3, sucker: 0, temptation: 5, punishment: 1 } };
    const text = ta.turn(turn("ipd", "cooperate | defect"), match("ipd", 1, config));
    expect(text).toMatch(/^You are Player 1 in an Iterated Prisoner's Dilemma game\.\n/);
    expect(text).toContain("- The game consists of 7 decision rounds\n- Before each decision, you have 2 turns");
    expect(text).toContain("- One Defects, One Cooperates: Defector gets 5, Cooperator gets 0\n");
    expect(text).toMatch(/the turn\n\nLegal now: cooperate \| defect$/);
    const kuhn = renderer("textarena", "kuhn-poker").turn(turn("kuhn-poker"), match("kuhn-poker", 0, { rounds: 3 }));
    expect(kuhn).toMatch(/^You are Player 0 in a 3 round game of Kuhn Poker\.\nGame Rules:\n/);
    const ttt = renderer("textarena", "tic-tac-toe").turn(turn("tic-tac-toe"), match("tic-tac-toe", 1));
    expect(ttt).toContain("As Player 1, you will be 'X', while your opponent is 'O'.");
  });

  it("spiral: one user message in SPIRAL's template, no system message", () => {
    const sp = renderer("spiral", "kuhn-poker");
    expect(sp.system(match("kuhn-poker", 0))).toBeUndefined();
    const text = sp.turn(turn("kuhn-poker"), match("kuhn-poker", 0, { rounds: 1 }));
    expect(text).toMatch(
      /^You are playing a two-player zero-sum game\. Make valid actions to win\.\nObservation: You are Player 0 in a 1 round game of Kuhn Poker\./,
    );
    expect(text).toMatch(/\nPlease reason step by step, and put your final answer within \\boxed\{\}\.$/);
    const obs = { resources: ["Wood", "Gold"], inventories: [[10, 10], [10, 10]], values: [null, [15, 5]] };
    const nego = sp.turn(turn("simple-negotiation"), match("simple-negotiation", 1, { maxTurns: 10 }, obs));
    expect(nego).toContain("\t+ [Wood]    Qty: 10   Value: 15\n\t+ [Gold]    Qty: 10   Value: 5\n");
  });

  it("adalign: AdAlign's intro as the first user message; the dilemma's turns say the other's last move", () => {
    const ad = renderer("adalign", "ipd");
    const config = { payoffs: { reward: 3, sucker: 0, temptation: 5, punishment: 1 } };
    expect(ad.system(match("ipd", 0, config))).toBeUndefined();
    const intro = ad.opening(match("ipd", 0, config))!;
    expect(intro).toMatch(/^Welcome to an iterated game\. You are playing against another agent\.\n\nGame Rules:\n/);
    expect(intro).toContain("the player who plays A receives 0 points and the player who plays B receives 5 points.");
    expect(intro).toMatch(/The game starts now:\n$/);
    const view = (history: { moves: string[] }[]) => ({ ...turn("ipd"), observation: { seat: 0, history } });
    expect(ad.turn(view([]), match("ipd", 0, config))).toBe("");
    expect(ad.turn(view([{ moves: ["C", "D"] }]), match("ipd", 0, config))).toBe(
      "Last round, the other agent played <B>.",
    );
    const tas = renderer("adalign", "trust-and-split").opening(match("trust-and-split", 1, { quantity: 10 }))!;
    expect(tas).toMatch(/^Welcome to an iterated game\. You are Bob\. The other agent is Alice\.\n/);
  });
});

describe("a history window over the turn's past rounds", () => {
  const text = [
    "Round 9 of 9.",
    "Previous rounds:",
    ...[1, 2, 3, 4, 5, 6, 7, 8].map((r) => `- Round ${r}: x`),
    "Total.",
  ]
    .join("\n");
  it("keeps the last n rounds and says which were left out", () => {
    expect(windowRounds(text, 3)).toBe(
      "Round 9 of 9.\nPrevious rounds:\n- Rounds 1-5: not shown (only the last 3 are); the totals count them.\n" +
        "- Round 6: x\n- Round 7: x\n- Round 8: x\nTotal.",
    );
    expect(windowRounds(text, 8)).toBe(text);
    expect(windowRounds("No rounds have been played yet.", 2)).toBe("No rounds have been played yet.");
  });
});

describe("the Donor Game strategy step", () => {
  it("reads the sentence from the last `My strategy will be`", () => {
    expect(parseStrategy("Thinking... My strategy will be X. Then: My strategy will be to give 50%. Done.")).toBe(
      "My strategy will be to give 50%.",
    );
    expect(parseStrategy("My strategy will be\n to reciprocate")).toBe("My strategy will be to reciprocate");
    expect(parseStrategy("I will give half.")).toBeUndefined();
    expect(parseStrategy("My strategy will be.")).toBeUndefined();
  });

  it("asks with the name and the earlier generation's advice", () => {
    const prompt = strategyPrompt("agent-3", [{ strategy: "My strategy will be to give all.", score: 40 }, {
      strategy: "My strategy will be to give none.",
    }]);
    expect(prompt).toMatch(/^Your name is agent-3\. The game has not started yet\./);
    expect(prompt).toContain(
      "- My strategy will be to give all. (final score 40)\n- My strategy will be to give none.\n",
    );
    expect(strategyPrompt(undefined)).not.toContain("previous generation");
  });
});

describe("replay fields fit in one frame", () => {
  const meta = (size: number) => ({
    prompt: [
      { role: "system", content: "rules ".repeat(size) },
      { role: "user", content: "old turn ".repeat(size) },
      { role: "assistant", content: "old reply ".repeat(size) },
      { role: "user", content: "this turn" },
    ],
    response: "Answer: bet",
    attempts: [{ response: "long ".repeat(size) }, { response: "Answer: bet" }],
  });
  const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;

  it("leaves small fields alone, and cuts large ones to the frame, oldest chat first", () => {
    expect(fitMeta(meta(10), 16_384)).toEqual(meta(10));
    const fitted = fitMeta(meta(20_000), 64 * 1024) as ReturnType<typeof meta> & { truncated: boolean };
    expect(fitted.truncated).toBe(true);
    expect(bytes(fitted)).toBeLessThanOrEqual(64 * 1024 - 4096);
    expect(fitted.prompt.at(-1)).toEqual({ role: "user", content: "this turn" });
    expect(fitted.prompt[0].role).toBe("system");
    expect(fitted.response).toBe("Answer: bet");
    expect(fitted.attempts.at(-1)?.response).toBe("Answer: bet");
  });
});

describe("requests in flight and waits between tries", () => {
  it("a gate lets `capacity` tasks run at once, in arrival order, and an abort leaves the queue", async () => {
    const gate = new Gate(2);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const task = (i: number) => async () => {
      started.push(i);
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 10));
      running--;
    };
    await Promise.all([0, 1, 2, 3, 4].map((i) => gate.run(task(i))));
    expect(most).toBe(2);
    expect(started).toEqual([0, 1, 2, 3, 4]);

    const blockers = [0, 1].map(() => gate.run(() => new Promise((r) => setTimeout(r, 30))));
    const late = new AbortController();
    const waiting = gate.run(() => Promise.resolve("ran"), late.signal);
    late.abort(new Error("no longer needed"));
    await expect(waiting).rejects.toThrow("no longer needed");
    await Promise.all(blockers);
    expect(gate.inFlight).toBe(0);
  });

  it("backs off with jitter under an exponential cap, and honours Retry-After", () => {
    for (let n = 1; n <= 8; n++) {
      const delay = backoffDelay(n, { baseDelayMs: 100, maxDelayMs: 1_000 });
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThanOrEqual(Math.min(1_000, 100 * 2 ** (n - 1)));
    }
    expect(backoffDelay(1, { maxDelayMs: 1_000 }, 5_000)).toBe(5_000);
  });
});

describe("the chat client's errors say where and why, and whether to try again", () => {
  it("classifies statuses and reads Retry-After", async () => {
    const fake = await startFakeOpenAI({
      script: (_request, index) => [{ status: 429, retryAfterS: 2 }, { status: 503 }, { status: 400 }][index],
    });
    try {
      const client = new ChatClient({ baseUrl: `${fake.baseUrl}/`, model: "m" });
      expect(client.endpoint).toBe(`${fake.baseUrl}/chat/completions`);
      const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (e: ChatError) => e);
      const limited = await failure(client.complete([{ role: "user", content: "hi" }]));
      expect(limited).toMatchObject({ failure: "rate_limited", status: 429, retryAfterMs: 2_000, retryable: true });
      expect((await failure(client.complete([])))?.failure).toBe("server_error");
      const refused = await failure(client.complete([]));
      expect(refused).toMatchObject({ failure: "bad_request", retryable: false });
      expect(refused?.message).toBe(
        `${fake.baseUrl}/chat/completions: the request was refused (HTTP 400): Scripted failure 400.`,
      );
    } finally {
      await fake.close();
    }
  });

  it("says when an answer is not JSON, a stream reports an error, or no answer comes in time", async () => {
    const fake = await startFakeOpenAI({
      script: (_request, index) =>
        [
          { raw: { contentType: "text/html", body: "<html>502 Bad Gateway</html>" } },
          { raw: { contentType: "text/event-stream", body: 'data: {"error":{"message":"model crashed"}}\n\n' } },
          { content: "late", delayMs: 2_000 },
        ][index],
    });
    try {
      const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (e: ChatError) => e);
      const client = new ChatClient({ baseUrl: fake.baseUrl, model: "m" });
      const notJson = await failure(client.complete([]));
      // A 200 that is not whole JSON is a server failing mid-reply: worth another try, as a 5xx is.
      expect(notJson).toMatchObject({ failure: "incomplete", retryable: true });
      expect(notJson?.message).toBe(
        `${fake.baseUrl}/chat/completions: the answer is not whole JSON: <html>502 Bad Gateway</html>`,
      );
      const streamed = await failure(new ChatClient({ baseUrl: fake.baseUrl, model: "m", stream: true }).complete([]));
      expect(streamed?.message).toContain("the stream reported an error: model crashed");
      const slow = await failure(client.complete([], AbortSignal.timeout(100)));
      expect(slow).toMatchObject({ failure: "timeout", retryable: true });
      expect(slow?.message).toBe(`${fake.baseUrl}/chat/completions: no answer in time`);
    } finally {
      await fake.close();
    }
  });

  it("reads a refusal the endpoint reports apart from the text, plain or streamed", async () => {
    const refusal = "I can't assist with that.";
    const message = { role: "assistant", content: null, refusal };
    const fake = await startFakeOpenAI({
      script: (_request, index) =>
        [
          {
            raw: {
              contentType: "application/json",
              body: JSON.stringify({ model: "m", choices: [{ index: 0, message, finish_reason: "stop" }] }),
            },
          },
          {
            raw: {
              contentType: "text/event-stream",
              body: [
                { choices: [{ index: 0, delta: { role: "assistant", refusal: "I can't " }, finish_reason: null }] },
                { choices: [{ index: 0, delta: { refusal: "assist with that." }, finish_reason: "stop" }] },
              ].map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("") + "data: [DONE]\n\n",
            },
          },
          { content: "Answer: cooperate" },
        ][index],
    });
    try {
      const plain = await new ChatClient({ baseUrl: fake.baseUrl, model: "m" }).complete([]);
      expect(plain).toMatchObject({ text: "", refusal, finishReason: "stop" });
      const streamed = await new ChatClient({ baseUrl: fake.baseUrl, model: "m", stream: true }).complete([]);
      expect(streamed).toMatchObject({ text: "", refusal, finishReason: "stop" });
      expect(await new ChatClient({ baseUrl: fake.baseUrl, model: "m" }).complete([])).not.toHaveProperty("refusal");
    } finally {
      await fake.close();
    }
  });

  it("sends the sampling settings it was given, and only those", async () => {
    const fake = await startFakeOpenAI({ script: () => ({ content: "ok" }) });
    try {
      await new ChatClient({ baseUrl: fake.baseUrl, model: "m" }).complete([{ role: "user", content: "hi" }]);
      await new ChatClient({
        baseUrl: fake.baseUrl,
        model: "m",
        temperature: 0.7,
        maxTokens: 64,
        stop: ["\n\n"],
        seed: 3,
        reasoningEffort: "low",
        extraBody: { top_p: 0.9 },
      }).complete([{ role: "user", content: "hi" }]);
      const [plain, tuned] = fake.requests;
      expect(Object.keys(plain).sort()).toEqual(["messages", "model"]);
      expect(tuned).toMatchObject({
        temperature: 0.7,
        max_tokens: 64,
        stop: ["\n\n"],
        seed: 3,
        reasoning_effort: "low",
        top_p: 0.9,
      });
    } finally {
      await fake.close();
    }
  });
});
