import { randomBytes, randomInt } from "node:crypto";
import { configure } from "../../games/core/config.ts";
import { getGame } from "../../games/registry.ts";
import { type LiveMatches, StoreUnavailableError } from "../match/live-matches.ts";
import type { Match, Participant } from "../match/match.ts";
import type { Cluster } from "../cluster/cluster.ts";
import type { PooledTicket } from "../cluster/state.ts";

/** Someone waiting for a game: a person, a bot or an LLM, all in the same pool, on any process of the cluster. */
export type Ticket = PooledTicket;

/** A ticket checked and ready to queue, with the pool it goes to. */
export interface NewTicket extends Ticket {
  readonly pool: string;
}

/** Called once, when a ticket has a seat: the match's id, the seat, and the node that plays the match. */
export type Seated = (match: string, seat: number, owner: string) => void;

/**
 * Chooses who plays together from a pool's waiting tickets (oldest first): `seats` tickets, or none.
 * First come, first served by default; rating-aware pairing plugs in here. Whatever the rule, a group
 * never seats a token against itself unless each of its tickets asked for self-play (`mayMeet`).
 */
export type PairingRule = (waiting: readonly Ticket[], seats: number) => readonly Ticket[] | undefined;

/** Whether two tickets may sit in one match: different tokens (or people), or a token's self-play tickets. */
export function mayMeet(a: Ticket, b: Ticket): boolean {
  const token = a.participant.tokenId;
  return token === undefined || token !== b.participant.tokenId || (a.selfPlay && b.selfPlay);
}

/** The oldest tickets, up to `seats`, that may all meet each other, starting with `first` when given. */
export function compatibleGroup(waiting: readonly Ticket[], seats: number, first?: Ticket): Ticket[] {
  const group: Ticket[] = first ? [first] : [];
  for (const ticket of waiting) {
    if (group.length === seats) break;
    if (!group.some((t) => t.id === ticket.id) && group.every((t) => mayMeet(t, ticket))) group.push(ticket);
  }
  return group;
}

export const firstComeFirstServed: PairingRule = (waiting, seats) => {
  const group = compatibleGroup(waiting, seats);
  return group.length === seats ? group : undefined;
};

export interface MatchmakerOptions {
  /** After this wait a ticket's empty seats go to `fillStrategy`; null never fills. */
  readonly fillAfterMs: number | null;
  /** The built-in strategy (`name[:arg]`) that fills empty seats; it must exist for every game (e.g. `random`). */
  readonly fillStrategy: string;
  /** Per game, what fills its empty seats instead: a game's own strategy, or a policy (`policy:<name>`). */
  readonly fillByGame?: Readonly<Record<string, string>>;
  readonly pairing?: PairingRule;
  /**
   * How often a pool whose tickets could not all be paired is tried again (default 1 s): a rule that widens its
   * bands as tickets wait (rated pairing) may pair them later without anyone new joining.
   */
  readonly repairMs?: number;
  /** Told of a seated ticket nobody waits on any more (see `seat`). */
  readonly unclaimed?: (match: Match, ticket: Ticket) => void;
}

/** How often a paired group retries while the replay store refuses new matches. */
const RETRY_WHILE_STORE_DOWN_MS = 1000;
/** How long one process may pair a pool before another may (a process that dies pairing holds it no longer). */
const PAIRING_LEASE_MS = 5000;
/** How soon a pool another process is pairing is tried again. */
const PAIRING_BUSY_MS = 25;
/** How long a ticket's process has to take the word that it was seated. */
const SEATED_MS = 2000;

/**
 * A queue per game and variant that pairs waiting players into matches. The pools are the cluster's (Redis, or this
 * process's memory when it plays alone), so a bot on one process and a person on another meet in one match: whichever
 * process pairs a group (holding the pool's pairing lease) opens the match and plays it, and tells each ticket's
 * process where its seat is. Each process keeps its own tickets' callbacks and fill timers; the tickets of a process
 * that has stopped are left out of pairing and dropped from their pool.
 */
export class Matchmaker {
  /** This process's waiting tickets: their pool, their callback, their fill timer. */
  private readonly mine = new Map<
    string,
    { ticket: NewTicket; readonly seated: Seated; fill?: ReturnType<typeof setTimeout> }
  >();
  /** Per pool, its next pairing soon and its next pairing later (see pairSoon). */
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly pairing: PairingRule;
  /** Names this process as a pool's pairing lease holder. */
  private readonly holder = randomBytes(9).toString("base64url");
  private closed = false;

  constructor(
    private readonly matches: LiveMatches,
    private readonly cluster: Cluster,
    private readonly options: MatchmakerOptions,
  ) {
    this.pairing = options.pairing ?? firstComeFirstServed;
    cluster.bus?.on<{ ticket: string; match: string; seat: number }>(
      "queue.seated",
      ({ ticket, match, seat }, from) => this.seated(ticket, match, seat, from),
    );
    cluster.onLapsed(() => this.guard(this.requeue()));
  }

  /** A ticket for `request`, checked (throwing the game's own errors for an unknown game, variant or fill). */
  ticket(
    request: { game: string; variant?: string; participant: Participant; selfPlay?: boolean; group?: string },
  ): NewTicket {
    const game = getGame(request.game);
    const { variant, config } = configure(game, {}, request.variant);
    this.matches.checkAccepting();
    if (this.options.fillAfterMs !== null) this.matches.checkInProcess(this.fillFor(game.id), game, config);
    const { kind, name, tokenId, agent } = request.participant;
    const ticket = {
      id: randomBytes(9).toString("base64url"),
      game: game.id,
      variant,
      participant: { kind, name, ...(tokenId !== undefined && { tokenId }), ...(agent && { agent }) },
      selfPlay: request.selfPlay ?? false,
      ...(request.group !== undefined ? { group: request.group } : {}),
      since: Date.now(),
      node: this.cluster.node,
      epoch: this.cluster.epoch,
    };
    return { ...ticket, pool: poolKey(ticket) };
  }

  /** Queues a ticket; `seated` is called once it has a seat. Resolves when its fill time is known. */
  async enqueue(ticket: NewTicket, seated: Seated): Promise<{ fillAt: number | null }> {
    const { pool, ...pooled } = ticket;
    const waiting: { ticket: NewTicket; seated: Seated; fill?: ReturnType<typeof setTimeout> } = { ticket, seated };
    this.mine.set(ticket.id, waiting);
    try {
      await this.cluster.state.addTicket(pool, pooled);
    } catch (error) {
      this.mine.delete(ticket.id);
      throw error;
    }
    const fillAfter = this.options.fillAfterMs;
    if (fillAfter !== null && this.mine.has(ticket.id)) {
      waiting.fill = setTimeout(() => this.guard(this.fill(ticket)), fillAfter);
    }
    // Pair after the caller has the ticket (and has told its client it is queued).
    this.pairSoon(pool, 0);
    return { fillAt: fillAfter === null ? null : ticket.since + fillAfter };
  }

  /** Takes a ticket of this process out of its queue; false if it was already seated or cancelled. */
  async cancel(ticketId: string): Promise<boolean> {
    const waiting = this.mine.get(ticketId);
    if (!waiting || !await this.cluster.state.removeTicket(waiting.ticket.pool, ticketId)) return false;
    clearTimeout(waiting.fill);
    this.mine.delete(ticketId);
    return true;
  }

  /** How many of this process's tickets wait for each game and variant (seed groups counted in, never named). */
  waiting(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const { ticket } of this.mine.values()) {
      const key = poolKey({ game: ticket.game, variant: ticket.variant });
      counts[key] = (counts[key] ?? 0) + 1;
    }
    return counts;
  }

  /** What fills `gameId`'s empty seats. */
  fillFor(gameId: string): string {
    return this.options.fillByGame?.[gameId] ?? this.options.fillStrategy;
  }

  /** Takes this process's tickets out of their pools and stops pairing. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    const mine = [...this.mine.values()];
    this.mine.clear();
    for (const { fill } of mine) clearTimeout(fill);
    await Promise.all(
      mine.map(({ ticket }) => this.cluster.state.removeTicket(ticket.pool, ticket.id).catch(() => {})),
    );
  }

  /**
   * A ticket of this process was seated (here, or by the peer `owner` that opened its match); false when nobody
   * waits on it here any more (its connection closed as it was paired, or this is a later life of the process).
   */
  private seated(ticketId: string, match: string, seat: number, owner: string): boolean {
    const waiting = this.mine.get(ticketId);
    if (!waiting) return false;
    clearTimeout(waiting.fill);
    this.mine.delete(ticketId);
    waiting.seated(match, seat, owner);
    return true;
  }

  /**
   * Puts this process's waiting tickets back in their pools as its current life's: while its lease had lapsed,
   * peers took them for a stopped process's and dropped them, though their players still wait here.
   */
  private async requeue(): Promise<void> {
    const pools = new Set<string>();
    for (const [id, waiting] of [...this.mine]) {
      if (this.mine.get(id) !== waiting) continue; // seated or cancelled meanwhile
      const { pool, ...pooled } = waiting.ticket = { ...waiting.ticket, epoch: this.cluster.epoch };
      await this.cluster.state.addTicket(pool, pooled);
      // Cancelled while it was put back: out again.
      if (this.mine.get(id) !== waiting) await this.cluster.state.removeTicket(pool, id);
      else pools.add(pool);
    }
    for (const pool of pools) this.pairSoon(pool, 0);
  }

  private guard(work: Promise<unknown>): void {
    work.catch((error) => {
      // Redis away: its client says so; pairing is tried again once a ticket arrives or a fill falls due.
      if (!(error instanceof StoreUnavailableError)) {
        console.warn(`ludus: matchmaking failed: ${(error as Error).message}`);
      }
    });
  }

  /**
   * Pairs `pool` after `ms`, once however often asked. A pairing asked for soon (a ticket came, another process was
   * pairing) is not held back by one asked for later (a rule's bands to widen, a store to come back).
   */
  private pairSoon(pool: string, ms: number): void {
    const key = `${ms <= PAIRING_BUSY_MS ? "soon" : "later"} ${pool}`;
    if (this.closed || this.timers.has(key)) return;
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        this.guard(this.pair(pool));
      }, ms),
    );
  }

  /**
   * Runs `work` holding the pool's pairing lease; false (and a try shortly) while another process holds it, or
   * while the cluster's state cannot be reached.
   */
  private async exclusively(pool: string, work: () => Promise<void>): Promise<boolean> {
    const lease = `pair:${pool}`;
    const held = await this.cluster.state.lease(lease, this.holder, PAIRING_LEASE_MS).catch((error) => {
      if (error instanceof StoreUnavailableError) return "away" as const;
      throw error;
    });
    if (held !== true) {
      this.pairSoon(pool, held === "away" ? RETRY_WHILE_STORE_DOWN_MS : PAIRING_BUSY_MS);
      return false;
    }
    try {
      await work();
    } finally {
      await this.cluster.state.release(lease, this.holder);
    }
    return true;
  }

  /**
   * The pool's tickets, oldest first, without those whose process has stopped, or restarted since (dropped from the
   * pool): their players are not waiting there any more.
   */
  private async waitingIn(pool: string): Promise<Ticket[]> {
    const tickets = await this.cluster.state.tickets(pool);
    const gone = tickets.filter((t) => this.cluster.outlived(t));
    for (const t of gone) await this.cluster.state.removeTicket(pool, t.id);
    return tickets.filter((t) => !gone.includes(t)).sort((a, b) => a.since - b.since || (a.id < b.id ? -1 : 1));
  }

  private async pair(pool: string): Promise<void> {
    await this.exclusively(pool, async () => {
      let waiting = await this.waitingIn(pool);
      if (waiting.length === 0) return;
      const seats = seatCount(waiting[0].game, waiting[0].variant);
      for (let group = this.pairing(waiting, seats); group; group = this.pairing(waiting, seats)) {
        if (group.some((a, i) => group.slice(i + 1).some((b) => !mayMeet(a, b)))) {
          throw new Error("the pairing rule seated a token against itself without self-play");
        }
        const seated = await this.seat(pool, group, seats);
        if (seated === "store down") return;
        // Seated, or some ticket of the group left meanwhile: either way the pool is read again.
        waiting = seated ? waiting.filter((t) => !group.includes(t)) : await this.waitingIn(pool);
      }
      // A rule that widens its bands as tickets wait may pair them later without anyone new joining.
      if (waiting.length >= seats) this.pairSoon(pool, this.options.repairMs ?? 1000);
    });
  }

  /** A ticket waited long enough: it plays whoever else waits, and built-ins take the rest. */
  private async fill(ticket: NewTicket): Promise<void> {
    if (!this.mine.has(ticket.id)) return;
    const done = await this.exclusively(ticket.pool, async () => {
      const waiting = await this.waitingIn(ticket.pool);
      const mine = waiting.find((t) => t.id === ticket.id);
      if (!mine) return;
      const seats = seatCount(ticket.game, ticket.variant);
      await this.seat(ticket.pool, compatibleGroup(waiting, seats, mine), seats);
    });
    // Another process was pairing the pool: try the fill again once it is done.
    if (!done && this.mine.has(ticket.id)) {
      this.mine.get(ticket.id)!.fill = setTimeout(() => this.guard(this.fill(ticket)), PAIRING_BUSY_MS);
    }
  }

  /**
   * Opens a match for `group` (with built-ins in the seats nobody fills): true once seated, false when a ticket of
   * the group had left the pool, "store down" when the store refuses new matches (the group stays queued and is
   * tried again shortly).
   */
  private async seat(pool: string, group: readonly Ticket[], seats: number): Promise<boolean | "store down"> {
    const { game, variant, group: seedGroup } = group[0];
    // The group's seed first: nothing may fail between taking the tickets and seating them.
    const seed = seedGroup === undefined
      ? undefined
      : await this.cluster.state.groupSeed(pool, BigInt(`0x${randomBytes(8).toString("hex")}`).toString());
    if (!await this.cluster.state.takeTickets(pool, group.map((t) => t.id))) return false;
    // Random seat order: in asymmetric games (who bets first, who is the donor) nobody keeps an edge by queueing early.
    const order = Array.from({ length: seats }, (_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = randomInt(i + 1);
      [order[i], order[j]] = [order[j], order[i]];
    }
    const bySeat = new Array<Ticket | undefined>(seats).fill(undefined);
    group.forEach((t, i) => (bySeat[order[i]] = t));
    let match: Match;
    try {
      match = this.matches.create({
        game,
        variant,
        // A seed group's matches are practice (group-relative baselines for training); the public queue's count.
        ...(seedGroup !== undefined ? { group: seedGroup, seed } : { rated: true }),
        seats: bySeat.map((t) => t?.participant ?? { strategy: this.fillFor(game) }),
      });
    } catch (error) {
      // The tickets go back to their pool, as they were; anything else is a bug, and the group is lost with it.
      await Promise.all(group.map((t) => this.cluster.state.addTicket(pool, t)));
      if (!(error instanceof StoreUnavailableError)) throw error;
      this.pairSoon(pool, RETRY_WHILE_STORE_DOWN_MS);
      return "store down";
    }
    bySeat.forEach((t, seat) => {
      if (!t) return;
      // A ticket whose process stopped as it was paired (it cannot have known yet) is told nothing: its seat goes to
      // the token's connection wherever it is, as a tournament's seat does (a connection made later finds it in
      // `welcome.matches`).
      const unclaimed = () => this.options.unclaimed?.(match, t);
      if (t.node === this.cluster.node) {
        if (!this.seated(t.id, match.id, seat, this.cluster.node)) unclaimed();
        return;
      }
      this.cluster.bus!.ask<boolean>(t.node, "queue.seated", { ticket: t.id, match: match.id, seat }, SEATED_MS)
        .then((told) => told || unclaimed(), unclaimed);
    });
    return true;
  }
}

function seatCount(game: string, variant: string): number {
  const g = getGame(game);
  return g.seatCount(configure(g, {}, variant).config);
}

/** A pool per game and variant, and one per seed group in it. */
function poolKey(t: { game: string; variant: string; group?: string }): string {
  return t.group === undefined ? `${t.game}/${t.variant}` : `${t.game}/${t.variant}#${t.group}`;
}
