import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isActionError } from "../../games/core/action.ts";
import { Rng } from "../../games/core/rng.ts";
import { games, getGame } from "../../games/registry.ts";
import { createStrategy } from "../../policies/baselines/index.ts";
import { GAME_STREAM } from "../../games/core/rng.ts";
import type { MatchEndFrame, MatchStartFrame, TurnFrame } from "../../protocol/frames.ts";
import { RawBot } from "../support/raw-bot.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const MATCHES = 50;

/** Where each hidden-information game keeps a seat's private holding in its observation. */
const PRIVATE_KEYS: Readonly<Record<string, string>> = {
  "kuhn-poker": "card",
  "leduc-poker": "card",
  holdem: "holeCards",
  "trust-and-split": "hand",
};

/** Every value under `key` anywhere in `value`, except in finished hands or rounds and the game's structure. */
function valuesAt(value: unknown, key: string): unknown[] {
  if (Array.isArray(value)) return value.flatMap((v) => valuesAt(v, key));
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) =>
    k === "history" || k === "structure" ? [] : k === key ? [JSON.stringify(v), ...valuesAt(v, key)] : valuesAt(v, key)
  );
}

/** A bot that plays the built-in random strategy with its own coin flips, as any remote bot would. */
function randomPolicy(gameId: string, seed: number) {
  const strategy = createStrategy(gameId, "random");
  const rng = new Rng(seed, 7);
  return (turn: TurnFrame) =>
    strategy.act({ seat: turn.seat, legal: turn.legal as never, observation: () => turn.observation, rng });
}

interface SeatLog {
  readonly seat: number;
  readonly start: MatchStartFrame;
  readonly turns: Map<number, TurnFrame>;
  readonly actions: Map<number, unknown>;
}

/**
 * Plays the match again in-process from its revealed seed and the actions the bots sent, checking that
 * every turn frame carried exactly `observe(state, seat)` and `legal(state, seat)`, and that the returns
 * agree: the wire neither leaks nor loses anything.
 */
function replayInProcess(start: MatchStartFrame, end: MatchEndFrame, logs: readonly SeatLog[], config: unknown): void {
  const game = getGame(start.game);
  // A seat is sent the public config (no other seat's private values); the store keeps the whole one.
  for (const log of logs) expect(log.start.config).toEqual(game.publicConfig(config));
  const rng = new Rng(end.seed, GAME_STREAM);
  const state = game.init(config, rng);
  const bySeq = new Map<number, { seat: number; turn: TurnFrame; action: unknown }>();
  for (const log of logs) {
    for (const [seq, turn] of log.turns) bySeq.set(seq, { seat: log.seat, turn, action: log.actions.get(seq) });
  }
  const order = [...bySeq.keys()].sort((a, b) => a - b);
  let next = 0;
  for (let toAct = game.toAct(state); toAct.length > 0; toAct = game.toAct(state)) {
    const moves = new Array(game.seatCount(config)).fill(undefined);
    for (const seat of toAct) {
      const entry = bySeq.get(order[next++])!;
      expect(entry.seat).toBe(seat);
      const key = PRIVATE_KEYS[start.game];
      if (key) {
        // Nothing in the frame but the seat's own holding sits where holdings are kept.
        const own = JSON.stringify((game.observe(state, seat) as Record<string, unknown>)[key]);
        expect(new Set(valuesAt(entry.turn, key))).toEqual(new Set([own]));
      }
      expect(entry.turn.observation).toEqual(game.observe(state, seat));
      expect(entry.turn.legal).toEqual(game.legal(state, seat));
      const action = game.parse(entry.action, state, seat);
      if (isActionError(action)) throw new Error(action.message);
      moves[seat] = action;
    }
    game.apply(state, moves, rng);
  }
  expect(next).toBe(order.length);
  expect(end.returns).toEqual(game.returns(state));
  expect(end.steps).toBeGreaterThan(0);
}

describe("remote bots play every game through the gateway", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  for (const game of games) {
    it(`${game.id}: ${MATCHES} matches, returns and every frame as in-process`, async () => {
      const seats = game.seatCount(getGame(game.id).schema.parse({}));
      const bots = await Promise.all(
        Array.from(
          { length: seats },
          async (_, i) => RawBot.connect(server.wsUrl, await server.token(`${game.id}-${i}`)),
        ),
      );
      bots.forEach((bot, i) => bot.play(randomPolicy(game.id, i + 1)));
      const [host, ...guests] = bots;
      for (let m = 0; m < MATCHES; m++) host.send({ type: "create", game: game.id, seed: `${game.id}/${m}` });
      for (let m = 0; m < MATCHES; m++) {
        const created = await host.next("created");
        for (const guest of guests) guest.send({ type: "join", match: created.invite });
      }
      const ends = await Promise.all(
        Array.from({ length: MATCHES }, () => host.next("match_end", () => true, { timeoutMs: 30_000 })),
      );
      for (const bot of guests) {
        for (let m = 0; m < MATCHES; m++) await bot.next("match_end", () => true, { timeoutMs: 30_000 });
      }
      for (const end of ends) {
        expect(end.reason).toBe("completed");
        expect(end.statuses.every((s) => s === "DONE")).toBe(true);
        const logs = bots.map((bot) => {
          const frames = bot.frames.filter((f) => "match" in f && f.match === end.match);
          const start = frames.find((f) => f.type === "match_start") as MatchStartFrame;
          const turns = new Map(
            frames.filter((f): f is TurnFrame => f.type === "turn").map((t) => [t.seq, t]),
          );
          const actions = new Map(bot.sent.filter((s) => s.match === end.match).map((s) => [s.seq, s.action]));
          expect(frames.filter((f) => f.type === "error")).toEqual([]);
          expect(frames.filter((f) => f.type === "ack")).toHaveLength(turns.size);
          return { seat: start.seat, start, turns, actions };
        });
        await server.server.store.writer.drain();
        const record = (await server.server.store.match(end.match))!;
        replayInProcess(logs[0].start, end, logs, record.config);
      }
      bots.forEach((bot) => bot.close());
    }, 60_000);
  }
});

describe("who plays behind a token", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it("seats a queued seed group only with its own tickets, every match of it from the same start", async () => {
    const [a, b, loner] = await Promise.all(
      ["group-a", "group-b", "loner"].map(async (name) => RawBot.connect(server.wsUrl, await server.token(name))),
    );
    for (const bot of [a, b, loner]) bot.play((turn) => (turn.legal[0] as { action: unknown }).action);
    const round = async () => {
      a.send({ type: "queue", game: "kuhn-poker", group: "same-deal" });
      await a.next("queued");
      // A ticket of no group waits beside the group's: it is not seated with them.
      b.send({ type: "queue", game: "kuhn-poker", group: "same-deal" });
      const [ea, eb] = [await a.next("match_end"), await b.next("match_end")];
      expect(ea.match).toBe(eb.match);
      return (await server.server.store.match(ea.match))!;
    };
    loner.send({ type: "queue", game: "kuhn-poker" });
    await loner.next("queued");
    const first = await round();
    const second = await round();
    expect(first.group).toBe("same-deal");
    expect(second).toMatchObject({ group: "same-deal", seed: first.seed });
    expect(second.id).not.toBe(first.id);
    const health = await (await fetch(`${server.url}/health`)).json();
    expect(health.queued).toEqual({ "kuhn-poker/standard": 1 }); // the loner, still waiting; no group is named
    for (const bot of [a, b, loner]) bot.close();
  });

  it("lets a bots' match go at its end, and still answers what comes after it as the protocol says", async () => {
    const [a, b] = await Promise.all(
      ["late-a", "late-b"].map(async (name) => RawBot.connect(server.wsUrl, await server.token(name))),
    );
    for (const bot of [a, b]) {
      bot.play((turn) => (turn.legal[0] as { action: unknown }).action);
      bot.send({ type: "queue", game: "kuhn-poker" });
    }
    const [end] = await Promise.all([a.next("match_end"), b.next("match_end")]);
    // Not held in memory for the linger time (bots end thousands a minute): its end is in the store.
    expect(server.server.matches.get(end.match)).toBeUndefined();
    a.send({ type: "resume", match: end.match });
    expect(await a.next("match_end")).toEqual(end);
    a.send({ type: "act", match: end.match, seq: 99, action: "check" });
    expect(await a.next("error")).toMatchObject({ code: "not_seated", match: end.match });
    a.send({ type: "withdraw", match: end.match, reason: "too late" });
    expect(await a.next("error")).toMatchObject({ code: "match_over", match: end.match });
    a.send({ type: "withdraw", match: "nosuchmatch1", reason: "never was" });
    expect(await a.next("error")).toMatchObject({ code: "unknown_match" });
    for (const bot of [a, b]) bot.close();
  });

  it("records an agent's model, sampling and endpoint, without the endpoint's credentials or query", async () => {
    const bot = await RawBot.open(server.wsUrl);
    bot.send({
      type: "auth",
      token: await server.token("agent"),
      agent: {
        model: "tiny-model",
        endpoint: "https://user:secret@models.example/v1?api-key=secret#x",
        sampling: { temperature: 0.5, top_p: 0.9, max_tokens: 64, api_key: "sk-live-1", extra: "Bearer sk-live-2" },
      },
    });
    await bot.next("welcome");
    bot.send({ type: "create", game: "ipd", config: { rounds: 1 }, opponents: { "1": "strategy:always-defect" } });
    const created = await bot.next("created");
    const turn = await bot.next("turn");
    bot.act(created.match, turn.seq, { type: "cooperate" });
    await bot.next("match_end");
    const record = await server.server.store.match(created.match);
    expect(record?.seats[0]).toMatchObject({
      name: "agent",
      model: "tiny-model",
      endpoint: "https://models.example/v1",
      sampling: { temperature: 0.5, top_p: 0.9, max_tokens: 64 },
    });
    expect(JSON.stringify(record)).not.toContain("secret");
    // Nothing the server serves or exports holds a credential the agent placed in its sampling parameters.
    for (
      const path of [
        `/matches/${created.match}`,
        "/matches",
        "/players",
        "/datasets/episodes.jsonl",
        "/datasets/turns.jsonl",
        "/datasets/verl.jsonl",
        "/datasets/parquet",
      ]
    ) {
      const res = await fetch(server.url + path);
      expect(res.status, path).toBe(200);
      const body = Buffer.from(await res.arrayBuffer()).toString("latin1");
      expect(body, path).not.toContain("sk-live");
      expect(body, path).not.toContain("api_key");
    }
    // A malformed agent is refused with what is allowed, like any bad frame.
    const other = await RawBot.open(server.wsUrl);
    other.send({ type: "auth", token: await server.token("agent-2"), agent: { model: 7 } });
    expect((await other.next("error")).message).toMatch(/agent/);
    bot.close();
    other.close();
  });
});
