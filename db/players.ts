import type { SeatKind } from "../protocol/frames.ts";
import { playerId } from "../protocol/players.ts";
import type { RatingRecord } from "./league.ts";
import type { SeatRecord } from "./records.ts";
import type { Sql } from "./sql.ts";

/** What names a player beyond its name, from the seat it sat in. */
export type PlayerDetails = Readonly<
  Pick<SeatRecord, "model" | "endpoint" | "strategy" | "policyId" | "policyVersion">
>;

export interface PlayerRow {
  readonly id: string;
  readonly kind: SeatKind;
  readonly name: string;
  readonly details: PlayerDetails;
}

/** The player a seat stands for; none for a seat nobody has taken yet (an open invite). */
export function playerRow(seat: SeatRecord | null): PlayerRow | undefined {
  if (!seat || seat.name === "") return undefined;
  const { model, endpoint, strategy, policyId, policyVersion } = seat;
  const details = Object.fromEntries(
    Object.entries({ model, endpoint, strategy, policyId, policyVersion }).filter(([, v]) => v !== undefined),
  );
  return { id: playerId(seat), kind: seat.kind, name: seat.name, details };
}

export interface PlayerRecord extends PlayerRow {
  readonly createdAt: Date;
  /** Rated matches over every game and variant. */
  readonly ratedMatches: number;
}

/** A player's online rating in one game and variant. */
export type PlayerRating = Omit<RatingRecord, "player">;

export interface PlayerFilter {
  readonly kind?: SeatKind;
  /** Players whose id holds this text, any case. */
  readonly search?: string;
  /** Only players with a rated match (true) or only those without one (false). */
  readonly rated?: boolean;
}

const SELECT = `SELECT p.id, p.kind, p.name, p.details, p.created_at,
    coalesce((SELECT sum(r.matches) FROM ratings r WHERE r.player = p.id), 0)::integer AS rated_matches
  FROM players p`;

const toPlayer = (r: Record<string, unknown>): PlayerRecord => ({
  id: r.id as string,
  kind: r.kind as SeatKind,
  name: r.name as string,
  details: r.details as PlayerDetails,
  createdAt: new Date(r.created_at as string),
  ratedMatches: r.rated_matches as number,
});

/** The players table: everyone who has sat at a table or holds a token to. */
export class PlayerStore {
  constructor(private readonly sql: Sql) {}

  async get(id: string): Promise<PlayerRecord | undefined> {
    const rows = await this.sql.query(`${SELECT} WHERE p.id = $1`, [id]);
    return rows.length ? toPlayer(rows[0]) : undefined;
  }

  /** A player's online ratings, one per game and variant it has played rated, most played first. */
  async ratings(id: string): Promise<PlayerRating[]> {
    const rows = await this.sql.query(
      "SELECT game, variant, mu, sigma, matches, updated_at FROM ratings WHERE player = $1 ORDER BY matches DESC, game, variant",
      [id],
    );
    return rows.map((r) => ({
      game: r.game as string,
      variant: r.variant as string,
      mu: r.mu as number,
      sigma: r.sigma as number,
      matches: r.matches as number,
      updatedAt: new Date(r.updated_at as string),
    }));
  }

  /** Up to `limit` players in id order, after `after`. */
  async list(filter: PlayerFilter, limit: number, after?: string): Promise<PlayerRecord[]> {
    const clauses: string[] = [];
    const params: unknown[] = [];
    const add = (clause: (n: string) => string, value: unknown) => {
      params.push(value);
      clauses.push(clause(`$${params.length}`));
    };
    if (filter.kind !== undefined) add((n) => `p.kind = ${n}`, filter.kind);
    if (filter.search !== undefined) add((n) => `strpos(lower(p.id), lower(${n})) > 0`, filter.search);
    if (filter.rated !== undefined) {
      clauses.push(
        `${filter.rated ? "" : "NOT "}EXISTS (SELECT 1 FROM ratings r WHERE r.player = p.id AND r.matches > 0)`,
      );
    }
    if (after !== undefined) add((n) => `p.id > ${n}`, after);
    params.push(limit);
    const where = clauses.length ? ` WHERE ${clauses.join(" AND ")}` : "";
    return (await this.sql.query(`${SELECT}${where} ORDER BY p.id LIMIT $${params.length}`, params)).map(toPlayer);
  }
}
