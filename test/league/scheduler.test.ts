import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { type Board, Boards } from "../../server/league/board.ts";
import { LeagueScheduler, WEIGHT } from "../../server/league/scheduler.ts";
import { ludus } from "../support/cli.ts";
import { linearModel, mlpModel } from "../support/onnx-models.ts";
import { runLudus, startServerProcess } from "../support/server-process.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { until } from "../support/until.ts";
import { migratedDataDir } from "../support/data-dirs.ts";

/** Kuhn's built-ins, the Nash family at eleven values of α among them: fifteen distinct players. */
const BUILTINS = [
  "random",
  "always-call",
  "always-raise",
  "always-fold",
  ...Array.from({ length: 11 }, (_, i) => `nash:${(i / 30).toFixed(4)}`),
];

describe("the league scheduler", () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer()), 120_000);
  afterAll(() => server?.close());

  async function registerPolicies(count: number): Promise<string[]> {
    const admin = await server.token("league-admin", "admin");
    const names: string[] = [];
    for (let seed = 1; seed <= count; seed++) {
      const res = await fetch(`${server.url}/policies?name=league-${seed}&game=kuhn-poker`, {
        method: "POST",
        headers: { authorization: `Bearer ${admin}` },
        body: mlpModel(11, 16, 2, seed) as Uint8Array<ArrayBuffer>,
      });
      expect(res.status, await res.clone().text()).toBe(201);
      names.push(`policy:league-${seed}`);
    }
    return names;
  }

  it("runs a population of 20 built-ins and policies, rated, and its board settles", async () => {
    const policies = await registerPolicies(5);
    const members = [...BUILTINS, ...policies].map((player) => ({ player, role: "main" as const }));
    expect(members).toHaveLength(20);
    const boards = new Boards(server.server.store, { refitMs: 0 });
    const board = () => boards.board({ game: "kuhn-poker", variant: "standard" });
    /** Plays `matches` more of the league, then refits the board on everything so far. */
    const play = async (matches: number, seed: string) => {
      const league = new LeagueScheduler(server.server.matches, {
        game: "kuhn-poker",
        members,
        live: 32,
        matches,
        seed,
      });
      league.start();
      await league.finished();
      await server.server.matches.ratings!.flush();
      return { league, board: await board() };
    };
    const { board: half } = await play(4_000, "test");
    const { league: more, board: full } = await play(12_000, "test-2");

    expect(full.matches).toBe(16_000);
    expect(full.ratings).toHaveLength(20);
    // A policy is rated by its exact version, named as a seat names it.
    expect(full.ratings.map((r) => r.player)).toContain("policy:league-1@1");
    // Settling: the intervals narrow about as 1/√matches, and the refit moves little once the data is four times as big.
    const width = (b: Board) => b.ratings.reduce((w, r) => w + r.ci[1] - r.ci[0], 0) / b.ratings.length;
    expect(width(full)).toBeLessThan(0.65 * width(half));
    const at = (b: Board) => new Map(b.ratings.map((r) => [r.player, r.rating]));
    const [before, after] = [at(half), at(full)];
    const moved = [...after].map(([p, r]) => Math.abs(r - before.get(p)!));
    expect(Math.max(...moved), `moved: ${moved.join(", ")}`).toBeLessThan(60);
    expect(full.ratings.filter((r) => r.provisional)).toEqual([]);
    // Every member met others; nobody met itself (no self-play share asked for).
    const pairings = more.pairings();
    pairings.forEach((row, i) => {
      expect(row[i]).toBe(0);
      expect(row.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    });
  }, 300_000);

  it("weighs opponents the prioritised way: f_hard towards those that beat you, f_var towards the level", () => {
    expect(WEIGHT.hard(0.1)).toBeCloseTo(0.81);
    expect(WEIGHT.hard(0.9)).toBeCloseTo(0.01);
    expect(WEIGHT.var(0.5)).toBe(0.25);
    expect(WEIGHT.var(0.95)).toBeCloseTo(0.0475);
    expect(WEIGHT.uniform(0.3)).toBe(1);
  });

  it(
    "sends a main agent mostly to the opponents that beat it (f_hard), and exploiters to the mains, unrated",
    async () => {
      const members = [
        { player: "nash", role: "main" as const },
        { player: "always-fold", role: "fixed" as const },
        { player: "always-raise", role: "fixed" as const },
        { player: "random", role: "main-exploiter" as const },
      ];
      const league = new LeagueScheduler(server.server.matches, {
        game: "kuhn-poker",
        members,
        live: 16,
        matches: 3_000,
        seed: "pfsp",
      });
      const startedAt = new Date();
      league.start();
      await league.finished();
      const [nash] = league.pairings();
      // nash wins about two hands in three against always-fold, four in ten against always-raise: f_hard weighs
      // them (1 − x)², about 0.12 against 0.36.
      expect(league.chance(0, 1)).toBeGreaterThan(league.chance(0, 2));
      expect(nash[2]).toBeGreaterThan(1.5 * nash[1]);
      // The exploiter met only the main agent; its matches were practice.
      const exploiter = league.pairings()[3];
      expect(exploiter[1] + exploiter[2]).toBe(0);
      expect(league.rated).toBeLessThan(league.ended);
      // Each match is its focal member's to learn from: one learner seat, never a fixed co-player's; the exploiter
      // learns from its matches against the main agent, whose seat in them is not a learner's.
      const { store } = server.server;
      await store.writer.drain();
      const stored = (await store.matches({ game: "kuhn-poker", from: startedAt }, 10_000))
        .filter((m) => m.seed.startsWith("pfsp/"));
      expect(stored).toHaveLength(3_000);
      for (const m of stored) {
        const learners = m.seats.filter((seat) => seat?.learner);
        expect(learners.map((seat) => seat!.name), m.id).toEqual([expect.stringMatching(/^(nash|random)$/)]);
      }
      const exploiterLearns = stored.filter((m) => m.seats.some((seat) => seat?.learner && seat.name === "random"));
      expect(exploiterLearns.length).toBeGreaterThan(100);
      for (const m of exploiterLearns) expect(m.seats.find((seat) => seat?.name === "nash")?.learner).toBeUndefined();
    },
    120_000,
  );

  it("turns a learner's previous version into a fixed member when a new one is registered (snapshots)", async () => {
    const admin = await server.token("snapshot-admin", "admin");
    const register = async (seed: number) => {
      const res = await fetch(`${server.url}/policies?name=learner&game=kuhn-poker`, {
        method: "POST",
        headers: { authorization: `Bearer ${admin}` },
        body: mlpModel(11, 16, 2, seed) as Uint8Array<ArrayBuffer>,
      });
      expect(res.status, await res.clone().text()).toBe(201);
    };
    await register(1);
    const league = new LeagueScheduler(server.server.matches, {
      game: "kuhn-poker",
      members: [{ player: "policy:learner", role: "main" }, { player: "nash", role: "fixed" }],
      live: 4,
      ratePerSecond: 200,
      policies: server.server.policies,
      seed: "snapshots",
    });
    league.start();
    await register(2);
    expect(league.population().map((m) => [m.player, m.role])).toEqual([
      ["policy:learner", "main"],
      ["nash", "fixed"],
      ["policy:learner@1", "fixed"],
    ]);
    // The learner meets its past self.
    await until("a match against the snapshot", () => league.pairings()[0][2] > 0);
    await league.stop();
  }, 120_000);

  it("retires a member that can no longer be seated (its policy removed) and plays on without it", async () => {
    const admin = await server.token("retire-admin", "admin");
    const res = await fetch(`${server.url}/policies?name=short-lived&game=kuhn-poker`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}` },
      body: mlpModel(11, 16, 2, 9) as Uint8Array<ArrayBuffer>,
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const retired: string[] = [];
    const league = new LeagueScheduler(server.server.matches, {
      game: "kuhn-poker",
      members: [
        { player: "nash", role: "main" },
        { player: "random", role: "fixed" },
        { player: "policy:short-lived@1", role: "fixed" },
      ],
      live: 1,
      ratePerSecond: 50,
      seed: "retire",
      onRetired: (member, why) => retired.push(`${member.player}: ${why}`),
    });
    league.start();
    await until("a match against the policy", () => league.pairings()[0][2] > 0);
    // Removed between two matches (a version a live match seats cannot be removed).
    await until("the policy removed", async () => {
      const removed = await fetch(`${server.url}/policies/short-lived@1`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${admin}` },
      });
      return removed.status === 200;
    });
    await until("the member retired", () => retired.length > 0);
    expect(retired[0]).toMatch(/^policy:short-lived@1: .*short-lived/);
    expect(league.population().map((m) => m.player)).toEqual(["nash", "random"]);
    const before = league.ended;
    await until("matches after the retirement", () => league.ended > before + 5);
    await league.stop();
  }, 120_000);

  it("runs inside the server (serve --league), and refuses a league that cannot run", async () => {
    const spec = JSON.stringify({
      game: "kuhn-poker",
      members: [{ player: "nash", role: "main" }, { player: "random", role: "fixed" }],
      live: 4,
      ratePerSecond: 100,
    });
    const dataDir = await migratedDataDir("ludus-league-serve-");
    onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
    const serving = await startServerProcess(["--data-dir", dataDir, "--league", spec]);
    try {
      const board = await until("the league's matches rated", async () => {
        const answer = await (await fetch(`${serving.url}/ratings?game=kuhn-poker`)).json();
        return answer.ratings.length === 2 && answer.matches >= 20 && answer;
      });
      expect(board.ratings.map((r: { player: string }) => r.player).sort()).toEqual(["builtin:nash", "builtin:random"]);
    } finally {
      serving.child.kill("SIGTERM");
      await serving.exited;
    }
    const bad = await runLudus([
      "serve",
      "--port",
      "0",
      "--data-dir",
      dataDir,
      "--league",
      JSON.stringify({ game: "kuhn-poker", members: [{ player: "nash", role: "main" }] }),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/at least 2 members, got 1/);
    const shapeless = await runLudus([
      "serve",
      "--port",
      "0",
      "--data-dir",
      dataDir,
      "--league",
      '{"game":"kuhn-poker"}',
    ]);
    expect(shapeless.code).toBe(2);
    expect(shapeless.err).toMatch(/expected \{"game": "<id>", "members": \[/);
  }, 120_000);

  it(
    "serve --league starts with a learner that has no version yet, and seats it once its trainer registers one",
    async () => {
      const dataDir = await migratedDataDir("ludus-league-late-");
      onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
      const token = (await ludus("token", "create", "--kind", "admin", "--name", "trainer", "--data-dir", dataDir)).out
        .trim();
      const spec = JSON.stringify({
        game: "kuhn-poker",
        members: [{ player: "policy:late", role: "main" }, { player: "nash", role: "fixed" }],
        live: 4,
        ratePerSecond: 100,
      });
      const serving = await startServerProcess(["--data-dir", dataDir, "--league", spec]);
      try {
        // The trainer plugs in after the start, as `ludus train` or `python -m ludus_trainer` would.
        const registered = await fetch(`${serving.url}/policies?name=late&game=kuhn-poker`, {
          method: "POST",
          body: linearModel(11, 2, new Array(22).fill(0), [0, 0]) as Uint8Array<ArrayBuffer>,
          headers: { authorization: `Bearer ${token}` },
        });
        expect(registered.status, await registered.clone().text()).toBeLessThan(300);
        const played = await until("the learner's league matches rated", async () => {
          const answer = await (await fetch(`${serving.url}/ratings?game=kuhn-poker`)).json();
          return answer.ratings.some((r: { player: string }) => r.player === "policy:late@1") && answer;
        });
        expect(played.ratings.map((r: { player: string }) => r.player).sort()).toEqual([
          "builtin:nash",
          "policy:late@1",
        ]);
      } finally {
        serving.child.kill("SIGTERM");
        await serving.exited;
      }
    },
    120_000,
  );

  it("paces new matches to a rate, and stops cleanly while waiting for its next one", async () => {
    const league = new LeagueScheduler(server.server.matches, {
      game: "kuhn-poker",
      members: [{ player: "nash", role: "main" }, { player: "random", role: "fixed" }],
      live: 8,
      ratePerSecond: 20,
      seed: "paced",
    });
    const finished = league.finished();
    league.start();
    await until("a few matches", () => league.ended >= 3);
    await league.stop();
    await finished;
    expect(league.ended).toBeLessThan(60); // a burst of 8, then 20 a second: never the hundreds a second unpaced
  }, 120_000);

  it("refuses a league it cannot run, saying what is allowed", () => {
    const live = server.server.matches;
    const make = (options: Partial<ConstructorParameters<typeof LeagueScheduler>[1]>) => () =>
      new LeagueScheduler(live, { game: "kuhn-poker", members: [], live: 4, ...options });
    expect(make({ members: [{ player: "nash", role: "main" }] })).toThrow(/at least 2 members, got 1/);
    expect(make({ members: [{ player: "nash", role: "fixed" }, { player: "random", role: "fixed" }] })).toThrow(
      /at least one member that is not fixed/,
    );
    expect(make({ members: [{ player: "nash", role: "main" }, { player: "nash", role: "fixed" }] })).toThrow(
      /named twice/,
    );
    expect(make({ members: [{ player: "nash", role: "main" }, { player: "bluff", role: "fixed" }] })).toThrow(
      /unknown strategy `bluff`/,
    );
    expect(make({ members: [{ player: "random", role: "main-exploiter" }, { player: "nash", role: "fixed" }] }))
      .toThrow(/main exploiters play the main agents, and this league has none/);
    expect(
      make({ game: "donor-game", members: [{ player: "random", role: "main" }, { player: "nash", role: "fixed" }] }),
    )
      .toThrow(/two players a match; donor-game/);
    expect(
      make({ members: [{ player: "nash", role: "main" }, { player: "random", role: "fixed" }], live: 1_000_000 }),
    ).toThrow(
      /1000000 live matches is more than the store can take: it holds 100000 unwritten records, so at most 25000/,
    );
    expect(make({ members: [{ player: "nash", role: "main" }, { player: "random", role: "fixed" }], ratePerSecond: 0 }))
      .toThrow(/rate must be a positive number of matches a second, got 0/);
  });

  it("runs from the command line and prints the board", async () => {
    const dataDir = await migratedDataDir("ludus-league-");
    onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
    const run = await runLudus([
      "league",
      "--game",
      "kuhn-poker",
      "--main",
      "nash,random",
      "--fixed",
      "always-fold,always-raise",
      "--matches",
      "2000",
      "--json",
      "--data-dir",
      dataDir,
    ]);
    expect(run.code, run.err).toBe(0);
    const result = JSON.parse(run.out);
    expect(result).toMatchObject({ game: "kuhn-poker", matches: 2000, rated: 2000 });
    expect(result.board.ratings).toHaveLength(4);
    const refused = await runLudus([
      "league",
      "--game",
      "kuhn-poker",
      "--main",
      "nash",
      "--data-dir",
      dataDir,
    ]);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/at least 2 members, got 1/);
  }, 120_000);
});
