import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GATEWAY_PATH, type TurnFrame } from "../../protocol/frames.ts";
import { type LudusServer, startServer } from "../../server/app.ts";
import { RawBot } from "../support/raw-bot.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { migratedDataDir } from "../support/data-dirs.ts";

/**
 * `create.agents`: one connection playing seats of different models declares who plays each one, and every seat is
 * recorded with its own agent (docs/protocol.md, `create`).
 */

const cooperate = (turn: TurnFrame) => (turn.legal.length ? { type: "cooperate" } : undefined);

const BASE = { model: "base-model", endpoint: "https://base.example/v1", sampling: { temperature: 0 } };
const SECOND = {
  model: "second-model",
  endpoint: "https://user:secret@second.example/v1?api-key=secret",
  sampling: { temperature: 0.7, top_p: 0.9 },
};
/** SECOND as the record keeps it: the endpoint without credentials or query. */
const SECOND_RECORDED = { ...SECOND, endpoint: "https://second.example/v1" };

async function authed(wsUrl: string, token: string, agent?: object): Promise<RawBot> {
  const bot = await RawBot.open(wsUrl);
  bot.send({ type: "auth", token, ...(agent ? { agent } : {}) });
  await bot.next("welcome");
  return bot;
}

describe("per-seat agents on one connection", () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer()));
  afterAll(() => server.close());

  it("records each self seat with the agent `create.agents` names, the others with `auth.agent`", async () => {
    const name = "two-models";
    const bot = await authed(server.wsUrl, await server.token(name, "llm"), BASE);
    bot.play(cooperate);
    bot.send({
      type: "create",
      game: "ipd",
      config: { rounds: 2 },
      opponents: { "1": "self" },
      agents: { "1": SECOND },
    });
    const created = await bot.next("created");
    expect(created.seats).toEqual([0, 1]);
    await bot.next("match_end");
    await bot.next("match_end");
    const record = await server.server.store.match(created.match);
    expect(record?.seats).toEqual([
      expect.objectContaining({ kind: "llm", name, ...BASE }),
      expect.objectContaining({ kind: "llm", name, ...SECOND_RECORDED }),
    ]);
    expect(JSON.stringify(record)).not.toContain("secret");
    // Naming both seats overrides the connection's agent for both; a connection without one may name its seats too.
    const bare = await authed(server.wsUrl, await server.token("bare", "llm"));
    bare.play(cooperate);
    bare.send({
      type: "create",
      game: "ipd",
      config: { rounds: 1 },
      seat: 1,
      opponents: { "0": "self" },
      agents: { "0": SECOND, "1": { model: "only-a-model" } },
    });
    const both = await bare.next("created");
    expect(both.seats).toEqual([1, 0]);
    await bare.next("match_end");
    await bare.next("match_end");
    const seats = (await server.server.store.match(both.match))?.seats;
    expect(seats?.[0]).toMatchObject(SECOND_RECORDED);
    expect(seats?.[1]).toMatchObject({ name: "bare", model: "only-a-model" });
    expect(seats?.[1]).not.toHaveProperty("endpoint");
    bot.close();
    bare.close();
  });

  it("refuses bad `agents` with what is wrong and what is allowed, creating nothing, and goes on serving", async () => {
    const bot = await authed(server.wsUrl, await server.token("careless", "llm"), BASE);
    const before = server.server.matches.all().length;
    const refusals: [object, string, RegExp][] = [
      [{ agents: "second-model" }, "bad_frame", /`agents`: agents are an object keyed by seat number, e\.g\./],
      [{ agents: ["second-model"] }, "bad_frame", /`agents`: agents are an object keyed by seat number/],
      [{ agents: { first: SECOND } }, "bad_frame", /`agents\.first`: agents are an object keyed by seat number/],
      [{ agents: { "1": "second-model" } }, "bad_frame", /`agents\.1`: an agent is an object of `model`, `endpoint`/],
      [{ agents: { "1": { model: "m", key: "sk-1" } } }, "bad_frame", /`agents\.1`: an agent is an object of/],
      [{ agents: { "1": { model: "m".repeat(257) } } }, "bad_frame", /`agents\.1\.model`: .*256 characters/],
      [{ agents: { "1": { endpoint: "" } } }, "bad_frame", /`agents\.1\.endpoint`: .*1 character/],
      [
        { agents: { "1": { sampling: { temperature: { value: 1 } } } } },
        "bad_frame",
        /`agents\.1\.sampling\.temperature`: a sampling value is a string, a number, a boolean or null/,
      ],
      [
        { agents: { "1": { sampling: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`p${i}`, i])) } } },
        "bad_frame",
        /`agents\.1\.sampling`: at most 32 sampling parameters/,
      ],
      [
        { opponents: { "1": "open" }, agents: { "1": SECOND } },
        "bad_config",
        /`agents` names seat 1, which is open for the invite: agents are for the seats this connection plays here \(seat 0:/,
      ],
      [
        { opponents: { "1": "strategy:always-defect" }, agents: { "1": SECOND } },
        "bad_config",
        /`agents` names seat 1, which the server plays \("always-defect"\): .*\(seat 0: `seat` and the "self" opponents\)/,
      ],
      [
        { seat: null, opponents: { "1": "strategy:always-defect" }, agents: { "0": SECOND } },
        "bad_config",
        /`agents` names seat 0, which is open for the invite: .*plays here \(none:/,
      ],
      [
        { opponents: { "1": "self" }, agents: { "2": SECOND } },
        "bad_config",
        /`agents` seat "2" is not a seat of this ipd match: seats are 0 to 1/,
      ],
    ];
    for (const [fields, code, message] of refusals) {
      bot.send({ type: "create", game: "ipd", config: { rounds: 1 }, ...fields });
      const error = await bot.next("error");
      expect(error.code, JSON.stringify(fields)).toBe(code);
      expect(error.message, JSON.stringify(fields)).toMatch(message);
    }
    expect(server.server.matches.all().length).toBe(before); // no refused create left a match behind
    // The same connection and the server go on: a well-formed create plays out.
    bot.play(cooperate);
    bot.send({
      type: "create",
      game: "ipd",
      config: { rounds: 1 },
      opponents: { "1": "self" },
      agents: { "0": SECOND },
    });
    const created = await bot.next("created");
    expect((await bot.next("match_end")).reason).toBe("completed");
    expect((await server.server.store.match(created.match))?.seats[0]).toMatchObject(SECOND_RECORDED);
    bot.close();
  });
});

describe("per-seat agents across a restart", () => {
  let dataDir: string;
  let server: LudusServer | undefined;
  const wsUrl = () => `${server!.url.replace(/^http/, "ws")}${GATEWAY_PATH}`;
  beforeAll(async () => void (dataDir = await migratedDataDir("ludus-seat-agents-")));
  afterAll(async () => {
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("keeps each seat's agent, the connection's and `create.agents`', when the match is restored and resumed", async () => {
    const start = () => startServer({ port: 0, host: "127.0.0.1", dataDir, fillAfterMs: null });
    server = await start();
    const token = (await server.tokens.create("restarted", "llm")).token;
    const bot = await authed(wsUrl(), token, BASE);
    bot.send({
      type: "create",
      game: "ipd",
      config: { rounds: 3 },
      opponents: { "1": "self" },
      agents: { "1": SECOND },
    });
    const created = await bot.next("created");
    await bot.next("turn"); // under way, its turns unanswered, when the server stops
    const closed = bot.whenClosed();
    expect((await server.close()).kept).toBe(1);
    await closed;
    server = await start();
    expect(server.restored.restored.map((m) => m.id)).toEqual([created.match]);
    const expected = [expect.objectContaining(BASE), expect.objectContaining(SECOND_RECORDED)];
    expect((await server.store.match(created.match))?.seats).toEqual(expected);
    // Back without declaring any agent: the seats keep the ones they were created with.
    const back = await authed(wsUrl(), token);
    back.play(cooperate);
    back.send({ type: "resume", match: created.match });
    const ends = [await back.next("match_end"), await back.next("match_end")];
    expect(ends.map((end) => end.reason)).toEqual(["completed", "completed"]);
    const record = await server.store.match(created.match);
    expect(record?.steps).toBe(3); // rounds, each a simultaneous step
    expect(record?.seats).toEqual(expected);
    back.close();
  });
});
