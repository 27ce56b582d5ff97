import { ChatError } from "./chat.ts";

/** A cap on requests in flight at once, shared by every match an agent plays. Waiters go in arrival order. */
export class Gate {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be ≥ 1, got ${capacity}`);
    this.#free = capacity;
  }

  get inFlight(): number {
    return this.capacity - this.#free;
  }

  /** Runs `task` once a place is free; an abort while waiting rejects without taking one. */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.#acquire(signal);
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    }
  }

  #acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const wake = () => {
        signal?.removeEventListener("abort", abort);
        resolve();
      };
      const abort = () => {
        const index = this.#waiting.indexOf(wake);
        if (index >= 0) this.#waiting.splice(index, 1);
        reject(signal!.reason);
      };
      this.#waiting.push(wake);
      signal?.addEventListener("abort", abort, { once: true });
    });
  }
}

export interface BackoffOptions {
  /** Tries in all, the first included (default 6). */
  readonly attempts?: number;
  /** The first wait; each later one doubles, up to `maxDelayMs` (defaults 500 and 30,000). */
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
}

/**
 * A wait before retry `n` (1-based): full jitter under an exponential cap, or what the endpoint asked
 * for (`Retry-After`), which is honoured even past the cap: the caller's deadline bounds it.
 */
export function backoffDelay(n: number, options: BackoffOptions, retryAfterMs?: number): number {
  const base = options.baseDelayMs ?? 500;
  const cap = options.maxDelayMs ?? 30_000;
  if (retryAfterMs !== undefined) return retryAfterMs;
  return Math.random() * Math.min(cap, base * 2 ** (n - 1));
}

/**
 * Calls `request` until it succeeds, fails in a way a retry cannot mend (a refused key, an unknown
 * model), or the tries run out. Waits between tries follow `backoffDelay`; `onRetry` hears each one.
 * An abort stops the waiting at once.
 */
export async function withBackoff<T>(
  request: () => Promise<T>,
  options: BackoffOptions,
  signal?: AbortSignal,
  onRetry?: (error: ChatError, delayMs: number, attempt: number) => void,
): Promise<T> {
  const attempts = options.attempts ?? 6;
  for (let attempt = 1;; attempt++) {
    try {
      return await request();
    } catch (error) {
      if (!(error instanceof ChatError) || !error.retryable || attempt >= attempts || signal?.aborted) throw error;
      const delay = backoffDelay(attempt, options, error.retryAfterMs);
      onRetry?.(error, delay, attempt);
      await sleep(delay, signal);
    }
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
