/**
 * A token bucket: `rate` a second on average, bursts up to `burst` (a connection's frames, a league's new matches). Generous on
 * purpose (a bot may play dozens of matches on one socket); it exists to stop floods, not to pace play.
 */
export class RateLimit {
  private tokens: number;
  private last = performance.now();
  /** Frames refused in the current one-second window. */
  refusedThisSecond = 0;
  private windowStart = performance.now();

  constructor(readonly rate: number, readonly burst: number) {
    this.tokens = burst;
  }

  take(): boolean {
    const now = performance.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.refusedThisSecond = 0;
    }
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    this.refusedThisSecond++;
    return false;
  }
}
