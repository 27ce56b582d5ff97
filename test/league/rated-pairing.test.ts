import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Ticket } from "../../server/matchmaking/matchmaker.ts";
import { ratedPairing } from "../../server/matchmaking/rated-pairing.ts";
import { RawBot } from "../support/raw-bot.ts";
import { until } from "../support/until.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import type { TurnFrame } from "../../protocol/frames.ts";

const ticket = (name: string, since: number, tokenId = name, selfPlay = false): Ticket => ({
  id: name,
  game: "kuhn-poker",
  variant: "standard",
  participant: { kind: "bot", name, tokenId },
  selfPlay,
  since,
  node: "n1",
  epoch: 1,
});

describe("rating-aware pairing", () => {
  const mus: Record<string, number> = { "bot:strong": 40, "bot:strong2": 39, "bot:weak": 12, "bot:weak2": 13 };
  let clock = 0;
  const rule = ratedPairing({
    ratingOf: (_g, _v, player) => (player in mus ? { mu: mus[player], sigma: 2 } : undefined),
    now: () => clock,
  });

  it("pairs similar ratings first, whoever queued first", () => {
    clock = 0;
    const [strong, weak, strong2, weak2] = ["strong", "weak", "strong2", "weak2"].map((n) => ticket(n, 0));
    expect(rule([strong, weak, strong2, weak2], 2)).toEqual([strong, strong2]);
    expect(rule([weak, weak2], 2)).toEqual([weak, weak2]);
  });

  it("widens a ticket's band as it waits, until far ratings meet", () => {
    const [strong, weak] = [ticket("strong", 0), ticket("weak", 0)];
    clock = 1_000; // 28 apart: a band of 2 + 1 a second takes 26 s
    expect(rule([strong, weak], 2)).toBeUndefined();
    clock = 25_000;
    expect(rule([strong, weak], 2)).toBeUndefined();
    clock = 26_000;
    expect(rule([strong, weak], 2)).toEqual([strong, weak]);
  });

  it("counts an unrated player as new (μ 25), and never seats a token against itself", () => {
    clock = 0;
    const fresh = ticket("fresh", 0);
    expect(rule([ticket("strong", 0), fresh, ticket("weak", 0)], 2)).toBeUndefined();
    expect(rule([fresh, ticket("also-new", 0)], 2)).toEqual([fresh, expect.objectContaining({ id: "also-new" })]);
    expect(rule([ticket("a", 0, "same"), ticket("b", 0, "same")], 2)).toBeUndefined();
    expect(rule([ticket("a", 0, "same", true), ticket("b", 0, "same", true)], 2)).toHaveLength(2);
  });
});

describe("the public queue pairs by rating", () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer()));
  afterAll(() => server?.close());

  it("seats the two strong bots together and the two weak ones together", async () => {
    const { store } = server.server;
    // Ratings earned earlier (as a finished tournament would leave them).
    const names = ["ace", "king", "two", "three"];
    await store.league.rate(
      "kuhn-poker",
      "standard",
      [{ matchId: "earlier", players: names.map((n) => `bot:${n}`), returns: [4, 3, 1, 0] }],
      () => [{ mu: 40, sigma: 3 }, { mu: 39, sigma: 3 }, { mu: 11, sigma: 3 }, { mu: 12, sigma: 3 }],
    );
    // The queue reads ratings from a cache loaded at the first look (a queue never waits on the store).
    await until("the ratings cached", () => server.server.matches.ratings!.skill("kuhn-poker", "standard", "bot:ace"));
    const bots = await Promise.all(names.map(async (n) => RawBot.connect(server.wsUrl, await server.token(n))));
    const first = (turn: TurnFrame) => (turn.legal[0] as { action: unknown }).action;
    // Queued strong, weak, strong, weak: first come, first served would pair ace with two.
    for (const i of [0, 2, 1, 3]) {
      bots[i].play(first);
      bots[i].send({ type: "queue", game: "kuhn-poker" });
      await bots[i].next("queued");
    }
    const starts = await Promise.all(bots.map((b) => b.next("match_start")));
    const opponent = (i: number) => starts[i].participants.find((p) => p.name !== names[i])?.name;
    expect(opponent(0)).toBe("king");
    expect(opponent(2)).toBe("three");
    for (const b of bots) b.close();
  });
});
