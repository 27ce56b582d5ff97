import { checkParams, limitParam, QueryError } from "../../db/query.ts";
import type { ReplayStore } from "../../db/store.ts";
import { ConfigError, configure } from "../../games/core/config.ts";
import { getGame, UnknownGameError } from "../../games/registry.ts";
import type { Boards } from "../league/board.ts";
import { tournamentStandings } from "../league/tournament/run.ts";
import type { Standings } from "../league/tournament/standings.ts";
import { Recent } from "../league/recent.ts";
import { evolutionReport } from "../league/evolution.ts";
import { type ApiRoute, error, pathSegment, readBody, type Refusal, respond, send } from "../http.ts";
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { TournamentFormat } from "../../db/league.ts";
import type { TokenStore } from "../../db/tokens.ts";
import { type HostedTournaments, TournamentsBusyError } from "../league/tournament/hosted.ts";
import { TournamentError, type TournamentRequest } from "../league/tournament/run.ts";
import { checkAdmin, Refused } from "./admin.ts";

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
  if (cause instanceof TournamentsBusyError) return { status: 429, code: "busy", message: cause.message };
  if (cause instanceof TournamentError) return { status: 400, code: "bad_tournament", message: cause.message };
  if (cause instanceof Refused) return cause;
}

/** The largest tournament request a POST may carry. */
const MAX_REQUEST_BYTES = 64 * 1024;
const REQUEST_FIELDS = ["game", "variant", "config", "format", "duplicate", "players", "matches", "rounds", "seed"];

/** A POST /tournaments body: a new tournament's request (the CLI's flags as JSON), or `{resume: id}`. */
async function tournamentRequest(
  req: IncomingMessage,
): Promise<{ resume: string; concurrency: number } | { request: TournamentRequest; concurrency: number }> {
  const bytes = await readBody(
    req,
    MAX_REQUEST_BYTES,
    () => new Refused(413, "too_large", `a tournament request is at most ${MAX_REQUEST_BYTES} bytes`),
  );
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch (error) {
    throw new TournamentError(`the body must be a JSON object: ${(error as Error).message}`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new TournamentError("the body must be a JSON object: {game, players, format?, matches?, ...} or {resume}");
  }
  const fields = body as Record<string, unknown>;
  const allowed = [...REQUEST_FIELDS, "concurrency", "resume"];
  const unknown = Object.keys(fields).find((key) => !allowed.includes(key));
  if (unknown) throw new TournamentError(`unknown field \`${unknown}\`; fields: ${allowed.join(", ")}`);
  const concurrency = fields.concurrency ?? 64;
  if (!Number.isInteger(concurrency) || (concurrency as number) < 1 || (concurrency as number) > 4096) {
    throw new TournamentError(
      `\`concurrency\` must be a whole number from 1 to 4096, got ${JSON.stringify(concurrency)}`,
    );
  }
  if (fields.resume !== undefined) {
    if (typeof fields.resume !== "string") throw new TournamentError("`resume` is a tournament id");
    return { resume: fields.resume, concurrency: concurrency as number };
  }
  if (typeof fields.game !== "string") throw new TournamentError("`game` is required: a game id (GET /games)");
  if (!Array.isArray(fields.players) || !fields.players.every((p) => typeof p === "string")) {
    throw new TournamentError("`players` is required: a list of players (built-ins, policy:<name>, bot:<name>)");
  }
  const matches = fields.matches ?? 100;
  if (!Number.isInteger(matches) || (matches as number) < 1 || (matches as number) > 1_000_000) {
    throw new TournamentError(`\`matches\` must be a whole number from 1 to 1000000, got ${JSON.stringify(matches)}`);
  }
  return {
    request: {
      game: fields.game,
      variant: fields.variant as string | undefined,
      config: fields.config,
      format: (fields.format ?? "round-robin") as TournamentFormat,
      duplicate: fields.duplicate === true,
      players: fields.players as string[],
      matches: matches as number,
      rounds: fields.rounds as number | undefined,
      seed: typeof fields.seed === "string" ? fields.seed : randomBytes(6).toString("hex"),
    },
    concurrency: concurrency as number,
  };
}

/** The `game` (required) and `variant` (default: the game's) of a query. */
function gameOf(url: URL, usage: string): { game: string; variant: string } {
  const id = url.searchParams.get("game");
  if (!id) throw new QueryError(`\`game\` is required: ${usage}`);
  const game = getGame(id);
  return { game: game.id, variant: configure(game, {}, url.searchParams.get("variant") ?? undefined).variant };
}

export function leagueRoutes(
  store: ReplayStore,
  boards: Boards,
  hosted?: { tournaments: HostedTournaments; tokens: TokenStore },
): ApiRoute {
  const served = runs(store);
  return {
    describe:
      "GET /tournaments, GET /tournaments/:id, POST /tournaments (admin), GET /ratings[?game=<id>[&variant=]], " +
      "GET /ratings/history?player=<kind:name>&game=<id>[&variant=<name>], GET /evolutions, GET /evolutions/:id",
    methods: ["POST"],
    handle(req, res, url) {
      const path = url.pathname.replace(/\/+$/, "");
      if (req.method === "POST") {
        if (path !== "/tournaments" || !hosted) return false;
        respond(res, async () => {
          checkParams(url.searchParams, []);
          await checkAdmin(req, hosted.tokens, "running a tournament");
          const asked = await tournamentRequest(req);
          const t = "resume" in asked
            ? await hosted.tournaments.resume(asked.resume, asked.concurrency)
            : await hosted.tournaments.start({ ...asked.request, concurrency: asked.concurrency });
          send(res, 202, { tournament: t, standings: `/tournaments/${t.id}` }, { location: `/tournaments/${t.id}` });
        }, refusal);
        return true;
      }
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
