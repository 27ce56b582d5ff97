import { createHash, randomBytes } from "node:crypto";
import type { ClusterState } from "./state.ts";

/** Something one process of the cluster runs at a time: a league's scheduler, a policy's self-play. */
export interface ClusterTask {
  start(): void;
  stop(): void | Promise<void>;
}

/**
 * Runs a task on one process of the cluster at a time, whichever holds its lease in the cluster's state: started
 * when the lease is won, stopped if it is lost (Redis unreachable for a lease), taken up by a peer once a holder
 * stops or dies. A process alone always holds it. `make` builds the task afresh for each time it is led.
 */
export class Leadership {
  private readonly holder = randomBytes(9).toString("base64url");
  private task?: ClusterTask;
  private timer?: ReturnType<typeof setInterval>;
  private trying = false;
  private stopped = false;

  constructor(
    private readonly state: ClusterState,
    /** What names the task among the cluster's (the same on every process that may lead it). */
    readonly name: string,
    private readonly make: () => ClusterTask,
    private readonly leaseMs: number,
  ) {}

  /** A name for a task from what defines it, so that processes started alike lead the same task. */
  static nameOf(kind: string, spec: unknown): string {
    return `${kind}:${createHash("sha256").update(JSON.stringify(spec)).digest("hex").slice(0, 16)}`;
  }

  begin(): void {
    this.timer = setInterval(() => this.attempt(), this.every);
    this.attempt();
  }

  /** Whether this process leads the task now. */
  get leading(): boolean {
    return this.task !== undefined;
  }

  private attempt(): void {
    if (this.trying || this.stopped) return;
    this.trying = true;
    // The lease runs from no earlier than the request's sending: the task is stopped before it could have lapsed.
    const sent = performance.now();
    this.state.lease(this.name, this.holder, this.leaseMs).then(
      (held) => this.settle(held ? sent : undefined),
      () => this.settle(performance.now() < this.heldAt + this.leaseMs - this.every ? "unknown" : undefined),
    ).finally(() => (this.trying = false));
  }

  /** How often the lease is taken or renewed. */
  private get every(): number {
    return Math.max(50, this.leaseMs / 3);
  }

  /** When the request that last took or renewed the lease was sent. */
  private heldAt = -Infinity;
  /** A task being stopped: a new one starts only once it has. */
  private stopping?: Promise<void>;

  /** `held`: when the lease was taken (undefined: another holds it, or it may have lapsed). */
  private settle(held: number | undefined | "unknown"): void {
    if (this.stopped || held === "unknown") return;
    if (held !== undefined) {
      this.heldAt = held;
      if (!this.task && !this.stopping) {
        this.task = this.make();
        this.task.start();
      }
    } else if (this.task) {
      console.warn(
        `ludus: ${this.name}: this process no longer leads it (another does, or Redis is away); it stops here`,
      );
      const task = this.task;
      this.task = undefined;
      this.stopping = Promise.resolve(task.stop()).finally(() => (this.stopping = undefined));
    }
  }

  /** Stops the task here and gives the lease up, so a peer takes it up at its next try. */
  async end(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.stopping;
    await this.task?.stop();
    this.task = undefined;
    await this.state.release(this.name, this.holder).catch(() => {});
  }
}
