import { games } from "../../games/registry.ts";
import type { LiveMatches } from "../match/live-matches.ts";
import type { Match } from "../match/match.ts";
import { type ApiRoute, error, pathSegment, respond, send } from "../http.ts";
import { checkParams, QueryError } from "../../db/query.ts";
import type { Cluster } from "../cluster/cluster.ts";

/**
 * The matches being played now, for the lobby's "watch" list, and what an invite leads to, for the page
 * an invite link opens. Only public facts: who sits where, whose turn it is, how far the match is. In a cluster
 * each process answers for its own matches, and the one asked gathers its peers' answers.
 */

/** How long the process asked waits for each peer's matches (a peer that stopped answers nobody). */
const PEER_MS = 1000;

type LiveSummary = ReturnType<typeof liveSummary>;

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

/** `cluster`: this process's, whose peers' matches are listed too (none: this process's alone). */
export function liveRoutes(matches: LiveMatches, cluster?: Cluster): ApiRoute {
  const live = (game: string | null) =>
    matches.all().filter((m) => !m.ended && !m.suspended && (game === null || m.game.id === game)).map(liveSummary);
  const invited = (code: string): LiveSummary | null => {
    let found;
    try {
      found = matches.find(code);
    } catch {
      found = undefined;
    }
    return found?.invited && !found.match.ended ? liveSummary(found.match) : null;
  };
  const bus = cluster?.bus;
  bus?.on<string | null>("live.list", (game) => live(game));
  bus?.on<string>("live.invite", (code) => invited(code));

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
        const here = invited(code);
        if (here || !bus) {
          if (here) send(res, 200, here);
          else error(res, 404, "unknown_invite", unknownInvite(code).message);
          return true;
        }
        respond(res, async () => {
          const owner = await cluster!.ownerOfInvite(code);
          const there = owner?.live
            ? await bus.ask<LiveSummary | null>(owner.node, "live.invite", code, PEER_MS)
            : null;
          if (!there) throw new InviteNotFound(code);
          return there;
        }, (cause) => cause instanceof InviteNotFound ? { status: 404, ...unknownInvite(code) } : undefined);
        return true;
      }
      const game = url.searchParams.get("game");
      if (game !== null && !GAME_IDS.has(game)) {
        error(res, 400, "bad_query", `no game \`${game.slice(0, 64)}\`; games: ${[...GAME_IDS].join(", ")}`);
        return true;
      }
      if (!bus) {
        send(res, 200, { matches: live(game) });
        return true;
      }
      respond(res, async () => {
        // Each live peer's own matches; one that does not answer in time is left out of this answer.
        const theirs = await Promise.all(
          cluster!.peers().map((peer) => bus.ask<LiveSummary[]>(peer, "live.list", game, PEER_MS).catch(() => [])),
        );
        const all = [...live(game), ...theirs.flat()];
        // A peer's times came as JSON (text), this process's are Dates.
        all.sort((a, b) => new Date(a.createdAt).getTime() - new Date(b.createdAt).getTime());
        return { matches: all };
      });
      return true;
    },
  };
}

class InviteNotFound extends Error {}

const unknownInvite = (code: string) => ({
  code: "unknown_invite",
  message: `no open invite \`${code}\`: the match has ended or the link is mistyped`,
});
