import { games } from "../../games/registry.ts";
import type { LiveMatches } from "../match/live-matches.ts";
import type { Match } from "../match/match.ts";
import { type ApiRoute, error, pathSegment, send } from "../http.ts";
import { checkParams, QueryError } from "../../db/query.ts";

/**
 * The matches being played now, for the lobby's "watch" list, and what an invite leads to, for the page
 * an invite link opens. Only public facts: who sits where, whose turn it is, how far the match is.
 */

function liveSummary(match: Match) {
  return {
    id: match.id,
    game: match.game.id,
    title: match.game.title,
    variant: match.variant,
    phase: match.ended ? "ended" : match.started ? "playing" : "waiting",
    participants: match.participants(),
    openSeats: match.openSeats(),
    toAct: match.toAct(),
    steps: match.stepsPlayed,
    createdAt: match.createdAt,
  };
}

const GAME_IDS = new Set(games.map((g) => g.id));

const INVITE_PATH = /^\/invites\/([^/]+)$/;

export function liveRoutes(matches: LiveMatches): ApiRoute {
  return {
    describe: "GET /live, GET /invites/:code",
    handle(_req, res, url) {
      const path = url.pathname.replace(/\/+$/, "");
      const invite = INVITE_PATH.exec(path);
      if (path !== "/live" && !invite) return false;
      try {
        checkParams(url.searchParams, invite ? [] : ["game"]);
      } catch (cause) {
        if (!(cause instanceof QueryError)) throw cause;
        error(res, 400, "bad_query", cause.message);
        return true;
      }
      if (invite) {
        const code = pathSegment(res, invite[1]);
        if (code === undefined) return true;
        let found;
        try {
          found = matches.find(code);
        } catch {
          found = undefined;
        }
        if (!found?.invited || found.match.ended) {
          error(res, 404, "unknown_invite", `no open invite \`${code}\`: the match has ended or the link is mistyped`);
        } else send(res, 200, liveSummary(found.match));
        return true;
      }
      const game = url.searchParams.get("game");
      if (game !== null && !GAME_IDS.has(game)) {
        error(res, 400, "bad_query", `no game \`${game.slice(0, 64)}\`; games: ${[...GAME_IDS].join(", ")}`);
        return true;
      }
      const live = matches.all().filter((m) => !m.ended && (game === null || m.game.id === game));
      send(res, 200, { matches: live.map(liveSummary) });
      return true;
    },
  };
}
