/** Runs `task(0)`, `task(1)`, … `task(count − 1)`, started in that order, at most `limit` at a time. */
export async function inParallel(count: number, limit: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
}
