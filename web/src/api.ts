/// <reference lib="dom" />
import type { EvolutionRecord, RatingPoint as StoredRatingPoint, TournamentRecord } from "../../db/league.ts";
import type { PlayerRating, PlayerRecord } from "../../db/players.ts";
import type { EndReason, ParticipantView, SeatStatus } from "../../protocol/frames.ts";
import type { Board as PublishedBoard, BoardRow } from "../../server/league/board.ts";
import type { EvolutionReport as ServerEvolutionReport } from "../../server/league/evolution.ts";
import type { StandingRow as Standing, Standings } from "../../server/league/tournament/standings.ts";

/**
 * The server's HTTP API as the page uses it: the game catalog, registered policies, live matches, invites
 * and the replay store.
 */

export interface GameInfo {
  readonly id: string;
  readonly title: string;
  readonly summary: string;
  readonly seats: { readonly min: number; readonly max: number };
  readonly defaultVariant: string;
  readonly variants: Readonly<Record<string, { readonly description: string; readonly seats: number }>>;
  readonly strategies: readonly { readonly name: string; readonly description: string; readonly arg?: unknown }[];
}

/** A registered policy version (GET /policies), as the lobby offers it for a seat. */
export interface PolicyInfo {
  readonly id: string;
  readonly name: string;
  readonly version: number;
  readonly game: string;
  /** The variant it was trained on. */
  readonly variant: string;
  readonly notes: string | null;
}

export interface LiveMatch {
  readonly id: string;
  readonly game: string;
  readonly title: string;
  readonly variant: string;
  readonly phase: "waiting" | "playing" | "ended";
  readonly participants: readonly ParticipantView[];
  readonly openSeats: readonly number[];
  readonly toAct: readonly number[];
  readonly steps: number;
  readonly createdAt: string;
}

export interface StoredSeat {
  readonly kind: string;
  readonly name: string;
  readonly strategy?: string;
}

export interface StoredMatch {
  readonly id: string;
  readonly game: string;
  readonly variant: string;
  /** null for a seat nobody took (a private match aborted before its invite was used). */
  readonly seats: readonly (StoredSeat | null)[];
  readonly statuses: readonly SeatStatus[];
  /** null while the match is being played. */
  readonly returns: readonly number[] | null;
  readonly endReason: EndReason | null;
  readonly culprit: number | null;
  readonly steps: number;
  readonly createdAt: string;
  readonly startedAt: string | null;
  readonly endedAt: string | null;
}

export interface Decision {
  readonly seat?: number;
  readonly seq: number;
  readonly action: unknown;
  readonly defaulted: string | null;
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly attempts: readonly unknown[];
  readonly latencyMs: number;
}

export interface ReplayTurn {
  readonly turn: number;
  readonly toAct: readonly number[];
  readonly observation: unknown;
  readonly decision?: Decision | null;
  readonly reward?: number | null;
  readonly decisions?: readonly Decision[];
  readonly rewards?: readonly number[] | null;
}

export interface ReplayView {
  readonly match: StoredMatch & { readonly config: unknown };
  readonly viewer: number | "public" | "all";
  readonly rules: string;
  readonly turns: readonly ReplayTurn[];
  readonly final: { readonly observation: unknown; readonly over: boolean; readonly returns: readonly number[] | null };
}

/** A refusal from the server, with its code and the sentence it gave. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

/** Long enough for a long match's re-simulation on a busy server; a page never waits on a request for ever. */
const TIMEOUT_MS = 60_000;

async function get<T>(path: string): Promise<T> {
  let body: { error?: { code?: string; message?: string } } | null;
  let res: Response;
  try {
    res = await fetch(path, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(TIMEOUT_MS) });
    body = await res.json().catch(() => null);
  } catch (e) {
    const timedOut = (e as Error).name === "TimeoutError";
    throw new ApiError(
      0,
      timedOut ? "timeout" : "unreachable",
      timedOut
        ? `the server did not answer within ${TIMEOUT_MS / 1000} s`
        : `the server could not be reached (${(e as Error).message})`,
    );
  }
  if (!res.ok || body === null) {
    const e = body?.error ?? {};
    throw new ApiError(res.status, e.code ?? "http_error", e.message ?? `${path} answered ${res.status}`);
  }
  return body as T;
}

let catalog: Promise<readonly GameInfo[]> | undefined;

export const api = {
  /** The registry never changes while the server runs: fetched once per page load. */
  games: () => (catalog ??= get<{ games: GameInfo[] }>("/games").then((r) => r.games)),
  /** Not cached: a policy registered while the lobby is open shows on the next visit. */
  policies: (game: string) =>
    get<{ policies: PolicyInfo[] }>(`/policies?game=${encodeURIComponent(game)}`).then((r) => r.policies),
  live: (game?: string) =>
    get<{ matches: LiveMatch[] }>(`/live${game ? `?game=${encodeURIComponent(game)}` : ""}`).then((r) => r.matches),
  invite: (code: string) => get<LiveMatch>(`/invites/${encodeURIComponent(code)}`),
  matches: (filter: Readonly<Record<string, string>>, cursor?: string) => {
    const query = new URLSearchParams(Object.entries(filter).filter(([, v]) => v !== ""));
    if (cursor) query.set("cursor", cursor);
    return get<{ matches: StoredMatch[]; next: string | null }>(`/matches?${query}`);
  },
  view: (id: string, seat: string) =>
    get<ReplayView>(`/matches/${encodeURIComponent(id)}/view?seat=${encodeURIComponent(seat)}`),
  /** A match's record in the store (one being played has no returns yet). */
  match: (id: string) => get<{ match: StoredMatch }>(`/matches/${encodeURIComponent(id)}`).then((r) => r.match),
  /** What became of `seat` of match `id`: its status now, and how the match ended once it has. */
  fate: async (id: string, seat: number): Promise<{ status: SeatStatus; ended: StoredMatch | null }> => {
    const live = (await api.live()).find((m) => m.id === id);
    if (live) return { status: live.participants[seat].status, ended: null };
    const match = await api.match(id);
    return { status: match.statuses[seat], ended: match };
  },
};

/**
 * A server type as it arrives in JSON: dates as ISO strings. The league's answers are typed by the server's own
 * records, so the page and the API cannot drift apart.
 */
type Json<T> = T extends Date ? string
  : T extends readonly [infer A, infer B] ? readonly [Json<A>, Json<B>]
  : T extends readonly (infer U)[] ? readonly Json<U>[]
  : T extends object ? { readonly [K in keyof T]: Json<T[K]> }
  : T;

/** A published leaderboard (GET /ratings) and its rows: Bradley–Terry with its interval, and the online rating. */
export type Board = Json<PublishedBoard>;
export type RatingRow = Json<BoardRow>;
export type TournamentInfo = Json<TournamentRecord>;
export type StandingRow = Json<Standing>;
export type TournamentStandings = Json<Standings>;
export type RatingPoint = Json<StoredRatingPoint>;
export type EvolutionInfo = Json<EvolutionRecord>;
export type EvolutionReport = Json<ServerEvolutionReport>;
/** A player (GET /players): everyone who has sat at a table or holds a token, as `kind:name`. */
export type PlayerInfo = Json<PlayerRecord>;

/** One player with their online rating in each game they have played rated (GET /players/<id>). */
export interface PlayerDetail {
  readonly player: PlayerInfo;
  readonly ratings: readonly Json<PlayerRating>[];
}

const query = (params: Record<string, string | undefined>) =>
  new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => !!e[1])).toString();

export const league = {
  players: (filter: { kind?: string; search?: string; rated?: string }, cursor?: string) =>
    get<{ players: PlayerInfo[]; next: string | null }>(`/players?${query({ ...filter, cursor })}`),
  player: (id: string) => get<PlayerDetail>(`/players/${encodeURIComponent(id)}`),
  evolutions: () => get<{ evolutions: EvolutionInfo[] }>("/evolutions").then((r) => r.evolutions),
  evolution: (id: string) => get<EvolutionReport>(`/evolutions/${encodeURIComponent(id)}`),
  /** A game's board, or the pooled board of every game (`game` undefined). */
  ratings: (game?: string, variant?: string) => get<Board>(`/ratings?${query({ game, variant })}`),
  history: (player: string, game: string, variant?: string) =>
    get<{ variant: string; points: RatingPoint[] }>(`/ratings/history?${query({ player, game, variant })}`),
  tournaments: () => get<{ tournaments: TournamentInfo[] }>("/tournaments").then((r) => r.tournaments),
  tournament: (id: string) => get<TournamentStandings>(`/tournaments/${encodeURIComponent(id)}`),
};
