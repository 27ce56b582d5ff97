/**
 * Resolves with `probe()`'s first answer that is not undefined, null or false, asking again every 20 ms;
 * past `timeoutMs` it throws, naming `what`. For state that announces no event of its own (a store row, a
 * page's text, a health figure); where an event exists, wait for the event.
 */
export async function until<T>(
  what: string,
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
