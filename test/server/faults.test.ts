import { Client } from "@colyseus/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getGame } from "../../games/registry.ts";
import type { ServerFrame, TurnFrame } from "../../protocol/frames.ts";
import { RawBot } from "../support/raw-bot.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { until } from "../support/until.ts";

/**
 * A fault in one match ends that match, nothing else; what the store cannot keep is refused at the door;
 * a seat is sent only what it may know.
 */

const first = (turn: TurnFrame) => (turn.legal[0].kind === "fixed" ? turn.legal[0].action : "");

/** Waits for `match` to have ended in the store, and returns its record. */
function endedRecord(server: TestServer, match: string) {
  return until(`match ${match} to be stored as ended`, async () => {
    await server.server.store.writer.drain();
    const record = await server.server.store.match(match);
    return record?.endedAt ? record : undefined;
  });
}

describe("faults stay inside their match", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ conduct: { holdMs: 400 } });
  });
  afterAll(() => server.close());

  it("a private match whose creator closes the tab before anyone joins is aborted; the server lives on", async () => {
    // The browser lobby's "Private match": the person's page opens a room for it, then the tab closes.
    const client = new Client(server.url);
    const room = await client.create("kuhn-poker", { opponents: { "1": "open" }, name: "ada" });
    const match = room.roomId;
    (room as unknown as { connection: { close(): void } }).connection.close();
    const record = await endedRecord(server, match);
    expect(record).toMatchObject({ endReason: "aborted", culprit: 0 });
    expect(record.statuses[0]).toBe("DISCONNECTED");
    expect(record.seats[1]).toBeNull();
    const health = await (await fetch(`${server.url}/health`)).json();
    expect(health.status).toBe("ok");
  });

  it("a throw inside one match ends it in error with the cause recorded; a match beside it plays on", async () => {
    const live = server.server.matches;
    const broken = live.create({
      game: "ipd",
      seats: [{ strategy: "random" }, { kind: "bot", name: "x", tokenId: "t" }],
    });
    const fine = live.create({
      game: "ipd",
      seats: [{ strategy: "random" }, { kind: "bot", name: "y", tokenId: "u" }],
    });
    broken.subscribe((event) => {
      if (event.kind === "turn") throw new Error("a listener that breaks");
    });
    const record = await endedRecord(server, broken.id);
    expect(record).toMatchObject({ endReason: "error", statuses: ["ERROR", "ERROR"] });
    expect(record.error).toMatch(/a listener that breaks/);
    expect(fine.ended).toBe(false);
    const bot = await RawBot.connect(server.wsUrl, await server.token("beside"));
    bot.play(first);
    bot.send({ type: "create", game: "ipd", config: { rounds: 3 }, opponents: { "1": "strategy:random" } });
    expect((await bot.next("match_end")).reason).toBe("completed");
    fine.abort();
    bot.close();
  });

  it("refuses what the store could not keep (NUL, unpaired surrogates) with bad_frame, from bots and browsers", async () => {
    const bot = await RawBot.connect(server.wsUrl, await server.token("poisoner"));
    const names = Array.from({ length: 12 }, (_, i) => `agent ${i}`);
    bot.send({ type: "create", game: "donor-game", config: { names: [...names.slice(0, 11), "bad\u0000name"] } });
    expect(await bot.next("error")).toMatchObject({ code: "bad_frame", message: expect.stringMatching(/NUL/) });
    bot.send({ type: "create", game: "trust-and-split", opponents: { "1": "strategy:random" } });
    const turn = await bot.next("turn");
    bot.act(turn.match, turn.seq, { type: "message", text: "half a pair \ud800" });
    expect(await bot.next("error")).toMatchObject({
      code: "bad_frame",
      message: expect.stringMatching(/unpaired surrogate/),
    });
    bot.act(turn.match, turn.seq, "hello", { note: "nul \u0000 in meta" });
    expect(await bot.next("error")).toMatchObject({ code: "bad_frame", message: expect.stringMatching(/`meta.note`/) });
    bot.act(turn.match, turn.seq, "message hello");
    expect(await bot.next("ack")).toMatchObject({ action: { type: "message", text: "hello" } });
    expect(bot.frames.filter((f) => f.type === "error" && f.code === "internal_error")).toEqual([]);

    const client = new Client(server.url);
    await expect(client.create("ipd", { opponents: { "1": "strategy:random" }, name: "nul\u0000" })).rejects.toThrow(
      /NUL/,
    );
    const room = await client.create("ipd", { opponents: { "1": "strategy:random" }, name: "ada" });
    const frames: ServerFrame[] = [];
    room.onMessage("*", (_type: unknown, message: unknown) => frames.push(message as ServerFrame));
    const { seq } = await until("a turn", () => frames.find((f): f is TurnFrame => f.type === "turn"));
    room.send("act", { seq, action: "cooperate", meta: { x: "\u0000" } });
    expect(await until("the refusal", () => frames.find((f) => f.type === "error"))).toMatchObject({
      code: "bad_frame",
    });
    await room.leave();
    bot.close();
  });

  it("sends a seat only the public config: no other player's private values, in match_start or the live public view", async () => {
    const [host, guest] = await Promise.all(
      ["nego-a", "nego-b"].map(async (name) => RawBot.connect(server.wsUrl, await server.token(name))),
    );
    host.send({ type: "create", game: "simple-negotiation", opponents: { "1": "open" } });
    const created = await host.next("created");
    guest.send({ type: "join", match: created.invite });
    const [a, b] = await Promise.all([host.next("match_start"), guest.next("match_start")]);
    const game = getGame("simple-negotiation");
    const full = (await server.server.store.match(created.match))!.config as Record<string, unknown>;
    expect(full.values).toBeDefined();
    for (const start of [a, b]) {
      expect(start.config).toEqual(game.publicConfig(full));
      expect(start.config).not.toHaveProperty("values");
    }
    const view = await (await fetch(`${server.url}/matches/${created.match}/view?seat=public`)).json();
    expect(view.match.config).not.toHaveProperty("values");
    expect(JSON.stringify(view)).not.toContain(JSON.stringify(full.values));
    host.close();
    guest.close();
  });
});
