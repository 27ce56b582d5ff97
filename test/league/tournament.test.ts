import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReplayStore } from "../../db/store.ts";
import type { Standings } from "../../server/league/tournament/standings.ts";
import { runLudus, spawnLudus, startServerProcess } from "../support/server-process.ts";
import { BACKENDS, emptyStoreOptions } from "../support/stores.ts";
import type { StoreOptions } from "../../db/store.ts";
import { ludus } from "../support/cli.ts";
import { legalAnswer, startFakeOpenAI } from "../support/openai-server.ts";

/**
 * `ludus tournament` as a person runs it: its own process, a real store (PGlite, and PostgreSQL where CI has one),
 * killed with SIGKILL half-way and resumed.
 */

const KUHN = ["--game", "kuhn-poker", "--format", "round-robin", "--players", "nash,always-call,always-raise,random"];

const where = (options: StoreOptions) =>
  options.databaseUrl ? ["--database-url", options.databaseUrl] : ["--data-dir", options.dataDir];

describe.each(BACKENDS)("ludus tournament (%s)", (backend) => {
  // The PostgreSQL pass runs what reaches the store; pairing formats and flag checks are the same on either.
  const onEither = backend === "pglite";
  let options: StoreOptions;
  let cleanup: () => Promise<void>;
  beforeAll(async () => ({ options, cleanup } = await emptyStoreOptions(backend)));
  afterAll(() => cleanup?.());

  it("plays a round robin, stores it, and ranks the Nash strategy first with intervals", async () => {
    const run = await runLudus(["tournament", ...KUHN, "--matches", "400", "--json", ...where(options)]);
    expect(run.code, run.err).toBe(0);
    const result = JSON.parse(run.out) as Standings;
    expect(result.slots).toEqual({ planned: 2400, completed: 2400, failed: 0 });
    expect(result.standings.map((r) => r.rank)).toEqual([1, 2, 3, 4]);
    expect(result.standings[0].player).toBe("nash");
    for (const row of result.standings) {
      expect(row.ci[0]).toBeLessThanOrEqual(row.rating);
      expect(row.ci[1]).toBeGreaterThanOrEqual(row.rating);
      expect(row.matches).toBe(1200);
      expect(row.id).toBe(`builtin:${row.player}`);
      // Every one of its 1,200 matches moved its online rating once.
      expect(row.skill?.sigma).toBeLessThan(8.3);
    }
    // α-Rank over the payoff table (zero-sum, every pair met): nash, which beats every other player, takes the mass.
    expect(result.alphaRank).toEqual({ alpha: 50, populationSize: 50 });
    expect(result.standings[0].alphaRank).toBeGreaterThan(0.9);
    expect(result.standings.reduce((m, r) => m + r.alphaRank!, 0)).toBeCloseTo(1, 3);
    const ratings = [...result.standings].sort((a, b) => b.rating - a.rating);
    expect(ratings.map((r) => r.player)).toEqual(result.standings.map((r) => r.player));
    // The payoff matrix: nash earns from each opponent, and the table is zero-sum.
    const nash = result.payoff.players.indexOf("nash");
    for (let j = 0; j < 4; j++) {
      if (j === nash) expect(result.payoff.cells[nash][j]).toBeNull();
      else expect(result.payoff.cells[nash][j]!.mean).toBeGreaterThan(0);
    }
    const store = await ReplayStore.open(options);
    try {
      const stored = await store.league.tournaments(10);
      expect(stored.map((t) => t.id)).toEqual([result.tournament.id]);
      expect(stored[0].endedAt).not.toBeNull();
      const online = await store.league.ratings("kuhn-poker", "standard");
      expect(online.map((r) => [r.player, r.matches])).toEqual(
        ["always-call", "always-raise", "nash", "random"].map((p) => [`builtin:${p}`, 1200]),
      );
    } finally {
      await store.close();
    }
  });

  it("serves tournaments, their standings and the game's online leaderboard over HTTP", async () => {
    const server = await startServerProcess(
      options.databaseUrl ? [] : ["--data-dir", options.dataDir],
      options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {},
    );
    try {
      const get = async (path: string) => {
        const res = await fetch(`${server.url}${path}`);
        return { status: res.status, body: await res.json() };
      };
      const list = await get("/tournaments");
      expect(list.status).toBe(200);
      const [stored] = list.body.tournaments;
      expect(stored).toMatchObject({ game: "kuhn-poker", format: "round-robin", players: KUHN[5].split(",") });
      const one = await get(`/tournaments/${stored.id}`);
      expect(one.status).toBe(200);
      expect(one.body.standings[0]).toMatchObject({ rank: 1, player: "nash" });
      expect(one.body.slots).toEqual({ planned: 2400, completed: 2400, failed: 0 });
      // The published board: a refit of the rated matches by their margins (chips), so nash leads here too,
      // though it wins fewer hands than always-raise (which an online, win-or-lose rating ranks first).
      const history = await get("/ratings/history?player=builtin:nash&game=kuhn-poker");
      expect(history.status).toBe(200);
      expect(history.body.points).toHaveLength(1200);
      expect(history.body.points.at(-1).mu).toBe(
        (await get("/ratings?game=kuhn-poker")).body.ratings.find((r: { player: string }) =>
          r.player === "builtin:nash"
        )
          .skill.mu,
      );
      const board = await get("/ratings?game=kuhn-poker");
      expect(board.status).toBe(200);
      expect(board.body).toMatchObject({ variant: "standard", matches: 2400 });
      expect(board.body.ratings).toHaveLength(4);
      expect(board.body.ratings[0].player).toBe("builtin:nash");
      for (const row of board.body.ratings) {
        expect(row).toMatchObject({ matches: 1200, provisional: false });
        expect(row.ci[0]).toBeLessThan(row.rating);
        expect(row.skill.sigma).toBeLessThan(8.3);
      }
      const ratings = board.body.ratings.map((r: { rating: number }) => r.rating);
      expect([...ratings].sort((a, b) => b - a)).toEqual(ratings);
      const pooled = await get("/ratings");
      expect(pooled.status).toBe(200);
      expect(pooled.body.games).toEqual([{ game: "kuhn-poker", variant: "standard", matches: 2400 }]);
      expect(pooled.body.ratings[0]).toMatchObject({ player: "builtin:nash", skill: null });
      // Bad requests: each a clear answer, and the server goes on.
      const refusals: [string, number, string, RegExp][] = [
        ["/tournaments/t_nothere", 404, "unknown_tournament", /no tournament `t_nothere`/],
        ["/tournaments?limit=0", 400, "bad_query", /`limit` must be a whole number from 1 to 2000/],
        ["/tournaments?sort=x", 400, "bad_query", /unknown parameter `sort`; allowed: limit/],
        ["/ratings?variant=standard", 400, "bad_query", /`variant` needs `game`/],
        ["/ratings/history?game=kuhn-poker", 400, "bad_query", /`player` is required/],
        ["/ratings/history?player=builtin:nash", 400, "bad_query", /`game` is required/],
        ["/ratings/history?player=builtin:nash&game=kuhn-poker&limit=0", 400, "bad_query", /from 1 to 2000/],
        ["/ratings?game=chess", 400, "unknown_game", /chess/],
        ["/ratings?game=kuhn-poker&variant=nope", 400, "bad_config", /nope/],
        ["/players?rated=maybe", 400, "bad_query", /`rated` is true or false, got "maybe"/],
      ];
      for (const [path, status, code, message] of refusals) {
        const answer = await get(path);
        expect(answer.status, path).toBe(status);
        expect(answer.body.error.code, path).toBe(code);
        expect(answer.body.error.message, path).toMatch(message);
      }
      expect((await get("/health")).status).toBe(200);
    } finally {
      server.child.kill("SIGTERM");
      await server.exited;
    }
  });

  it("resumes after SIGKILL: every slot played once, rated once, the same table as a run never stopped", async () => {
    const args = ["tournament", ...KUHN, "--matches", "300", "--seed", "resume", "--json"];
    const child = spawnLudus([...args, ...where(options)]);
    let err = "";
    const id = await new Promise<string>((resolve, reject) => {
      child.stderr!.on("data", (chunk: Buffer) => {
        err += chunk.toString("utf8");
        const started = /tournament (t_\S+)/.exec(err);
        // Killed once a good part has been played, while matches are still in flight.
        if (started && /played (7\d\d|8\d\d|9\d\d|1\d\d\d)\/1800/.test(err)) resolve(started[1]);
      });
      child.on("exit", () => reject(new Error(`the tournament ended before it was killed:\n${err}`)));
    });
    child.kill("SIGKILL");
    await once(child, "exit");
    const resumed = await runLudus(["tournament", "--resume", id, "--json", ...where(options)]);
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.err).toMatch(/played \d+\/1800 matches/);
    const result = JSON.parse(resumed.out) as Standings;
    expect(result.tournament.id).toBe(id);
    expect(result.slots).toEqual({ planned: 1800, completed: 1800, failed: 0 });

    const store = await ReplayStore.open(options);
    try {
      const slots = await store.league.slots(id);
      expect(slots.map((s) => s.slot)).toEqual(Array.from({ length: 1800 }, (_, i) => i));
      expect(new Set(slots.map((s) => s.matchId)).size).toBe(1800);
      // Nothing left for a later server start to restore: a cut-off match was closed as aborted.
      expect(await store.unfinished()).toEqual([]);
      const rated = await store.sql.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM rated_matches WHERE match_id IN (SELECT match_id FROM tournament_slots WHERE tournament_id = $1)",
        [id],
      );
      expect(rated[0].n).toBe(1800);
    } finally {
      await store.close();
    }
    // Resuming a finished tournament prints its table again and plays nothing.
    const again = await runLudus(["tournament", "--resume", id, "--json", ...where(options)]);
    expect(again.code, again.err).toBe(0);
    expect(JSON.parse(again.out).standings).toEqual(result.standings);

    // Every slot's match is fixed by its seed: a run never stopped gives the same Bradley–Terry table.
    const fresh = await emptyStoreOptions(backend);
    try {
      const whole = await runLudus([...args, ...where(fresh.options)]);
      expect(whole.code, whole.err).toBe(0);
      const table = (s: Standings) => s.standings.map((r) => [r.player, r.rating, r.ci, r.wins, r.losses]);
      expect(table(JSON.parse(whole.out))).toEqual(table(result));
    } finally {
      await fresh.cleanup();
    }
  });

  it.runIf(onEither)(
    "plays Swiss rounds by points with a bye each round, and a gauntlet of duplicate deals",
    async () => {
      const swiss = await runLudus([
        "tournament",
        "--game",
        "kuhn-poker",
        "--format",
        "swiss",
        "--rounds",
        "3",
        "--players",
        "nash,always-call,always-raise,random,always-fold",
        "--matches",
        "40",
        "--json",
        ...where(options),
      ]);
      expect(swiss.code, swiss.err).toBe(0);
      const table = JSON.parse(swiss.out) as Standings;
      // Five players: two pairings a round and a bye, three rounds.
      expect(table.slots).toEqual({ planned: 240, completed: 240, failed: 0 });
      const points = table.standings.map((r) => r.points!);
      expect(points.reduce((a, b) => a + b, 0)).toBe(3 * 3); // two pairings and a bye, each worth a point, a round
      expect([...points].sort((a, b) => b - a)).toEqual(points);
      const store = await ReplayStore.open(options);
      try {
        const slots = await store.league.slots(table.tournament.id);
        for (let round = 0; round < 3; round++) {
          expect(new Set(slots.filter((s) => s.round === round).flatMap((s) => s.seats)).size).toBe(4);
        }
        const pairings = new Set(slots.map((s) => [...s.seats].sort().join("-")));
        expect(pairings.size).toBe(6); // no rematch in three rounds
      } finally {
        await store.close();
      }

      const gauntlet = await runLudus([
        "tournament",
        "--game",
        "kuhn-poker",
        "--format",
        "gauntlet",
        "--duplicate",
        "--players",
        "nash,always-call,random",
        "--matches",
        "20",
        "--json",
        ...where(options),
      ]);
      expect(gauntlet.code, gauntlet.err).toBe(0);
      const g = JSON.parse(gauntlet.out) as Standings;
      expect(g.tournament).toMatchObject({ format: "gauntlet", duplicate: true });
      expect(g.alphaRank).toBeNull();
      expect(g.alphaRankWhyNot).toMatch(/not every pair of players met/);
      expect(g.slots.completed).toBe(40);
      expect(Object.fromEntries(g.standings.map((r) => [r.player, r.matches]))).toEqual({
        nash: 40,
        "always-call": 20,
        random: 20,
      });
      // always-call and random never met.
      const [call, random] = ["always-call", "random"].map((p) => g.payoff.players.indexOf(p));
      expect(g.payoff.cells[call][random]).toBeNull();
    },
  );

  it("refuses what it cannot run, saying what is allowed, and stores nothing", async () => {
    const refusals: [string[], RegExp, "store"?][] = [
      [["--game", "kuhn-poker", "--players", "nash"], /needs at least 2 players, got 1/],
      [
        ["--game", "kuhn-poker", "--players", "nash,bluffer"],
        /unknown strategy `bluffer` for kuhn-poker \(strategies: /,
      ],
      [["--game", "kuhn-poker", "--players", "nash,nash"], /player nash is named twice/],
      [
        ["--game", "ipd", "--format", "duplicate", "--players", "tit-for-tat,always-defect"],
        /deals nothing at its start.*Use round-robin/,
      ],
      [
        ["--game", "kuhn-poker", "--format", "duplicate", "--matches", "3", "--players", "nash,random"],
        /--matches must be even, got 3/,
      ],
      [["--game", "kuhn-poker", "--rounds", "3", "--players", "nash,random"], /rounds are for the swiss format/],
      [
        ["--game", "donor-game", "--players", "random,random"],
        /pair two players a match; donor-game \(\S+\) has \d+ seats/,
      ],
      [["--game", "kuhn-poker"], /needs --game and --players \(or --resume <id>/],
      [["--resume", "t_nothere"], /no tournament t_nothere in /, "store"],
      [
        ["--game", "kuhn-poker", "--format", "knockout", "--players", "nash,random"],
        /argument 'knockout' is invalid. Allowed choices are round-robin, swiss, gauntlet, duplicate/,
      ],
      [
        ["--game", "kuhn-poker", "--matches", "0", "--players", "nash,random"],
        /expected a whole number in \[1, 1000000\]/,
      ],
    ];
    const empty = await emptyStoreOptions(backend);
    try {
      // One at a time: a process that opens the embedded store holds it until it exits.
      for (const [flags, message] of refusals.filter(([, , reaches]) => onEither || reaches === "store")) {
        const run = await runLudus(["tournament", ...flags, ...where(empty.options)]);
        expect(run.code, `${flags.join(" ")}: ${run.err}`).toBe(2);
        expect(run.err).toMatch(message);
        expect(run.out).toBe("");
      }
      const store = await ReplayStore.open(empty.options);
      try {
        expect(await store.league.tournaments(10)).toEqual([]);
      } finally {
        await store.close();
      }
    } finally {
      await empty.cleanup();
    }
  });
});

describe("ludus tournament with models", () => {
  it("seats llm:<name> players from --models against built-ins, rated and recorded as the model's seats", async () => {
    const model = await startFakeOpenAI({
      script: (request, index) => ({ content: legalAnswer(request, (n) => index % n) }),
    });
    const { options, cleanup } = await emptyStoreOptions("pglite");
    try {
      const models = JSON.stringify({ tiny: { model: "tiny-1", baseUrl: model.baseUrl, temperature: 0 } });
      const args = ["--game", "kuhn-poker", "--players", "llm:tiny,nash,always-call", "--matches", "10", "--json"];
      const run = await ludus("tournament", ...args, "--models", models, "--data-dir", options.dataDir);
      expect(run.code, run.err).toBe(0);
      const result = JSON.parse(run.out) as Standings;
      expect(result.slots).toEqual({ planned: 30, completed: 30, failed: 0 });
      const tiny = result.standings.find((r) => r.player === "llm:tiny")!;
      expect(tiny).toMatchObject({ id: "llm:tiny", matches: 20 });
      expect(model.requests.length).toBeGreaterThanOrEqual(20); // at least a decision a match
      const store = await ReplayStore.open(options);
      try {
        const played = await store.matches({ player: "llm:tiny" }, 100);
        expect(played).toHaveLength(20);
        for (const m of played) {
          expect(m).toMatchObject({ rated: true, endReason: "completed" });
          expect(m.seats.find((seat) => seat?.kind === "llm")).toMatchObject({ name: "tiny", model: "tiny-1" });
        }
        expect(await store.players.get("llm:tiny")).toMatchObject({
          details: { model: "tiny-1", endpoint: model.baseUrl },
        });
        // The run's own tokens are revoked, and are nobody's player.
        expect((await store.tokens.list()).every((t) => t.revoked)).toBe(true);
        expect(await store.players.list({ search: "run-" }, 10)).toEqual([]);
      } finally {
        await store.close();
      }
      // Two models against each other: each takes its own seats of every match.
      const both = JSON.stringify({
        tiny: { model: "tiny-1", baseUrl: model.baseUrl },
        small: { model: "small-1", baseUrl: model.baseUrl },
      });
      const duel = await ludus(
        ...["tournament", "--game", "kuhn-poker", "--players", "llm:tiny,llm:small", "--matches", "4", "--json"],
        ...["--models", both, "--data-dir", options.dataDir],
      );
      expect(duel.code, duel.err).toBe(0);
      expect((JSON.parse(duel.out) as Standings).slots).toEqual({ planned: 4, completed: 4, failed: 0 });
      const reopened = await ReplayStore.open(options);
      try {
        const duels = await reopened.matches({ player: "llm:small" }, 10);
        expect(duels.map((m) => m.seats.map((seat) => seat?.model).sort())).toEqual(
          Array(4).fill(["small-1", "tiny-1"]),
        );
      } finally {
        await reopened.close();
      }
      const refusals: [string[], RegExp][] = [
        [["--players", "llm:ghost,nash"], /llm:ghost: name each model in --models/],
        [["--players", "llm:tiny,nash", "--models", '{"tiny": {"base": 1}}'], /model "tiny": unknown field `base`/],
        [
          ["--players", "llm:tiny,nash", "--models", '{"tiny": {}}'],
          /`model` \(the endpoint's model name\) is required/,
        ],
      ];
      for (const [flags, message] of refusals) {
        const refused = await ludus("tournament", "--game", "kuhn-poker", ...flags, "--data-dir", options.dataDir);
        expect(refused.err, flags.join(" ")).toMatch(message);
        expect(refused.code, flags.join(" ")).toBe(2);
      }
    } finally {
      await model.close();
      await cleanup();
    }
  }, 120_000);
});
