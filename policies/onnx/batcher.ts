import type { PolicyNetwork } from "./network.ts";

/**
 * Micro-batching across live matches: decisions that ask one network within a short wait run as one batch,
 * at most `maxBatch` at a time, so a server with many matches pays for few, larger inference calls.
 */

export interface BatcherOptions {
  /** The largest batch (default 256). */
  readonly maxBatch?: number;
  /** How long the first decision of a batch waits for others, in ms (default 0: the next turn of the event loop). */
  readonly waitMs?: number;
}

interface Waiting {
  readonly resolve: (logits: Float32Array) => void;
  readonly reject: (error: unknown) => void;
}

export class PolicyBatcher {
  private readonly maxBatch: number;
  private readonly waitMs: number;
  private inputs: Float32Array;
  private waiting: Waiting[] = [];
  private timer?: ReturnType<typeof setTimeout>;
  /** Batches run so far, and the decisions they held: the batch sizes reached. */
  batches = 0;
  decisions = 0;

  constructor(readonly network: PolicyNetwork, options: BatcherOptions = {}) {
    this.maxBatch = options.maxBatch ?? 256;
    this.waitMs = options.waitMs ?? 0;
    this.inputs = new Float32Array(this.maxBatch * network.size);
  }

  /** The logits of one observation tensor (copied: the caller may reuse it at once). */
  logits(observation: Float32Array): Promise<Float32Array> {
    return new Promise((resolve, reject) => {
      this.inputs.set(observation.subarray(0, this.network.size), this.waiting.length * this.network.size);
      this.waiting.push({ resolve, reject });
      if (this.waiting.length >= this.maxBatch) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.waitMs);
    });
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.waiting;
    if (batch.length === 0) return;
    const inputs = this.inputs;
    this.waiting = [];
    this.inputs = new Float32Array(this.maxBatch * this.network.size);
    this.batches++;
    this.decisions += batch.length;
    const { actions } = this.network;
    this.network.logits(inputs, batch.length).then(
      (logits) => batch.forEach((w, i) => w.resolve(logits.slice(i * actions, (i + 1) * actions))),
      (error) => batch.forEach((w) => w.reject(error)),
    );
  }
}
