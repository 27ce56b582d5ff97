import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ActionForm as GameForm, parseJsonAction } from "../../games/core/action.ts";
import {
  type ActionForm,
  Bot,
  LudusError,
  type MatchEndFrame,
  type Policy,
  randomAction,
} from "../../clients/sdk/index.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const random: Policy = (_observation, legal) => randomAction(legal);

function expectZeroSum(ends: readonly MatchEndFrame[]): void {
  for (const end of ends) {
    expect(end.reason).toBe("completed");
    expect(end.returns).toHaveLength(2);
    expect(end.returns[0] + end.returns[1]).toBe(0);
  }
}

describe("the bot SDK", () => {
  let server: TestServer;
  const bots: Bot[] = [];
  const connect = async (format?: "json" | "msgpack") => {
    const bot = await Bot.connect({ url: server.wsUrl, token: server.token(), format });
    bots.push(bot);
    return bot;
  };

  beforeAll(async () => {
    server = await startTestServer(); // no fill: queued bots only meet each other
  });
  afterAll(async () => {
    await Promise.all(bots.map((bot) => bot.close()));
    await server.close();
  });

  it("pairs two queued bots for five Kuhn matches, zero-sum each", async () => {
    const [a, b] = await Promise.all([connect(), connect()]);
    expect(a.connection.welcome).toMatchObject({ type: "welcome", server: { name: "ludus" }, matches: [] });
    const [endsA, endsB] = await Promise.all([
      a.play({ game: "kuhn-poker", policy: random, matches: 5 }),
      b.play({ game: "kuhn-poker", policy: random, matches: 5 }),
    ]);
    expect(endsA).toHaveLength(5);
    expect(endsB).toHaveLength(5);
    expectZeroSum(endsA);
    expect(endsB.map((e) => e.match)).toEqual(endsA.map((e) => e.match));
    expect(endsB.map((e) => e.returns)).toEqual(endsA.map((e) => e.returns));
    endsA.forEach((end, i) => expect(endsB[i].seat).toBe(1 - end.seat));
  });

  it("speaks msgpack, and plays a private match by invite", async () => {
    const [host, guest] = await Promise.all([connect("msgpack"), connect("json")]);
    expect(host.connection.format).toBe("msgpack");
    const created = await host.create({ game: "kuhn-poker", seat: 1, opponents: { 0: "open" }, policy: random });
    expect(created.seat).toBe(1);
    const guestEnd = await guest.join(created.invite, random);
    const hostEnd = await created.result;
    expect(hostEnd).toMatchObject({ match: created.match, seat: 1, reason: "completed" });
    expect(guestEnd).toMatchObject({ match: created.match, seat: 0, returns: hostEnd.returns });
    expectZeroSum([hostEnd]);
  });

  it("rejects a bad token with LudusError bad_token", async () => {
    const attempt = Bot.connect({ url: server.wsUrl, token: "not-a-token" });
    await expect(attempt).rejects.toBeInstanceOf(LudusError);
    await expect(attempt).rejects.toMatchObject({ code: "bad_token", message: expect.stringMatching(/not valid/) });
  });

  it("names the URL when it cannot connect", async () => {
    const url = "ws://127.0.0.1:1/bot";
    await expect(Bot.connect({ url, token: "x" })).rejects.toMatchObject({
      code: "connection_failed",
      message: expect.stringContaining(url),
    });
  });

  it("refuses unknown games and joins of unknown invites with the server's error", async () => {
    const bot = await connect();
    await expect(bot.play({ game: "chess", policy: random })).rejects.toMatchObject({ code: "unknown_game" });
    await expect(bot.join("no-such-invite", random)).rejects.toMatchObject({ code: "unknown_match" });
    expect((await bot.connection.ping()).type).toBe("pong");
  });

  it("stops queueing once its signal aborts: a waiting ticket is cancelled, a refused queue still rejects", async () => {
    const bot = await connect();
    const stop = new AbortController();
    const playing = bot.play({ game: "kuhn-poker", policy: random, matches: 3, signal: stop.signal });
    await bot.connection.next("queued");
    stop.abort();
    expect(await playing).toEqual([]);
    await bot.connection.next("cancelled");
    await expect(bot.play({ game: "kuhn-poker", variant: "huge", policy: random, signal: stop.signal })).resolves
      .toEqual([]); // already stopped: nothing is queued
    const refused = bot.play({
      game: "kuhn-poker",
      variant: "huge",
      policy: random,
      signal: new AbortController().signal,
    });
    await expect(refused).rejects.toMatchObject({ code: "bad_config" });
  });

  it("asks the policy again, with the error, after a forgiven illegal action", async () => {
    const bot = await connect();
    const errors: LudusError[] = [];
    let illegalSent = false;
    const clumsy: Policy = (_observation, legal, _turn, error) => {
      if (error) errors.push(error);
      if (illegalSent) return randomAction(legal);
      illegalSent = true;
      return { type: "dance" };
    };
    const created = await bot.create({ game: "kuhn-poker", opponents: { 1: "strategy:random" }, policy: clumsy });
    const end = await created.result;
    expect(end.reason).toBe("completed");
    expect(end.statuses).toEqual(["DONE", "DONE"]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: "illegal_action", match: created.match, retriesLeft: 1 });
  });

  it("answers at retriesLeft 0 too, and stops once the conduct policy has played for it", async () => {
    const bot = await connect();
    const calls = new Map<number, (number | undefined)[]>();
    const stubborn: Policy = (_observation, _legal, turn, error) => {
      calls.set(turn.seq, [...(calls.get(turn.seq) ?? []), error?.retriesLeft]);
      return { type: "dance" };
    };
    const created = await bot.create({ game: "kuhn-poker", opponents: { 1: "strategy:random" }, policy: stubborn });
    const end = await created.result;
    expect(end.reason).toBe("completed"); // default conduct: the seat's default action is played
    expect(calls.size).toBeGreaterThan(0);
    for (const seen of calls.values()) expect(seen).toEqual([undefined, 1, 0]);
  });

  it("queues again when its socket drops while it waits in the queue", async () => {
    const [a, b] = await Promise.all([connect(), connect()]);
    const firstQueued = a.connection.next("queued");
    const playing = a.play({ game: "kuhn-poker", policy: random });
    await firstQueued;
    const requeued = a.connection.next("queued");
    a.connection.drop();
    await requeued;
    // Let the server cancel the dropped socket's ticket, so that b meets the new one.
    while ((await (await fetch(`${server.url}/health`)).json()).queued["kuhn-poker/standard"] !== 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const [endsA, endsB] = await Promise.all([playing, b.play({ game: "kuhn-poker", policy: random })]);
    expect(endsA[0].match).toBe(endsB[0].match);
    expectZeroSum(endsA);
  });

  it("reconnects after its socket drops mid-match, resumes, and finishes the match", async () => {
    const bot = await connect();
    const reconnected = bot.connection.next("reconnected");
    let dropped = false;
    const flaky: Policy = (_observation, legal) => {
      if (!dropped) {
        dropped = true;
        bot.connection.drop(); // the answer below goes nowhere; the resumed turn gets it again
      }
      return randomAction(legal);
    };
    const created = await bot.create({ game: "kuhn-poker", opponents: { 1: "strategy:random" }, policy: flaky });
    const { resumed } = await reconnected;
    expect(resumed).toEqual([created.match]);
    const end = await created.result;
    expect(dropped).toBe(true);
    expect(end).toMatchObject({ match: created.match, reason: "completed", statuses: ["DONE", "DONE"] });
    expect(bot.connection.connected).toBe(true);
  });
});

describe("randomAction", () => {
  const forms: GameForm[] = [
    { kind: "fixed", action: { type: "check" } },
    { kind: "amount", type: "donate", min: 0, max: 2.5, integer: false },
    { kind: "amount", type: "raise", min: 4, max: 9, integer: true },
    { kind: "text", type: "message", maxLength: 10 },
    { kind: "split", type: "split", items: ["hats", "books"], max: [2, 3] },
    { kind: "exchange", type: "offer", give: { Wood: 3, Gold: 0 }, get: { Wood: 2, Gold: 5 }, maxText: 20 },
  ];

  it("is legal for every form kind", () => {
    for (const form of forms) {
      for (let i = 0; i < 200; i++) {
        const action = randomAction([form as ActionForm]);
        expect(parseJsonAction([form], action)).not.toHaveProperty("code");
      }
    }
  });

  it("picks among the forms uniformly", () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 3000; i++) {
      const { type } = randomAction(forms as ActionForm[]) as { type: string };
      counts.set(type, (counts.get(type) ?? 0) + 1);
    }
    for (const form of forms) {
      const type = form.kind === "fixed" ? form.action.type : form.type;
      expect(counts.get(type)).toBeGreaterThan(350);
    }
  });
});
