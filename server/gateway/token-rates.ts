import type { ClusterState } from "../cluster/state.ts";
import { quietWhileAway } from "../match/live-matches.ts";

/** How often each process adds its tokens' frames to the cluster's counts and reads the totals back. */
const SYNC_MS = 100;

/**
 * Frames per second per token, over all its connections on every process of the cluster: a token cannot pass its
 * limit by opening more sockets, here or on a peer. Each process counts locally and adds its counts to the cluster's
 * (cluster/state.ts) every SYNC_MS, reading back each token's total for the current second, so a frame costs no round
 * trip; a token over the limit is refused until the second ends. Alone, the counts are this process's own.
 */
export class TokenRates {
  private window = currentWindow();
  /** Frames taken since the last sync, per token. */
  private readonly pending = new Map<string, number>();
  /** Each token's total for this window as the cluster last said. */
  private readonly totals = new Map<string, number>();
  private readonly timer: ReturnType<typeof setInterval>;
  private syncing = false;

  constructor(private readonly state: ClusterState, readonly perSecond: number) {
    this.timer = setInterval(() => this.sync(), SYNC_MS);
    Deno.unrefTimer(this.timer);
  }

  /** Counts one frame of `token`; false when the token is over its limit this second (0: no limit). */
  take(token: string): boolean {
    if (this.perSecond <= 0) return true;
    this.roll();
    const pending = this.pending.get(token) ?? 0;
    if ((this.totals.get(token) ?? 0) + pending >= this.perSecond) return false;
    this.pending.set(token, pending + 1);
    return true;
  }

  private roll(): void {
    const window = currentWindow();
    if (window === this.window) return;
    this.window = window;
    this.totals.clear();
    this.pending.clear();
  }

  private sync(): void {
    if (this.syncing || this.pending.size === 0) return;
    this.roll();
    const counts = new Map(this.pending);
    const window = this.window;
    this.pending.clear();
    this.syncing = true;
    this.state.countFrames(window, counts).then((totals) => {
      if (window !== this.window) return;
      for (const [token, total] of totals) this.totals.set(token, total);
    }, quietWhileAway("frames per token could not be counted"))
      .finally(() => (this.syncing = false));
  }

  close(): void {
    clearInterval(this.timer);
  }
}

const currentWindow = () => Math.floor(Date.now() / 1000);
