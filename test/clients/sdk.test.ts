import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Packr } from "msgpackr";
import { type ActionForm as GameForm, parseJsonAction } from "../../games/core/action.ts";
import {
  type ActionForm,
  ActionId,
  Bot,
  LudusError,
  type MatchEndFrame,
  type Policy,
  randomAction,
  Withdrawal,
} from "../../clients/sdk/index.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { startRestartableServer } from "./restartable-server.ts";
import { until } from "../support/until.ts";

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
    // msgpackr's defaults read int64 as BigInt: the SDK must turn the epoch fields back into numbers.
    const msgpack = format === "msgpack" ? new Packr({ useRecords: false }) : undefined;
    const bot = await Bot.connect({ url: server.wsUrl, token: await server.token(), format, msgpack });
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

  it("asks for a msgpack implementation rather than bringing one", async () => {
    await expect(Bot.connect({ url: server.wsUrl, token: await server.token(), format: "msgpack" })).rejects.toThrow(
      'format "msgpack" needs a msgpack implementation: pass `msgpack`, e.g. `new Packr({ useRecords: false })`',
    );
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

  it("asks for the numeric face and answers by action id, asked again after an illegal id", async () => {
    const bot = await Bot.connect({ url: server.wsUrl, token: await server.token(), numeric: true });
    bots.push(bot);
    const starts: unknown[] = [];
    bot.connection.on("match_start", (start) => starts.push(start.numeric));
    const errors: LudusError[] = [];
    const byId: Policy = (_observation, _legal, turn, error) => {
      expect(turn.tensor).toHaveLength(30);
      if (error) errors.push(error);
      // Folding is never legal at Leduc's first decision: id 0 there is refused, and the policy asked again.
      if (errors.length === 0 && !turn.legalIds!.includes(0)) return new ActionId(0);
      return new ActionId(turn.legalIds!.at(-1)!, { ids: turn.legalIds });
    };
    const created = await bot.create({ game: "leduc-poker", opponents: { 1: "strategy:random" }, policy: byId });
    const end = await created.result;
    expect(end).toMatchObject({ reason: "completed", statuses: ["DONE", "DONE"] });
    expect(starts).toEqual([{ observationShape: [30], actionCount: 3, encoderVersion: 1 }]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: "illegal_action", retriesLeft: 1 });
    expect(errors[0].message).toMatch(/^action id 0 is not legal now\. Legal now: ids /);
    await server.server.store.writer.drain();
    const mine = (await server.server.store.steps(created.match)).filter((step) => step.seat === 0);
    for (const step of mine) {
      expect(step).toMatchObject({ legal: true, meta: { ids: step.legalIds } });
      expect(step.input).toEqual({ actionId: step.legalIds!.at(-1) });
    }
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
    await until(
      "the dropped ticket to be cancelled",
      async () => (await (await fetch(`${server.url}/health`)).json()).queued["kuhn-poker/standard"] === 1,
    );
    const [endsA, endsB] = await Promise.all([playing, b.play({ game: "kuhn-poker", policy: random })]);
    expect(endsA[0].match).toBe(endsB[0].match);
    expectZeroSum(endsA);
  });

  it("reconnects after its socket drops mid-match, resumes, and finishes the match", async () => {
    const bot = await connect();
    const reconnected = bot.connection.next("reconnected");
    let dropped = false;
    // The server may send the first turn before `created`: the drop waits for it, so `create` has its answer.
    const createdYet = Promise.withResolvers<void>();
    const flaky: Policy = async (_observation, legal) => {
      await createdYet.promise;
      if (!dropped) {
        dropped = true;
        bot.connection.drop(); // the answer below goes nowhere; the resumed turn gets it again
      }
      return randomAction(legal);
    };
    const created = await bot.create({ game: "kuhn-poker", opponents: { 1: "strategy:random" }, policy: flaky });
    createdYet.resolve();
    const { resumed } = await reconnected;
    expect(resumed).toEqual([created.match]);
    const end = await created.result;
    expect(dropped).toBe(true);
    expect(end).toMatchObject({ match: created.match, reason: "completed", statuses: ["DONE", "DONE"] });
    expect(bot.connection.connected).toBe(true);
  });
});

describe("the bot SDK holding several seats", () => {
  let server: TestServer;
  const bots: Bot[] = [];
  const connect = async () => {
    const bot = await Bot.connect({ url: server.wsUrl, token: await server.token() });
    bots.push(bot);
    return bot;
  };
  /** A policy that records which seat each decision was asked for, and plays the first legal action. */
  const recording = (asked: Map<number, number>): Policy => (_observation, legal, turn) => {
    asked.set(turn.seq, turn.seat);
    return legal[0].kind === "fixed" ? legal[0].action : randomAction(legal);
  };

  beforeAll(async () => {
    server = await startTestServer(); // no fill: queued tickets only meet each other
  });
  afterAll(async () => {
    await Promise.all(bots.map((bot) => bot.close()));
    await server.close();
  });

  it('plays every seat of a match it created with "self" opponents, each decision as its own seat', async () => {
    const bot = await connect();
    const asked = new Map<number, number>();
    const created = await bot.create({
      game: "kuhn-poker",
      config: { rounds: 4 },
      opponents: { 1: "self" },
      policy: recording(asked),
    });
    expect(created.seats).toEqual([0, 1]);
    const ends = await created.ends;
    expect(ends.map((end) => end.seat)).toEqual([0, 1]);
    expect(ends[0]).toMatchObject({ match: created.match, reason: "completed", statuses: ["DONE", "DONE"] });
    expect(ends[1].returns).toEqual(ends[0].returns);
    expect(await created.result).toEqual(ends[0]);
    const steps = await server.server.store.steps(created.match);
    expect(steps.length).toBeGreaterThan(4);
    for (const row of steps) {
      expect(row.defaulted, `decision ${row.seq}`).toBeNull();
      expect(asked.get(row.seq), `decision ${row.seq}`).toBe(row.seat);
    }
    expect(new Set(steps.map((row) => row.seat))).toEqual(new Set([0, 1]));
  });

  it("plays a twelve-seat Donor Game alone (opponent self), every donation its own", async () => {
    const bot = await connect();
    const asked = new Map<number, number>();
    const ends = await bot.play({ game: "donor-game", opponent: "self", policy: recording(asked) });
    expect(ends.map((end) => end.seat)).toEqual(Array.from({ length: 12 }, (_, seat) => seat));
    expect(new Set(ends.map((end) => end.match)).size).toBe(1);
    const steps = await server.server.store.steps(ends[0].match);
    expect(steps).toHaveLength(144);
    for (const row of steps) expect([row.defaulted, asked.get(row.seq)]).toEqual([null, row.seat]);
  });

  it("meets itself in the queue only with selfPlay", async () => {
    const bot = await connect();
    const stop = new AbortController();
    const apart = bot.play({ game: "kuhn-poker", policy: random, matches: 2, concurrency: 2, signal: stop.signal });
    const queued = async () => (await (await fetch(`${server.url}/health`)).json()).queued["kuhn-poker/standard"];
    await bot.connection.next("queued");
    await bot.connection.next("queued");
    expect(await queued()).toBe(2); // the same token never meets itself by default
    stop.abort();
    expect(await apart).toEqual([]);

    const ends = await bot.play({ game: "kuhn-poker", policy: random, matches: 2, concurrency: 2, selfPlay: true });
    expect(ends).toHaveLength(2);
    expect(ends[0].match).toBe(ends[1].match);
    expect(ends.map((end) => end.seat).sort()).toEqual([0, 1]);
    expectZeroSum(ends.slice(0, 1));
  });

  it("alternates its seat against a built-in, and draws a random seat reproducibly from the seed", async () => {
    const bot = await connect();
    const first = (_o: unknown, legal: readonly ActionForm[]) => (legal[0] as { action: unknown }).action;
    const alternating = await bot.play({ game: "kuhn-poker", policy: first, opponent: "random", matches: 4 });
    expect(alternating.map((end) => end.seat)).toEqual([0, 1, 0, 1]);
    const drawn = () =>
      bot.play({ game: "kuhn-poker", policy: first, opponent: "nash", seat: "random", seed: "s", matches: 6 });
    const [one, two] = [await drawn(), await drawn()];
    expect(one.map((end) => [end.seat, end.seed])).toEqual(two.map((end) => [end.seat, end.seed]));
    expect(new Set(one.map((end) => end.seat)).size).toBe(2);
    const fixed = await bot.play({ game: "kuhn-poker", policy: first, opponent: "random", seat: 1, matches: 2 });
    expect(fixed.map((end) => end.seat)).toEqual([1, 1]);
    await expect(bot.play({ game: "kuhn-poker", policy: first, opponent: "self", seat: 1 })).rejects.toThrow(
      "`seat` chooses the bot's seat against a built-in `opponent`",
    );
    await expect(bot.play({ game: "kuhn-poker", policy: first, opponent: "random", seat: 2 })).rejects
      .toMatchObject({ code: "bad_config", message: expect.stringContaining("seats are 0 to 1") });
  });

  it("takes back every seat of a self-play match from a new connection with join(match id)", async () => {
    const token = await server.token();
    const first = await Bot.connect({ url: server.wsUrl, token });
    const [createdYet, gone] = [Promise.withResolvers<void>(), Promise.withResolvers<void>()];
    // The first process dies at its first decision, before answering (once `create` has its answer: the server
    // may send the first turn before `created`).
    const dying: Policy = async () => {
      await createdYet.promise;
      await first.close();
      gone.resolve();
      return new Promise(() => {});
    };
    const created = await first.create({
      game: "kuhn-poker",
      config: { rounds: 3 },
      opponents: { 1: "self" },
      policy: dying,
    });
    createdYet.resolve();
    await gone.promise;
    const second = await Bot.connect({ url: server.wsUrl, token });
    bots.push(second);
    expect(second.connection.welcome.matches).toEqual([created.match]);
    const asked = new Map<number, number>();
    const end = await second.join(created.match, recording(asked));
    expect(end).toMatchObject({ match: created.match, seat: 0, reason: "completed", statuses: ["DONE", "DONE"] });
    const steps = await server.server.store.steps(created.match);
    for (const row of steps) expect([row.defaulted, asked.get(row.seq)]).toEqual([null, row.seat]);
    expect(new Set(steps.map((row) => row.seat))).toEqual(new Set([0, 1]));
  });

  it("withdraws one of its seats and plays on in the others", async () => {
    const bot = await connect();
    const policy: Policy = (_observation, legal, turn) =>
      turn.seat === 1 ? new Withdrawal("seat 1's engine crashed") : randomAction(legal);
    const created = await bot.create({ game: "ipd", opponents: { 1: "self" }, policy });
    const ends = await created.ends;
    expect(ends.map((end) => [end.seat, end.reason, end.statuses])).toEqual([
      [0, "completed", ["DONE", "ERROR"]],
      [1, "completed", ["DONE", "ERROR"]],
    ]);
    const rows = await server.server.store.steps(created.match);
    expect(rows.filter((row) => row.seat === 0).every((row) => row.defaulted === null)).toBe(true);
    expect(rows.find((row) => row.seat === 1)?.error).toEqual({
      code: "withdrawn",
      message: "seat 1's engine crashed",
    });
  });
});

describe("the bot SDK through a server restart", () => {
  it("reconnects after 1012 while the server is down, resumes every seat, and finishes the match", async () => {
    const table = await startRestartableServer();
    // One attempt would be spent long before the new server listens: only the wait for a restart (1012), which
    // counts time, not attempts, brings the bot back.
    const bot = await Bot.connect({
      url: table.wsUrl,
      token: await table.token("restarting"),
      reconnect: { attempts: 1, maxDelayMs: 200 },
    });
    const closes: number[] = [];
    bot.connection.on("disconnected", ({ code }) => closes.push(code));
    let restart: Promise<void> | undefined;
    const policy: Policy = async (_observation, legal) => {
      // The first decision waits out a whole restart: the server stops (its match kept in the store), is
      // down a while, and starts again on the same port.
      restart ??= (async () => {
        const disconnected = bot.connection.next("disconnected");
        expect((await table.stop()).kept).toBe(1);
        await disconnected;
        await table.start();
      })();
      await restart;
      return randomAction(legal);
    };
    try {
      const created = await bot.create({
        game: "kuhn-poker",
        config: { rounds: 3 },
        opponents: { 1: "self" },
        policy,
      });
      const reconnected = await bot.connection.next("reconnected");
      expect(reconnected.resumed).toEqual([created.match]);
      expect(reconnected.welcome.matches).toEqual([created.match]);
      const ends = await created.ends;
      expect(closes).toEqual([1012]);
      expect(ends.map((end) => [end.match, end.seat, end.reason])).toEqual([
        [created.match, 0, "completed"],
        [created.match, 1, "completed"],
      ]);
      const steps = await table.server.store.steps(created.match);
      expect(steps.every((row) => row.defaulted === null)).toBe(true);
    } finally {
      await bot.close();
      await table.close();
    }
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
