import { checkParams, limitParam, QueryError } from "../../db/query.ts";
import type { ReplayStore } from "../../db/store.ts";
import { ConfigError, configure } from "../../games/core/config.ts";
import { getGame, UnknownGameError } from "../../games/registry.ts";
import type { Boards } from "../league/board.ts";
import { tournamentStandings } from "../league/tournament/run.ts";
import type { Standings } from "../league/tournament/standings.ts";
import { Recent } from "../league/recent.ts";
import { evolutionReport } from "../league/evolution.ts";
import { type ApiRoute, error, pathSegment, type Refusal, respond } from "../http.ts";

/**
 * The league over HTTP (docs/league.md): tournaments with their live standings, the published leaderboards (a
 * game's, and every game's pooled), a player's rating history, and Donor Game evolutions. Read-only: tournaments
 * and evolutions are run by the CLI into the same store.
 */

/** The stored runs of `store` served as a list and one by one: tournaments with their standings, evolutions with their curve. */
function runs(store: ReplayStore) {
  // A running tournament's page asks every 2 s per viewer; its table (a bootstrap over every match) is shared.
  const standingsOf = new Recent<Standings | undefined>(2_000);
  return [
    {
      path: /^\/tournaments(?:\/([^/]+))?$/,
      noun: "tournament",
      list: async (limit: number) => ({ tournaments: await store.league.tournaments(limit) }),
      one: (id: string) =>
        standingsOf.get(id, async () => {
          const t = await store.league.tournament(id);
          return t && await tournamentStandings(store, t);
        }),
    },
    {
      path: /^\/evolutions(?:\/([^/]+))?$/,
      noun: "evolution",
      list: async (limit: number) => ({ evolutions: await store.league.evolutions(limit) }),
      one: async (id: string) => {
        const e = await store.league.evolution(id);
        return e && await evolutionReport(store, e);
      },
    },
  ];
}

/** Rows a list answers at most, and by default. */
const MAX_LIMIT = 2_000;
const DEFAULT_LIMIT = 50;

function refusal(cause: unknown): Refusal | undefined {
  if (cause instanceof UnknownGameError) return { status: 400, code: "unknown_game", message: cause.message };
  if (cause instanceof ConfigError) return { status: 400, code: "bad_config", message: cause.message };
}

/** The `game` (required) and `variant` (default: the game's) of a query. */
function gameOf(url: URL, usage: string): { game: string; variant: string } {
  const id = url.searchParams.get("game");
  if (!id) throw new QueryError(`\`game\` is required: ${usage}`);
  const game = getGame(id);
  return { game: game.id, variant: configure(game, {}, url.searchParams.get("variant") ?? undefined).variant };
}

export function leagueRoutes(store: ReplayStore, boards: Boards): ApiRoute {
  const served = runs(store);
  return {
    describe: "GET /tournaments, GET /tournaments/:id, GET /ratings[?game=<id>[&variant=<name>]], " +
      "GET /ratings/history?player=<kind:name>&game=<id>[&variant=<name>], GET /evolutions, GET /evolutions/:id",
    handle(_req, res, url) {
      const path = url.pathname.replace(/\/+$/, "");
      const limit = () => limitParam(url.searchParams.get("limit"), DEFAULT_LIMIT, MAX_LIMIT);
      if (path === "/ratings/history") {
        respond(res, async () => {
          checkParams(url.searchParams, ["player", "game", "variant", "limit"]);
          const player = url.searchParams.get("player");
          if (!player) {
            throw new QueryError("`player` is required: GET /ratings/history?player=<kind:name>&game=<id>");
          }
          const { game, variant } = gameOf(url, "GET /ratings/history?player=<kind:name>&game=<id>");
          const points = await store.league.history(
            player,
            game,
            variant,
            limitParam(url.searchParams.get("limit"), MAX_LIMIT, MAX_LIMIT),
          );
          return { player, game, variant, points };
        }, refusal);
        return true;
      }
      if (path === "/ratings") {
        respond(res, async () => {
          checkParams(url.searchParams, ["game", "variant"]);
          if (!url.searchParams.has("game")) {
            if (url.searchParams.has("variant")) {
              throw new QueryError("`variant` needs `game`: GET /ratings?game=<id>&variant=<name>");
            }
            return await boards.board();
          }
          const which = gameOf(url, "GET /ratings?game=<id>");
          return { ...which, ...await boards.board(which) };
        }, refusal);
        return true;
      }
      for (const run of served) {
        const found = run.path.exec(path);
        if (!found) continue;
        respond(res, async () => {
          if (found[1] === undefined) {
            checkParams(url.searchParams, ["limit"]);
            return await run.list(limit());
          }
          const id = pathSegment(res, found[1]);
          if (id === undefined) return;
          checkParams(url.searchParams, []);
          const answer = await run.one(id);
          if (answer) return answer;
          error(res, 404, `unknown_${run.noun}`, `no ${run.noun} \`${id}\` in the replay store`);
        }, refusal);
        return true;
      }
      return false;
    },
  };
}
