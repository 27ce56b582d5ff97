import { randomBytes } from "node:crypto";
import type { LiveMatches } from "../match/live-matches.ts";
import type { Match } from "../match/match.ts";
import type { Matchmaker } from "../matchmaking/matchmaker.ts";

/**
 * What every browser room shares: the live matches, the queue, the seat tickets handed to browsers, and
 * the private matches each address has waiting for players.
 */
export class RoomContext {
  private readonly tickets = new Map<string, { readonly matchId: string; readonly seat: number }>();
  private readonly waitingByAddress = new Map<string, Set<Match>>();

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

  /** How many private matches `address` has waiting for players now. */
  waitingFrom(address: string): number {
    return this.waitingByAddress.get(address)?.size ?? 0;
  }

  /** Counts `match` against `address` until it starts or ends. */
  createdBy(address: string, match: Match): void {
    let waiting = this.waitingByAddress.get(address);
    if (!waiting) this.waitingByAddress.set(address, waiting = new Set());
    waiting.add(match);
    const unsubscribe = match.subscribe((event) => {
      if (event.kind !== "start" && event.kind !== "end") return;
      unsubscribe();
      waiting.delete(match);
      if (waiting.size === 0 && this.waitingByAddress.get(address) === waiting) this.waitingByAddress.delete(address);
    });
  }
}
