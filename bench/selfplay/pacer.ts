/**
 * Holds the load generator's sends to `rate` a second across all its connections (a token bucket
 * with a few milliseconds of burst), so latency can be measured below saturation. Without a rate it
 * sends at once: the closed loop that finds the peak.
 */
export class Pacer {
  private tokens: number;
  private readonly burst: number;
  private last = performance.now();
  private readonly waiting: (() => void)[] = [];
  private head = 0;
  private timer?: ReturnType<typeof setTimeout>;

  constructor(readonly rate: number | undefined) {
    this.burst = rate === undefined ? Infinity : Math.max(1, rate * 0.005);
    this.tokens = rate === undefined ? Infinity : this.burst;
  }

  submit(send: () => void): void {
    if (this.rate === undefined) return send();
    this.refill();
    if (this.head === this.waiting.length && this.tokens >= 1) {
      this.tokens--;
      return send();
    }
    this.waiting.push(send);
    this.schedule();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.waiting.length = this.head = 0;
  }

  private refill(): void {
    const now = performance.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.rate!);
    this.last = now;
  }

  private schedule(): void {
    if (this.timer !== undefined) return;
    const waitMs = Math.max(0, ((1 - this.tokens) / this.rate!) * 1000);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.drain();
    }, waitMs);
  }

  private drain(): void {
    this.refill();
    while (this.head < this.waiting.length && this.tokens >= 1) {
      this.tokens--;
      this.waiting[this.head++]();
    }
    if (this.head === this.waiting.length) this.waiting.length = this.head = 0;
    else this.schedule();
  }
}
