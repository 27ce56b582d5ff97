import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Action } from "../../games/core/action.ts";
import { configure } from "../../games/core/config.ts";
import { Episode } from "../../games/core/episode.ts";
import { maskIds, shapeSize } from "../../games/core/numeric.ts";
import { Rng } from "../../games/core/rng.ts";
import { getGame } from "../../games/registry.ts";
import type { MatchStartFrame, TurnFrame } from "../../protocol/frames.ts";
import { RawBot } from "../support/raw-bot.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * The numeric face over the wire: a connection that asks for it gets each turn's information-state tensor and
 * legal ids, and any seat may answer with an action id, which the game reads as the action it stands for now.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** A bot that authenticated asking for the numeric face (or not). */
async function connect(options: { numeric?: boolean; format?: "json" | "msgpack" } = {}): Promise<RawBot> {
  const bot = await RawBot.open(server.wsUrl, options.format);
  bot.send({ type: "auth", token: await server.token(), ...(options.numeric ? { numeric: true } : {}) });
  await bot.next("welcome");
  return bot;
}

const actById = (bot: RawBot, match: string, seq: number, actionId: number) =>
  bot.send({ type: "act", match, seq, actionId });

describe("turn frames with the numeric face", () => {
  for (
    const { game: id, config, format } of [
      { game: "kuhn-poker", config: { rounds: 4 }, format: "msgpack" as const },
      { game: "leduc-poker", config: { hands: 3 }, format: "json" as const },
    ]
  ) {
    it(`${id} (${format}): every tensor is the game's encoding of the observation, the ids its legal ones`, async () => {
      const game = getGame(id);
      const resolved = configure(game, config).config;
      // Both seats are this bot's, so every move is known and a local episode of the same seed follows the match.
      const bot = await connect({ numeric: true, format });
      bot.send({ type: "create", game: id, config, opponents: { "1": "self" }, seed: `numeric-${id}` });
      const created = await bot.next("created");
      const size = shapeSize(game.observationShape(resolved));
      /** The tensor the game encodes from an observation, as the tensors dataset does. */
      const encoded = (observation: unknown) => {
        const out = new Float32Array(size);
        game.encode(observation, out);
        return Array.from(out);
      };
      const local = new Episode(game, resolved, `numeric-${id}`);
      const rng = new Rng("numeric-choices");
      const turns: TurnFrame[] = [];
      const ids: number[] = [];
      while (!local.over) {
        const turn = await bot.next("turn");
        turns.push(turn);
        const [seat] = local.toAct;
        expect(turn.seat).toBe(seat);
        expect(turn.observation).toEqual(local.observe(seat));
        expect(turn.tensor).toEqual(encoded(turn.observation));
        expect(turn.tensor).toEqual(Array.from(local.encode(seat, new Float32Array(size))));
        const legalIds = maskIds(local.legalMask(seat, new Uint8Array(game.actionCount(resolved))));
        expect(turn.legalIds).toEqual(legalIds);
        const id = legalIds[rng.int(legalIds.length)];
        ids.push(id);
        actById(bot, created.match, turn.seq, id);
        const ack = await bot.next("ack");
        const action = local.actionOf(id, seat) as Action;
        expect(ack).toMatchObject({ seq: turn.seq, action, duplicate: false });
        local.step([0, 1].map((s) => (s === seat ? action : undefined)));
      }
      const end = await bot.next("match_end");
      expect(end).toMatchObject({ reason: "completed", returns: [...local.returns()] });
      expect(bot.frames.filter((f) => f.type === "error")).toEqual([]);
      const starts = bot.frames.filter((f) => f.type === "match_start");
      expect(starts).toHaveLength(2);
      for (const start of starts) {
        expect(start.numeric).toEqual({
          observationShape: [...game.observationShape(resolved)],
          actionCount: game.actionCount(resolved),
          encoderVersion: game.encoderVersion ?? 1,
        });
      }

      // The record keeps each action (the id only as the input it came as), and its observations encode as sent.
      await server.server.store.writer.drain();
      const steps = await server.server.store.steps(created.match);
      expect(steps).toHaveLength(turns.length);
      steps.forEach((step, i) => {
        const acked = bot.frames.find((f) => f.type === "ack" && f.seq === step.seq) as { action: unknown };
        expect(step).toMatchObject({ action: acked.action, legal: true, legalIds: turns[i].legalIds });
        expect(step.input).toEqual({ actionId: ids[i] });
        expect(encoded(step.observation)).toEqual(turns[i].tensor);
      });
      bot.close();
    });
  }

  it("a connection that did not ask gets none of it, and may still answer by id", async () => {
    const host = await connect({ numeric: true });
    const guest = await connect();
    host.send({ type: "create", game: "kuhn-poker", config: { rounds: 2 }, opponents: { "1": "open" } });
    const created = await host.next("created");
    guest.send({ type: "join", match: created.invite });
    const [hostStart, guestStart] = [await host.next("match_start"), await guest.next("match_start")];
    expect(hostStart.numeric).toMatchObject({ observationShape: [41], actionCount: 2 }); // two hands' worth
    expect(guestStart).not.toHaveProperty("numeric");
    const answer = async (bot: RawBot, numeric: boolean) => {
      const turn = await bot.next("turn");
      if (numeric) {
        expect(turn.legalIds).toEqual([0, 1]);
        expect(turn.tensor).toHaveLength(41);
      } else {
        expect(turn).not.toHaveProperty("tensor");
        expect(turn).not.toHaveProperty("legalIds");
      }
      actById(bot, created.match, turn.seq, 1); // bet, then call
      return await bot.next("ack");
    };
    expect((await answer(host, true)).action).toEqual({ type: "bet" });
    expect((await answer(guest, false)).action).toEqual({ type: "call" });
    const first = (turn: TurnFrame) => (turn.legal[0] as { action: unknown }).action;
    host.play(first);
    guest.play(first);
    expect(await guest.next("match_end")).toMatchObject({ reason: "completed" });
    host.close();
    guest.close();
  });
});

describe("acts by action id", () => {
  async function leducAgainstSelf(conduct?: Record<string, unknown>) {
    const bot = await connect({ numeric: true });
    bot.send({ type: "create", game: "leduc-poker", opponents: { "1": "self" }, ...(conduct ?? {}) });
    const created = await bot.next("created");
    const turn = await bot.next("turn");
    return { bot, match: created.match, turn };
  }

  it("an illegal or out-of-range id is an illegal action: the legal ids named, retries counted, then the default", async () => {
    const { bot, match, turn } = await leducAgainstSelf();
    expect(turn.legalIds).toEqual([1, 2]); // nothing to fold to yet
    actById(bot, match, turn.seq, 0);
    const illegal = await bot.next("error");
    expect(illegal).toMatchObject({ code: "illegal_action", match, seq: turn.seq, retriesLeft: 1 });
    expect(illegal.message).toBe("action id 0 is not legal now. Legal now: ids 1, 2.");
    actById(bot, match, turn.seq, 3);
    const outside = await bot.next("error");
    expect(outside).toMatchObject({ code: "illegal_action", retriesLeft: 0 });
    expect(outside.message).toBe("action id 3 is out of range: ids are integers in [0, 2]. Legal now: ids 1, 2.");
    actById(bot, match, turn.seq, -1);
    const last = await bot.next("error");
    expect(last.message).toMatch(/^action id -1 is out of range.*No retries are left: the default action is played/);
    // No ack: the conduct policy played the seat's default (call) and the next decision is open.
    const next = await bot.next("turn");
    expect(next.seq).toBe(turn.seq + 1);
    expect(bot.frames.some((f) => f.type === "ack")).toBe(false);
    bot.send({ type: "withdraw", match, seat: 1, reason: "done" });
    bot.send({ type: "withdraw", match, seat: 0, reason: "done" });
    await bot.next("match_end");
    await server.server.store.writer.drain();
    const [first] = await server.server.store.steps(match);
    expect(first).toMatchObject({ action: { type: "call" }, defaulted: "illegal", input: null });
    expect(first.attempts.map((a) => a.input)).toEqual([{ actionId: 0 }, { actionId: 3 }, { actionId: -1 }]);
    bot.close();
  });

  it("a resent id is acknowledged again as a duplicate; another id for a taken decision is stale", async () => {
    const { bot, match, turn } = await leducAgainstSelf();
    actById(bot, match, turn.seq, 2);
    expect(await bot.next("ack")).toMatchObject({ seq: turn.seq, action: { type: "raise" }, duplicate: false });
    actById(bot, match, turn.seq, 2);
    expect(await bot.next("ack")).toMatchObject({ seq: turn.seq, action: { type: "raise" }, duplicate: true });
    actById(bot, match, turn.seq, 1);
    expect(await bot.next("error")).toMatchObject({ code: "stale_sequence", seq: turn.seq });
    bot.close();
  });

  it("both `action` and `actionId`, neither, or an id that is not an integer: a bad frame, no retry spent", async () => {
    const { bot, match, turn } = await leducAgainstSelf();
    const refusals: [Record<string, unknown>, RegExp][] = [
      [{ action: "call", actionId: 1 }, /^bad `act` frame: give `action` or `actionId`, not both$/],
      [{ action: null, actionId: 1 }, /not both/],
      [{}, /^bad `act` frame: `action`: `action` is required: .*or `actionId`/],
      [{ actionId: 1.5 }, /^bad `act` frame: `actionId`: `actionId` must be an integer action id/],
      [{ actionId: "1" }, /^bad `act` frame: `actionId`: /],
    ];
    for (const [fields, message] of refusals) {
      bot.send({ type: "act", match, seq: turn.seq, ...fields });
      const error = await bot.next("error");
      expect(error.code).toBe("bad_frame");
      expect(error.message).toMatch(message);
      expect(error).not.toHaveProperty("retriesLeft");
    }
    actById(bot, match, turn.seq, 1);
    expect(await bot.next("ack")).toMatchObject({ action: { type: "call" } });
    await server.server.store.writer.drain();
    bot.close();
  });

  it("a config with no numeric face: match_start says why, turns carry no tensor, and an id is refused", async () => {
    const bot = await connect({ numeric: true });
    // Observations that list only the last hand cannot make a perfect-recall tensor.
    bot.send({
      type: "create",
      game: "kuhn-poker",
      config: { rounds: 3, history: 1 },
      opponents: { "1": "strategy:random" },
    });
    const created = await bot.next("created");
    const start: MatchStartFrame = await bot.next("match_start");
    expect(start.numeric).toEqual({
      numericFace: expect.stringMatching(/^kuhn-poker has no numeric face here: its observations list only the last 1/),
    });
    const turn = await bot.next("turn");
    expect(turn).not.toHaveProperty("tensor");
    expect(turn).not.toHaveProperty("legalIds");
    actById(bot, created.match, turn.seq, 0);
    const refused = await bot.next("error");
    expect(refused).toMatchObject({ code: "malformed_action", retriesLeft: 1 });
    expect(refused.message).toMatch(/^kuhn-poker has no numeric face here: .*; answer with `action`\.$/);
    bot.act(created.match, turn.seq, "check");
    expect(await bot.next("ack")).toMatchObject({ action: { type: "check" } });
    bot.close();
  });
});
