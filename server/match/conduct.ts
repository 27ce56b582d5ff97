import type { ConductPolicy, Outcome, SeatStatus } from "../../protocol/frames.ts";
import type { DefaultedReason } from "../../db/records.ts";

/**
 * The default conduct: two illegal actions forgiven per decision, then the seat's default action;
 * a timeout plays the default action too, so a slow or broken bot costs itself, not the match; a
 * dropped seat is held for 30 s. Research leagues that want a loss instead set `forfeit`.
 */
export const DEFAULT_CONDUCT: ConductPolicy = {
  retries: 2,
  onIllegal: "default",
  onTimeout: "default",
  holdMs: 30_000,
};

/** How a released seat's defaulted decisions are logged: it dropped, or its player withdrew it (status ERROR). */
export const leftAs = (status: SeatStatus): DefaultedReason => (status === "ERROR" ? "withdrawn" : "released");

/** What happens next, for the message that tells a seat its retries are used up. */
const OUTCOME: ReadonlyMap<Outcome, string> = new Map([
  ["default", "the default action is played for you."],
  ["forfeit", "you forfeit the match."],
  ["abort", "the match is aborted."],
]);

/** The message that refuses a seat's last allowed illegal action. */
export const noRetriesLeft = (conduct: ConductPolicy, message: string): string =>
  `${message} No retries are left: ${OUTCOME.get(conduct.onIllegal)}`;

/** How a match ends when the conduct policy ends it for a seat. */
export const endingBy = (outcome: Outcome): "forfeit" | "aborted" => (outcome === "forfeit" ? "forfeit" : "aborted");

/** A logged decision without an action: the seat's misconduct, as its status and the outcome it had. */
export function loggedMisconduct(
  conduct: ConductPolicy,
  errorCode: string | undefined,
): { status: "TIMEOUT" | "ERROR" | "INVALID"; outcome: Outcome } {
  const status = errorCode === "timeout" ? "TIMEOUT" : errorCode === "withdrawn" ? "ERROR" : "INVALID";
  return { status, outcome: status === "INVALID" ? conduct.onIllegal : conduct.onTimeout };
}

/**
 * What the conduct policy does once a seat's player is gone (dropped past its hold, or withdrawn, `status` ERROR):
 * `default`: its open decision and every later one are played by default; `misconduct`: its open decision is logged
 * as such, with this outcome; `end`: the match ends so, the seat its culprit. Once no player is left at all (every
 * other seat plays in-process or is gone too) the match is aborted rather than played out by default moves.
 */
export function onLeave(
  conduct: ConductPolicy,
  { status, waiting, open, nobodyLeft }: {
    status: "DISCONNECTED" | "ERROR";
    waiting: boolean;
    open: boolean;
    nobodyLeft: boolean;
  },
):
  | { readonly kind: "default" }
  | { readonly kind: "misconduct"; readonly outcome: Outcome }
  | { readonly kind: "end"; readonly reason: "forfeit" | "aborted" } {
  const outcome = conduct.onTimeout;
  if (waiting) return { kind: "end", reason: endingBy(outcome) };
  if (outcome === "default" && !nobodyLeft) return { kind: "default" };
  if (open && status === "ERROR") return { kind: "misconduct", outcome: nobodyLeft ? "abort" : outcome };
  return { kind: "end", reason: outcome === "forfeit" && !nobodyLeft ? "forfeit" : "aborted" };
}
