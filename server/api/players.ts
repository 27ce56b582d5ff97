import type { PlayerFilter } from "../../db/players.ts";
import { PLAYER_KINDS, seatOfPlayer } from "../../protocol/players.ts";
import { checkParams, limitParam, QueryError } from "../../db/query.ts";
import type { ReplayStore } from "../../db/store.ts";
import type { SeatKind } from "../../protocol/frames.ts";
import { type ApiRoute, error, pathSegment, respond } from "../http.ts";

/**
 * Players over HTTP (docs/league.md): everyone who has sat at a table or holds a token, by kind or by a piece
 * of their id, and one player with their ratings; their matches are `GET /matches?player=<id>`.
 */

const PATH = /^\/players(?:\/([^/]+))?$/;
const MAX_LIMIT = 1_000;
const DEFAULT_LIMIT = 100;

/** A page's cursor: the last id it held, opaque. */
const encode = (id: string) => Buffer.from(id).toString("base64url");
function decode(cursor: string): string {
  const id = Buffer.from(cursor, "base64url").toString("utf8");
  if (!seatOfPlayer(id)) throw new QueryError("`cursor` is not one this route gave; start again without it");
  return id;
}

export function playerRoutes(store: ReplayStore): ApiRoute {
  return {
    describe: "GET /players[?kind=<kind>&search=<text>&rated=<true|false>&limit=&cursor=], GET /players/:id",
    handle(_req, res, url) {
      const found = PATH.exec(url.pathname.replace(/\/+$/, ""));
      if (!found) return false;
      respond(res, async () => {
        if (found[1] !== undefined) {
          const id = pathSegment(res, found[1]);
          if (id === undefined) return;
          checkParams(url.searchParams, []);
          const player = await store.players.get(id);
          if (!player) {
            return error(res, 404, "unknown_player", `no player \`${id}\`; GET /players lists them`);
          }
          return {
            player,
            ratings: await store.players.ratings(id),
            matches: `/matches?player=${encodeURIComponent(id)}`,
          };
        }
        const params = Object.fromEntries(
          checkParams(url.searchParams, ["kind", "search", "rated", "limit", "cursor"]),
        );
        const filter: { -readonly [K in keyof PlayerFilter]: PlayerFilter[K] } = {};
        if (params.kind !== undefined) {
          if (!PLAYER_KINDS.includes(params.kind as SeatKind)) {
            throw new QueryError(`\`kind\` is one of ${PLAYER_KINDS.join(", ")}, got "${params.kind}"`);
          }
          filter.kind = params.kind as SeatKind;
        }
        if (params.search !== undefined) {
          if (params.search === "") throw new QueryError("`search` must not be empty");
          filter.search = params.search;
        }
        if (params.rated !== undefined) {
          if (params.rated !== "true" && params.rated !== "false") {
            throw new QueryError(`\`rated\` is true or false, got "${params.rated}"`);
          }
          filter.rated = params.rated === "true";
        }
        const limit = limitParam(params.limit ?? null, DEFAULT_LIMIT, MAX_LIMIT);
        const after = params.cursor === undefined ? undefined : decode(params.cursor);
        const rows = await store.players.list(filter, limit + 1, after);
        const page = rows.slice(0, limit);
        return { players: page, next: rows.length > limit ? encode(page.at(-1)!.id) : null };
      });
      return true;
    },
  };
}
