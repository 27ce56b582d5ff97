import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../../server/app.ts";
import { Bot, type Policy, randomAction } from "../../clients/sdk/index.ts";
import { verifyMatch } from "../../db/verify.ts";
import type { SeatRecord } from "../../db/records.ts";
import { linearModel, mlpModel } from "../support/onnx-models.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { until } from "../support/until.ts";
import { ludus } from "../support/cli.ts";
import { legalAnswer, startFakeOpenAI } from "../support/openai-server.ts";
import { runLlm } from "../../clients/llm/runner.ts";
import { startRestartableServer } from "../clients/restartable-server.ts";
import { configure } from "../../games/core/config.ts";
import { getGame } from "../../games/registry.ts";

/**
 * Registered policies as players of a running server: registered over HTTP by an admin token only, seated
 * by name in private matches against bots and each other, recorded by exact version, hot-loaded while
 * matches play, and never removed from under a live match.
 */

const random: Policy = (_observation, legal) => randomAction(legal);

describe("policies on a running server", () => {
  let server: TestServer;
  let admin: string;
  const bots: Bot[] = [];
  const connect = async (maxMatches?: number) => {
    const bot = await Bot.connect({ url: server.wsUrl, token: await server.token(undefined, "bot", maxMatches) });
    bots.push(bot);
    return bot;
  };
  const post = (query: string, body: Uint8Array, token: string | null = admin) =>
    fetch(`${server.url}/policies?${query}`, {
      method: "POST",
      body: body as Uint8Array<ArrayBuffer>,
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
  const ended = (id: string) =>
    until(`match ${id} recorded as ended`, async () => {
      const match = await server.server.store.match(id);
      return match?.endedAt ? match : undefined;
    });
  const verified = async (id: string) => {
    const report = verifyMatch(await ended(id), await server.server.store.steps(id));
    expect(report.differences).toEqual([]);
    expect(report.ok).toBe(true);
  };

  beforeAll(async () => {
    server = await startTestServer();
    admin = await server.token("trainer", "admin");
  });
  afterAll(async () => {
    await Promise.all(bots.map((bot) => bot.close()));
    await server.close();
  });

  it("registers over HTTP with an admin token only; every bad upload is refused with its message", async () => {
    const model = mlpModel(11, 16, 2, 3);
    const noToken = await post("name=kuhn-mlp&game=kuhn-poker", model, null);
    expect(noToken.status).toBe(401);
    expect((await noToken.json()).error.message).toContain("ludus token create --kind admin");
    const player = await post("name=kuhn-mlp&game=kuhn-poker", model, await server.token());
    expect(player.status).toBe(403);
    expect((await player.json()).error.code).toBe("forbidden");
    const refusals: [string, Uint8Array, number, string, string][] = [
      [
        "name=kuhn-mlp&game=kuhn-poker",
        linearModel(30, 3, new Array(90).fill(0), [0, 0, 0]),
        400,
        "bad_policy",
        "[batch, 11]",
      ],
      ["name=kuhn-mlp&game=kuhn-poker", new TextEncoder().encode("GIF89a"), 400, "bad_policy", "not an ONNX model"],
      ["name=kuhn-mlp&game=chess", model, 400, "unknown_game", "chess"],
      ["name=kuhn-mlp", model, 400, "bad_query", "`game` is required"],
      ["name=kuhn-mlp&game=kuhn-poker&colour=red", model, 400, "bad_query", "unknown parameter `colour`"],
    ];
    for (const [query, body, status, code, message] of refusals) {
      const response = await post(query, body);
      const { error } = await response.json();
      expect([response.status, error.code], query).toEqual([status, code]);
      expect(error.message).toContain(message);
    }
    const created = await post("name=kuhn-mlp&game=kuhn-poker&notes=first", model);
    expect(created.status).toBe(201);
    const record = await created.json();
    expect(record).toMatchObject({ name: "kuhn-mlp", version: 1, game: "kuhn-poker", notes: "first" });
    expect(created.headers.get("location")).toBe(`/policies/${record.id}`);
    const duplicate = await post("name=kuhn-mlp&game=kuhn-poker&version=1", model);
    expect(duplicate.status).toBe(409);
    expect((await duplicate.json()).error.message).toContain("already has version 1");
    // Nothing refused was kept; the model reads back byte for byte.
    const { policies } = await (await fetch(`${server.url}/policies`)).json();
    expect(policies.map((p: { name: string; version: number }) => `${p.name}@${p.version}`)).toEqual(["kuhn-mlp@1"]);
    expect(await (await fetch(`${server.url}/policies/kuhn-mlp@1`)).json()).toMatchObject({ id: record.id });
    const bytes = await fetch(`${server.url}/policies/kuhn-mlp/model`);
    expect(bytes.headers.get("x-ludus-policy-version")).toBe("1");
    expect(new Uint8Array(await bytes.arrayBuffer())).toEqual(model);
    expect((await fetch(`${server.url}/policies/nobody`)).status).toBe(404);
  });

  it("plays a remote bot and itself, each match recorded with the exact version and verifiable", async () => {
    const bot = await connect();
    const created = await bot.create({ game: "kuhn-poker", opponents: { 1: "policy:kuhn-mlp" }, policy: random });
    expect((await created.result).reason).toBe("completed");
    const match = await ended(created.match);
    expect(match.seats[1]).toMatchObject(
      { kind: "policy", name: "policy:kuhn-mlp@1", policyVersion: 1 } satisfies Partial<SeatRecord>,
    );
    expect(match.seats[1]!.policyId).toMatch(/^pol_/);
    await verified(created.match);
    // Policy against policy, the creator only watching; greedy in one seat.
    const watched = await bot.create({
      game: "kuhn-poker",
      seat: null,
      opponents: { 0: "policy:kuhn-mlp@1", 1: "policy:kuhn-mlp:greedy" },
      policy: random,
    });
    const both = await ended(watched.match);
    expect(both.seats.map((s) => s?.name)).toEqual(["policy:kuhn-mlp@1", "policy:kuhn-mlp@1:greedy"]);
    expect(both.seats[1]?.greedy).toBe(true);
    expect(both.endReason).toBe("completed");
    await verified(watched.match);
    // The same seed and version play the same match again, sampling included.
    const again = await bot.create({
      game: "kuhn-poker",
      seat: null,
      seed: both.seed,
      opponents: { 0: "policy:kuhn-mlp@1", 1: "policy:kuhn-mlp:greedy" },
      policy: random,
    });
    const steps = async (id: string) => (await server.server.store.steps(id)).map((s) => s.action);
    await ended(again.match);
    expect(await steps(again.match)).toEqual(await steps(watched.match));
  });

  it("plays an LLM seat (a local OpenAI-compatible endpoint), both identities recorded", async () => {
    const fake = await startFakeOpenAI({
      models: ["policy-test-model"],
      script: (request) => ({ content: legalAnswer(request, () => 0) }),
    });
    try {
      const { ends } = await runLlm({
        url: server.wsUrl,
        token: await server.token("an-llm", "llm"),
        game: "kuhn-poker",
        opponent: "policy:kuhn-mlp",
        seat: 0,
        matches: 2,
        agent: { chat: { baseUrl: fake.baseUrl, model: "policy-test-model" } },
      });
      expect(ends.map((e) => e.reason)).toEqual(["completed", "completed"]);
      for (const end of ends) {
        const match = await ended(end.match);
        expect(match.seats[0]).toMatchObject({ kind: "llm", model: "policy-test-model" });
        expect(match.seats[1]).toMatchObject({ kind: "policy", name: "policy:kuhn-mlp@1", policyVersion: 1 });
        await verified(end.match);
      }
    } finally {
      await fake.close();
    }
  });

  it("is administered with the CLI through the server that holds its store", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ludus-policy-server-"));
    try {
      const file = join(dir, "leduc.onnx");
      writeFileSync(file, mlpModel(30, 8, 3, 5));
      const cli = (...argv: string[]) => ludus("policy", ...argv, "--server", server.url);
      const refused = await cli(
        "add",
        file,
        "--game",
        "leduc-poker",
        "--name",
        "leduc-mlp",
        "--token",
        await server.token(),
      );
      expect(refused.code).toBe(1);
      expect(refused.err).toContain("takes an admin token");
      const added = await cli("add", file, "--game", "leduc-poker", "--name", "leduc-mlp", "--token", admin, "--json");
      expect(added.code, added.err).toBe(0);
      expect(JSON.parse(added.out)).toMatchObject({ name: "leduc-mlp", version: 1, inputShape: ["batch", 30] });
      const wrong = await cli("add", file, "--game", "kuhn-poker", "--name", "x", "--token", admin);
      expect(wrong.code).toBe(2);
      expect(wrong.err).toContain("found float32 [batch, 30]");
      const listed = JSON.parse((await cli("list", "--game", "leduc-poker", "--json")).out);
      expect(listed.map((r: { name: string }) => r.name)).toEqual(["leduc-mlp"]);
      expect((await cli("show", "leduc-mlp@1")).out).toContain("leduc-mlp@1");
      const removed = await cli("remove", "leduc-mlp", "--token", admin);
      expect(removed.code, removed.err).toBe(0);
      expect((await cli("show", "leduc-mlp")).code).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses seats it cannot fill with a policy, saying why", async () => {
    const bot = await connect();
    await expect(bot.create({ game: "kuhn-poker", opponents: { 1: "policy:nobody" }, policy: random }))
      .rejects.toMatchObject({ code: "bad_strategy", message: expect.stringContaining("no registered policy nobody") });
    await expect(bot.create({ game: "leduc-poker", opponents: { 1: "policy:kuhn-mlp" }, policy: random }))
      .rejects.toMatchObject({ message: expect.stringContaining("plays kuhn-poker, not leduc-poker") });
    await expect(
      bot.create({
        game: "kuhn-poker",
        config: { rounds: 3, history: 1 },
        opponents: { 1: "policy:kuhn-mlp" },
        policy: random,
      }),
    ).rejects.toMatchObject({ code: "bad_strategy", message: expect.stringContaining("cannot play this kuhn-poker") });
    await expect(bot.create({ game: "kuhn-poker", opponents: { 1: "policy:kuhn-mlp@9" }, policy: random }))
      .rejects.toMatchObject({ message: expect.stringContaining("kuhn-mlp has versions 1") });
  });

  it("lets a superseded version's session go once no match seats it, as a long training run needs", async () => {
    const sessions = async () => (await (await fetch(`${server.url}/health`)).json()).policySessions as number;
    expect((await post("name=kuhn-gone&game=kuhn-poker", linearModel(11, 2, new Array(22).fill(0), [0, 0]))).status)
      .toBe(201);
    const before = await sessions();
    const bot = await connect();
    const play = async () => {
      const created = await bot.create({
        game: "kuhn-poker",
        seat: 0,
        opponents: { 1: "policy:kuhn-gone" },
        policy: random,
      });
      expect((await created.result).reason).toBe("completed");
    };
    // Its match over, the latest version keeps its session for the next match.
    await play();
    expect(await sessions()).toBe(before + 1);
    // A trainer registers the next version after the last match of this one has ended: the old session goes then.
    expect((await post("name=kuhn-gone&game=kuhn-poker", linearModel(11, 2, new Array(22).fill(0), [0, 0]))).status)
      .toBe(201);
    expect(await sessions()).toBe(before);
    await play();
    expect(await sessions()).toBe(before + 1);
  });

  it("hot-loads: a version registered while 100 matches play seats the next ones; the live ones keep theirs", async () => {
    const bot = await connect(300);
    // The bot holds its answers until told: the first hundred matches stay live across the registration.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held: Policy = async (_observation, legal) => {
      await gate;
      return randomAction(legal);
    };
    const create = () => bot.create({ game: "kuhn-poker", seat: 0, opponents: { 1: "policy:kuhn-mlp" }, policy: held });
    const old = await Promise.all(Array.from({ length: 100 }, create));
    const live = old.map((m) => server.server.matches.get(m.match)!);
    expect(live.every((m) => m && !m.ended)).toBe(true);
    const v1 = (await (await fetch(`${server.url}/policies/kuhn-mlp@1`)).json()).id;
    const registered = await post("name=kuhn-mlp&game=kuhn-poker&parent=kuhn-mlp@1", mlpModel(11, 16, 2, 4));
    expect(registered.status).toBe(201);
    const v2 = await registered.json();
    expect(v2).toMatchObject({ version: 2, parent: v1 });
    const fresh = await Promise.all(Array.from({ length: 100 }, create));
    // v1 plays in live matches: it stays.
    const removal = await fetch(`${server.url}/policies/kuhn-mlp@1`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(removal.status).toBe(409);
    expect((await removal.json()).error.message).toMatch(/kuhn-mlp@1 plays in 100 live match/);
    release();
    const versions = async (matches: { match: string }[]) =>
      new Set(await Promise.all(matches.map(async (m) => (await ended(m.match)).seats[1]!.policyVersion)));
    await Promise.all([...old, ...fresh].map((m) => m.result));
    expect(await versions(old)).toEqual(new Set([1]));
    expect(await versions(fresh)).toEqual(new Set([2]));
    for (const m of [old[0], fresh[0]]) await verified(m.match);
    // Once they have ended, v1 can go; v2 stays the latest.
    const later = await fetch(`${server.url}/policies/kuhn-mlp@1`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(later.status).toBe(200);
    expect((await (await fetch(`${server.url}/policies/kuhn-mlp`)).json()).version).toBe(2);
  });
});

describe("a policy match across a restart", () => {
  it("is restored with the same version, its logged decisions replayed, and plays on to the end", async () => {
    const server = await startRestartableServer();
    try {
      const record = await server.server.policies.register(
        { name: "kuhn-five", game: "kuhn-poker", config: { rounds: 5 } },
        mlpModel(kuhnFiveInputs(), 16, 2, 9),
      );
      const bot = await Bot.connect({ url: server.wsUrl, token: await server.token("restarter") });
      let answered = 0;
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let holding!: () => void;
      const held = new Promise<void>((resolve) => (holding = resolve));
      const policy: Policy = async (_observation, legal) => {
        if (++answered > 3) {
          holding();
          await gate;
        }
        return randomAction(legal);
      };
      const created = await bot.create({
        game: "kuhn-poker",
        config: { rounds: 5 },
        opponents: { 1: "policy:kuhn-five" },
        policy,
      });
      await held;
      const before = await server.server.store.steps(created.match);
      expect(before.some((s) => s.seat === 1)).toBe(true); // the policy has decided already
      expect((await server.stop()).kept).toBeGreaterThanOrEqual(1);
      await server.start();
      const back = server.server.matches.get(created.match)!;
      expect(back.participant(1)).toMatchObject({ kind: "policy", name: "policy:kuhn-five@1" });
      expect(server.server.policies.usesOf(record.id)).toBe(1);
      release();
      expect((await created.result).reason).toBe("completed");
      const match = await until("the restored match recorded as ended", async () => {
        const m = await server.server.store.match(created.match);
        return m?.endedAt ? m : undefined;
      });
      expect(match.seats[1]).toMatchObject({ kind: "policy", policyId: record.id, policyVersion: 1 });
      const report = verifyMatch(match, await server.server.store.steps(created.match));
      expect(report.differences).toEqual([]);
      expect(server.server.policies.usesOf(record.id)).toBe(0);
      await bot.close();
      // As an operator checks a store: every match in it, the policy's among them, re-simulates.
      await server.stop();
      const verify = await ludus("replay", "verify", "--all", "--data-dir", server.dataDir, "--json");
      expect(verify.code, verify.err).toBe(0);
      await server.start();
    } finally {
      await server.close();
    }
  });
});

/** Kuhn's tensor width with five rounds. */
function kuhnFiveInputs(): number {
  const game = getGame("kuhn-poker");
  return game.observationShape(configure(game, { rounds: 5 }).config)[0];
}

describe("a policy filling the queue", () => {
  it("seats the policy a game's fill names, and refuses at start a fill naming no policy", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "ludus-fill-"));
    try {
      const options = { port: 0, host: "127.0.0.1", dataDir, fillAfterMs: 50 };
      const first = await startServer(options);
      await first.policies.register({ name: "filler", game: "kuhn-poker" }, mlpModel(11, 8, 2, 2));
      await first.close();
      await expect(startServer({ ...options, fillByGame: { "kuhn-poker": "policy:nobody" } })).rejects.toThrow(
        "no registered policy nobody",
      );
      const server = await startServer({ ...options, fillByGame: { "kuhn-poker": "policy:filler" } });
      try {
        const url = `${server.url.replace(/^http/, "ws")}/bot`;
        const bot = await Bot.connect({ url, token: (await server.tokens.create("alone", "bot")).token });
        const [end] = await bot.play({ game: "kuhn-poker", policy: random });
        expect(end.reason).toBe("completed");
        const match = await until("the filled match recorded", async () => {
          const m = await server.store.match(end.match);
          return m?.endedAt ? m : undefined;
        });
        expect(match.seats.find((s) => s?.kind === "policy")?.name).toBe("policy:filler@1");
        // Other games still fill with the default strategy.
        const [ipd] = await bot.play({ game: "ipd", policy: random });
        expect(ipd.reason).toBe("completed");
        await bot.close();
      } finally {
        await server.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
