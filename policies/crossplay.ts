import { configure } from "../games/core/config.ts";
import type { AnyGame } from "../games/core/game.ts";
import type { Seed } from "../games/core/rng.ts";
import { StrategyError } from "./strategy.ts";
import { simulate, type SimulationSummary } from "./simulate.ts";
import type { PolicyRuntime } from "./onnx/runtime.ts";

/**
 * Cross-play: every player against every player (itself included) in a two-seat game, each pairing in both
 * seatings, every pairing on the same match seeds (common random numbers, so the cells differ by the players
 * alone). A cell is what its row player earns against its column player, with a 95 % confidence interval.
 */

export interface CrossPlayOptions {
  readonly game: AnyGame;
  readonly variant?: string;
  readonly config?: unknown;
  /** Strategy or policy specs, as `ludus simulate` seats them. */
  readonly players: readonly string[];
  /** Matches per seating: a pairing plays twice this many. */
  readonly matches: number;
  readonly seed: Seed;
  readonly policies?: PolicyRuntime;
}

export interface CrossPlayCell {
  /** The row player's mean reward, per round where the game has rounds, else per match. */
  readonly mean: number;
  /** Half-width of the 95 % confidence interval of `mean` (1.96 standard errors). */
  readonly ci95: number;
}

export interface CrossPlayTable {
  readonly game: string;
  readonly variant: string;
  readonly config: unknown;
  readonly players: readonly string[];
  readonly matches: number;
  readonly seed: string;
  /** "round" or "match": what a cell's reward is per. */
  readonly per: "round" | "match";
  /** cells[i][j]: player i against player j. */
  readonly cells: readonly (readonly CrossPlayCell[])[];
}

const Z95 = 1.96;

/** Rounds in a match of games that count them (a `rounds` setting), else undefined. */
export function roundsPerMatch(config: unknown): number | undefined {
  const rounds = (config as { rounds?: unknown } | null)?.rounds;
  return typeof rounds === "number" && rounds > 0 ? rounds : undefined;
}

export async function crossPlay(options: CrossPlayOptions): Promise<CrossPlayTable> {
  const { game, players } = options;
  const { variant, config } = configure(game, options.config ?? {}, options.variant);
  const seats = game.seatCount(config);
  if (seats !== 2) {
    throw new StrategyError(`cross-play needs a two-seat game; ${game.id} (${variant}) has ${seats} seats`);
  }
  if (players.length === 0) throw new StrategyError("cross-play needs at least one player");
  const rounds = roundsPerMatch(config) ?? 1;
  const play = (a: string, b: string, matches: number) =>
    simulate({ ...options, variant, config, seats: [a, b], matches });
  // What seat `seat` earned, and its standard error, per round.
  const earned = (s: SimulationSummary, seat: number) => [s.meanReturns[seat] / rounds, s.stderr[seat] / rounds];
  const cells: CrossPlayCell[][] = players.map(() => []);
  const names: string[] = [...players];
  for (let i = 0; i < players.length; i++) {
    // Against itself: one seating, twice the matches, the seats' mean.
    const self = await play(players[i], players[i], 2 * options.matches);
    names[i] = self.seats[0];
    cells[i][i] = {
      mean: (self.meanReturns[0] + self.meanReturns[1]) / 2 / rounds,
      ci95: Z95 * self.meanStderr / rounds,
    };
    for (let j = 0; j < i; j++) {
      const first = await play(players[i], players[j], options.matches);
      const second = await play(players[j], players[i], options.matches);
      const cell = (a: SimulationSummary, seatA: number, b: SimulationSummary, seatB: number) => {
        const [ma, sa] = earned(a, seatA);
        const [mb, sb] = earned(b, seatB);
        return { mean: (ma + mb) / 2, ci95: Z95 * Math.sqrt(sa * sa + sb * sb) / 2 };
      };
      cells[i][j] = cell(first, 0, second, 1);
      cells[j][i] = cell(first, 1, second, 0);
    }
  }
  return {
    game: game.id,
    variant,
    config,
    players: names,
    matches: options.matches,
    seed: String(options.seed),
    per: roundsPerMatch(config) ? "round" : "match",
    cells,
  };
}
