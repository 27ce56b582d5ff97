import { Client } from "@colyseus/sdk";
import { connect, type Socket } from "node:net";
import { readdirSync, rmSync } from "node:fs";
import { Packr, Unpackr } from "msgpackr";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerFrame, TurnFrame } from "../../protocol/frames.ts";
import { RawBot } from "../support/raw-bot.ts";
import { startServerProcess } from "../support/server-process.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { until } from "../support/until.ts";
import { migratedDataDir } from "../support/data-dirs.ts";

/**
 * Every resource a stranger can create is bounded and expires; seats belong to whoever was given them;
 * a token never meets itself unless it asks to. Tried the way a stranger would.
 */

const first = (turn: TurnFrame) => (turn.legal[0].kind === "fixed" ? turn.legal[0].action : "");

/** Opens a bare websocket to the gateway; resolves with it, or rejects with the refusal. */
function rawSocket(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.once("open", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** What a browser's `client.create` asks first: a private Kuhn match with an open seat for a friend. */
const createPrivate = (url: string) =>
  fetch(`${url}/matchmake/create/kuhn-poker`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ opponents: { "1": "open" } }),
  }).then(async (r) => ({ status: r.status, body: await r.json() }));

describe("limits a stranger meets", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ limits: { authTimeoutMs: 500, maxConnections: 6 }, idleMs: 1000 });
  });
  afterAll(() => server.close());
  /** Waits until the gateway counts at most `n` connections (the server forgets a closed one a moment later). */
  const connectionsDown = (n: number) =>
    until(
      `at most ${n} bot connections`,
      async () => (await (await fetch(`${server.url}/health`)).json()).botConnections <= n,
    );

  it("closes a socket that never authenticates (4002), and refuses connections past the cap with 503", async () => {
    const idle = await RawBot.open(server.wsUrl);
    expect(await idle.whenClosed()).toMatchObject({ code: 4002 });
    expect(idle.frames).toMatchObject([{ type: "error", code: "not_authenticated" }]);

    const bots = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => RawBot.connect(server.wsUrl, await server.token(`cap-${i}`))),
    );
    await expect(rawSocket(server.wsUrl)).rejects.toThrow(/503/);
    bots[0].close();
    await bots[0].whenClosed();
    const again = await RawBot.connect(server.wsUrl, await server.token("cap-again"));
    again.close();
    bots.forEach((bot) => bot.close());
    await connectionsDown(0);
  });

  it("closes a connection that never sends a request, and one that idles after its requests", async () => {
    const port = Number(new URL(server.url).port);
    const silent = connect(port, "127.0.0.1");
    silent.on("error", () => {});
    await new Promise((resolve) => silent.once("close", resolve));
    const idle = connect(port, "127.0.0.1");
    idle.on("error", () => {});
    idle.write("GET /health HTTP/1.1\r\nhost: x\r\n\r\n");
    let answered = "";
    idle.on("data", (chunk: Buffer) => (answered += chunk.toString("utf8")));
    await new Promise((resolve) => idle.once("close", resolve));
    expect(answered).toMatch(/^HTTP\/1\.1 200/);
  });

  it("refuses seats the game does not have without leaving a match behind or using up the token", async () => {
    const bot = await RawBot.connect(server.wsUrl, await server.token("seats", "bot", 1));
    bot.send({ type: "create", game: "ipd", seat: 2 ** 32 });
    expect(await bot.next("error")).toMatchObject({ code: "bad_frame" });
    bot.send({ type: "create", game: "ipd", seat: 2 });
    expect(await bot.next("error")).toMatchObject({
      code: "bad_config",
      message: expect.stringMatching(/seats are 0 to 1/),
    });
    bot.send({ type: "create", game: "ipd", opponents: { "4294967296": "open" } });
    expect(await bot.next("error")).toMatchObject({ code: "bad_frame" });
    bot.send({ type: "create", game: "ipd", opponents: { "constructor": "open" } });
    expect(await bot.next("error")).toMatchObject({ code: "bad_frame" });
    // The token may hold one match: nothing above took it.
    bot.play(first);
    bot.send({ type: "create", game: "ipd", config: { rounds: 2 }, opponents: { "1": "strategy:random" } });
    expect((await bot.next("match_end")).reason).toBe("completed");
    expect(bot.frames.filter((f) => f.type === "error" && f.code === "internal_error")).toEqual([]);
    bot.close();
  });

  it("caps a match's length, and a withdrawn seat facing only built-ins ends its match at once", async () => {
    const bot = await RawBot.connect(server.wsUrl, await server.token("runaway"));
    bot.send({ type: "create", game: "kuhn-poker", config: { rounds: 1000 }, opponents: { "1": "strategy:random" } });
    expect(await bot.next("error")).toMatchObject({ code: "bad_config", message: expect.stringMatching(/300/) });
    bot.send({ type: "create", game: "kuhn-poker", config: { rounds: 300 }, opponents: { "1": "strategy:random" } });
    const turn = await bot.next("turn");
    bot.send({ type: "withdraw", match: turn.match, reason: "gone" });
    const end = await bot.next("match_end");
    expect(end).toMatchObject({ reason: "aborted", culprit: turn.seat, statuses: expect.arrayContaining(["ERROR"]) });
    expect(end.steps).toBeLessThan(5);
    bot.close();
  });

  it("never seats a token against itself unless it asks, and then every seat is its own to play", async () => {
    const token = await server.token("narcissus");
    const bot = await RawBot.connect(server.wsUrl, token);
    const twin = await RawBot.connect(server.wsUrl, token);
    bot.send({ type: "queue", game: "ipd" });
    bot.send({ type: "queue", game: "ipd" });
    twin.send({ type: "queue", game: "ipd" });
    await Promise.all([bot.next("queued"), bot.next("queued"), twin.next("queued")]);
    const other = await RawBot.connect(server.wsUrl, await server.token("stranger"));
    other.send({ type: "queue", game: "ipd" });
    const start = await other.next("match_start");
    const seatedWith = [bot, twin].filter((b) =>
      b.frames.some((f) => f.type === "match_start" && f.match === start.match)
    );
    expect(seatedWith).toHaveLength(1);
    expect([...bot.frames, ...twin.frames].filter((f) => f.type === "match_start")).toHaveLength(1);
    [bot, twin, other].forEach((b) => b.close());

    const selfish = await RawBot.connect(server.wsUrl, await server.token("self-player"));
    selfish.play(first);
    selfish.send({ type: "queue", game: "ipd", selfPlay: true });
    selfish.send({ type: "queue", game: "ipd", selfPlay: true });
    const ends = [await selfish.next("match_end"), await selfish.next("match_end")];
    expect(ends.map((e) => e.seat).sort()).toEqual([0, 1]);
    expect(ends[0].match).toBe(ends[1].match);
    expect(ends[0]).toMatchObject({ reason: "completed", statuses: ["DONE", "DONE"] });
    selfish.close();
  });

  it("answers a connection's frames in the order they came: a request's answer or refusal before a later pong", async () => {
    const bot = await RawBot.connect(server.wsUrl, await server.token("orderly"));
    bot.send({ type: "create", game: "kuhn-poker", opponents: { 1: "open" } });
    bot.send({ type: "join", match: "no-such-invite" });
    bot.send({ type: "queue", game: "ipd" });
    bot.send({ type: "cancel", ticket: "no-such-ticket" });
    bot.send({ type: "ping", id: 1 });
    await bot.next("pong", (p) => p.id === 1);
    const created = await bot.next("created");
    bot.send({ type: "join", match: created.invite }); // its own match: refused
    bot.send({ type: "ping", id: 2 });
    await bot.next("pong", (p) => p.id === 2);
    // `created` waits for the match to be stored, as an `ack` for its decision: it is no answer at once.
    const answers = bot.frames.filter((f) => f.type !== "created");
    expect(answers.map((f) => f.type === "error" ? f.code : f.type)).toEqual([
      "welcome",
      "unknown_match",
      "queued",
      "unknown_ticket",
      "pong",
      "already_seated",
      "pong",
    ]);
    bot.close();
  });

  it("keeps a resumed turn's deadline, and sends epoch times as msgpack integers", async () => {
    const token = await server.token("clockwatcher");
    const bot = await RawBot.connect(server.wsUrl, token, { format: "msgpack" });
    bot.send({ type: "create", game: "kuhn-poker", opponents: { "1": "strategy:random" }, seat: 0 });
    const turn = await bot.next("turn");
    bot.drop();
    const back = await RawBot.connect(server.wsUrl, token);
    back.send({ type: "resume", match: turn.match });
    expect((await back.next("turn")).deadline).toBe(turn.deadline);
    back.close();
    // A plain msgpack reader: a float64 would come back as a float; an int64 comes back as a BigInt.
    const socket = await rawSocket(server.wsUrl);
    const replies: Uint8Array[] = [];
    const two = new Promise<void>((resolve) =>
      socket.on("message", (data: Uint8Array) => replies.push(data) === 2 && resolve())
    );
    const packr = new Packr({ useRecords: false });
    socket.send(packr.pack({ type: "auth", token })); // a binary auth: msgpack replies from now on
    socket.send(packr.pack({ type: "ping", id: 1 }));
    await two;
    const pong = new Unpackr({ useRecords: false }).unpack(replies[1]) as { type: string; time: unknown };
    expect(pong.type).toBe("pong");
    expect(typeof pong.time).toBe("bigint");
    socket.close();
  });

  it("a stranger cannot take a creator's seat, and a request without a match id never lands in another's room", async () => {
    // The creator's page has its reservation but has not connected yet.
    const res = await fetch(`${server.url}/matchmake/create/ipd`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ opponents: { "1": "open" }, name: "creator", creatorKey: "forged" }),
    });
    const reservation = await res.json();
    expect(res.status, JSON.stringify(reservation)).toBe(200);
    const stranger = new Client(server.url);
    await expect(stranger.joinById(reservation.roomId, { name: "mallory" })).rejects.toThrow(/join with a seat/);
    await expect(stranger.joinById(reservation.roomId, { creatorKey: "forged" })).rejects.toThrow(/join with a seat/);
    const own = await stranger.joinOrCreate("ipd", { name: "mallory", opponents: { "1": "open" } });
    expect(own.roomId).not.toBe(reservation.roomId);
    await own.leave();
    const creator = new Client(server.url);
    const room = await creator.consumeSeatReservation(reservation);
    const frames: ServerFrame[] = [];
    room.onMessage("*", (_type: unknown, message: unknown) => frames.push(message as ServerFrame));
    const created = await until("the room's created frame", () => frames.find((f) => f.type === "created"));
    expect(created).toMatchObject({ seat: 0, match: reservation.roomId });
    await room.leave();
  });

  it("closes a browser that floods its room; the match it watches plays on", async () => {
    const bot = await RawBot.connect(server.wsUrl, await server.token("watched"));
    bot.play(first);
    bot.send({ type: "create", game: "ipd", config: { rounds: 200 }, opponents: { "1": "strategy:random" } });
    const created = await bot.next("created");
    const spectator = await new Client(server.url).joinById(created.match, { spectate: true });
    const left = new Promise<number>((resolve) => spectator.onLeave((code: number) => resolve(code)));
    for (let i = 0; i < 200; i++) spectator.send("act", { seq: 1, action: "x" });
    expect(await left).not.toBe(1000);
    expect((await bot.next("match_end", () => true, { timeoutMs: 60_000 })).reason).toBe("completed");
    bot.close();
  });

  it("limits anonymous private matches per address: a rate, and a bound on those waiting for players", async () => {
    const answers = [];
    for (let i = 0; i < 12; i++) answers.push(await createPrivate(server.url));
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0].body.code).toMatch(/too_many_matches|rate_limited/);
    expect(answers.filter((a) => a.status === 200).length).toBeLessThanOrEqual(8);
  });
});

// Its own server: the browser rooms are one per process, so this one starts after the stranger's has closed.
describe("limits an operator sets", () => {
  it("raises private matches per address where many people share one (`--room-creates`)", async () => {
    const shared = await startTestServer({ roomCreatesPerSecond: 5 });
    try {
      const answers = [];
      for (let i = 0; i < 12; i++) answers.push(await createPrivate(shared.url));
      expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
    } finally {
      await shared.close();
    }
  });
});

describe("a server at its open-file limit", () => {
  it("takes connections again once the flood is gone, and says what happened", async () => {
    const dataDir = await migratedDataDir("ludus-fds-");
    const server = await startServerProcess(["--data-dir", dataDir], {}, ["prlimit", "--nofile=256:256"]);
    try {
      const pid = server.child.pid!;
      const flood: Socket[] = [];
      for (let i = 0; i < 400; i++) {
        const socket = connect(Number(new URL(server.url).port), "127.0.0.1");
        socket.on("error", () => {});
        flood.push(socket);
      }
      // The flood stays until the server holds every file it may open: only then has an accept failed (the kernel
      // queues connections a busy server has not yet accepted, and closed ones it accepts would never reach it).
      await until("the server at its open-file limit", () => readdirSync(`/proc/${pid}/fd`).length >= 250);
      flood.forEach((s) => s.destroy());
      // Deno's listener had stopped for good; the server noticed, said so and listened again.
      await until("the server saying it listens again", () => /listening on .* again/.test(server.stderr()), 90_000);
      expect(server.stderr()).toMatch(
        /the server stopped accepting connections \(most likely at its open-file limit.*\); listening on .* again/,
      );
      // It says so just before it closes its listener and listens again: the port may refuse a moment.
      await until(
        "/health answered after the flood",
        () => fetch(`${server.url}/health`, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false),
      );
    } finally {
      server.child.kill("SIGKILL");
      await server.exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
