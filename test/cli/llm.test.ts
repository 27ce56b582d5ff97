import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ludus } from "../support/cli.ts";
import { type FakeOpenAI, lastUser, legalAnswer, startFakeOpenAI } from "../support/openai-server.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

describe("ludus llm", () => {
  let server: TestServer;
  let model: FakeOpenAI;
  let dir: string;
  beforeAll(async () => {
    server = await startTestServer({ fillAfterMs: 20, fillStrategy: "random" });
    model = await startFakeOpenAI({
      apiKey: "secret",
      script: (request, index) =>
        lastUser(request).includes("The game has not started yet")
          ? { content: "My strategy will be to give a little to everyone." }
          : { content: legalAnswer(request, (n) => index % n) },
    });
    dir = mkdtempSync(join(tmpdir(), "ludus-llm-cli-"));
  });
  afterAll(async () => {
    await model.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const flags = async (...extra: string[]) => [
    "llm",
    "--url",
    server.wsUrl,
    "--token",
    await server.token(undefined, "llm", 50),
    "--base-url",
    model.baseUrl,
    "--model",
    "cli-model",
    "--api-key",
    "secret",
    ...extra,
  ];

  it("plays matches against a built-in opponent, a line each, and a JSON summary with token counts", async () => {
    const argv = await flags(
      "--game",
      "kuhn-poker",
      "--opponent",
      "random",
      "--matches",
      "3",
      "--concurrency",
      "2",
      "--json",
    );
    const { code, out, err } = await ludus(...argv, "--match-seed", "cli");
    expect(code, err).toBe(0);
    expect(err).toContain(`ludus: cli-model at ${model.baseUrl} plays kuhn-poker on ${server.wsUrl}`);
    const lines = out.trim().split("\n");
    expect(lines).toHaveLength(4);
    for (const line of lines.slice(0, 3)) expect(line).toMatch(/^match \S+ {2}seat [01] {2}returns -?\d+ -?\d+$/);
    const summary = JSON.parse(lines[3]);
    expect(summary).toMatchObject({
      game: "kuhn-poker",
      model: "cli-model",
      renderer: "ludus",
      matches: 3,
      opponent: "random",
      seat: "alternate",
      selfPlay: false,
    });
    // Match i takes seat i mod 2: the model plays both sides of the deal.
    expect(summary.results.map((r: { seat: number }) => r.seat).sort()).toEqual([0, 0, 1]);
    expect(summary.requests).toBeGreaterThanOrEqual(3);
    expect(summary.promptTokens).toBeGreaterThan(0);
    expect(summary.completionTokens).toBeGreaterThan(0);
    expect(err).toMatch(/3 match\(es\); \d+ replies, \d+ prompt and \d+ completion tokens/);
    // No --stop sends no stop, so none is recorded with the seat's sampling.
    for (const { match, seat } of summary.results as { match: string; seat: number }[]) {
      const record = await server.server.store.match(match);
      expect(record?.seats[seat]).toMatchObject({ kind: "llm", model: "cli-model" });
      expect(record?.seats[seat]?.sampling ?? {}).not.toHaveProperty("stop");
    }
  });

  it("queues when no opponent is named (the server fills the other seat)", async () => {
    const { code, out, err } = await ludus(...(await flags("--game", "ipd", "--stream")));
    expect(code, err).toBe(0);
    expect(out).toMatch(/^match \S+ {2}seat [01] {2}returns \d+ \d+\n$/);
  });

  it("takes the seat --seat names; a random seat follows --match-seed", async () => {
    const seats = async (...extra: string[]) => {
      const run = await ludus(
        ...(await flags("--game", "kuhn-poker", "--opponent", "nash", "--matches", "6", "--json", ...extra)),
      );
      expect(run.code, run.err).toBe(0);
      const summary = JSON.parse(run.out.trim().split("\n").at(-1)!);
      return { rule: summary.seat, seats: summary.results.map((r: { seat: number }) => r.seat) };
    };
    expect(await seats("--seat", "1")).toEqual({ rule: 1, seats: [1, 1, 1, 1, 1, 1] });
    const drawn = await seats("--seat", "random", "--match-seed", "draw");
    expect(drawn.rule).toBe("random");
    expect(new Set(drawn.seats).size).toBe(2);
    expect(await seats("--seat", "random", "--match-seed", "draw")).toEqual(drawn);
  });

  it("plays every seat itself with --opponent self, two matches at once", async () => {
    const { code, out, err } = await ludus(
      ...(await flags("--game", "kuhn-poker", "--opponent", "self", "--matches", "2", "--concurrency", "2", "--json")),
    );
    expect(code, err).toBe(0);
    const lines = out.trim().split("\n");
    expect(lines).toHaveLength(5); // a line per seat, then the summary
    const summary = JSON.parse(lines[4]);
    expect(summary).toMatchObject({ matches: 2, opponent: "self", seat: null, meanReturn: 0, fallbacks: 0 });
    expect(summary.results).toHaveLength(4);
    for (const result of summary.results) expect(result.statuses).toEqual(["DONE", "DONE"]);
    expect(err).toMatch(/2 match\(es\)/);
  });

  it("writes Donor Game strategies to --strategies-out and reads --advice into the strategy prompt", async () => {
    const advice = join(dir, "advice.jsonl");
    writeFileSync(advice, '{"strategy":"My strategy will be to give half.","score":28}\n');
    const out = join(dir, "strategies.jsonl");
    const before = model.requests.length;
    const run = await ludus(
      ...(await flags("--game", "donor-game", "--opponent", "random", "--advice", advice, "--strategies-out", out)),
    );
    expect(run.code, run.err).toBe(0);
    const [written] = readFileSync(out, "utf8").trim().split("\n").map((line) => JSON.parse(line));
    expect(written).toMatchObject({
      game: "donor-game",
      strategy: "My strategy will be to give a little to everyone.",
    });
    expect(lastUser(model.requests[before])).toContain("- My strategy will be to give half. (final score 28)");
  });

  it("exits 1 naming the endpoint and the cause when the key is refused; the seat is withdrawn", async () => {
    const { code, err } = await ludus(
      ...(await flags("--game", "ipd", "--opponent", "tit-for-tat", "--api-key", "wrong")),
    );
    expect(code).toBe(1);
    expect(err).toContain(
      `ludus: error: the model endpoint failed: ${model.baseUrl}/chat/completions: the API key was refused (HTTP 401)`,
    );
    expect(err).toContain("withdrawn (status ERROR)");
  });

  it("tries again after a 200 whose body is cut short or is not whole JSON, and finishes every match", async () => {
    // The first reply is cut mid-body (its Content-Length counts more than is sent), the second is half a JSON object.
    const broken = await startFakeOpenAI({
      script: (request, index) =>
        index === 0
          ? { content: legalAnswer(request, () => 0), cutAt: 40 }
          : index === 1
          ? { raw: { contentType: "application/json", body: '{"id":"chatcmpl-1","choices":[{"index":0,"mess' } }
          : { content: legalAnswer(request, (n) => index % n) },
    });
    try {
      const argv = await flags("--game", "kuhn-poker", "--opponent", "random", "--matches", "2", "--json");
      const { code, out, err } = await ludus(...argv, "--base-url", broken.baseUrl);
      expect(code, err).toBe(0);
      expect(err).toMatch(/the answer broke off before its end \(.*\); try 2 in \d+ ms/);
      expect(err).toMatch(/the answer is not whole JSON: .*; try 3 in \d+ ms/);
      const summary = JSON.parse(out.trim().split("\n").at(-1)!);
      expect(summary.results).toHaveLength(2);
      for (const { match } of summary.results as { match: string }[]) {
        expect(await server.server.store.match(match)).toMatchObject({ statuses: ["DONE", "DONE"] });
      }
      expect(broken.requests.length).toBeGreaterThanOrEqual(4);
    } finally {
      await broken.close();
    }
  });

  it("exits 1 with the server's reason for a variant the game does not have", async () => {
    const vsBuiltin = await ludus(
      ...(await flags("--game", "kuhn-poker", "--variant", "huge", "--opponent", "random")),
    );
    expect(vsBuiltin.code).toBe(1);
    expect(vsBuiltin.err).toContain("ludus: error: kuhn-poker has no variant `huge`; variants: standard, textarena");
    const queued = await ludus(...(await flags("--game", "kuhn-poker", "--variant", "huge")));
    expect(queued.code).toBe(1);
    expect(queued.err).toMatch(/ludus: error: .*huge/);
  });

  it("plays a config's seat count with --config, and refuses a bad config with the server's reason", async () => {
    const run = await ludus(
      ...(await flags("--game", "donor-game", "--opponent", "self", "--config", '{"agents": 6}', "--json")),
    );
    expect(run.code, run.err).toBe(0);
    const summary = JSON.parse(run.out.trim().split("\n").at(-1)!);
    expect(summary).toMatchObject({ config: { agents: 6 }, matches: 1, group: null });
    expect(summary.results.map((r: { seat: number }) => r.seat)).toEqual([0, 1, 2, 3, 4, 5]);
    const bad = await ludus(
      ...(await flags("--game", "donor-game", "--opponent", "self", "--config", '{"agents": 7}')),
    );
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/ludus: error: .*agents/);
  });

  it("seats a model per seat from --seats, in a seed group, rotating seats by match", async () => {
    const other = await startFakeOpenAI({ script: (request) => ({ content: legalAnswer(request, () => 0) }) });
    try {
      const seats = join(dir, "seats.json");
      writeFileSync(
        seats,
        JSON.stringify([{ model: "first" }, { model: "second", baseUrl: other.baseUrl, temperature: 0.2 }]),
      );
      const run = await ludus(
        ...(await flags("--game", "kuhn-poker", "--seats", `@${seats}`, "--matches", "2", "--group", "g1", "--json")),
      );
      expect(run.code, run.err).toBe(0);
      expect(run.err).toContain(`first at ${model.baseUrl}, second at ${other.baseUrl} play kuhn-poker`);
      const summary = JSON.parse(run.out.trim().split("\n").at(-1)!);
      expect(summary).toMatchObject({
        players: [{ model: "first", endpoint: model.baseUrl }, { model: "second", endpoint: other.baseUrl }],
        group: "g1",
        opponent: "self",
        matches: 2,
      });
      // Match 0 seats the first model at seat 0, match 1 at seat 1.
      const byMatch = new Map<string, number[]>();
      for (const r of summary.results as { match: string; seat: number; player: number }[]) {
        byMatch.set(r.match, [...(byMatch.get(r.match) ?? []), r.player]);
      }
      expect([...byMatch.values()].map((players) => players.join("")).sort()).toEqual(["01", "10"]);
      // Each seat is recorded as the model that played it (over one connection), not as a "mixed" pair.
      const declared = [
        { model: "first", endpoint: model.baseUrl },
        { model: "second", endpoint: other.baseUrl, sampling: { temperature: 0.2 } },
      ];
      for (const [match, players] of byMatch) {
        const record = await server.server.store.match(match);
        expect(record?.group).toBe("g1");
        players.forEach((player, seat) => expect(record?.seats[seat]).toMatchObject(declared[player]));
      }
      // And so does every exported decision: its row names the model and endpoint of the seat that made it.
      const exported = await ludus("export", "--server", server.url, "--format", "turns.jsonl", "--out", "-");
      expect(exported.code, exported.err).toBe(0);
      const rows = exported.out.trim().split("\n").map((line) => JSON.parse(line))
        .filter((row) => byMatch.has(row.match_id));
      expect(new Set(rows.map((row) => row.match_id)).size).toBe(2);
      for (const row of rows) {
        const { model: playedBy, endpoint } = declared[byMatch.get(row.match_id)![row.seat]];
        expect([row.participant_model, row.participant_endpoint]).toEqual([playedBy, endpoint]);
      }
    } finally {
      await other.close();
    }
  });

  it("asks for log-probabilities with --logprobs k, and the datasets keep them per answer token", async () => {
    const argv = await flags("--game", "kuhn-poker", "--opponent", "random", "--logprobs", "2", "--stream", "--json");
    const { code, out, err } = await ludus(...argv);
    expect(code, err).toBe(0);
    const [{ match }] = JSON.parse(out.trim().split("\n").at(-1)!).results;
    const exported = await ludus("export", "--server", server.url, "--format", "turns.jsonl", "--out", "-");
    expect(exported.code, exported.err).toBe(0);
    const rows = exported.out.trim().split("\n").map((line) => JSON.parse(line))
      .filter((row) => row.match_id === match && row.participant_kind === "llm");
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      // The stand-in scores its answer in pieces of 7 characters, with the two likeliest alternatives each (JSON text
      // in JSONL, as every value that is nested on some rows only).
      const logprobs = JSON.parse(row.logprobs);
      expect(logprobs.map((t: { token: string }) => t.token).join("")).toBe(row.response);
      for (const token of logprobs) expect(token.top_logprobs).toHaveLength(2);
      expect(JSON.parse(row.participant_sampling)).toMatchObject({ logprobs: true, top_logprobs: 2 });
    }
  });

  it("refuses bad flags with exit code 2 and a clear message", async () => {
    const cases: [string[], RegExp][] = [
      [
        (await flags("--game", "ipd")).filter((f) => f !== "--model" && f !== "cli-model"),
        /required option '--model <name>'/,
      ],
      [await flags("--game", "ipd", "--base-url", "ftp://x"), /expected an http:\/\/ or https:\/\/ URL, got ftp:\/\//],
      [await flags("--game", "chess"), /'chess' is invalid\. Allowed choices are ipd/],
      [
        await flags("--game", "ipd", "--temperature", "5"),
        /--temperature <t>' argument '5' is invalid\. expected a number in \[0, 2\]/,
      ],
      [await flags("--game", "ipd", "--renderer", "gpt"), /Allowed choices are ludus, textarena, spiral, adalign/],
      [
        await flags("--game", "ipd", "--logprobs", "21"),
        /--logprobs \[k\]' argument '21' is invalid\. expected a whole/,
      ],
      [
        await flags("--game", "holdem", "--renderer", "textarena"),
        /the textarena renderer knows the tokens of .*, not holdem/,
      ],
      [await flags("--game", "ipd", "--advice", join(dir, "missing.json")), /cannot read .*missing\.json/],
      [await flags("--game", "ipd", "--extra-body", "[1]"), /expected a JSON object/],
      [await flags("--game", "ipd", "--match-seed", "7"), /--match-seed needs --opponent/],
      [await flags("--game", "ipd", "--seat", "1"), /--seat needs --opponent <strategy>/],
      [await flags("--game", "ipd", "--opponent", "self", "--seat", "0"), /--seat needs --opponent <strategy>/],
      [
        await flags("--game", "ipd", "--opponent", "random", "--seat", "left"),
        /expected a seat number \(0, 1, …\), alternate/,
      ],
      [await flags("--game", "ipd", "--opponent", "self", "--self-play"), /--self-play is for queued matches/],
      [await flags("--game", "ipd", "--config", '{"rounds": 5}'), /--config needs --opponent \(or --seats\)/],
      [await flags("--game", "ipd", "--opponent", "self", "--config", "[1]"), /expected a JSON object/],
      [await flags("--game", "ipd", "--seats", '[{"model": "a"}]'), /expected a JSON array of 2 to 32 seats/],
      [
        await flags("--game", "ipd", "--seats", '[{"model": "a"}, {"modle": "b"}]'),
        /seat 1: unknown field `modle`; fields: model, baseUrl, apiKeyEnv/,
      ],
      [
        await flags("--game", "ipd", "--seats", '[{}, {"apiKeyEnv": "LUDUS_NO_SUCH_KEY"}]'),
        /seat 1: `apiKeyEnv`: the environment variable LUDUS_NO_SUCH_KEY is not set/,
      ],
      [
        await flags("--game", "ipd", "--seats", "[{}, {}]", "--opponent", "random"),
        /--seats seats a model in every seat of private matches/,
      ],
      [await flags("--game", "ipd", "--history-window", "-1"), /--history-window <n>' argument '-1' is invalid/],
    ];
    for (const [argv, message] of cases) {
      const { code, err } = await ludus(...argv);
      expect(code, argv.join(" ")).toBe(2);
      expect(err).toMatch(message);
    }
    const noBaseUrl = await ludus("llm", "--url", server.wsUrl, "--token", "t", "--game", "ipd", "--model", "m");
    expect(noBaseUrl.code).toBe(2);
    expect(noBaseUrl.err).toContain("give --base-url (e.g. http://127.0.0.1:8000/v1) or set OPENAI_BASE_URL");
    const noToken = await ludus(
      "llm",
      "--url",
      server.wsUrl,
      "--game",
      "ipd",
      "--base-url",
      model.baseUrl,
      "--model",
      "m",
    );
    expect(noToken.code).toBe(2);
    expect(noToken.err).toContain("give --token or set LUDUS_TOKEN");
  });
});

describe("ludus llm --self-play", () => {
  let lone: TestServer;
  let model: FakeOpenAI;
  beforeAll(async () => {
    lone = await startTestServer(); // nobody else, and no fill: the two tickets can only meet each other
    model = await startFakeOpenAI({
      script: (request, index) => ({ content: legalAnswer(request, (n) => index % n) }),
    });
  });
  afterAll(async () => {
    await model.close();
    await lone.close();
  });

  it("queues two tickets of one token that meet each other with --concurrency 2", async () => {
    const { code, out, err } = await ludus(
      ...["llm", "--url", lone.wsUrl, "--token", await lone.token(undefined, "llm"), "--base-url", model.baseUrl],
      ...["--model", "cli-model", "--game", "kuhn-poker", "--self-play", "--concurrency", "2", "--matches", "2"],
      "--json",
    );
    expect(code, err).toBe(0);
    const summary = JSON.parse(out.trim().split("\n").at(-1)!);
    expect(summary).toMatchObject({ matches: 1, selfPlay: true, opponent: null, seat: null, fallbacks: 0 });
    expect(summary.results.map((r: { seat: number }) => r.seat).sort()).toEqual([0, 1]);
    expect(summary.results[0].statuses).toEqual(["DONE", "DONE"]);
  });
});
