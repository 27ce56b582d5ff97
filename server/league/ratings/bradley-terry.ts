import { Rng, type Seed } from "../../../games/core/rng.ts";

/**
 * Bradley–Terry ratings fitted in one batch, with bootstrap confidence intervals: the published board, as
 * Kaggle's Game Arena and LMSYS's arena publish theirs. P(a beats b) = γa / (γa + γb). A comparison carries a
 * score in [0, 1] (1 a win, ½ a draw), so a game whose matches end in margins (poker's chips) can be rated by
 * them rather than by who won the hand: see `scoreOf`.
 */

/** One rated comparison: player `a`'s score against player `b`, in [0, 1]. */
export interface Comparison {
  readonly a: number;
  readonly b: number;
  readonly score: number;
  /** What it counts for (default 1): a pooled board weighs each game's comparisons so that every game counts alike. */
  readonly weight?: number;
}

export interface FitOptions {
  /**
   * Virtual drawn games each player has played against an average player: keeps a player who won (or lost)
   * everything at a finite rating, and pulls players of few matches towards the middle. Default 1.
   */
  readonly prior?: number;
}

/** The pairs that met, with every comparison folded in: a's total score against b, and how many. */
interface Pairs {
  readonly a: Int32Array;
  readonly b: Int32Array;
  readonly score: Float64Array;
  readonly count: Float64Array;
}

/** The Elo scale (1500 the average player, 400 points a factor of ten in odds) of a log-strength. */
export const eloOf = (theta: number): number => 1500 + (400 / Math.LN10) * theta;

/**
 * Log-strengths θ (mean 0) maximising the likelihood of the comparisons, by Hunter's MM iteration
 * (Ann. Statist. 32(1), 2004), which converges for any data once the prior connects every player.
 */
export function fitBradleyTerry(
  players: number,
  comparisons: Iterable<Comparison>,
  options: FitOptions = {},
): number[] {
  const index = new PairIndex(players);
  for (const c of comparisons) index.add(c);
  return fit(players, index.pairs(), options.prior ?? 1);
}

function fit(players: number, pairs: Pairs, prior: number, start?: readonly number[]): number[] {
  if (!(prior > 0)) throw new RangeError(`the prior must be a positive number of virtual games, got ${prior}`);
  const gamma = new Float64Array(players).map((_, i) => (start ? Math.exp(start[i]) : 1));
  const won = new Float64Array(players).fill(prior / 2);
  for (let p = 0; p < pairs.a.length; p++) {
    won[pairs.a[p]] += pairs.score[p];
    won[pairs.b[p]] += pairs.count[p] - pairs.score[p];
  }
  const denominator = new Float64Array(players);
  for (let iteration = 0; iteration < 10_000; iteration++) {
    for (let i = 0; i < players; i++) denominator[i] = prior / (gamma[i] + 1);
    for (let p = 0; p < pairs.a.length; p++) {
      const a = pairs.a[p], b = pairs.b[p];
      const share = pairs.count[p] / (gamma[a] + gamma[b]);
      denominator[a] += share;
      denominator[b] += share;
    }
    // The virtual games are against the average player: strengths are kept at a geometric mean of 1, or the
    // scale, pinned only by the prior, drifts and convergence takes thousands of iterations.
    let logMean = 0;
    for (let i = 0; i < players; i++) logMean += Math.log(won[i] / denominator[i]);
    const norm = Math.exp(logMean / players);
    let change = 0;
    for (let i = 0; i < players; i++) {
      const next = won[i] / denominator[i] / norm;
      change = Math.max(change, Math.abs(Math.log(next / gamma[i])));
      gamma[i] = next;
    }
    if (change < 1e-10) break;
  }
  return Array.from(gamma, Math.log);
}

export interface BootstrapOptions extends FitOptions {
  /** Resamples (default 200). */
  readonly samples?: number;
  /** Coverage of the interval (default 0.95). */
  readonly level?: number;
  readonly seed?: Seed;
}

export interface Fitted {
  /** Log-strengths, mean 0. */
  readonly theta: readonly number[];
  /** The interval of each θ at the level asked, from the percentiles of the resampled fits. */
  readonly low: readonly number[];
  readonly high: readonly number[];
}

/**
 * The fit and its percentile bootstrap interval. A unit is what is resampled whole: a match, or both matches of
 * a duplicate deal (so the luck they cancel stays cancelled in every resample).
 */
export function bootstrapBradleyTerry(
  players: number,
  units: readonly (readonly Comparison[])[],
  options: BootstrapOptions = {},
): Fitted {
  const prior = options.prior ?? 1;
  const samples = options.samples ?? 200;
  const level = options.level ?? 0.95;
  if (!Number.isInteger(samples) || samples < 2) throw new RangeError(`samples must be an integer ≥ 2, got ${samples}`);
  if (!(level > 0 && level < 1)) throw new RangeError(`level must be in (0, 1), got ${level}`);
  const index = new PairIndex(players);
  // Each unit as flat runs of (pair slot, score from the slot's side, weight): resampling is then a sum over pair
  // slots in typed arrays, not a walk over comparison objects.
  const start = new Int32Array(units.length + 1);
  units.forEach((unit, u) => (start[u + 1] = start[u] + unit.length));
  const slotOf = new Int32Array(start[units.length]);
  const weighted = new Float64Array(start[units.length]);
  const weightOf = new Float64Array(start[units.length]);
  units.forEach((unit, u) =>
    unit.forEach((c, k) => {
      const { slot, flipped } = index.add(c);
      const w = c.weight ?? 1;
      slotOf[start[u] + k] = slot;
      weighted[start[u] + k] = w * (flipped ? 1 - c.score : c.score);
      weightOf[start[u] + k] = w;
    })
  );
  const whole = index.pairs();
  const theta = fit(players, whole, prior);
  const draws: number[][] = Array.from({ length: players }, () => []);
  const rng = new Rng(options.seed ?? 1, 0);
  const score = new Float64Array(whole.a.length);
  const count = new Float64Array(whole.a.length);
  for (let s = 0; s < samples; s++) {
    score.fill(0);
    count.fill(0);
    for (let u = 0; u < units.length; u++) {
      const picked = rng.int(units.length);
      for (let k = start[picked]; k < start[picked + 1]; k++) {
        score[slotOf[k]] += weighted[k];
        count[slotOf[k]] += weightOf[k];
      }
    }
    const resampled = fit(players, { a: whole.a, b: whole.b, score, count }, prior, theta);
    resampled.forEach((t, i) => draws[i].push(t));
  }
  const tail = (1 - level) / 2;
  return {
    theta,
    low: draws.map((d) => quantile(d, tail)),
    high: draws.map((d) => quantile(d, 1 - tail)),
  };
}

/** The q-quantile of `values` by linear interpolation between order statistics. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  const at = q * (sorted.length - 1);
  const below = Math.floor(at);
  const above = Math.min(sorted.length - 1, below + 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (at - below);
}

/** Folds comparisons into one slot per unordered pair of players (the lower index as `a`). */
class PairIndex {
  private readonly slots = new Map<number, number>();
  private readonly a: number[] = [];
  private readonly b: number[] = [];
  private readonly score: number[] = [];
  private readonly count: number[] = [];

  constructor(private readonly players: number) {}

  add(c: Comparison): { slot: number; flipped: boolean } {
    const { a, b, score, weight = 1 } = c;
    for (const p of [a, b]) {
      if (!Number.isInteger(p) || p < 0 || p >= this.players) {
        throw new RangeError(`player ${p} is not one of the ${this.players} players`);
      }
    }
    if (a === b) throw new RangeError(`player ${a} cannot be compared with itself`);
    if (!(score >= 0 && score <= 1)) throw new RangeError(`a score must be in [0, 1], got ${score}`);
    if (!(weight > 0 && Number.isFinite(weight))) throw new RangeError(`a weight must be positive, got ${weight}`);
    const flipped = a > b;
    const [low, high] = flipped ? [b, a] : [a, b];
    const key = low * this.players + high;
    let slot = this.slots.get(key);
    if (slot === undefined) {
      this.slots.set(key, slot = this.a.length);
      this.a.push(low);
      this.b.push(high);
      this.score.push(0);
      this.count.push(0);
    }
    this.score[slot] += weight * (flipped ? 1 - score : score);
    this.count[slot] += weight;
    return { slot, flipped };
  }

  pairs(): Pairs {
    return {
      a: Int32Array.from(this.a),
      b: Int32Array.from(this.b),
      score: Float64Array.from(this.score),
      count: Float64Array.from(this.count),
    };
  }
}

/**
 * Seat scores of a two-seat match from its returns: ½ plus the margin over twice `scale`, the largest margin the
 * rated matches saw (so scores span [0, 1]). A game that ends in a win, a draw or a loss scores 1, ½ and 0; a
 * poker hand won by two chips counts twice one won by one, as chips, not hands, are what poker is judged by.
 */
export function scoreOf(returns: readonly number[], scale: number): number {
  if (scale <= 0) return 0.5;
  return Math.min(1, Math.max(0, 0.5 + (returns[0] - returns[1]) / (2 * scale)));
}
