import { randomBytes } from "node:crypto";
import type { EndReasonRecord, SeatRecord } from "./records.ts";
import { playerId } from "../protocol/players.ts";
import type { Sql } from "./sql.ts";
import { MATCHES } from "./tables/matches.ts";

/** How a tournament pairs its players (see server/league/tournament/schedule.ts). */
export type TournamentFormat = "round-robin" | "swiss" | "gauntlet" | "duplicate";

/** A tournament as it was asked for: its schedule follows from these fields and, for Swiss, its results. */
export interface TournamentRecord {
  readonly id: string;
  readonly game: string;
  readonly variant: string;
  readonly config: unknown;
  readonly format: TournamentFormat;
  /** Each deal played twice with the seats swapped (always so for the duplicate format). */
  readonly duplicate: boolean;
  /** Player specs, in the order given. */
  readonly players: readonly string[];
  /** Matches per pairing (Swiss: per pairing in each round). */
  readonly matches: number;
  /** Swiss rounds; null for the other formats. */
  readonly rounds: number | null;
  readonly seed: string;
  readonly createdAt: Date;
  readonly endedAt: Date | null;
}

export type NewTournament = Omit<TournamentRecord, "id" | "createdAt" | "endedAt">;

/** A scheduled match: who sits where, on which seed, and (once the match ended) how it went. */
export interface SlotRecord {
  readonly slot: number;
  readonly round: number;
  /** Player indexes into the tournament's players, in seat order. */
  readonly seats: readonly number[];
  readonly seed: string;
  readonly matchId: string;
  /** The match's result; null while it has not ended (or its row was never written). */
  readonly returns: readonly number[] | null;
  readonly endReason: EndReasonRecord | null;
  /** Who sat in the match, as its record says: what ratings name the players by. */
  readonly seatRecords: readonly (SeatRecord | null)[] | null;
}

/** A Donor Game evolution as it was asked for. */
export interface EvolutionRecord {
  readonly id: string;
  /** The Donor Game config of every generation (the generation number and names aside). */
  readonly config: Record<string, unknown>;
  /** The first generation's strategies, one per agent. */
  readonly population: readonly string[];
  readonly generations: number;
  /** Independent runs, each from the same first generation on its own seeds. */
  readonly seeds: number;
  /** How far a copied strategy's numeric argument moves (the standard deviation of a normal step). */
  readonly mutation: number;
  readonly seed: string;
  readonly createdAt: Date;
  readonly endedAt: Date | null;
}

export type NewEvolution = Omit<EvolutionRecord, "id" | "createdAt" | "endedAt">;

/** One agent of a generation, as it finished. */
export interface EvolvedAgent {
  readonly name: string;
  /** A built-in's strategy (`donate:0.5`), or the sentence an LLM agent wrote (`My strategy will be ...`). */
  readonly strategy: string;
  /** An LLM agent: its strategy is its own words, written with the survivors' advice. */
  readonly llm?: boolean;
  /** Its resources at the end, summed over the match's games. */
  readonly resources: number;
  /** The mean share of its resources it gave as a donor. */
  readonly donated: number;
  /** Whether it survived into the next generation. */
  readonly survived: boolean;
}

export interface GenerationRecord {
  readonly run: number;
  readonly generation: number;
  readonly matchId: string;
  readonly agents: readonly EvolvedAgent[];
  /** Mean final resources per agent and game. */
  readonly meanResources: number;
  /** The mean share of their resources donors gave. */
  readonly donationFraction: number;
}

/** A rating's two numbers (OpenSkill's μ and σ). */
export interface SkillRating {
  readonly mu: number;
  readonly sigma: number;
}

/** An ended match as ratings take it: its players by seat and their returns. */
export interface RatedMatch {
  readonly matchId: string;
  readonly players: readonly string[];
  readonly returns: readonly number[];
}

/** A player's rating after one match. */
export interface RatingPoint {
  /** Which of the player's rated matches of the game and variant this is: 1 for the first. */
  readonly n: number;
  readonly matchId: string;
  readonly mu: number;
  readonly sigma: number;
  readonly at: Date;
}

/** A rated match's result with the game and variant it was played in. */
export type GameResult = RatedMatch & { readonly game: string; readonly variant: string };

/** A player's online rating in one game and variant. */
export interface RatingRecord {
  readonly player: string;
  readonly game: string;
  readonly variant: string;
  readonly mu: number;
  readonly sigma: number;
  readonly matches: number;
  readonly updatedAt: Date;
}

type Row = Record<string, unknown>;

const date = (v: unknown): Date => v instanceof Date ? v : new Date(String(v));

function toTournament(r: Row): TournamentRecord {
  return {
    id: r.id as string,
    game: r.game as string,
    variant: r.variant as string,
    config: r.config,
    format: r.format as TournamentFormat,
    duplicate: r.duplicate as boolean,
    players: r.players as string[],
    matches: r.matches as number,
    rounds: (r.rounds ?? null) as number | null,
    seed: r.seed as string,
    createdAt: date(r.created_at),
    endedAt: r.ended_at === null || r.ended_at === undefined ? null : date(r.ended_at),
  };
}

const M = MATCHES.column;

/** What toGameResult reads of a match `m`. */
const GAME_RESULT =
  `m.${M.id} AS id, m.${M.game} AS game, m.${M.variant} AS variant, m.${M.seats} AS seats, m.${M.returns} AS returns`;

function toGameResult(r: Row): GameResult {
  return {
    matchId: r.id as string,
    game: r.game as string,
    variant: r.variant as string,
    players: (r.seats as SeatRecord[]).map(playerId),
    returns: r.returns as number[],
  };
}

function toRating(r: Row): RatingRecord {
  return {
    player: r.player as string,
    game: r.game as string,
    variant: r.variant as string,
    mu: Number(r.mu),
    sigma: Number(r.sigma),
    matches: r.matches as number,
    updatedAt: date(r.updated_at),
  };
}

/** The two-key advisory lock space of a player's rating (migrations and policy names use others). */
const RATING_LOCK = 7415283;

const EVOLUTION_COLUMNS = "id, config, population, generations, seeds, mutation, seed, created_at, ended_at";

function toEvolution(r: Row): EvolutionRecord {
  return {
    id: r.id as string,
    config: r.config as Record<string, unknown>,
    population: r.population as string[],
    generations: r.generations as number,
    seeds: r.seeds as number,
    mutation: Number(r.mutation),
    seed: r.seed as string,
    createdAt: date(r.created_at),
    endedAt: r.ended_at === null || r.ended_at === undefined ? null : date(r.ended_at),
  };
}

const TOURNAMENT_COLUMNS =
  "id, game, variant, config, format, duplicate, players, matches, rounds, seed, created_at, ended_at";

/** A table of runs (tournaments, evolutions): rows with an id, a creation time and an end. */
interface RunTable<T> {
  readonly name: string;
  readonly columns: string;
  readonly read: (row: Row) => T;
}

const TOURNAMENTS: RunTable<TournamentRecord> = {
  name: "tournaments",
  columns: TOURNAMENT_COLUMNS,
  read: toTournament,
};
const EVOLUTIONS: RunTable<EvolutionRecord> = { name: "evolutions", columns: EVOLUTION_COLUMNS, read: toEvolution };

/** The league's tables in the replay store: tournaments and their slots, online ratings, evolutions. */
export class LeagueStore {
  constructor(private readonly sql: Sql) {}

  async createTournament(t: NewTournament): Promise<TournamentRecord> {
    const id = `t_${randomBytes(9).toString("base64url")}`;
    const [row] = await this.sql.query<Row>(
      `INSERT INTO tournaments (id, game, variant, config, format, duplicate, players, matches, rounds, seed)
       VALUES ($1, $2, $3, $4::text::jsonb, $5, $6, $7::text::jsonb, $8, $9, $10) RETURNING ${TOURNAMENT_COLUMNS}`,
      [
        id,
        t.game,
        t.variant,
        JSON.stringify(t.config),
        t.format,
        t.duplicate,
        JSON.stringify(t.players),
        t.matches,
        t.rounds,
        t.seed,
      ],
    );
    return toTournament(row);
  }

  tournament(id: string): Promise<TournamentRecord | undefined> {
    return this.run(TOURNAMENTS, id);
  }

  /** Tournaments newest first. */
  tournaments(limit: number): Promise<TournamentRecord[]> {
    return this.newest(TOURNAMENTS, limit);
  }

  endTournament(id: string): Promise<void> {
    return this.end(TOURNAMENTS, id);
  }

  /** The tournament's slots in order, each with its match's result where the match has ended. */
  async slots(id: string): Promise<SlotRecord[]> {
    const rows = await this.sql.query<Row>(
      `SELECT s.slot, s.round, s.seats, s.seed, s.match_id, m.${M.returns} AS returns, m.${M.endReason} AS end_reason,
         m.${M.seats} AS seat_records
       FROM tournament_slots s LEFT JOIN matches m ON m.${M.id} = s.match_id
       WHERE s.tournament_id = $1 ORDER BY s.slot`,
      [id],
    );
    return rows.map((r) => ({
      slot: r.slot as number,
      round: r.round as number,
      seats: r.seats as number[],
      seed: r.seed as string,
      matchId: r.match_id as string,
      returns: (r.returns ?? null) as number[] | null,
      endReason: (r.end_reason ?? null) as EndReasonRecord | null,
      seatRecords: (r.seat_records ?? null) as (SeatRecord | null)[] | null,
    }));
  }

  /** Names the match that plays a slot: a new slot, or a slot whose earlier match a crash left unfinished. */
  async putSlot(id: string, slot: Omit<SlotRecord, "returns" | "endReason" | "seatRecords">): Promise<void> {
    await this.sql.query(
      `INSERT INTO tournament_slots (tournament_id, slot, round, seats, seed, match_id)
       VALUES ($1, $2, $3, $4::text::jsonb, $5, $6)
       ON CONFLICT (tournament_id, slot) DO UPDATE SET match_id = excluded.match_id`,
      [id, slot.slot, slot.round, JSON.stringify(slot.seats), slot.seed, slot.matchId],
    );
  }

  /**
   * Applies ended matches of one game and variant to their players' online ratings, in the order given, each at
   * most once whoever calls (a resumed tournament, a retry): a match is marked rated in the same transaction.
   * `update` gets the seats' ratings before a match (undefined for a first match) and returns them after.
   * Returns how many matches were newly rated.
   */
  async rate(
    game: string,
    variant: string,
    matches: readonly RatedMatch[],
    update: (
      before: readonly (SkillRating | undefined)[],
      returns: readonly number[],
      players: readonly string[],
    ) => readonly SkillRating[],
  ): Promise<number> {
    if (matches.length === 0) return 0;
    return await this.sql.transaction(async (tx) => {
      const fresh = new Set(
        (await tx.query<{ match_id: string }>(
          `INSERT INTO rated_matches (match_id) SELECT jsonb_array_elements_text($1::text::jsonb)
           ON CONFLICT DO NOTHING RETURNING match_id`,
          [JSON.stringify(matches.map((m) => m.matchId))],
        )).map((r) => r.match_id),
      );
      // A match of one player in several seats (self-play) is marked, but moves no rating.
      const rated = matches.filter((m) => fresh.has(m.matchId) && new Set(m.players).size === m.players.length);
      if (rated.length === 0) return 0;
      const players = [...new Set(rated.flatMap((m) => m.players))].sort();
      // Every rater locks the players in one order (by name): batches sharing players, rated at once from either
      // end, wait for each other instead of deadlocking (players with no row yet included).
      await tx.query(
        `SELECT pg_advisory_xact_lock($1, hashtext($2 || '/' || $3 || '/' || p))
         FROM (SELECT p FROM jsonb_array_elements_text($4::text::jsonb) AS p ORDER BY p) AS sorted`,
        [RATING_LOCK, game, variant, JSON.stringify(players)],
      );
      const rows = await tx.query<Row>(
        `SELECT player, mu, sigma FROM ratings WHERE game = $1 AND variant = $2
         AND player IN (SELECT jsonb_array_elements_text($3::text::jsonb))`,
        [game, variant, JSON.stringify(players)],
      );
      const current = new Map<string, SkillRating>(
        rows.map((r) => [r.player as string, { mu: Number(r.mu), sigma: Number(r.sigma) }]),
      );
      const counted = new Map<string, number>();
      // In the order applied: `n` orders the insert, so the rows' `seq` follows it.
      const history: { n: number; player: string; match_id: string; mu: number; sigma: number }[] = [];
      for (const m of rated) {
        const after = update(m.players.map((p) => current.get(p)), m.returns, m.players);
        m.players.forEach((p, i) => {
          current.set(p, after[i]);
          counted.set(p, (counted.get(p) ?? 0) + 1);
          history.push({ n: history.length, player: p, match_id: m.matchId, mu: after[i].mu, sigma: after[i].sigma });
        });
      }
      await tx.query(
        `INSERT INTO rating_history (player, game, variant, match_id, mu, sigma)
         SELECT h.player, $1, $2, h.match_id, h.mu, h.sigma
         FROM jsonb_to_recordset($3::text::jsonb)
           AS h(n integer, player text, match_id text, mu double precision, sigma double precision)
         ORDER BY h.n`,
        [game, variant, JSON.stringify(history)],
      );
      await tx.query(
        `INSERT INTO ratings (player, game, variant, mu, sigma, matches, updated_at)
         SELECT r.player, $1, $2, r.mu, r.sigma, r.matches, now()
         FROM jsonb_to_recordset($3::text::jsonb) AS r(player text, mu double precision, sigma double precision, matches int)
         ON CONFLICT (player, game, variant) DO UPDATE
         SET mu = excluded.mu, sigma = excluded.sigma, matches = ratings.matches + excluded.matches, updated_at = now()`,
        [
          game,
          variant,
          JSON.stringify([...counted].map(([player, n]) => ({ player, ...current.get(player)!, matches: n }))),
        ],
      );
      return rated.length;
    });
  }

  /**
   * Rated matches that ended completed but were never applied to the ratings (a server stopped in between), in the
   * order they ended, up to `limit`.
   */
  async unrated(limit: number): Promise<GameResult[]> {
    const rows = await this.sql.query<Row>(
      `SELECT ${GAME_RESULT} FROM matches m
       WHERE m.${M.rated} AND m.${M.endReason} = 'completed'
         AND NOT EXISTS (SELECT 1 FROM rated_matches r WHERE r.match_id = m.${M.id})
       ORDER BY m.${M.endSeq} LIMIT $1`,
      [limit],
    );
    return rows.map(toGameResult);
  }

  /**
   * The results of rated matches that ended completed, newest first, up to `limit`: of one game and variant, or of
   * every game (the pooled board). What the published boards are fitted on.
   */
  async ratedResults(
    limit: number,
    game?: { game: string; variant: string },
  ): Promise<GameResult[]> {
    const rows = await this.sql.query<Row>(
      `SELECT ${GAME_RESULT} FROM matches m
       WHERE m.${M.rated} AND m.${M.endReason} = 'completed' ${
        game ? `AND m.${M.game} = $2 AND m.${M.variant} = $3` : ""
      }
       ORDER BY m.${M.endSeq} DESC LIMIT $1`,
      game ? [limit, game.game, game.variant] : [limit],
    );
    return rows.map(toGameResult);
  }

  /** A player's rating after each of its rated matches of a game and variant, oldest first (the last `limit`). */
  async history(player: string, game: string, variant: string, limit: number): Promise<RatingPoint[]> {
    const rows = await this.sql.query<Row>(
      `SELECT n, match_id, mu, sigma, at FROM (
         SELECT seq, ROW_NUMBER() OVER (ORDER BY seq) AS n, match_id, mu, sigma, at FROM rating_history
         WHERE player = $1 AND game = $2 AND variant = $3
         ORDER BY seq DESC LIMIT $4) AS last ORDER BY seq`,
      [player, game, variant, limit],
    );
    return rows.map((r) => ({
      n: Number(r.n),
      matchId: r.match_id as string,
      mu: Number(r.mu),
      sigma: Number(r.sigma),
      at: date(r.at),
    }));
  }

  async createEvolution(e: NewEvolution): Promise<EvolutionRecord> {
    const id = `e_${randomBytes(9).toString("base64url")}`;
    const [row] = await this.sql.query<Row>(
      `INSERT INTO evolutions (id, config, population, generations, seeds, mutation, seed)
       VALUES ($1, $2::text::jsonb, $3::text::jsonb, $4, $5, $6, $7) RETURNING ${EVOLUTION_COLUMNS}`,
      [id, JSON.stringify(e.config), JSON.stringify(e.population), e.generations, e.seeds, e.mutation, e.seed],
    );
    return toEvolution(row);
  }

  evolution(id: string): Promise<EvolutionRecord | undefined> {
    return this.run(EVOLUTIONS, id);
  }

  /** Evolutions newest first. */
  evolutions(limit: number): Promise<EvolutionRecord[]> {
    return this.newest(EVOLUTIONS, limit);
  }

  endEvolution(id: string): Promise<void> {
    return this.end(EVOLUTIONS, id);
  }

  private async run<T>(table: RunTable<T>, id: string): Promise<T | undefined> {
    const [row] = await this.sql.query<Row>(`SELECT ${table.columns} FROM ${table.name} WHERE id = $1`, [id]);
    return row ? table.read(row) : undefined;
  }

  private async newest<T>(table: RunTable<T>, limit: number): Promise<T[]> {
    const rows = await this.sql.query<Row>(
      `SELECT ${table.columns} FROM ${table.name} ORDER BY created_at DESC, id DESC LIMIT $1`,
      [limit],
    );
    return rows.map(table.read);
  }

  private async end(table: RunTable<unknown>, id: string): Promise<void> {
    await this.sql.query(`UPDATE ${table.name} SET ended_at = now() WHERE id = $1 AND ended_at IS NULL`, [id]);
  }

  /**
   * Records a generation: as its match starts (`meanResources` and `donationFraction` undefined: the match a resumed
   * evolution must close if it never finished), and again once it ended.
   */
  async putGeneration(
    id: string,
    g: Omit<GenerationRecord, "meanResources" | "donationFraction"> & Partial<GenerationRecord>,
  ): Promise<void> {
    await this.sql.query(
      `INSERT INTO evolution_generations
         (evolution_id, run, generation, match_id, agents, mean_resources, donation_fraction)
       VALUES ($1, $2, $3, $4, $5::text::jsonb, $6, $7)
       ON CONFLICT (evolution_id, run, generation) DO UPDATE SET match_id = excluded.match_id, agents = excluded.agents,
         mean_resources = excluded.mean_resources, donation_fraction = excluded.donation_fraction`,
      [
        id,
        g.run,
        g.generation,
        g.matchId,
        JSON.stringify(g.agents),
        g.meanResources ?? null,
        g.donationFraction ?? null,
      ],
    );
  }

  /** The matches of generations an interruption cut off (started, never finished). */
  async cutOffGenerations(id: string): Promise<{ run: number; generation: number; matchId: string }[]> {
    const rows = await this.sql.query<Row>(
      `SELECT run, generation, match_id FROM evolution_generations WHERE evolution_id = $1 AND mean_resources IS NULL`,
      [id],
    );
    return rows.map((r) => ({
      run: r.run as number,
      generation: r.generation as number,
      matchId: r.match_id as string,
    }));
  }

  /** An evolution's finished generations, by run and generation. */
  async generations(id: string): Promise<GenerationRecord[]> {
    const rows = await this.sql.query<Row>(
      `SELECT run, generation, match_id, agents, mean_resources, donation_fraction FROM evolution_generations
       WHERE evolution_id = $1 AND mean_resources IS NOT NULL ORDER BY run, generation`,
      [id],
    );
    return rows.map((r) => ({
      run: r.run as number,
      generation: r.generation as number,
      matchId: r.match_id as string,
      agents: r.agents as EvolvedAgent[],
      meanResources: Number(r.mean_resources),
      donationFraction: Number(r.donation_fraction),
    }));
  }

  /** Online ratings of a game and variant, or of the players named. */
  async ratings(game: string, variant: string, players?: readonly string[]): Promise<RatingRecord[]> {
    const rows = await this.sql.query<Row>(
      `SELECT player, game, variant, mu, sigma, matches, updated_at FROM ratings WHERE game = $1 AND variant = $2
       ${players ? "AND player IN (SELECT jsonb_array_elements_text($3::text::jsonb))" : ""} ORDER BY player`,
      players ? [game, variant, JSON.stringify(players)] : [game, variant],
    );
    return rows.map(toRating);
  }
}
