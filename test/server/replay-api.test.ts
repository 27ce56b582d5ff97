import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MatchRecord, StepRecordRow } from "../../db/records.ts";
import { matchRoutes } from "../../server/api/matches.ts";
import { LiveMatches } from "../../server/match/live-matches.ts";
import { type RunningServer, startHttpServer } from "../../server/http.ts";
import { writeRecorded } from "../support/recorded-matches.ts";
import { SEAT_FILTER_EXPECTED, SEAT_FILTER_MATCHES } from "../support/seat-filter-matches.ts";
import { seedStore } from "../support/seed-store.ts";
import { BACKENDS, openTestStore, type TestStore } from "../support/stores.ts";

interface Summary {
  id: string;
  game: string;
  variant: string;
  createdAt: string;
}

interface ViewTurn {
  turn: number;
  toAct: number[];
  observation: { card: string | null; history: { cards: (string | null)[] }[] };
  decision?: { seq: number; action: unknown; attempts: unknown[]; meta: unknown } | null;
  reward?: number | null;
}

interface View {
  viewer: number | "public";
  turns: ViewTurn[];
  final: { observation: ViewTurn["observation"]; over: boolean; returns: number[] };
}

describe.each(BACKENDS)("the replay HTTP API on %s", (backend) => {
  let t: TestStore;
  let server: RunningServer;
  let all: MatchRecord[];
  beforeAll(async () => {
    t = await openTestStore(backend);
    await seedStore(t.store, { game: "kuhn-poker", matches: 4, seed: "api-kuhn" });
    // Three hands a match: folded hands show no cards, showdowns show both.
    await seedStore(t.store, { game: "kuhn-poker", variant: "textarena", matches: 3, seed: "api-kuhn-3" });
    await seedStore(t.store, { game: "leduc-poker", matches: 4, seed: "api-leduc" });
    await seedStore(t.store, { game: "ipd", matches: 2, strategies: ["tit-for-tat", "random"], seed: "api-ipd" });
    all = await t.store.matches({}, 1000);
    server = await startHttpServer({ port: 0, host: "127.0.0.1" }, { routes: [matchRoutes(t.store)] });
  });
  afterAll(async () => {
    await server?.close();
    await t.close();
  });

  const get = async (path: string) => {
    const res = await fetch(`${server.url}${path}`);
    return { status: res.status, body: await res.json() };
  };
  const ids = (list: Summary[]) => list.map((m) => m.id);
  /** Every page of a listing, following `next`. */
  const pages = async (query: string) => {
    const seen: Summary[][] = [];
    let next: string | null = null;
    do {
      const cursor: string = next === null ? "" : `&cursor=${encodeURIComponent(next)}`;
      const { status, body } = await get(`/matches?${query}${cursor}`);
      expect(status, JSON.stringify(body)).toBe(200);
      seen.push(body.matches);
      next = body.next;
    } while (next !== null);
    return seen;
  };

  it("lists matches newest first (oldest first with order=asc) with their summaries", async () => {
    const { status, body } = await get("/matches?limit=500");
    expect(status).toBe(200);
    expect(ids(body.matches)).toEqual(all.map((m) => m.id).reverse());
    expect(body.next).toBeNull();
    const oldest = await get("/matches?limit=500&order=asc");
    expect(ids(oldest.body.matches)).toEqual(all.map((m) => m.id));
    const first = all[0];
    body.matches = oldest.body.matches;
    expect(body.matches[0]).toEqual({
      id: first.id,
      game: first.game,
      variant: first.variant,
      gameVersion: first.gameVersion,
      group: null,
      rated: false,
      seats: first.seats,
      statuses: first.statuses,
      returns: first.returns,
      endReason: "completed",
      error: null,
      culprit: null,
      steps: first.steps,
      createdAt: first.createdAt.toISOString(),
      startedAt: first.startedAt!.toISOString(),
      endedAt: first.endedAt!.toISOString(),
    });
  });

  it("filters by game, variant, participant and time", async () => {
    const byGame = (await get("/matches?game=leduc-poker&order=asc")).body.matches as Summary[];
    expect(ids(byGame)).toEqual(all.filter((m) => m.game === "leduc-poker").map((m) => m.id));
    const byVariant = (await get("/matches?game=kuhn-poker&variant=textarena")).body.matches as Summary[];
    expect(byVariant).toHaveLength(3);
    expect(byVariant.every((m) => m.variant === "textarena")).toBe(true);
    const name = all.find((m) => m.game === "ipd")!.seats[0]!.name;
    const byParticipant = (await get(`/matches?participant=${encodeURIComponent(name)}&order=asc`)).body
      .matches as Summary[];
    expect(ids(byParticipant)).toEqual(
      all.filter((m) => m.seats.some((s) => s?.name === name)).map((m) => m.id),
    );
    const middle = all[5].createdAt;
    const from = (await get(`/matches?from=${middle.toISOString()}&order=asc`)).body.matches as Summary[];
    expect(ids(from)).toEqual(all.filter((m) => m.createdAt >= middle).map((m) => m.id));
    const to = (await get(`/matches?to=${middle.getTime()}&order=asc`)).body.matches as Summary[];
    expect(ids(to)).toEqual(all.filter((m) => m.createdAt < middle).map((m) => m.id));
  });

  it("pages through every match exactly once, with or without a filter", async () => {
    const paged = await pages("limit=2");
    expect(paged.every((page) => page.length <= 2 && page.length > 0)).toBe(true);
    expect(ids(paged.flat())).toEqual(all.map((m) => m.id).reverse());
    expect(ids((await pages("limit=2&order=asc")).flat())).toEqual(all.map((m) => m.id));
    const kuhn = await pages("limit=3&game=kuhn-poker&order=asc");
    expect(ids(kuhn.flat())).toEqual(all.filter((m) => m.game === "kuhn-poker").map((m) => m.id));
    expect(kuhn.map((page) => page.length)).toEqual([3, 3, 1]);
    expect((await get("/matches")).body.matches).toHaveLength(Math.min(50, all.length));
  });

  it("refuses bad filters, limits and cursors with a sentence saying what is allowed", async () => {
    const { body: firstPage } = await get("/matches?game=kuhn-poker&limit=1");
    const cases: [string, RegExp][] = [
      ["/matches?limit=0", /`limit` must be a whole number from 1 to 500, got "0"/],
      ["/matches?limit=501", /from 1 to 500/],
      ["/matches?limit=ten", /from 1 to 500, got "ten"/],
      ["/matches?game=chess", /no game `chess`; games: ipd, /],
      ["/matches?from=yesterday", /`from` must be an ISO 8601 time/],
      ["/matches?from=2026-01-02&to=2026-01-01", /`from` must be earlier than `to`/],
      [
        "/matches?colour=red",
        /unknown parameter `colour`; allowed: game, version, variant, participant, player, model, opponent, status, from,/,
      ],
      ["/matches?game=ipd&game=kuhn-poker", /`game` is given more than once/],
      ["/matches?cursor=garbage", /`cursor` is not a cursor this server issued/],
      ["/matches?order=newest", /`order` is `desc` \(newest first, the default\) or `asc`/],
      [`/matches?game=kuhn-poker&limit=1&order=asc&cursor=${firstPage.next}`, /`cursor` belongs to a different query/],
      [`/matches?game=leduc-poker&cursor=${firstPage.next}`, /`cursor` belongs to a different query/],
      [`/matches/${all[0].id}?full=1`, /unknown parameter `full`; this route takes none/],
      [`/matches/${all[0].id}/view`, /`seat` must be one of 0, 1, public, all$/],
      [`/matches/${all[0].id}/view?seat=2`, /`seat` must be one of 0, 1, public, all, got "2"/],
      [`/matches/${all[0].id}/view?seat=0&as=me`, /unknown parameter `as`; allowed: seat/],
    ];
    for (const [path, message] of cases) {
      const { status, body } = await get(path);
      expect(status, path).toBe(400);
      expect(body.error.code, path).toBe("bad_query");
      expect(body.error.message, path).toMatch(message);
    }
    const unknown = await get("/matches/no-such-match");
    expect(unknown).toEqual({
      status: 404,
      body: { error: { code: "unknown_match", message: "no match `no-such-match` in the replay store" } },
    });
    expect((await get("/matches/no-such-match/view?seat=0")).status).toBe(404);
  });

  it("gives a match's full record", async () => {
    const match = all.find((m) => m.game === "ipd")!;
    const { status, body } = await get(`/matches/${encodeURIComponent(match.id)}`);
    expect(status).toBe(200);
    expect(body.match).toEqual(JSON.parse(JSON.stringify(match)));
    const steps = JSON.parse(JSON.stringify(await t.store.steps(match.id)));
    expect(body.steps).toEqual(steps);
    expect(body.steps.map((s: StepRecordRow) => s.seq)).toEqual(steps.map((_: unknown, i: number) => i + 1));
  });

  it("shows a seat its own side of a poker match, never the other seat's hole cards or decisions", async () => {
    for (const match of all.filter((m) => m.game !== "ipd")) {
      const steps = await t.store.steps(match.id);
      const views = await Promise.all(
        ["0", "1", "public"].map(async (seat) => (await get(`/matches/${match.id}/view?seat=${seat}`)).body as View),
      );
      const pub = views[2];
      expect(pub.turns).toHaveLength(match.steps);
      for (const seat of [0, 1]) {
        const view = views[seat];
        const other = views[1 - seat];
        expect(view.viewer).toBe(seat);
        expect(view.turns.map((turn) => turn.turn)).toEqual(pub.turns.map((turn) => turn.turn));
        view.turns.forEach((turn, i) => {
          const row = steps.find((s) => s.turn === turn.turn && s.seat === seat);
          // Its own decisions, in full, and what it saw when it made them; none of the other seat's.
          expect(turn.decision ?? null, match.id).toEqual(
            row
              ? JSON.parse(
                JSON.stringify({
                  ...row,
                  matchId: undefined,
                  turn: undefined,
                  seat: undefined,
                  observation: undefined,
                  rewards: undefined,
                }),
              )
              : null,
          );
          if (row) expect(turn.observation).toEqual(row.observation);
          expect(turn.reward).toBe(steps.find((s) => s.turn === turn.turn && s.rewards)!.rewards![seat]);
          // The other seat's card in this hand (every card is unique in both decks) shows only where the public
          // sees it; past hands are compared below.
          const hidden = JSON.stringify(other.turns[i].observation.card);
          expect(hidden).not.toBe("null");
          const mine = JSON.stringify({ ...turn.observation, history: undefined });
          if (mine.includes(hidden)) expect(JSON.stringify(pub.turns[i].observation)).toContain(hidden);
          turn.observation.history.forEach((hand, h) => {
            expect(hand.cards[1 - seat]).toBe(pub.turns[i].observation.history[h].cards[1 - seat]);
          });
        });
        view.final.observation.history.forEach((hand, h) => {
          expect(hand.cards[1 - seat]).toBe(pub.final.observation.history[h].cards[1 - seat]);
          expect(hand.cards[seat]).not.toBeNull();
        });
        expect(view.final).toMatchObject({ over: true, returns: match.returns });
      }
      for (const turn of pub.turns) {
        expect(Object.keys(turn).sort()).toEqual(["observation", "toAct", "turn"]);
        expect(turn.observation.card).toBeNull();
      }
    }
  });

  it("lets a seat step through turns where it did not act, in a simultaneous game too", async () => {
    const match = all.find((m) => m.game === "kuhn-poker")!;
    const { body } = await get(`/matches/${match.id}/view?seat=1`);
    const idle = (body as View).turns.filter((turn) => !turn.toAct.includes(1));
    expect(idle.length).toBeGreaterThan(0);
    for (const turn of idle) expect(turn).toMatchObject({ decision: null, reward: expect.any(Number) });
    const ipd = all.find((m) => m.game === "ipd")!;
    const seat0 = (await get(`/matches/${ipd.id}/view?seat=0`)).body as View;
    expect(seat0.turns).toHaveLength(ipd.steps);
    for (const turn of seat0.turns) expect(turn.toAct).toEqual([0, 1]);
  });

  it("gives the full view of a finished match: every seat's view, every decision, every reward", async () => {
    const match = all.find((m) => m.game === "leduc-poker")!;
    const steps = await t.store.steps(match.id);
    const full = (await get(`/matches/${match.id}/view?seat=all`)).body;
    const views = await Promise.all(
      ["0", "1", "public"].map(async (seat) => (await get(`/matches/${match.id}/view?seat=${seat}`)).body as View),
    );
    expect(full.viewer).toBe("all");
    expect(full.turns).toHaveLength(match.steps);
    full.turns.forEach(
      (
        turn: {
          observation: { public: unknown; seats: unknown[] };
          decisions: { seat: number; seq: number }[];
          rewards: number[] | null;
        },
        i: number,
      ) => {
        expect(turn.observation).toEqual({
          public: views[2].turns[i].observation,
          seats: [views[0].turns[i].observation, views[1].turns[i].observation],
        });
        const rows = steps.filter((s) => s.turn === full.turns[i].turn);
        expect(turn.decisions.map((d) => [d.seat, d.seq])).toEqual(rows.map((r) => [r.seat, r.seq]));
        expect(turn.rewards).toEqual(rows.find((r) => r.rewards)?.rewards ?? null);
      },
    );
    expect(full.final.observation.seats).toEqual([views[0].final.observation, views[1].final.observation]);
  });

  it("shows a match still being played only from the public's side", async () => {
    const live = new LiveMatches({ store: t.store });
    const match = live.create({
      game: "kuhn-poker",
      seats: [{ kind: "bot", name: "waiting" }, { strategy: "random" }],
    });
    await t.store.writer.drain();
    for (
      const path of [`/matches/${match.id}`, `/matches/${match.id}/view?seat=0`, `/matches/${match.id}/view?seat=all`]
    ) {
      const { status, body } = await get(path);
      expect(status, path).toBe(403);
      expect(body.error).toMatchObject({
        code: "match_live",
        message: expect.stringMatching(/still being played.*seat=public/),
      });
    }
    expect((await get(`/matches/${match.id}/view?seat=public`)).status).toBe(200);
    match.abort();
    await t.store.writer.drain();
  });

  it("answers 409 for a match this build cannot re-simulate", async () => {
    const match = all[0];
    await t.store.sql.query(`UPDATE matches SET game_version = 99 WHERE id = $1`, [match.id]);
    const { status, body } = await get(`/matches/${match.id}/view?seat=public`);
    expect(status).toBe(409);
    expect(body.error.code).toBe("not_replayable");
    expect(body.error.message).toMatch(/recorded with kuhn-poker version 99; this build has version 1/);
    expect((await get(`/matches/${match.id}`)).status).toBe(200);
  });
});

describe.each(BACKENDS)("GET /matches filtered by model, opponent and status on %s", (backend) => {
  let t: TestStore;
  let server: RunningServer;
  beforeAll(async () => {
    t = await openTestStore(backend);
    await writeRecorded(t.store, SEAT_FILTER_MATCHES);
    server = await startHttpServer({ port: 0, host: "127.0.0.1" }, { routes: [matchRoutes(t.store)] });
  });
  afterAll(async () => {
    await server?.close();
    await t.close();
  });

  it("lists the matches each filter selects, as the datasets do", async () => {
    for (const { filter, ids } of SEAT_FILTER_EXPECTED) {
      const query = new URLSearchParams({ ...filter, order: "asc" });
      const res = await fetch(`${server.url}/matches?${query}`);
      const body = await res.json();
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body.matches.map((m: Summary) => m.id), query.toString()).toEqual(ids);
    }
    const bad = await fetch(`${server.url}/matches?status=done`);
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toMatch(/`status` is a seat status \(ACTIVE, DONE/);
  });
});
