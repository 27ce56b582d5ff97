/**
 * Latencies in 10 µs buckets up to 100 ms (one overflow bucket beyond): percentiles to 10 µs without
 * keeping every sample, and small enough to send from the load generator as JSON.
 */
const BUCKET_US = 10;
const BUCKETS = 10_000;

export interface LatencySummary {
  readonly samples: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export class Histogram {
  private readonly counts = new Uint32Array(BUCKETS + 1);
  private samples = 0;
  private maxMs = 0;

  record(ms: number): void {
    this.counts[Math.min(BUCKETS, Math.floor((ms * 1000) / BUCKET_US))]++;
    this.samples++;
    if (ms > this.maxMs) this.maxMs = ms;
  }

  reset(): void {
    this.counts.fill(0);
    this.samples = 0;
    this.maxMs = 0;
  }

  /** The upper edge of the bucket holding the `p`-th percentile, in ms (the max when it falls in the overflow). */
  percentile(p: number): number {
    if (this.samples === 0) return NaN;
    const rank = Math.ceil((p / 100) * this.samples);
    let seen = 0;
    for (let i = 0; i <= BUCKETS; i++) {
      seen += this.counts[i];
      if (seen >= rank) return i === BUCKETS ? this.maxMs : Math.min(this.maxMs, ((i + 1) * BUCKET_US) / 1000);
    }
    return this.maxMs;
  }

  summary(): LatencySummary {
    return {
      samples: this.samples,
      p50Ms: round3(this.percentile(50)),
      p99Ms: round3(this.percentile(99)),
      maxMs: round3(this.maxMs),
    };
  }
}

export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
