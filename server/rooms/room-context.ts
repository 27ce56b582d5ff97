import { randomBytes } from "node:crypto";
import type { LiveMatches } from "../match/live-matches.ts";
import type { Match } from "../match/match.ts";
import type { Matchmaker } from "../matchmaking/matchmaker.ts";

/** What every browser room shares: the live matches, the queue, and the seat tickets handed to browsers. */
export class RoomContext {
  private readonly tickets = new Map<string, { readonly matchId: string; readonly seat: number }>();

  constructor(readonly matches: LiveMatches, readonly matchmaker: Matchmaker) {}

  liveMatch(id: string): Match {
    const match = this.matches.get(id);
    if (!match) throw new Error(`no live match \`${id}\``);
    return match;
  }

  /** A one-time ticket for a seat already claimed for a browser, which it redeems on joining the match's room. */
  issue(match: Match, seat: number): string {
    const ticket = randomBytes(12).toString("base64url");
    this.tickets.set(ticket, { matchId: match.id, seat });
    // Unused tickets go once the seat's hold is over; the match has applied its policy by then.
    setTimeout(() => this.tickets.delete(ticket), match.conduct.holdMs * 2).unref?.();
    return ticket;
  }

  redeem(ticket: string, matchId: string): number {
    const entry = this.tickets.get(ticket);
    if (!entry || entry.matchId !== matchId) throw new Error(`ticket is not valid for match ${matchId}`);
    this.tickets.delete(ticket);
    return entry.seat;
  }
}
