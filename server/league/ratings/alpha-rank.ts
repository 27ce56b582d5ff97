/**
 * α-Rank (Omidshafiei et al., "α-Rank: Multi-Agent Evaluation by Evolution", Sci. Rep. 2019), single population:
 * players are strategies of one evolving population; a mutant r appears in a population playing s and takes over with
 * the fixation probability of a Moran process whose selection pressure is α. The stationary distribution of that
 * chain over "everyone plays s" states ranks the players by how long evolution stays with each. Unlike a rating it
 * needs no transitivity: in a rock-paper-scissors cycle the mass is shared, and a strategy that beats everyone takes
 * it all.
 */

export interface AlphaRankOptions {
  /** Selection pressure, on payoffs scaled to [−1, 1] (default 50: past it the ranking of most tables stops moving). */
  readonly alpha?: number;
  /** The evolving population's size (default 50). */
  readonly populationSize?: number;
}

/**
 * The stationary mass of each player, from `payoff[r][s]`: what r earns against s (the diagonal: against itself).
 * The table is scaled by its largest entry first, so α means the same for chips and for points.
 */
export function alphaRank(payoff: readonly (readonly number[])[], options: AlphaRankOptions = {}): number[] {
  const k = payoff.length;
  if (k === 0) return [];
  if (payoff.some((row) => row.length !== k || row.some((x) => !Number.isFinite(x)))) {
    throw new RangeError(`the payoff table must be ${k} × ${k} finite numbers`);
  }
  if (k === 1) return [1];
  const alpha = options.alpha ?? 50;
  const m = options.populationSize ?? 50;
  const scale = Math.max(1e-12, ...payoff.flat().map(Math.abs));
  const fixation = (gain: number) => {
    if (Math.abs(gain) < 1e-12) return 1 / m;
    // (1 − e^{−αΔ}) / (1 − e^{−mαΔ}), written to stay finite for large |αΔ|.
    const x = alpha * gain;
    return -Math.expm1(-x) / -Math.expm1(-m * x);
  };
  const chain = Array.from({ length: k }, (_, s) => {
    const row = new Array<number>(k).fill(0);
    for (let r = 0; r < k; r++) {
      if (r !== s) row[r] = fixation((payoff[r][s] - payoff[s][s]) / scale) / (k - 1);
    }
    row[s] = 1 - row.reduce((a, b) => a + b, 0);
    return row;
  });
  // The chain is irreducible (every fixation probability is positive): power iteration converges to its π.
  let pi = new Array<number>(k).fill(1 / k);
  for (let iteration = 0; iteration < 100_000; iteration++) {
    const next = new Array<number>(k).fill(0);
    for (let s = 0; s < k; s++) for (let r = 0; r < k; r++) next[r] += pi[s] * chain[s][r];
    const change = next.reduce((d, x, i) => Math.max(d, Math.abs(x - pi[i])), 0);
    pi = next;
    if (change < 1e-13) break;
  }
  const total = pi.reduce((a, b) => a + b, 0);
  return pi.map((x) => x / total);
}
