import { afterEach, describe, expect, it } from "vitest";
import type { TurnFrame } from "../../protocol/frames.ts";
import { RawBot } from "../support/raw-bot.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/** Plays the first legal action: deterministic and always legal. */
const first = (turn: TurnFrame) => {
  const form = turn.legal[0] as { kind: string; action?: unknown; type?: string; min?: number };
  return form.kind === "fixed" ? form.action : { type: form.type, amount: form.min };
};

let server: TestServer;
afterEach(() => server?.close());

/** Two connected bots in a fresh private match of `game`; the host sits in seat 0. */
async function pair(game: string, config?: Record<string, unknown>) {
  const host = await RawBot.connect(server.wsUrl, await server.token());
  const guest = await RawBot.connect(server.wsUrl, await server.token());
  host.send({ type: "create", game, ...(config ? { config } : {}) });
  const created = await host.next("created");
  guest.send({ type: "join", match: created.invite });
  await host.next("match_start");
  await guest.next("match_start");
  return { host, guest, match: created.match };
}

describe("the gateway answers every mistake with its error code, and the match goes on", () => {
  it("illegal actions, out of turn, stale, duplicate and another seat's sequence numbers", async () => {
    server = await startTestServer();
    const { host, guest, match } = await pair("kuhn-poker", { rounds: 3 });
    const turn = await host.next("turn");
    guest.act(match, turn.seq, { type: "check" });
    expect(await guest.next("error")).toMatchObject({ code: "wrong_sequence", match, seq: turn.seq });
    guest.act(match, turn.seq + 50, { type: "check" });
    expect((await guest.next("error")).code).toBe("wrong_sequence");

    host.act(match, turn.seq, { type: "fold" });
    const illegal = await host.next("error");
    expect(illegal).toMatchObject({ code: "illegal_action", retriesLeft: 1 });
    expect(illegal.message).toMatch(/Legal now: check \| bet/);
    host.act(match, turn.seq, "raise a lot");
    expect(await host.next("error")).toMatchObject({ code: "illegal_action", retriesLeft: 0 });
    host.act(match, turn.seq, "check");
    expect(await host.next("ack")).toMatchObject({ seq: turn.seq, action: { type: "check" }, duplicate: false });

    host.act(match, turn.seq, "check");
    expect(await host.next("ack")).toMatchObject({ seq: turn.seq, duplicate: true });
    host.act(match, turn.seq, { type: "bet" });
    expect((await host.next("error")).code).toBe("stale_sequence");
    const guestTurn = await guest.next("turn");
    host.act(match, guestTurn.seq, { type: "check" });
    expect((await host.next("error")).code).toBe("wrong_sequence");
    host.act(match, guestTurn.seq + 1, { type: "check" });
    expect((await host.next("error")).code).toBe("wrong_sequence");

    host.play(first);
    guest.play(first);
    const end = await host.next("match_end");
    expect(end).toMatchObject({ reason: "completed", statuses: ["DONE", "DONE"] });
  });

  it("a bot out of retries gets the default action; under `forfeit` it loses the match", async () => {
    server = await startTestServer();
    const { host, guest, match } = await pair("ipd", { rounds: 2 });
    guest.play(first);
    for (let i = 0; i < 3; i++) host.act(match, (await host.next("turn", () => true, { from: 0 })).seq, "shrug");
    const last = await host.next("error", (e) => /No retries/.test(e.message));
    expect(last.message).toMatch(/No retries are left: the default action is played for you/);
    host.play(first);
    expect(await host.next("match_end")).toMatchObject({ reason: "completed", statuses: ["DONE", "DONE"] });
    await server.close();

    server = await startTestServer({ conduct: { retries: 0, onIllegal: "forfeit" } });
    const second = await pair("ipd");
    second.host.act(second.match, (await second.host.next("turn")).seq, "shrug");
    const end = await second.guest.next("match_end");
    expect(end).toMatchObject({ reason: "forfeit", culprit: 0, statuses: ["INVALID", "DONE"] });
  });

  it("a bot past its clock: the default action, or an abort under `abort`", async () => {
    const clocks = { bot: { baseMs: 40, incrementMs: 40, overageMs: 20 } };
    server = await startTestServer({ clocks });
    const { host, guest } = await pair("ipd", { rounds: 3 });
    guest.play(first);
    const end = await host.next("match_end", () => true, { timeoutMs: 60_000 });
    expect(end).toMatchObject({ reason: "completed", returns: [9, 9] }); // the default is to cooperate
    expect(host.frames.filter((f) => f.type === "turn")).toHaveLength(3);
    await server.close();

    server = await startTestServer({ clocks, conduct: { onTimeout: "abort" } });
    const second = await pair("ipd");
    const aborted = await second.guest.next("match_end", () => true, { timeoutMs: 60_000 });
    expect(aborted).toMatchObject({ reason: "aborted", culprit: 0, statuses: ["TIMEOUT", "DONE"] });
  });
});

describe("dropped connections", () => {
  it("a bot that drops mid-match resumes within the hold and the match completes", async () => {
    server = await startTestServer();
    const token = await server.token("dropper");
    const host = await RawBot.connect(server.wsUrl, token);
    const guest = await RawBot.connect(server.wsUrl, await server.token());
    host.send({ type: "create", game: "kuhn-poker", config: { rounds: 6 } });
    const created = await host.next("created");
    guest.send({ type: "join", match: created.invite });
    guest.play(first);
    const turn = await host.next("turn");
    host.act(created.match, turn.seq, "bet");
    await host.next("ack");
    host.drop();

    const back = await RawBot.open(server.wsUrl);
    back.send({ type: "auth", token });
    const welcome = await back.next("welcome");
    expect(welcome.matches).toEqual([created.match]);
    back.send({ type: "resume", match: created.match });
    const start = await back.next("match_start");
    expect(start).toMatchObject({ match: created.match, seat: 0, resumed: true });
    back.play(first);
    const end = await back.next("match_end", () => true, { timeoutMs: 60_000 });
    expect(end).toMatchObject({ reason: "completed", statuses: ["DONE", "DONE"] });
    expect(end.steps).toBeGreaterThanOrEqual(12);
  });

  it("past the hold the timeout policy plays for the seat, and its status says it left", async () => {
    server = await startTestServer({ conduct: { holdMs: 150 } });
    const { host, guest, match } = await pair("ipd", { rounds: 5 });
    guest.play(first);
    host.drop();
    const end = await guest.next("match_end", () => true, { timeoutMs: 60_000 });
    expect(end).toMatchObject({ reason: "completed", statuses: ["DISCONNECTED", "DONE"] });

    const late = await RawBot.connect(server.wsUrl, await server.token());
    late.send({ type: "resume", match });
    expect((await late.next("error")).code).toBe("not_seated");
    await server.close();

    server = await startTestServer({ conduct: { holdMs: 150, onTimeout: "forfeit" } });
    const second = await pair("ipd", { rounds: 5 });
    second.guest.play(first);
    second.host.drop();
    const forfeit = await second.guest.next("match_end", () => true, { timeoutMs: 60_000 });
    expect(forfeit).toMatchObject({ reason: "forfeit", culprit: 0, statuses: ["DISCONNECTED", "DONE"] });
  });
});

describe("bad frames never take the server down", () => {
  it("answers malformed frames with what was wrong", async () => {
    server = await startTestServer();
    const bot = await RawBot.open(server.wsUrl);
    bot.socket.send("not json");
    expect((await bot.next("error")).message).toMatch(/not JSON/);
    bot.send({ type: "queue", game: "ipd" });
    expect((await bot.next("error")).code).toBe("not_authenticated");
    bot.send({ type: "auth", token: "ludus_000000000000_" + "x".repeat(32) });
    expect((await bot.next("error")).code).toBe("bad_token");
    expect((await bot.whenClosed()).code).toBe(4001);

    const good = await RawBot.connect(server.wsUrl, await server.token());
    good.socket.send("[1, 2]");
    expect((await good.next("error")).code).toBe("bad_frame");
    good.send({ type: "teleport" });
    expect((await good.next("error")).message).toMatch(/no frame type `teleport`; types: auth, queue/);
    good.send({ type: "act", match: 7, seq: 1, action: "x" });
    expect((await good.next("error")).message).toMatch(/bad `act` frame: `match`/);
    good.send({ type: "queue", game: "ipd", colour: "red" });
    expect((await good.next("error")).message).toMatch(/colour/);
    good.send({ type: "queue", game: "chess" });
    expect(await good.next("error")).toMatchObject({ code: "unknown_game" });
    good.send({ type: "create", game: "ipd", config: { rounds: -1 } });
    expect(await good.next("error")).toMatchObject({ code: "bad_config" });
    good.send({ type: "create", game: "ipd", opponents: { "1": "strategy:nope" } });
    expect(await good.next("error")).toMatchObject({ code: "bad_strategy" });
    good.send({ type: "join", match: "no-such-match" });
    expect(await good.next("error")).toMatchObject({ code: "unknown_match" });
    good.send({ type: "ping", id: 3 });
    expect(await good.next("pong")).toMatchObject({ id: 3 });
  });

  it("refuses oversized frames and floods, closes the flooder, and other matches play on", async () => {
    server = await startTestServer({
      limits: {
        frameBytes: { bot: 1024, llm: 65536 },
        unauthenticatedFrameBytes: 512,
        // Low enough that 1000 frames overrun it however slowly a loaded machine delivers them;
        // the 40-round match below stays within the burst.
        framesPerSecond: 20,
        burst: 60,
      },
    });
    const { host, guest } = await pair("ipd", { rounds: 40 });
    host.play(first);
    guest.play(first);

    const llm = await RawBot.connect(server.wsUrl, await server.token("relay", "llm"));
    llm.send({ type: "ping", id: "x".repeat(60_000) });
    expect((await llm.next("error")).code).toBe("bad_frame"); // big enough for an LLM, but ids are short
    const small = await RawBot.connect(server.wsUrl, await server.token());
    small.send({ type: "ping", id: "x".repeat(2000) });
    expect((await small.next("error")).message).toMatch(/at most 1024 bytes for a bot token; this one is \d+/);
    small.socket.send("x".repeat(300_000));
    expect((await small.whenClosed()).code).toBe(1009);

    const flooder = await RawBot.connect(server.wsUrl, await server.token());
    for (let i = 0; i < 1000; i++) flooder.send({ type: "ping" });
    expect((await flooder.next("error")).code).toBe("rate_limited");
    expect(await flooder.whenClosed()).toEqual({ code: 1008, reason: expect.stringMatching(/frames a second/) });

    const end = await host.next("match_end", () => true, { timeoutMs: 60_000 });
    expect(end).toMatchObject({ reason: "completed", statuses: ["DONE", "DONE"], steps: 40 });
    const health = await (await fetch(`${server.url}/health`)).json();
    expect(health.status).toBe("ok");
  }, 20_000);

  it("limits the matches a token sits in at once", async () => {
    server = await startTestServer();
    const bot = await RawBot.connect(server.wsUrl, await server.token("busy", "bot", 2));
    for (let i = 0; i < 3; i++) bot.send({ type: "create", game: "ipd" });
    expect(await bot.next("error")).toMatchObject({ code: "too_many_matches" });
  });
});

describe("withdrawing a seat", () => {
  it("a seat that withdraws: ERROR with its reason in the replay, the default plays on; `abort` ends the match", async () => {
    server = await startTestServer();
    const { host, guest, match } = await pair("ipd", { rounds: 3 });
    guest.play(first);
    const turn = await host.next("turn");
    host.send({ type: "withdraw", match, reason: "the model endpoint refused the key" });
    const end = await host.next("match_end");
    expect(end).toMatchObject({ reason: "completed", statuses: ["ERROR", "DONE"], returns: [9, 9] });
    const rows = (await server.server.store.steps(match)).filter((row) => row.seat === 0);
    expect(rows.map((row) => row.defaulted)).toEqual(["withdrawn", "withdrawn", "withdrawn"]);
    expect(rows[0]).toMatchObject({
      seq: turn.seq,
      legal: false,
      error: { code: "withdrawn", message: "the model endpoint refused the key" },
      attempts: [{ input: null, code: "withdrawn", message: "the model endpoint refused the key" }],
    });
    expect((await server.server.store.match(match))?.statuses).toEqual(["ERROR", "DONE"]);
    // After the end, from a connection without the seat, and without a reason: each is refused with its reason.
    host.send({ type: "withdraw", match, reason: "again" });
    expect(await host.next("error")).toMatchObject({ code: "match_over", match });
    guest.send({ type: "withdraw", match: "no-such-match", reason: "x" });
    expect((await guest.next("error")).code).toBe("unknown_match");
    guest.send({ type: "withdraw", match } as never);
    expect(await guest.next("error")).toMatchObject({ code: "bad_frame" });
    await server.close();

    server = await startTestServer({ conduct: { onTimeout: "abort" } });
    const second = await pair("ipd");
    await second.host.next("turn");
    second.host.send({ type: "withdraw", match: second.match, reason: "stopped by its operator" });
    const aborted = await second.guest.next("match_end");
    expect(aborted).toMatchObject({ reason: "aborted", culprit: 0, statuses: ["ERROR", "DONE"] });
    const [row] = (await server.server.store.steps(second.match)).filter((r) => r.seat === 0);
    expect(row).toMatchObject({ action: null, error: { code: "withdrawn", message: "stopped by its operator" } });
  });
});
