import { createHash } from "node:crypto";
import { games, registry } from "../games/registry.ts";
import { PLAYER_KINDS, seatOfPlayer } from "../protocol/players.ts";
import { END_REASONS, SEAT_STATUSES } from "./records.ts";
import type { MatchFilter, MatchPosition } from "./store.ts";

/** A filter, cursor or format a reader got wrong: said back to them as is (HTTP 400, CLI exit 2). */
export class QueryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "QueryError";
  }
}

/** The filter parameters that HTTP queries and `ludus export` flags share. */
export const FILTER_KEYS = [
  "game",
  "version",
  "variant",
  "participant",
  "player",
  "model",
  "opponent",
  "status",
  "from",
  "to",
] as const;

function time(key: string, value: string): Date {
  const parsed = /^\d+$/.test(value) ? new Date(Number(value)) : new Date(value);
  if (Number.isNaN(parsed.getTime())) {
    throw new QueryError(
      `\`${key}\` must be an ISO 8601 time (2026-11-21T10:00:00Z) or epoch milliseconds, got "${value}"`,
    );
  }
  return parsed;
}

/** A `limit` (or `name`d) query parameter: `fallback` when absent, else a whole number from 1 to `max`. */
export function limitParam(value: string | null, fallback: number, max: number, name = "limit"): number {
  if (value === null) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > max) {
    throw new QueryError(`\`${name}\` must be a whole number from 1 to ${max}, got "${value}"`);
  }
  return n;
}

/**
 * Refuses parameters given twice or not in `allowed`, naming what is allowed; returns them as pairs.
 * Every query of the replay API goes through it, so all answer the same mistakes the same way.
 */
export function checkParams(params: Iterable<[string, string]>, allowed: readonly string[]): [string, string][] {
  const pairs = [...params];
  const seen = new Set<string>();
  for (const [key] of pairs) {
    if (seen.has(key)) throw new QueryError(`\`${key}\` is given more than once; give it once`);
    seen.add(key);
    if (!allowed.includes(key)) {
      throw new QueryError(
        `unknown parameter \`${key}\`; ${allowed.length ? `allowed: ${allowed.join(", ")}` : "this route takes none"}`,
      );
    }
  }
  return pairs;
}

/**
 * A match filter from string parameters (a query string or CLI flags). Unknown keys and bad values are
 * refused with what is allowed; `allowed` names extra keys the caller reads itself (cursor, limit).
 */
export function parseFilter(params: Iterable<[string, string]>, allowed: readonly string[] = []): MatchFilter {
  const filter: { -readonly [K in keyof MatchFilter]: MatchFilter[K] } = {};
  for (const [key, value] of checkParams(params, [...FILTER_KEYS, ...allowed])) {
    switch (key) {
      case "game":
        if (!games.some((g) => g.id === value)) {
          throw new QueryError(`no game \`${value}\`; games: ${games.map((g) => g.id).join(", ")}`);
        }
        filter.game = value;
        break;
      case "version":
        if (!/^\d{1,9}$/.test(value)) {
          throw new QueryError(`\`version\` must be a game version (an integer), got "${value}"`);
        }
        filter.version = Number(value);
        break;
      case "variant":
      case "participant":
      case "model":
        if (value === "") throw new QueryError(`\`${key}\` must not be empty`);
        filter[key] = value;
        break;
      case "opponent":
        // A player id when it starts with a kind, else a participant's name or token id.
        if (value === "" || (/^[a-z]+:/.test(value) && !seatOfPlayer(value))) {
          throw new QueryError(
            `\`opponent\` is a player id, kind:name with kind one of ${
              PLAYER_KINDS.join(", ")
            } (builtin:tit-for-tat), or a participant's name or token id, got "${value}"`,
          );
        }
        filter.opponent = value;
        break;
      case "status":
        if (!([...SEAT_STATUSES, ...END_REASONS] as string[]).includes(value)) {
          throw new QueryError(
            `\`status\` is a seat status (${SEAT_STATUSES.join(", ")}) or a match's end reason (${
              END_REASONS.join(", ")
            }), got "${value}"`,
          );
        }
        filter.status = value;
        break;
      case "player":
        if (!seatOfPlayer(value)) {
          throw new QueryError(
            `\`player\` is a player id, kind:name with kind one of ${
              PLAYER_KINDS.join(", ")
            } (builtin:tit-for-tat), got "${value}"`,
          );
        }
        filter.player = value;
        break;
      case "from":
      case "to":
        filter[key] = time(key, value);
        break;
    }
  }
  if (filter.version !== undefined) {
    if (filter.game === undefined) throw new QueryError("`version` needs `game`: versions are per game");
    const versions = registry.versions(filter.game);
    if (!versions.includes(filter.version)) {
      throw new QueryError(
        `${filter.game} version ${filter.version} is not in this build (versions: ${versions.join(", ")})`,
      );
    }
  }
  if (filter.from && filter.to && filter.from >= filter.to) {
    throw new QueryError("`from` must be earlier than `to`");
  }
  return filter;
}

/** A fingerprint of a query (its kind and filter), so a cursor is only ever used with its own query. */
function fingerprint(kind: string, filter: MatchFilter): string {
  const canonical = JSON.stringify([
    kind,
    filter.game ?? null,
    filter.variant ?? null,
    filter.version ?? null,
    filter.participant ?? null,
    filter.player ?? null,
    filter.from?.toISOString() ?? null,
    filter.to?.toISOString() ?? null,
    filter.ended ?? null,
    // Appended only when given, so cursors issued before these filters existed stay valid.
    ...(filter.model ?? filter.opponent ?? filter.status
      ? [filter.model ?? null, filter.opponent ?? null, filter.status ?? null]
      : []),
  ]);
  return createHash("sha256").update(canonical).digest("base64url").slice(0, 12);
}

/** An opaque cursor: the position after the last match returned, bound to the query it came from. */
export function encodeCursor(kind: string, filter: MatchFilter, after: MatchPosition): string {
  return Buffer.from(JSON.stringify({ q: fingerprint(kind, filter), t: after.createdAt, id: after.id })).toString(
    "base64url",
  );
}

/** The position a cursor names; refuses a cursor that is malformed or from another query. */
export function decodeCursor(kind: string, filter: MatchFilter, cursor: string): MatchPosition {
  let parsed: { q?: unknown; t?: unknown; id?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw new QueryError("`cursor` is not a cursor this server issued; pass the `next` value of a previous answer");
  }
  if (typeof parsed?.q !== "string" || typeof parsed.t !== "string" || typeof parsed.id !== "string") {
    throw new QueryError("`cursor` is not a cursor this server issued; pass the `next` value of a previous answer");
  }
  if (parsed.q !== fingerprint(kind, filter)) {
    throw new QueryError(
      "`cursor` belongs to a different query (other filters or another format); repeat the filters it was issued with",
    );
  }
  return { createdAt: parsed.t, id: parsed.id };
}

/**
 * An export's cursor: the end sequence of the last match it read, bound to the export it came from.
 * Exports read in the order matches end, so resuming never skips a match that ended late.
 */
export function encodeEndCursor(kind: string, filter: MatchFilter, endSeq: number): string {
  return Buffer.from(JSON.stringify({ q: fingerprint(kind, filter), e: endSeq })).toString("base64url");
}

/** The end sequence an export cursor names; refuses one that is malformed, from another query or from a listing. */
export function decodeEndCursor(kind: string, filter: MatchFilter, cursor: string): number {
  let parsed: { q?: unknown; e?: unknown; t?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw new QueryError("`cursor` is not a cursor this server issued; pass the cursor a previous export gave");
  }
  if (typeof parsed?.q === "string" && typeof parsed.t === "string") {
    throw new QueryError(
      "`cursor` is a match listing's cursor, or an export cursor from before exports followed the order " +
        "matches end in; start the export again without it (use `from` to skip old matches)",
    );
  }
  if (typeof parsed?.q !== "string" || !Number.isSafeInteger(parsed.e) || (parsed.e as number) < 0) {
    throw new QueryError("`cursor` is not a cursor this server issued; pass the cursor a previous export gave");
  }
  if (parsed.q !== fingerprint(kind, filter)) {
    throw new QueryError(
      "`cursor` belongs to a different query (other filters or another format); repeat the filters it was issued with",
    );
  }
  return parsed.e as number;
}

/** The position of a match, for a cursor after it. */
export const positionOf = (match: { createdAt: Date; id: string }): MatchPosition => ({
  createdAt: match.createdAt.toISOString(),
  id: match.id,
});
