/** A mean, with the half-width of its 95 % interval (1.96 standard errors; 0 for fewer than two values). */
export interface Estimate {
  readonly mean: number;
  readonly ci95: number;
}

export function estimate(xs: readonly number[]): Estimate {
  if (xs.length === 0) return { mean: 0, ci95: 0 };
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.length > 1 ? xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1) : 0;
  return { mean, ci95: 1.96 * Math.sqrt(variance / xs.length) };
}
