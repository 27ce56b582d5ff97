import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MatchRecord } from "../../db/records.ts";
import { OnlineRatings } from "../../server/league/online-ratings.ts";
import { RawBot } from "../support/raw-bot.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { BACKENDS, openTestStore, type TestStore } from "../support/stores.ts";
import type { TurnFrame } from "../../protocol/frames.ts";

const first = (turn: TurnFrame) => (turn.legal[0] as { action: unknown }).action;

describe("online ratings on a server", () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer()));
  afterAll(() => server?.close());

  it("rates the public queue's matches as they end, and not private ones", async () => {
    const [a, b] = await Promise.all(
      ["ann", "ben"].map(async (name) => RawBot.connect(server.wsUrl, await server.token(name))),
    );
    for (const bot of [a, b]) {
      bot.play(first);
      bot.send({ type: "queue", game: "kuhn-poker" });
    }
    const ends = await Promise.all([a, b].map((bot) => bot.next("match_end")));
    // A private match of the same two: practice, not rated.
    a.send({ type: "create", game: "kuhn-poker", opponents: { "1": "strategy:nash" } });
    await a.next("match_end");
    // Ratings are written in batches a moment after the ends; the server's own ratings say when they are.
    await server.server.matches.ratings!.flush();
    const board = await (await fetch(`${server.url}/ratings?game=kuhn-poker`)).json();
    expect(board.ratings.map((r: { player: string; matches: number }) => [r.player, r.matches]).sort()).toEqual([
      ["bot:ann", 1],
      ["bot:ben", 1],
    ]);
    const annWon = ends[0].returns[ends[0].seat] > 0; // Kuhn has no draws
    expect(board.ratings[0].player).toBe(annWon ? "bot:ann" : "bot:ben");
    expect(board.ratings[0].skill.mu).toBeGreaterThan(board.ratings[1].skill.mu);
    expect(board.ratings.every((r: { provisional: boolean }) => r.provisional)).toBe(true); // one match each
    const stored = await server.server.store.match(ends[0].match);
    expect(stored?.rated).toBe(true);
    a.close();
    b.close();
  });
});

describe.each(BACKENDS)("online ratings' catch-up (%s)", (backend) => {
  let test: TestStore;
  beforeAll(async () => (test = await openTestStore(backend)));
  afterAll(() => test?.close());

  const ended = (id: string, rated: boolean, names: [string, string], returns: number[]): MatchRecord => ({
    id,
    game: "kuhn-poker",
    gameVersion: 1,
    variant: "standard",
    config: {},
    seed: "1",
    seats: names.map((name) => ({ kind: "builtin" as const, name, strategy: name })),
    conduct: {},
    statuses: ["DONE", "DONE"],
    returns,
    endReason: "completed",
    culprit: null,
    steps: 3,
    createdAt: new Date(),
    startedAt: new Date(),
    endedAt: new Date(),
    rated,
  });

  it("rates what a stopped server left unrated, in the order matches ended, each once", async () => {
    const { store } = test;
    await store.writer.writeMatch(ended("m1", true, ["nash", "random"], [1, -1]));
    await store.writer.writeMatch(ended("m2", true, ["nash", "random"], [2, -2]));
    await store.writer.writeMatch(ended("m3", false, ["nash", "random"], [-2, 2])); // practice
    await store.writer.writeMatch(ended("m4", true, ["nash", "nash"], [1, -1])); // self-play: moves nothing
    const ratings = new OnlineRatings(store);
    expect(await ratings.catchUp()).toBe(3);
    expect(await new OnlineRatings(store).catchUp()).toBe(0);
    const board = await store.league.ratings("kuhn-poker", "standard");
    expect(board.map((r) => [r.player, r.matches])).toEqual([["builtin:nash", 2], ["builtin:random", 2]]);
    expect(board[0].mu).toBeGreaterThan(board[1].mu);
    const history = await store.league.history("builtin:nash", "kuhn-poker", "standard", 10);
    expect(history.map((h) => h.matchId)).toEqual(["m1", "m2"]);
    expect(history[1].mu).toBeGreaterThan(history[0].mu);
    expect(history[1].mu).toBe(board[0].mu);
    // The last of them numbered as the player's second, not as the first of the list.
    expect((await store.league.history("builtin:nash", "kuhn-poker", "standard", 1)).map((h) => h.n)).toEqual([2]);
  });
});
