import { randomBytes } from "node:crypto";
import type { ClusterState } from "../cluster/state.ts";
import type { LiveMatches } from "../match/live-matches.ts";
import type { Match } from "../match/match.ts";
import type { Matchmaker } from "../matchmaking/matchmaker.ts";

/**
 * What every browser room shares: the live matches, the queue, the seat tickets handed to browsers (in the
 * cluster's state: the queue may seat a person in a match another process plays, whose room redeems it), and the
 * private matches each address has waiting for players.
 */
export class RoomContext {
  private readonly waitingByAddress = new Map<string, Set<Match>>();
  /** Matches with a room on this process (one room a match, however many processes ask for it at once). */
  private readonly rooms = new Set<string>();

  constructor(
    readonly matches: LiveMatches,
    readonly matchmaker: Matchmaker,
    private readonly state: ClusterState,
    /** How long a seat is held for a player who has not come: an unused ticket is of no use after it. */
    private readonly holdMs: number,
  ) {}

  liveMatch(id: string): Match {
    const match = this.matches.get(id);
    if (!match) throw new Error(`no live match \`${id}\``);
    return match;
  }

  /** Counts a room for the match; false when it has one already. */
  roomOpened(matchId: string): boolean {
    if (this.rooms.has(matchId)) return false;
    this.rooms.add(matchId);
    return true;
  }

  roomClosed(matchId: string): void {
    this.rooms.delete(matchId);
  }

  /** A one-time ticket for a seat already claimed for a browser, which it redeems on joining the match's room. */
  async issue(matchId: string, seat: number): Promise<string> {
    const ticket = randomBytes(12).toString("base64url");
    // Unused tickets go once the seat's hold is over; the match has applied its policy by then.
    await this.state.putSeat(ticket, JSON.stringify({ matchId, seat }), this.holdMs * 2);
    return ticket;
  }

  async redeem(ticket: string, matchId: string): Promise<number> {
    const kept = await this.state.takeSeat(ticket);
    const entry = kept === null ? undefined : JSON.parse(kept) as { matchId: string; seat: number };
    if (!entry || entry.matchId !== matchId) throw new Error(`ticket is not valid for match ${matchId}`);
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
