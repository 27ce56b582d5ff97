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
    this.timer = setInterval(() => this.attempt(), Math.max(50, this.leaseMs / 3));
    this.attempt();
  }

  /** Whether this process leads the task now. */
  get leading(): boolean {
    return this.task !== undefined;
  }

  private attempt(): void {
    if (this.trying || this.stopped) return;
    this.trying = true;
    this.state.lease(this.name, this.holder, this.leaseMs).then(
      (held) => this.settle(held),
      // Redis unreachable: the lease may still be this process's; past its length it surely is not.
      () => this.settle(performance.now() - this.heldAt < this.leaseMs ? "unknown" : false),
    ).finally(() => (this.trying = false));
  }

  /** When the lease was last taken or renewed. */
  private heldAt = -Infinity;

  private settle(held: boolean | "unknown"): void {
    if (this.stopped || held === "unknown") return;
    if (held) this.heldAt = performance.now();
    if (held && !this.task) {
      this.task = this.make();
      this.task.start();
    } else if (!held && this.task) {
      console.warn(
        `ludus: ${this.name}: this process no longer leads it (another does, or Redis is away); it stops here`,
      );
      void this.task.stop();
      this.task = undefined;
    }
  }

  /** Stops the task here and gives the lease up, so a peer takes it up at its next try. */
  async end(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.task?.stop();
    this.task = undefined;
    await this.state.release(this.name, this.holder).catch(() => {});
  }
}
