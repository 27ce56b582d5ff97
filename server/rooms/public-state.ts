import { schema, t } from "@colyseus/schema";
import type { Match } from "../match/match.ts";

/**
 * The public state of a match as browser rooms synchronise it (schema 5 builder API): what a spectator
 * and the table view may see. Game views differ per game, so the public observation travels as JSON.
 */
export const SeatState = schema({
  seat: t.number().default(0),
  name: t.string().default(""),
  kind: t.string().default(""),
  status: t.string().default("ACTIVE"),
  /** Nobody has taken this seat yet. */
  open: t.boolean().default(false),
  connected: t.boolean().default(false),
  /** Time left on the seat's clock when this state was sent, in ms; counts down in the page while `running`. */
  remainingMs: t.number().default(0),
  running: t.boolean().default(false),
}, "SeatState");

export const MatchState = schema({
  match: t.string().default(""),
  game: t.string().default(""),
  variant: t.string().default(""),
  /** waiting | playing | ended */
  phase: t.string().default("waiting"),
  seats: t.array(SeatState),
  toAct: t.array("number"),
  steps: t.number().default(0),
  /** `observe(state, "public")` as JSON: hidden cards never appear here. */
  publicObservation: t.string().default("null"),
  returns: t.array("number"),
  /** Why it ended: completed | forfeit | aborted | error; empty while it runs. */
  reason: t.string().default(""),
}, "MatchState");

export type MatchStateInstance = InstanceType<typeof MatchState>;

/** Copies the match's public view into the synchronised state. */
export function syncPublicState(state: MatchStateInstance, match: Match): void {
  state.match = match.id;
  state.game = match.game.id;
  state.variant = match.variant;
  state.phase = match.ended ? "ended" : match.started ? "playing" : "waiting";
  const participants = match.participants();
  const clocks = match.clockTimes();
  participants.forEach((p, i) => {
    const seat = state.seats[i] ?? new SeatState();
    seat.seat = p.seat;
    seat.name = p.name;
    seat.kind = p.kind;
    seat.status = p.status;
    seat.open = p.open;
    seat.connected = p.connected;
    seat.remainingMs = clocks[i].remainingMs;
    seat.running = clocks[i].running;
    if (!state.seats[i]) state.seats.push(seat);
  });
  replaceNumbers(state.toAct, match.toAct());
  state.publicObservation = JSON.stringify(match.publicObservation());
  const outcome = match.outcome;
  state.steps = match.stepsPlayed;
  replaceNumbers(state.returns, outcome?.returns ?? []);
  state.reason = outcome?.reason ?? "";
}

function replaceNumbers(
  target: { length: number; push(...n: number[]): number; clear(): void },
  values: readonly number[],
) {
  target.clear();
  target.push(...values);
}
