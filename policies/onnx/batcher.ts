import type { PolicyNetwork } from "./network.ts";

/**
 * Micro-batching across live matches: decisions that ask one network in the same turn of the event loop (or
 * within `waitMs` of the first) run as one batch, at most `maxBatch` at a time, so a server with many
 * matches pays for few, larger inference calls. While a batch runs, the next one fills.
 */

export interface BatcherOptions {
  /** The largest batch (default 256). */
  readonly maxBatch?: number;
  /**
   * How long the first decision of a batch waits for others, in ms (fractions allowed; default 0: until the
   * event loop has handled what is ready now — every match that can ask in this turn has asked).
   */
  readonly waitMs?: number;
}

interface Waiting {
  readonly resolve: (logits: Float32Array) => void;
  readonly reject: (error: unknown) => void;
}

export class PolicyBatcher {
  readonly maxBatch: number;
  private readonly waitMs: number;
  private inputs: Float32Array;
  private waiting: Waiting[] = [];
  private since = 0;
  private scheduled = false;
  /** Batches run so far, and the decisions they held: the batch sizes reached. */
  batches = 0;
  decisions = 0;

  constructor(readonly network: PolicyNetwork, options: BatcherOptions = {}) {
    this.maxBatch = options.maxBatch ?? 256;
    this.waitMs = options.waitMs ?? 0;
    if (!Number.isInteger(this.maxBatch) || this.maxBatch < 1) {
      throw new RangeError(`a batch holds a whole number ≥ 1 of decisions, got ${this.maxBatch}`);
    }
    if (!(this.waitMs >= 0)) throw new RangeError(`a batch's wait is ≥ 0 ms, got ${this.waitMs}`);
    this.inputs = new Float32Array(this.maxBatch * network.size);
  }

  /**
   * The logits of one observation, which `encode` writes into the batch's input row it is given. The answer
   * is a view of the batch's output: read it before the next await.
   */
  logits(encode: (row: Float32Array) => void): Promise<Float32Array> {
    const { size } = this.network;
    const at = this.waiting.length * size;
    encode(this.inputs.subarray(at, at + size));
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      if (this.waiting.length >= this.maxBatch) return this.flush();
      if (this.scheduled) return;
      this.scheduled = true;
      this.since = performance.now();
      setImmediate(this.tick);
    });
  }

  // setImmediate, not setTimeout: Deno's zero timeout waits about 2 ms, a batch's wait is meant to be far less.
  private readonly tick = (): void => {
    if (this.waiting.length === 0) {
      this.scheduled = false;
    } else if (performance.now() - this.since >= this.waitMs) {
      this.flush();
    } else {
      setImmediate(this.tick);
    }
  };

  private flush(): void {
    this.scheduled = false;
    const batch = this.waiting;
    const inputs = this.inputs;
    this.waiting = [];
    this.inputs = new Float32Array(this.maxBatch * this.network.size);
    this.batches++;
    this.decisions += batch.length;
    const { actions } = this.network;
    this.network.logits(inputs, batch.length).then(
      (logits) => batch.forEach((w, i) => w.resolve(logits.subarray(i * actions, (i + 1) * actions))),
      (error) => batch.forEach((w) => w.reject(error)),
    );
  }
}
