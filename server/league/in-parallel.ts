/** Runs `task(0)`, `task(1)`, … `task(count − 1)`, started in that order, at most `limit` at a time. */
export async function inParallel(count: number, limit: number, task: (i: number) => Promise<void>): Promise<void> {
  await eachInParallel(Array.from({ length: count }, (_, i) => i), limit, task);
}

/** Runs `task` on each of `items`, taken from it in order as the tasks before finish, at most `limit` at a time. */
export async function eachInParallel<T>(
  items: Iterable<T>,
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  const iterator = items[Symbol.iterator]();
  const worker = async () => {
    for (let next = iterator.next(); !next.done; next = iterator.next()) await task(next.value);
  };
  await Promise.all(Array.from({ length: limit }, worker));
}
