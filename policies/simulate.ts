import { configure } from "../games/core/config.ts";
import { Episode } from "../games/core/episode.ts";
import type { AnyGame } from "../games/core/game.ts";
import { Rng, type Seed, seedToBigInt, STRATEGY_STREAM } from "../games/core/rng.ts";
import { playEpisode, type Seat, type StepListener } from "../games/core/seat.ts";
import { createStrategy } from "./baselines/index.ts";
import type { PolicyRuntime } from "./onnx/runtime.ts";
import { isPolicySpec } from "./onnx/spec.ts";
import { type Strategy, StrategyError, strategySeat } from "./strategy.ts";

/** Headless self-play: built-in strategies in every seat, in-process, no clocks, no transport. */

export interface MatchOutcome {
  readonly returns: readonly number[];
  /** Steps taken (a simultaneous step of several seats is one). */
  readonly steps: number;
  /** Seat actions (a simultaneous step of k seats counts k). */
  readonly actions: number;
}

/**
 * Plays one match to the end through the episode engine. The seed fixes everything: the game's chance
 * comes from stream 0 of it and the strategies' coin flips from stream 1.
 */
export function playMatch(
  game: AnyGame,
  config: unknown,
  strategies: readonly Strategy[],
  seed: Seed,
  onStep?: StepListener,
  /** The strategies' seed, where it differs from the game's (the matches of a seed group). */
  strategySeed: Seed = seed,
): MatchOutcome {
  const rng = new Rng(strategySeed, STRATEGY_STREAM);
  return playSeats(
    game,
    config,
    strategies.map((strategy) => strategySeat(strategy, rng)),
    seed,
    onStep,
  ) as MatchOutcome;
}

/** Plays one match with any seats: at once while they all answer at once, else when the last answer came. */
function playSeats(
  game: AnyGame,
  config: unknown,
  seats: readonly Seat[],
  seed: Seed,
  onStep?: StepListener,
): MatchOutcome | Promise<MatchOutcome> {
  const count = game.seatCount(config);
  if (seats.length !== count) {
    throw new RangeError(`${game.id} with this config has ${count} seats, got ${seats.length} strategies`);
  }
  const episode = new Episode(game, config, seed);
  let actions = 0;
  const done = playEpisode(episode, seats, (moves, rewards) => {
    for (let i = 0; i < moves.length; i++) if (moves[i] !== undefined) actions++;
    onStep?.(moves, rewards);
  });
  const outcome = () => ({ returns: episode.returns(), steps: episode.steps, actions });
  return done ? done.then(outcome) : outcome();
}

export interface SimulationOptions {
  readonly game: AnyGame;
  readonly variant?: string;
  readonly config?: unknown;
  /** One strategy spec per seat (`name` or `name:arg`); a single spec fills every seat. */
  readonly seats: readonly string[];
  readonly matches: number;
  readonly seed: Seed;
  /**
   * Matches per seed group (default 1): each group plays the same start — the same game seed, so the same
   * deals and draws — with the strategies' coin flips seeded apart, as group-relative baselines need.
   */
  readonly groupSize?: number;
  /** Where `policy:<name>` seats come from. */
  readonly policies?: PolicyRuntime;
  /** Matches in flight at once when a policy plays (its decisions batch across them; default 256). */
  readonly concurrency?: number;
}

export interface SimulationSummary {
  readonly game: string;
  readonly version: number;
  readonly variant: string;
  readonly config: unknown;
  readonly matches: number;
  readonly seed: string;
  readonly seats: readonly string[];
  readonly groupSize: number;
  readonly meanReturns: readonly number[];
  /** Standard error of each seat's mean return across matches. */
  readonly stderr: readonly number[];
  /** Standard error of the seats' mean return (their average in a match, averaged over matches). */
  readonly meanStderr: number;
  readonly steps: number;
  readonly actions: number;
  /** The only figure that differs between two runs with the same seed. */
  readonly stepsPerSecond: number;
}

/** Match i of a run with seed s is seeded "s/i", so any single match can be replayed alone. */
export function matchSeed(seed: Seed, index: number): string {
  return `${seedToBigInt(seed)}/${index}`;
}

/**
 * The seeds of match i of a run in groups of `groupSize`: the game's seed is its group's ("s/g"), the
 * strategies' is the match's own ("s/g#k", k its place in the group); with groups of one both are "s/i".
 */
export function groupSeeds(seed: Seed, index: number, groupSize: number): { game: string; strategies: string } {
  if (groupSize === 1) return { game: matchSeed(seed, index), strategies: matchSeed(seed, index) };
  const game = matchSeed(seed, Math.floor(index / groupSize));
  return { game, strategies: `${game}#${index % groupSize}` };
}

/**
 * Plays `matches` matches and summarises the returns per seat. Built-ins play one match after another;
 * with a policy seated, `concurrency` matches are in flight, so its decisions batch. Either way the
 * summary depends on the seed alone: each match's returns are kept in its place and summed in order.
 */
export async function simulate(options: SimulationOptions): Promise<SimulationSummary> {
  const { game, matches } = options;
  const groupSize = options.groupSize ?? 1;
  if (!Number.isInteger(matches) || matches < 1) {
    throw new RangeError(`matches must be a whole number ≥ 1, got ${matches}`);
  }
  if (!Number.isInteger(groupSize) || groupSize < 1 || matches % groupSize !== 0) {
    throw new RangeError(`matches (${matches}) must be a whole number of groups of ${groupSize}`);
  }
  const { variant, config } = configure(game, options.config ?? {}, options.variant);
  const seats = game.seatCount(config);
  const specs = options.seats.length === 1 ? new Array<string>(seats).fill(options.seats[0]) : options.seats;
  if (specs.length !== seats) {
    throw new StrategyError(
      `${game.id} (${variant}) has ${seats} seats: name one strategy per seat, or one for all; got ${specs.length}`,
    );
  }
  const players = specs.map((spec) => {
    if (!isPolicySpec(spec)) return createStrategy(game.id, spec);
    if (!options.policies) throw new StrategyError(`${spec}: policy seats need a replay store's policy registry`);
    return options.policies.player(spec, game, config);
  });
  const returns = new Float64Array(matches * seats);
  let steps = 0;
  let actions = 0;
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < matches) {
      const m = next++;
      const seeds = groupSeeds(options.seed, m, groupSize);
      const rng = new Rng(seeds.strategies, STRATEGY_STREAM);
      const matchSeats = players.map((p, seat) =>
        "act" in p ? strategySeat(p, rng) : p.seatFor(seeds.strategies, seat)
      );
      const played = playSeats(game, config, matchSeats, seeds.game);
      const outcome = played instanceof Promise ? await played : played;
      returns.set(outcome.returns, m * seats);
      steps += outcome.steps;
      actions += outcome.actions;
    }
  };
  const inFlight = players.some((p) => !("act" in p)) ? options.concurrency ?? 256 : 1;
  await Promise.all(Array.from({ length: Math.min(inFlight, matches) }, worker));
  const seconds = (performance.now() - started) / 1000;
  // Per seat, then the seats' average as one more column.
  const sum = new Float64Array(seats + 1);
  const sumSq = new Float64Array(seats + 1);
  for (let m = 0; m < matches; m++) {
    let all = 0;
    for (let s = 0; s <= seats; s++) {
      const r = s < seats ? returns[m * seats + s] : all / seats;
      all += r;
      sum[s] += r;
      sumSq[s] += r * r;
    }
  }
  const means = [...sum].map((s) => s / matches);
  const errors = means.map((mu, s) => {
    if (matches < 2) return 0;
    const variance = Math.max(0, (sumSq[s] - matches * mu * mu) / (matches - 1));
    return Math.sqrt(variance / matches);
  });
  return {
    game: game.id,
    version: game.version,
    variant,
    config,
    matches,
    seed: String(options.seed),
    seats: players.map((p, i) => ("act" in p ? specs[i] : p.name)),
    groupSize,
    meanReturns: means.slice(0, seats),
    stderr: errors.slice(0, seats),
    meanStderr: errors[seats],
    steps,
    actions,
    stepsPerSecond: seconds > 0 ? steps / seconds : 0,
  };
}
