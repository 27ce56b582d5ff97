/** What a batcher asks: a network in this process (PolicyNetwork) or in one of its own (HostedNetwork). */
export interface LogitSource {
  /** Entries in one observation tensor. */
  readonly size: number;
  /** Logits per observation. */
  readonly actions: number;
  logits(observations: Float32Array, count: number): Promise<Float32Array>;
  release(): Promise<void>;
}

/**
 * Micro-batching across live matches: decisions that ask one network while it is busy, or in the same turn
 * of the event loop (or within `waitMs` of the first), run as one batch of at most `maxBatch`, so a server
 * with many matches pays for few, larger inference calls.
 *
 * One batch runs at a time. A session runs one batch at a time (synchronously, in onnxruntime-node; its
 * process does one after another, when hosted), so a second batch in flight would never overlap the first;
 * it would only split the matches into groups that take turns at half the batch size and never merge again.
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

interface Batch {
  readonly inputs: Float32Array;
  readonly waiting: Waiting[];
  /** When its first decision arrived. */
  readonly since: number;
}

export class PolicyBatcher {
  readonly maxBatch: number;
  private readonly waitMs: number;
  /** Batches waiting to run, oldest first; only the last one still fills. */
  private readonly queue: Batch[] = [];
  private running = false;
  private scheduled = false;
  /** Batches run so far, and the decisions they held: the batch sizes reached. */
  batches = 0;
  decisions = 0;

  constructor(readonly network: LogitSource, options: BatcherOptions = {}) {
    this.maxBatch = options.maxBatch ?? 256;
    this.waitMs = options.waitMs ?? 0;
    if (!Number.isInteger(this.maxBatch) || this.maxBatch < 1) {
      throw new RangeError(`a batch holds a whole number ≥ 1 of decisions, got ${this.maxBatch}`);
    }
    if (!(this.waitMs >= 0)) throw new RangeError(`a batch's wait is ≥ 0 ms, got ${this.waitMs}`);
  }

  /**
   * The logits of one observation, which `encode` writes into the batch's input row it is given. The answer
   * is a view of the batch's output: read it before the next await.
   */
  logits(encode: (row: Float32Array) => void): Promise<Float32Array> {
    const { size } = this.network;
    let batch = this.queue.at(-1);
    if (!batch || batch.waiting.length >= this.maxBatch) {
      batch = { inputs: new Float32Array(this.maxBatch * size), waiting: [], since: performance.now() };
      this.queue.push(batch);
    }
    const at = batch.waiting.length * size;
    encode(batch.inputs.subarray(at, at + size));
    const { waiting } = batch;
    return new Promise((resolve, reject) => {
      waiting.push({ resolve, reject });
      if (!this.running && waiting.length >= this.maxBatch && this.queue[0].waiting === waiting) this.run();
      else this.schedule();
    });
  }

  // setImmediate, not setTimeout: Deno's zero timeout waits about 2 ms, a batch's wait is meant to be far less.
  private schedule(): void {
    if (this.scheduled || this.running) return;
    this.scheduled = true;
    setImmediate(this.tick);
  }

  private readonly tick = (): void => {
    this.scheduled = false;
    const head = this.queue[0];
    if (this.running || !head) return;
    if (head.waiting.length >= this.maxBatch || performance.now() - head.since >= this.waitMs) this.run();
    else this.schedule();
  };

  private run(): void {
    const { inputs, waiting } = this.queue.shift()!;
    this.running = true;
    this.batches++;
    this.decisions += waiting.length;
    const { actions } = this.network;
    this.network.logits(inputs, waiting.length).then(
      (logits) => waiting.forEach((w, i) => w.resolve(logits.subarray(i * actions, (i + 1) * actions))),
      (error) => waiting.forEach((w) => w.reject(error)),
    ).finally(() => {
      this.running = false;
      // After the answered matches have asked again (their microtasks run before this turn ends).
      if (this.queue.length > 0) this.schedule();
    });
  }
}
