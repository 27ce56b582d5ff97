import type { Viewer } from "../../games/core/game.ts";
import {
  checkParams,
  decodeCursor,
  encodeCursor,
  limitParam,
  parseFilter,
  positionOf,
  QueryError,
} from "../../db/query.ts";
import type { MatchRecord, StepRecordRow } from "../../db/records.ts";
import { replayableGame, ReplayError, replayMatch } from "../../db/replay.ts";
import type { MatchOrder, ReplayStore } from "../../db/store.ts";
import { type ApiRoute, error, pathSegment, respond } from "../http.ts";

/**
 * The replay store over HTTP: a filtered, paginated list of matches, a match's full record, and one
 * seat's (or the public's) side of a match, re-simulated turn by turn for a replay viewer.
 */

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;

/** What a list of matches shows of each. */
export function matchSummary(match: MatchRecord) {
  return {
    id: match.id,
    game: match.game,
    variant: match.variant,
    gameVersion: match.gameVersion,
    group: match.group ?? null,
    /** Whether it counts for ratings (the public queue's and tournaments' matches). */
    rated: match.rated ?? false,
    seats: match.seats,
    statuses: match.statuses,
    returns: match.returns,
    endReason: match.endReason,
    /** Why it ended in error (a fault in the server, a write the store refused), when it did. */
    error: match.error ?? null,
    culprit: match.culprit,
    steps: match.steps,
    createdAt: match.createdAt,
    startedAt: match.startedAt,
    endedAt: match.endedAt,
  };
}

function orderOf(value: string | null): MatchOrder {
  if (value === null || value === "desc") return "desc";
  if (value === "asc") return "asc";
  throw new QueryError(`\`order\` is \`desc\` (newest first, the default) or \`asc\` (oldest first), got "${value}"`);
}

/**
 * GET /matches: one page of matches, newest first unless `order=asc`, and the cursor of the next page (null
 * at the end).
 */
async function listMatches(store: ReplayStore, url: URL) {
  const filter = parseFilter(url.searchParams, ["limit", "cursor", "order"]);
  const limit = limitParam(url.searchParams.get("limit"), DEFAULT_LIMIT, MAX_LIMIT);
  const order = orderOf(url.searchParams.get("order"));
  const cursor = url.searchParams.get("cursor");
  const kind = `matches:${order}`;
  const after = cursor === null ? undefined : decodeCursor(kind, filter, cursor);
  // One more than asked tells whether another page follows without a last, empty one.
  const rows = await store.matches(filter, limit + 1, after, order);
  const page = rows.slice(0, limit);
  return {
    matches: page.map(matchSummary),
    next: rows.length > limit ? encodeCursor(kind, filter, positionOf(page.at(-1)!)) : null,
  };
}

/** Whose view a replay shows: a seat, the public, or `all` (every seat's and the public's, every decision). */
export type ReplayViewer = Viewer | "all";

function seatOf(match: MatchRecord, value: string | null): ReplayViewer {
  const count = match.seats.length;
  const allowed = [...Array.from({ length: count }, (_, i) => String(i)), "public", "all"];
  if (value === null || !allowed.includes(value)) {
    throw new QueryError(
      `\`seat\` must be one of ${allowed.join(", ")}${value === null ? "" : `, got "${value}"`}`,
    );
  }
  return value === "public" || value === "all" ? value : Number(value);
}

/** A seat's own decision, everything the record keeps about it (its attempts and meta are its alone). */
function decision(row: StepRecordRow) {
  return {
    seq: row.seq,
    action: row.action,
    input: row.input ?? null,
    legal: row.legal,
    defaulted: row.defaulted,
    error: row.error,
    attempts: row.attempts,
    meta: row.meta,
    latencyMs: row.latencyMs,
    at: row.at,
    offered: row.offered ?? null,
    legalIds: row.legalIds ?? null,
    prompt: row.prompt ?? null,
  };
}

/**
 * What `viewer` saw of a match: before every turn its view of the game, re-simulated (also on turns where
 * it did not act), its own decision and its reward; then its view at the end. Other seats' actions show
 * only as far as the viewer's observations reveal them; the public sees neither decisions nor rewards.
 * `all` sees everything: every seat's view and the public's, every decision and every seat's reward.
 */
export function seatView(match: MatchRecord, steps: readonly StepRecordRow[], viewer: ReplayViewer) {
  const game = replayableGame(match);
  const turns: Record<string, unknown>[] = [];
  let final: unknown = null;
  for (const event of replayMatch(match, steps, viewer)) {
    if (event.kind === "end") {
      final = { observation: event.view, over: event.over, returns: match.returns };
      break;
    }
    if (event.problem) throw event.problem;
    turns.push({
      turn: event.turn,
      toAct: event.toAct,
      observation: event.view,
      ...seen(viewer, event.rows, event.rewards),
    });
  }
  // While the match is played its config may hold the seats' private values; the full config comes with the end.
  const config = match.endedAt === null ? game.publicConfig(match.config) : match.config;
  return {
    match: { ...matchSummary(match), gameVersion: match.gameVersion, config },
    viewer,
    rules: game.rules(match.config),
    turns,
    final,
  };
}

/** The decisions and rewards of a turn that `viewer` may see. */
function seen(viewer: ReplayViewer, rows: readonly StepRecordRow[], rewards: readonly number[] | null) {
  if (viewer === "public") return {};
  if (viewer === "all") return { decisions: rows.map((row) => ({ seat: row.seat, ...decision(row) })), rewards };
  const own = rows.find((row) => row.seat === viewer);
  return { decision: own ? decision(own) : null, reward: rewards === null ? null : rewards[viewer] };
}

/** Answers with `answer()`'s result, or with the error that says what was wrong; never throws. */
const MATCH_PATH = /^\/matches(?:\/([^/]+)(\/view)?)?$/;

export function matchRoutes(store: ReplayStore): ApiRoute {
  return {
    describe: "GET /matches?order=desc|asc, GET /matches/:id, GET /matches/:id/view?seat=<n|public|all>",
    handle(_req, res, url) {
      const path = url.pathname.replace(/\/+$/, "");
      const found = MATCH_PATH.exec(path);
      if (!found) return false;
      const [, rawId, view] = found;
      respond(res, async () => {
        if (rawId === undefined) return await listMatches(store, url);
        const id = pathSegment(res, rawId);
        if (id === undefined) return;
        checkParams(url.searchParams, view ? ["seat"] : []);
        const match = await store.match(id);
        if (!match) return error(res, 404, "unknown_match", `no match \`${id}\` in the replay store`);
        const viewer = view ? seatOf(match, url.searchParams.get("seat")) : "all";
        if (match.endedAt === null && viewer !== "public") {
          // Hidden cards and private values of a match still being played are its seats' alone.
          return error(
            res,
            403,
            "match_live",
            `match ${id} is still being played: until it ends only its public view is shown (/matches/${id}/view?seat=public)`,
          );
        }
        if (!view) return { match, steps: await store.steps(id) };
        try {
          return seatView(match, await store.steps(id), viewer);
        } catch (cause) {
          if (!(cause instanceof ReplayError)) throw cause;
          error(
            res,
            409,
            "not_replayable",
            `match ${id} cannot be re-simulated: ${cause.message} (\`ludus replay verify --match ${id}\` lists every difference)`,
          );
        }
      });
      return true;
    },
  };
}
