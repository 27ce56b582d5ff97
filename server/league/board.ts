import type { GameResult, RatingRecord } from "../../db/league.ts";
import type { ReplayStore } from "../../db/store.ts";
import { bootstrapBradleyTerry, type Comparison, eloOf, scoreOf } from "./ratings/bradley-terry.ts";
import { conservative } from "./ratings/online.ts";
import { Recent } from "./recent.ts";

/**
 * The published leaderboards: a Bradley–Terry refit of the rated matches with bootstrap intervals, per game and
 * variant, and pooled across games with each game weighted equally (as Kaggle's Game Arena publishes its board).
 * Online ratings move match by match and rank by who finished ahead; the refit scores each match by its margin,
 * which is how poker is judged (a Kuhn player that wins fewer hands but more chips ranks first). Boards are cached
 * and refitted at most every `refitMs`.
 */

export interface BoardRow {
  readonly player: string;
  /** Bradley–Terry on the Elo scale, 1500 the board's average, with its 95 % bootstrap interval. */
  readonly rating: number;
  readonly ci: readonly [number, number];
  readonly matches: number;
  /** Fewer than PROVISIONAL_MATCHES matches, or an interval still wider than PROVISIONAL_WIDTH points. */
  readonly provisional: boolean;
  /** The online rating (per game boards only). */
  readonly skill: { readonly mu: number; readonly sigma: number; readonly ordinal: number } | null;
}

export interface Board {
  /** The games fitted: one (a game's board) or every game with rated matches (the pooled board). */
  readonly games: readonly { readonly game: string; readonly variant: string; readonly matches: number }[];
  readonly matches: number;
  readonly refittedAt: Date;
  readonly scoring: string;
  readonly ratings: readonly BoardRow[];
}

/** A rating stays provisional while its 95 % interval spans more than this many points. */
export const PROVISIONAL_WIDTH = 100;
/** ... or while it has played fewer matches than this: a bootstrap of a handful of matches is too sure of itself. */
export const PROVISIONAL_MATCHES = 20;

export interface BoardOptions {
  /** The newest rated matches a board is fitted on (default 100,000). */
  readonly maxMatches?: number;
  /** The least time between two refits of one board (default 10 s). */
  readonly refitMs?: number;
}

const round1 = (x: number) => Number(x.toFixed(1));

/** Fits a board on matches of one or several games; every game counts alike, whatever its number of matches. */
export function fitBoard(results: readonly GameResult[], online = new Map<string, RatingRecord>()): BoardRow[] {
  const index = new Map<string, number>();
  const id = (p: string) => index.get(p) ?? (index.set(p, index.size), index.size - 1);
  const byGame = Map.groupBy(results, (m) => JSON.stringify([m.game, m.variant]));
  const units: Comparison[][] = [];
  const played = new Map<string, number>();
  for (const matches of byGame.values()) {
    // A game's margins are scaled by its largest (chips and points differ from game to game).
    const scale = Math.max(0, ...matches.map((m) => Math.max(...m.returns) - Math.min(...m.returns)));
    const pairs = matches.reduce((n, m) => n + (m.players.length * (m.players.length - 1)) / 2, 0);
    const weight = results.length / byGame.size / Math.max(1, pairs);
    for (const m of matches) {
      const unit: Comparison[] = [];
      for (let i = 0; i < m.players.length; i++) {
        played.set(m.players[i], (played.get(m.players[i]) ?? 0) + 1);
        for (let j = i + 1; j < m.players.length; j++) {
          if (m.players[i] === m.players[j]) continue;
          unit.push({
            a: id(m.players[i]),
            b: id(m.players[j]),
            score: scoreOf([m.returns[i], m.returns[j]], scale),
            weight,
          });
        }
      }
      if (unit.length) units.push(unit);
    }
  }
  const players = [...index.keys()];
  const fitted = bootstrapBradleyTerry(players.length, units, { seed: "board" });
  return players.map((player, i): BoardRow => {
    const ci = [round1(eloOf(fitted.low[i])), round1(eloOf(fitted.high[i]))] as const;
    const r = online.get(player);
    return {
      player,
      rating: round1(eloOf(fitted.theta[i])),
      ci,
      matches: played.get(player) ?? 0,
      provisional: ci[1] - ci[0] > PROVISIONAL_WIDTH || (played.get(player) ?? 0) < PROVISIONAL_MATCHES,
      skill: r ? { mu: r.mu, sigma: r.sigma, ordinal: conservative(r) } : null,
    };
  }).sort((x, y) => y.rating - x.rating || x.player.localeCompare(y.player));
}

export class Boards {
  private readonly recent: Recent<Board>;

  constructor(private readonly store: ReplayStore, private readonly options: BoardOptions = {}) {
    this.recent = new Recent(options.refitMs ?? 10_000);
  }

  /** A game's board (`variant` given), or the pooled board of every game (`game` undefined). */
  board(game?: { game: string; variant: string }): Promise<Board> {
    return this.recent.get(game ? JSON.stringify([game.game, game.variant]) : "", () => this.refit(game));
  }

  private async refit(game?: { game: string; variant: string }): Promise<Board> {
    const results = await this.store.league.ratedResults(this.options.maxMatches ?? 100_000, game);
    const online = game
      ? new Map((await this.store.league.ratings(game.game, game.variant)).map((r) => [r.player, r]))
      : undefined;
    const games = Map.groupBy(results, (m) => JSON.stringify([m.game, m.variant]));
    return {
      games: [...games].map(([key, matches]) => {
        const [g, variant] = JSON.parse(key) as [string, string];
        return { game: g, variant, matches: matches.length };
      }),
      matches: results.length,
      refittedAt: new Date(),
      scoring: "each rated match scores every pair of its seats ½ + margin / (2 × the game's largest margin); " +
        "pooled, every game counts alike",
      ratings: results.length ? fitBoard(results, online) : [],
    };
  }
}
