/** What the load generator reports, one JSON line per run (bench/selfplay/load.ts). */
import type { LatencySummary } from "./histogram.ts";
import type { ProcessUsage } from "./proc.ts";

/** What echo frames carry: the size and shape of a typical `act`. */
export const ECHO_PAYLOAD = JSON.stringify({ type: "act", match: "Xq3vR8kLm2Pa", seq: 17, action: { type: "check" } });

export interface WindowResult {
  readonly windowSeconds: number;
  /** Acks in play mode, echoes in echo mode. */
  readonly operations: number;
  readonly matches: number;
  readonly errors: number;
  /** act sent → its ack (play), or frame sent → its echo. */
  readonly roundTrip: LatencySummary;
  /** act sent → the next frame that act caused for any seat of the match (`turn` or `match_end`); play only. */
  readonly step: LatencySummary | null;
  /** `queue` sent → the match's `match_start` (the wait for a partner included); play mode only. */
  readonly start: LatencySummary | null;
  /** The server process over the window. */
  readonly server: ProcessUsage;
  /** The load generator itself over the window. */
  readonly client: ProcessUsage;
  /** The server's resident memory at the end of the window. */
  readonly serverRssKiB: number;
}

export interface IdleResult {
  readonly requested: number;
  readonly welcomed: number;
  readonly failed: number;
  readonly firstFailure: string | null;
  readonly openSeconds: number;
  /** Sockets still open a second after the last welcome. */
  readonly stillOpen: number;
  /** The server's own count (GET /health `botConnections`). */
  readonly serverConnections: number;
  readonly rssBeforeKiB: number;
  readonly rssAfterKiB: number;
  readonly serverOpenFileLimit: number;
  readonly clientOpenFileLimit: number;
}
