import { randomBytes, randomInt } from "node:crypto";
import { configure } from "../../games/core/config.ts";
import { getGame } from "../../games/registry.ts";
import { type LiveMatches, StoreUnavailableError } from "../match/live-matches.ts";
import type { Match, Participant } from "../match/match.ts";

/** Someone waiting for a game: a person, a bot or an LLM, all in the same pool. */
export interface Ticket {
  readonly id: string;
  readonly game: string;
  readonly variant: string;
  readonly participant: Participant;
  /** May be seated with tickets of its own token (self-play)? */
  readonly selfPlay: boolean;
  /** The seed group it queues in: it meets only tickets of the same group, and plays the group's start. */
  readonly group?: string;
  readonly since: number;
  /** Called once, when the ticket has a seat. */
  readonly seated: (match: Match, seat: number) => void;
}

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
    if (!group.includes(ticket) && group.every((t) => mayMeet(t, ticket))) group.push(ticket);
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
}

/** Seed groups remembered at once: past this many, the group first seen is forgotten and starts afresh. */
const MAX_GROUP_SEEDS = 10_000;

/** How often a paired group retries while the replay store refuses new matches. */
const RETRY_WHILE_STORE_DOWN_MS = 1000;

/** A queue per game and variant that pairs waiting players into matches. */
export class Matchmaker {
  private readonly pools = new Map<string, Ticket[]>();
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly pairing: PairingRule;
  /** Each seed group's seed, by pool, drawn at its first match; the first drawn are forgotten past MAX_GROUP_SEEDS. */
  private readonly groupSeeds = new Map<string, string>();

  constructor(private readonly matches: LiveMatches, private readonly options: MatchmakerOptions) {
    this.pairing = options.pairing ?? firstComeFirstServed;
  }

  /** Queues a participant; throws the game's own errors for an unknown game, variant or bad fill strategy. */
  enqueue(
    request: {
      game: string;
      variant?: string;
      participant: Participant;
      selfPlay?: boolean;
      group?: string;
      seated: Ticket["seated"];
    },
  ): { ticket: Ticket; fillAt: number | null } {
    const game = getGame(request.game);
    const { variant, config } = configure(game, {}, request.variant);
    this.matches.checkAccepting();
    if (this.options.fillAfterMs !== null) this.matches.checkInProcess(this.fillFor(game.id), game, config);
    const ticket: Ticket = {
      id: randomBytes(9).toString("base64url"),
      game: game.id,
      variant,
      participant: request.participant,
      selfPlay: request.selfPlay ?? false,
      ...(request.group !== undefined ? { group: request.group } : {}),
      since: Date.now(),
      seated: request.seated,
    };
    const key = poolKey(ticket);
    const pool = this.pools.get(key) ?? [];
    this.pools.set(key, pool);
    pool.push(ticket);
    const fillAt = this.options.fillAfterMs === null ? null : ticket.since + this.options.fillAfterMs;
    if (this.options.fillAfterMs !== null) {
      this.timers.set(ticket.id, setTimeout(() => this.fill(ticket), this.options.fillAfterMs));
    }
    // Pair after the caller has the ticket (and has told its client it is queued).
    queueMicrotask(() => this.pair(key));
    return { ticket, fillAt };
  }

  /** Takes a ticket out of its queue; false if it was already seated or cancelled. */
  cancel(ticketId: string): boolean {
    for (const [key, pool] of this.pools) {
      const i = pool.findIndex((t) => t.id === ticketId);
      if (i < 0) continue;
      pool.splice(i, 1);
      if (pool.length === 0) this.pools.delete(key);
      this.clearTimer(ticketId);
      return true;
    }
    return false;
  }

  /** How many wait for each game and variant, for the lobby (seed groups counted in, never named). */
  waiting(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const pool of this.pools.values()) {
      const key = poolKey({ game: pool[0].game, variant: pool[0].variant });
      counts[key] = (counts[key] ?? 0) + pool.length;
    }
    return counts;
  }

  /** What fills `gameId`'s empty seats. */
  fillFor(gameId: string): string {
    return this.options.fillByGame?.[gameId] ?? this.options.fillStrategy;
  }

  close(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.pools.clear();
  }

  private pair(key: string): void {
    const pool = this.pools.get(key);
    if (!pool?.length) return;
    const { game, variant } = pool[0];
    const seats = this.seatCount(game, variant);
    for (let group = this.pairing(pool, seats); group; group = this.pairing(pool, seats)) {
      if (group.some((a, i) => group.slice(i + 1).some((b) => !mayMeet(a, b)))) {
        throw new Error("the pairing rule seated a token against itself without self-play");
      }
      if (!this.seat(key, group, seats)) return;
    }
    const left = this.pools.get(key);
    if (left && left.length >= seats && !this.timers.has(`repair:${key}`)) {
      this.timers.set(
        `repair:${key}`,
        setTimeout(() => {
          this.timers.delete(`repair:${key}`);
          this.pair(key);
        }, this.options.repairMs ?? 1000),
      );
    }
  }

  /** A ticket waited long enough: it plays whoever else waits, and built-ins take the rest. */
  private fill(ticket: Ticket): void {
    this.timers.delete(ticket.id);
    const key = poolKey(ticket);
    const pool = this.pools.get(key);
    if (!pool?.includes(ticket)) return;
    const seats = this.seatCount(ticket.game, ticket.variant);
    this.seat(key, compatibleGroup(pool, seats, ticket), seats);
  }

  /** The seed every match of a seed group's pool starts from: unpredictable, then fixed. */
  private groupSeed(key: string): string {
    let seed = this.groupSeeds.get(key);
    if (seed === undefined) {
      seed = BigInt(`0x${randomBytes(8).toString("hex")}`).toString();
      if (this.groupSeeds.size >= MAX_GROUP_SEEDS) this.groupSeeds.delete(this.groupSeeds.keys().next().value!);
      this.groupSeeds.set(key, seed);
    }
    return seed;
  }

  /** Opens a match for `group`; false when the store refuses new matches (the group stays queued). */
  private seat(key: string, group: readonly Ticket[], seats: number): boolean {
    // Random seat order: in asymmetric games (who bets first, who is the donor) nobody keeps an edge by queueing early.
    const order = Array.from({ length: seats }, (_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = randomInt(i + 1);
      [order[i], order[j]] = [order[j], order[i]];
    }
    const bySeat = new Array<Ticket | undefined>(seats).fill(undefined);
    group.forEach((t, i) => (bySeat[order[i]] = t));
    const { game, variant, group: seedGroup } = group[0];
    let match: Match;
    try {
      match = this.matches.create({
        game,
        variant,
        // A seed group's matches are practice (group-relative baselines for training); the public queue's count.
        ...(seedGroup !== undefined ? { group: seedGroup, seed: this.groupSeed(key) } : { rated: true }),
        seats: bySeat.map((t) => t?.participant ?? { strategy: this.fillFor(game) }),
      });
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      // The replay store is down: the group stays queued and is tried again shortly.
      const retry = setTimeout(() => {
        this.timers.delete(`retry:${key}`);
        const pool = this.pools.get(key);
        if (pool && group.every((t) => pool.includes(t))) this.seat(key, group, seats);
        else this.pair(key);
      }, RETRY_WHILE_STORE_DOWN_MS);
      this.timers.set(`retry:${key}`, retry);
      return false;
    }
    const pool = this.pools.get(key)!;
    for (const t of group) {
      pool.splice(pool.indexOf(t), 1);
      this.clearTimer(t.id);
    }
    if (pool.length === 0) this.pools.delete(key);
    bySeat.forEach((t, seat) => t?.seated(match, seat));
    return true;
  }

  private seatCount(game: string, variant: string): number {
    const g = getGame(game);
    return g.seatCount(configure(g, {}, variant).config);
  }

  private clearTimer(ticketId: string): void {
    clearTimeout(this.timers.get(ticketId));
    this.timers.delete(ticketId);
  }
}

/** A pool per game and variant, and one per seed group in it. */
function poolKey(t: { game: string; variant: string; group?: string }): string {
  return t.group === undefined ? `${t.game}/${t.variant}` : `${t.game}/${t.variant}#${t.group}`;
}
