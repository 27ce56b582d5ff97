/**
 * The latest answer of an expensive computation, per key, reused for `ttlMs`: a board refit or a tournament's table is
 * computed once for every viewer asking within that time, not once per request. A failed answer is not kept.
 */
export class Recent<T> {
  private readonly answers = new Map<string, { at: number; value: Promise<T> }>();

  constructor(private readonly ttlMs: number) {}

  get(key: string, compute: () => Promise<T>): Promise<T> {
    const now = performance.now();
    const kept = this.answers.get(key);
    if (kept && now - kept.at < this.ttlMs) return kept.value;
    const value = compute();
    this.answers.set(key, { at: now, value });
    value.catch(() => this.answers.get(key)?.value === value && this.answers.delete(key));
    return value;
  }
}
