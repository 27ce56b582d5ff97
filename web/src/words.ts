import type { EndReason, SeatStatus } from "../../protocol/frames.ts";

/** The server's end reasons and seat statuses in the page's words, for the table, its seats and the replays. */

/** How a match ended: "The match was …". */
export const ENDED: Readonly<Record<EndReason, string>> = {
  completed: "played to the end",
  forfeit: "ended by a forfeit",
  aborted: "aborted",
  error: "stopped by a server error",
};

/** What a seat's player did, for the statuses that end or hand over a seat: "<name> …". */
export const DID: Readonly<Partial<Record<SeatStatus, string>>> = {
  DISCONNECTED: "left",
  ERROR: "withdrew",
  TIMEOUT: "ran out of time",
  INVALID: "kept making illegal moves",
};
