import { type IpdConfig, payoff } from "./game.ts";

/**
 * Exact values of two memory-one strategies in the infinitely repeated, discounted game, as in
 * the opponent-shaping literature: V = s0ᵀ (I − γP)⁻¹ R over the four joint outcomes.
 */

/** [p(C | start), p(C | CC), p(C | CD), p(C | DC), p(C | DD)], each from the player's own view (own move first). */
export type MemoryOne = readonly [number, number, number, number, number];

export interface ExactValues {
  /** Discounted sums of payoffs, per seat. */
  readonly discounted: [number, number];
  /** (1 − γ) × discounted: the per-round average. */
  readonly average: [number, number];
}

/** Joint outcomes from seat 0's view: index = 2·a0 + a1 with 0 = C, 1 = D. Seat 1 sees CD and DC swapped. */
const OWN_VIEW_OF_SEAT1 = [0, 2, 1, 3];

export function memoryOneValues(p0: MemoryOne, p1: MemoryOne, config: IpdConfig, gamma: number): ExactValues {
  if (!(gamma >= 0 && gamma < 1)) throw new RangeError(`gamma must be in [0, 1), got ${gamma}`);
  const joint = (c0: number, c1: number) => [c0 * c1, c0 * (1 - c1), (1 - c0) * c1, (1 - c0) * (1 - c1)];
  const start = joint(p0[0], p1[0]);
  const transition = [0, 1, 2, 3].map((s) => joint(p0[1 + s], p1[1 + OWN_VIEW_OF_SEAT1[s]]));
  // (I − γP)ᵀ x = s0 gives x = s0ᵀ (I − γP)⁻¹, the discounted visit counts.
  const a = [0, 1, 2, 3].map((i) => [0, 1, 2, 3].map((j) => (i === j ? 1 : 0) - gamma * transition[j][i]));
  const visits = solve(a, start);
  const value = (seat: 0 | 1) =>
    visits.reduce((sum, v, s) => {
      const a0 = s >> 1, a1 = s & 1;
      return sum + v * (seat === 0 ? payoff(config, a0, a1) : payoff(config, a1, a0));
    }, 0);
  const discounted: [number, number] = [value(0), value(1)];
  return { discounted, average: [discounted[0] * (1 - gamma), discounted[1] * (1 - gamma)] };
}

/** Gaussian elimination with partial pivoting for a small dense system. */
function solve(matrix: number[][], rhs: number[]): number[] {
  const n = rhs.length;
  const m = matrix.map((row, i) => [...row, rhs[i]]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(m[r][col]) > Math.abs(m[pivot][col])) pivot = r;
    [m[col], m[pivot]] = [m[pivot], m[col]];
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const f = m[r][col] / m[col][col];
      for (let c = col; c <= n; c++) m[r][c] -= f * m[col][c];
    }
  }
  return m.map((row, i) => row[n] / row[i]);
}
