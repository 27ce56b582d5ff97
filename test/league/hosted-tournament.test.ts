import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Bot } from "../../clients/sdk/index.ts";
import { randomAction } from "../../clients/sdk/random.ts";
import type { Standings } from "../../server/league/tournament/standings.ts";
import { ludus } from "../support/cli.ts";
import { RawBot } from "../support/raw-bot.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { until } from "../support/until.ts";

/** A tournament the server runs, as an organiser starts it over HTTP, played by bots connected from outside. */

describe("a tournament a server runs for its connected bots", () => {
  let server: TestServer;
  let admin: string;
  beforeAll(async () => {
    server = await startTestServer();
    admin = await server.token("organiser", "admin");
  });
  afterAll(() => server.close());

  const post = async (body: unknown, token = admin) => {
    const res = await fetch(`${server.url}/tournaments`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  const standings = async (id: string) => (await (await fetch(`${server.url}/tournaments/${id}`)).json()) as Standings;

  it(
    "seats bot:<name> players on their connections, rated, beside built-ins; a bot that connects late catches up",
    async () => {
      const [annToken, benToken] = [await server.token("ann"), await server.token("ben")];
      const ann = await Bot.connect({ url: server.wsUrl, token: annToken });
      const serving = ann.serve((_observation, legal) => randomAction(legal));
      // ben connects only once the tournament has started: its first matches wait for it.
      const started = await post({
        game: "kuhn-poker",
        players: ["bot:ann", "bot:ben", "nash"],
        matches: 6,
        seed: "h",
      });
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      const id = started.body.tournament.id;
      expect(started.body.standings).toBe(`/tournaments/${id}`);
      const ben = await Bot.connect({ url: server.wsUrl, token: benToken });
      ben.serve((_observation, legal) => randomAction(legal));
      await until("the tournament to end", async () => (await standings(id)).tournament.endedAt !== null, 60_000);
      const table = await standings(id);
      expect(table.slots).toEqual({ planned: 18, completed: 18, failed: 0 });
      expect(Object.fromEntries(table.standings.map((r) => [r.player, [r.id, r.matches]]))).toEqual({
        "bot:ann": ["bot:ann", 12],
        "bot:ben": ["bot:ben", 12],
        nash: ["builtin:nash", 12],
      });
      const played = await server.server.store.matches({ player: "bot:ann" }, 100);
      expect(played.every((m) => m.rated)).toBe(true);
      serving.stop();
      await ann.close();
      await ben.close();
    },
    90_000,
  );

  it("is started and followed from the command line with --server, to the same standings", async () => {
    const bot = await Bot.connect({ url: server.wsUrl, token: await server.token("cli-bot") });
    bot.serve((_observation, legal) => randomAction(legal));
    const args = ["tournament", "--game", "kuhn-poker", "--players", "bot:cli-bot,random", "--matches", "4", "--json"];
    const run = await ludus(...args, "--server", server.url, "--token", admin);
    expect(run.code, run.err).toBe(0);
    expect(run.err).toMatch(/tournament t_\S+ is being played on http:\/\/127\.0\.0\.1:\d+/);
    const result = JSON.parse(run.out) as Standings;
    expect(result.slots).toEqual({ planned: 4, completed: 4, failed: 0 });
    expect(result.standings.map((r) => r.player).sort()).toEqual(["bot:cli-bot", "random"]);
    await bot.close();
    const local = await ludus("tournament", "--game", "kuhn-poker", "--players", "bot:cli-bot,random");
    expect([local.code, local.err]).toEqual([
      2,
      expect.stringMatching(/connected bots play in a server's tournaments/),
    ]);
    const refused = await ludus(...args, "--server", server.url, "--token", await server.token("not-admin"));
    expect([refused.code, refused.err]).toEqual([1, expect.stringMatching(/403 \(forbidden\)/)]);
  }, 60_000);

  it("refuses what it cannot run, saying why, and only an admin may start one", async () => {
    const cases: [unknown, number, RegExp][] = [
      [{ game: "kuhn-poker", players: ["bot:nobody", "nash"] }, 400, /bot:nobody: no player's token is named nobody/],
      [{ game: "kuhn-poker", players: ["llm:qwen", "nash"] }, 400, /does not know a model's endpoint/],
      [{ game: "kuhn-poker", players: ["nash"] }, 400, /needs at least 2 players/],
      [{ game: "kuhn-poker", players: ["nash", "random"], colour: "red" }, 400, /unknown field `colour`/],
      [{ game: "kuhn-poker", players: ["nash", "random"], matches: 0 }, 400, /`matches` must be a whole number/],
      [{ players: ["nash", "random"] }, 400, /`game` is required/],
      ["[1, 2]", 400, /must be a JSON object/],
      ["{", 400, /must be a JSON object/],
      [{ resume: "t_nothere" }, 400, /no tournament t_nothere/],
    ];
    for (const [body, status, message] of cases) {
      const answer = await post(body);
      expect(answer.status, JSON.stringify(body)).toBe(status);
      expect(answer.body.error.message, JSON.stringify(body)).toMatch(message);
    }
    const player = await post({ game: "kuhn-poker", players: ["nash", "random"] }, await server.token("pawn"));
    expect(player).toMatchObject({ status: 403, body: { error: { code: "forbidden" } } });
    const nobody = await post({ game: "kuhn-poker", players: ["nash", "random"] }, "nonsense");
    expect(nobody).toMatchObject({ status: 401, body: { error: { code: "unauthorized" } } });
    // A raw client (docs/protocol.md) gets its held seat as an unasked `match_start`, and plays it.
    const raw = await RawBot.connect(server.wsUrl, await server.token("raw"));
    raw.play((turn) => turn.legal[0].kind === "fixed" ? turn.legal[0].action : undefined);
    const one = await post({ game: "kuhn-poker", players: ["bot:raw", "random"], matches: 2 });
    expect(one.status).toBe(202);
    await until(
      "the raw bot's two matches",
      () => raw.frames.filter((f) => f.type === "match_end").length >= 2,
      30_000,
    );
    raw.close();
  }, 60_000);

  it(
    "shares the server: a few tournaments of a million matches play at once, beside everything else it serves",
    async () => {
      const huge = { game: "kuhn-poker", players: ["random", "always-call"], matches: 1_000_000 };
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const started = await post({ ...huge, seed: `huge-${i}` });
        expect(started.status, JSON.stringify(started.body)).toBe(202);
        ids.push(started.body.tournament.id);
      }
      const fifth = await post({ ...huge, seed: "huge-4" });
      expect(fifth).toMatchObject({ status: 429, body: { error: { code: "busy" } } });
      expect(fifth.body.error.message).toMatch(
        /playing 4 tournaments, the most it plays at once \(4\); start this one/,
      );
      // While they play: a bot's own match against a built-in is played to its end, and the server answers.
      const canary = await RawBot.connect(server.wsUrl, await server.token("canary"));
      canary.play((turn) => turn.legal[0].kind === "fixed" ? turn.legal[0].action : undefined);
      canary.send({ type: "create", game: "ipd", opponents: { "1": "strategy:tit-for-tat" } });
      await until("the canary's match to end", () => canary.frames.some((f) => f.type === "match_end"), 60_000);
      canary.close();
      for (let i = 0; i < 3; i++) expect((await fetch(`${server.url}/health`)).status).toBe(200);
      await until("each tournament to have played some of its matches", async () => {
        const counts = await Promise.all(ids.map(async (id) => (await standings(id)).slots.completed));
        return counts.every((n) => n > 0);
      });
    },
    120_000,
  );
});
