/**
 * Runs `work(batch)` in growing batches until `seconds` have passed and returns units per second;
 * `work` returns the units of work it did. The first call warms up the JIT and is not counted.
 */
export function rate(work: (batch: number) => number, seconds: number): number {
  work(50);
  let units = 0;
  let batch = 50;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < seconds * 1000) {
    units += work(batch);
    elapsed = performance.now() - start;
    if (elapsed < 100) batch *= 2;
  }
  return units / (elapsed / 1000);
}
