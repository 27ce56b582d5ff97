import { yieldToEventLoop } from "../../db/sql.ts";

/** How late the server's timers may run before background play waits. */
const MAX_LAG_MS = 40;
/** How often the lag is measured while background play runs. */
const PROBE_MS = 20;

/**
 * The event loop's share for background play (tournaments a server runs): a background match may start only once the
 * server's own timers run on time, so that sockets, clocks and HTTP requests are served first and background play
 * fills what is left. In-process matches play as fast as the store takes their rows, so without this a long
 * tournament held every other request of the server back by seconds. The lag is how late a probe timer fires,
 * measured only while someone waits for a turn.
 */
export class LoopShare {
  private lag = 0;
  private probe?: ReturnType<typeof setTimeout>;
  private lastProbeAt = 0;
  private waiting = 0;

  constructor(private readonly maxLagMs = MAX_LAG_MS) {}

  /** Resolves once background work may take a turn: after one turn of the event loop, and while timers are on time. */
  async turn(): Promise<void> {
    await yieldToEventLoop();
    this.waiting++;
    this.measure();
    try {
      while (this.lag > this.maxLagMs) await new Promise((resolve) => setTimeout(resolve, PROBE_MS));
    } finally {
      this.waiting--;
    }
  }

  /** How late the last probe fired, in ms. */
  get lagMs(): number {
    return this.lag;
  }

  private measure(): void {
    if (this.probe) return;
    this.lastProbeAt = performance.now();
    this.probe = setTimeout(() => {
      this.probe = undefined;
      this.lag = Math.max(0, performance.now() - this.lastProbeAt - PROBE_MS);
      if (this.waiting > 0 || this.lag > this.maxLagMs) this.measure();
    }, PROBE_MS);
  }
}
