import { createHash } from "node:crypto";
import { Client, CloseCode, type Room } from "@colyseus/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MatchEndFrame, ServerFrame, TurnFrame } from "../../protocol/frames.ts";
import { RawBot } from "../support/raw-bot.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { until } from "../support/until.ts";

/** A browser-side client: records every message a room sends it. */
function record(room: Room): ServerFrame[] {
  const frames: ServerFrame[] = [];
  room.onMessage("*", (_type: unknown, message: unknown) => frames.push(message as ServerFrame));
  return frames;
}

/** Answers every turn the room sends with `action` until the match ends; returns the end and how many it answered. */
async function playOut(room: Room, frames: ServerFrame[], action: string) {
  let answered = 0;
  const end = await until("the match to end", () => {
    const turn = frames.filter((f): f is TurnFrame => f.type === "turn")[answered];
    if (turn) {
      room.send("act", { seq: turn.seq, action });
      answered++;
    }
    return frames.find((f): f is MatchEndFrame => f.type === "match_end");
  });
  return { end, answered };
}

const first = (turn: TurnFrame) => (turn.legal[0] as { action: unknown }).action;

describe("browsers play in Colyseus rooms beside gateway bots", () => {
  let server: TestServer;
  let client: Client;
  beforeAll(async () => {
    server = await startTestServer();
    client = new Client(server.url);
  });
  afterAll(() => server.close());

  it("a person and a gateway bot finish a Kuhn match; a spectator sees only the public view", async () => {
    const room = await client.create("kuhn-poker", { opponents: { "1": "open" }, name: "ada", config: { rounds: 3 } });
    const frames = record(room);
    const created = await until("created", () => frames.find((f) => f.type === "created"));
    if (created.type !== "created") throw new Error();
    expect(room.roomId).toBe(created.match);

    const bot = await RawBot.connect(server.wsUrl, await server.token("opponent"));
    bot.play(first);
    bot.send({ type: "join", match: created.invite });

    const spectator = await client.joinById(created.match, { spectate: true });
    const watched = record(spectator);
    const seen: string[] = [];
    spectator.onStateChange((state: { publicObservation: string }) => seen.push(state.publicObservation));

    const { end, answered } = await playOut(room, frames, "bet");
    expect(end).toMatchObject({ match: created.match, seat: 0, reason: "completed", statuses: ["DONE", "DONE"] });
    expect(frames.filter((f) => f.type === "ack")).toHaveLength(answered);
    const botEnd = await bot.next("match_end");
    expect(botEnd.returns).toEqual(end.returns);

    spectator.send("act", { seq: 1, action: "bet" });
    const refused = await until("the refusal", () => watched.find((f) => f.type === "error"));
    expect(refused).toMatchObject({ code: "spectator" });
    await until("the room to show the end", () => (spectator.state as { phase?: string }).phase === "ended");
    const state = spectator.state as { returns: number[]; seats: { name: string; kind: string }[] };
    expect([...state.returns]).toEqual(end.returns);
    expect(state.seats.map((s) => [s.name, s.kind])).toEqual([["ada", "human"], ["opponent", "bot"]]);
    // The public view never names a private card while a hand is being played.
    for (const json of seen) {
      const view = JSON.parse(json);
      if (view?.phase === "betting") expect(view.card).toBeNull();
    }
    expect(watched.filter((f) => f.type === "turn")).toEqual([]);
    await room.leave();
    await spectator.leave();
  });

  it("people queue with bots; a reload resumes the seat with a full snapshot", async () => {
    const queue = await client.joinOrCreate("queue", { game: "ipd", name: "grace" });
    const queued = record(queue);
    const bot = await RawBot.connect(server.wsUrl, await server.token("queuer"));
    bot.play(first);
    bot.send({ type: "queue", game: "ipd" });
    const matched = await until("matched", () => queued.find((f) => (f.type as string) === "matched")) as unknown as {
      match: string;
      ticket: string;
      seat: number;
    };
    await queue.leave();
    const room = await client.joinOrCreate("ipd", { matchId: matched.match, ticket: matched.ticket });
    const frames = record(room);
    const turn = await until("a turn", () => frames.find((f): f is TurnFrame => f.type === "turn"));
    expect(turn.seat).toBe(matched.seat);
    room.send("act", { seq: turn.seq, action: "defect" });
    await until("the ack", () => frames.find((f) => f.type === "ack"));

    const token = room.reconnectionToken;
    const gone = new Promise((resolve) => room.onLeave(resolve));
    (room as unknown as { connection: { close(): void } }).connection.close(); // the page goes away
    await gone;
    const again = await client.reconnect(token);
    const after = record(again);
    const start = await until("match_start after the reconnect", () => after.find((f) => f.type === "match_start"));
    expect(start).toMatchObject({ match: matched.match, seat: matched.seat, resumed: true });
    const { end } = await playOut(again, after, "cooperate");
    expect(end.reason).toBe("completed");
    expect(end.statuses[matched.seat]).toBe("DONE");
    await again.leave();
  });

  it("reads a room's act as the bot door reads one: an actionId plays, a bad act is refused costing no retry", async () => {
    const room = await client.create("kuhn-poker", {
      opponents: { "1": "strategy:always-call" },
      config: { rounds: 1 },
    });
    const frames = record(room);
    const turn = await until("a turn", () => frames.find((f): f is TurnFrame => f.type === "turn"));
    room.send("act", { seq: turn.seq, action: "bet", actionId: 1 });
    const both = await until("the refusal", () => frames.find((f) => f.type === "error"));
    expect(both).toMatchObject({
      code: "bad_frame",
      message: "bad `act` message: give `action` or `actionId`, not both",
    });
    room.send("act", { seq: turn.seq, action: "bet", extra: 1 });
    await until("the second refusal", () => frames.filter((f) => f.type === "error")[1]);
    expect(frames.filter((f) => f.type === "error")[1]).toMatchObject({
      code: "bad_frame",
      message: expect.stringContaining("extra"),
    });
    room.send("act", { seq: turn.seq, actionId: 1 }); // Kuhn's id 1 is bet (OpenSpiel's)
    const end = await until("the end", () => frames.find((f): f is MatchEndFrame => f.type === "match_end"));
    expect(end.reason).toBe("completed");
    const { steps } = await (await fetch(`${server.url}/matches/${end.match}`)).json();
    expect(steps[0]).toMatchObject({ seq: turn.seq, action: { type: "bet" }, input: { actionId: 1 }, attempts: [] });
    await room.leave();
  });

  it("a seat's key takes the seat back from the page that had it, which is told; another key opens nothing", async () => {
    const key = `key-${crypto.randomUUID()}`;
    const room = await client.create("ipd", { opponents: { "1": "strategy:tit-for-tat" }, seatKey: key });
    const frames = record(room);
    let closed: number | undefined;
    room.onLeave((code: number) => (closed = code));
    await until("a turn", () => frames.find((f) => f.type === "turn"));
    // The store keeps the key's digest only, for a restarted server to honour it.
    const digest = createHash("sha256").update(key).digest("hex");
    const [kept] = await until("the key's digest in the store", async () => {
      const found = await server.server.store.unfinished([room.roomId]);
      return found[0]?.seatKeys?.[0] === digest && found;
    });
    expect(JSON.stringify(kept)).not.toContain(key);

    const again = await client.joinOrCreate("ipd", { matchId: room.roomId, seatKey: key });
    const after = record(again);
    const start = await until("match_start by the key", () => after.find((f) => f.type === "match_start"));
    expect(start).toMatchObject({ match: room.roomId, seat: 0, resumed: true });
    await until("the first page to be told its seat went elsewhere", () => closed === CloseCode.WITH_ERROR);
    await expect(client.joinOrCreate("ipd", { matchId: room.roomId, seatKey: "not-the-seat-key-at-all" })).rejects
      .toThrow(/that key opens no seat/);
    const { end } = await playOut(again, after, "cooperate");
    expect(end.statuses).toEqual(["DONE", "DONE"]);
    await again.leave();
  });

  it("explains a bad matchmaking request", async () => {
    await expect(client.joinOrCreate("kuhn-poker", { matchId: "nope" })).rejects.toThrow(/no live match `nope`/);
    await expect(client.create("chess")).rejects.toThrow(/no room type `chess`; rooms: ipd, /);
    await expect(client.joinOrCreate("queue", {})).rejects.toThrow(/say which `game` to queue for/);
    await expect(client.joinOrCreate("queue", { game: "chess" })).rejects.toThrow(/unknown game `chess` \(games: ipd/);
    const room = await client.create("ipd", { opponents: { "1": "open" } });
    await expect(client.joinById(room.roomId, {})).rejects.toThrow(/join with a seat `ticket`/);
    await expect(client.joinById(room.roomId, { ticket: "forged" })).rejects.toThrow(/ticket is not valid/);
    await expect(client.create("ipd", { opponents: { "1": "strategy:nope" } })).rejects.toThrow(/unknown strategy/);
    await room.leave();
  });
});
