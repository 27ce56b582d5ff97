import { randomBytes } from "node:crypto";
import type { AgentInfo, SeatKind } from "../../protocol/frames.ts";

/**
 * What the server processes of a cluster share, behind one surface: kept in this process's memory when it plays
 * alone (RAM), or in Redis when several processes share a store (redis-state.ts), the way the replay store is PGlite
 * or PostgreSQL behind one `Sql`. Everything that must hold across processes goes through here: the queue's waiting
 * tickets and its pairing locks, each token's slots (its live matches and tickets, against its `maxMatches`), the
 * seats the queue reserved for browsers, each token's frames per second, and who leads the cluster-wide tasks.
 */

/** Who waits in a queue ticket, as every process can read it (no callbacks, no strategies). */
export interface PooledParticipant {
  readonly kind: SeatKind;
  readonly name: string;
  readonly tokenId?: string;
  readonly agent?: AgentInfo;
}

/** A queue ticket in its pool: what pairing needs, and the process that holds its player. */
export interface PooledTicket {
  readonly id: string;
  readonly game: string;
  readonly variant: string;
  readonly participant: PooledParticipant;
  readonly selfPlay: boolean;
  readonly group?: string;
  /** Epoch ms it joined the pool. */
  readonly since: number;
  /** The node whose player (a bot's connection, a browser's queue room) it is: told when it is seated. */
  readonly node: string;
  /** That node's life: a ticket of an earlier life went with it (a crash), and nobody waits on it any more. */
  readonly epoch: number;
}

/** A token's slot: a live match it sits in, a ticket it waits with, or a request being made (expires). */
export type Slot = `m:${string}` | `t:${string}` | `p:${string}`;
export const matchSlot = (id: string): Slot => `m:${id}`;
/** A ticket's slot names its pool, so that a slot whose ticket is gone can be found out. */
export const ticketSlot = (id: string, pool: string): Slot => `t:${id}|${pool}`;
/** A slot held while a request that may make a match is under way; it lapses by itself after PENDING_SLOT_MS. */
export const pendingSlot = (): Slot => `p:${randomBytes(9).toString("base64url")}`;
export const PENDING_SLOT_MS = 30_000;

export interface ClusterState {
  /** Whether other processes share this state (Redis), rather than this process alone. */
  readonly shared: boolean;

  // ---- the queue ----
  addTicket(pool: string, ticket: PooledTicket): Promise<void>;
  /** Takes a ticket out of its pool; false when it was not there (seated already, or cancelled). */
  removeTicket(pool: string, id: string): Promise<boolean>;
  tickets(pool: string): Promise<PooledTicket[]>;
  /** Takes every one of `ids` out of the pool, or none when any of them is gone. */
  takeTickets(pool: string, ids: readonly string[]): Promise<boolean>;
  /** The seed of a seed group's pool: `fresh` unless one was drawn already (kept a day). */
  groupSeed(pool: string, fresh: string): Promise<string>;

  // ---- leases: one holder at a time (a pool's pairing, a cluster-wide task) ----
  /** Takes the lease `name` for `holder`, or renews it if `holder` has it; false while another holds it. */
  lease(name: string, holder: string, ms: number): Promise<boolean>;
  /** Gives the lease up, if `holder` has it. */
  release(name: string, holder: string): Promise<void>;

  // ---- each token's slots (see Slot) ----
  /**
   * Holds `slot` for `token` if it holds fewer than `max` (a pending one lapses after PENDING_SLOT_MS): true, or
   * the slots it holds now.
   */
  reserve(token: string, slot: Slot, max: number): Promise<true | Slot[]>;
  /** Holds `slot` for `token` whatever it holds already (a match it was seated in). */
  hold(token: string, slot: Slot): Promise<void>;
  releaseSlot(token: string, slot: Slot): Promise<void>;
  slots(token: string): Promise<Slot[]>;

  // ---- seats the queue reserved for browsers, redeemed once ----
  putSeat(ticket: string, value: string, ttlMs: number): Promise<void>;
  takeSeat(ticket: string): Promise<string | null>;

  // ---- frames a token sent, per second, over every process ----
  /** Adds each token's frames of the second `window` and returns the totals. */
  countFrames(window: number, counts: ReadonlyMap<string, number>): Promise<Map<string, number>>;

  close(): Promise<void>;
}

/** The state of a process that plays alone: the same contract, kept in memory. */
export class LocalState implements ClusterState {
  readonly shared = false;
  private readonly pools = new Map<string, Map<string, PooledTicket>>();
  private readonly seeds = new Map<string, string>();
  private readonly leases = new Map<string, { holder: string; until: number }>();
  private readonly tokenSlots = new Map<string, Map<Slot, number>>();
  private readonly seats = new Map<string, { value: string; until: number }>();
  private readonly frames = new Map<string, { window: number; n: number }>();

  addTicket(pool: string, ticket: PooledTicket): Promise<void> {
    let tickets = this.pools.get(pool);
    if (!tickets) this.pools.set(pool, tickets = new Map());
    tickets.set(ticket.id, ticket);
    return Promise.resolve();
  }

  removeTicket(pool: string, id: string): Promise<boolean> {
    const tickets = this.pools.get(pool);
    const removed = tickets?.delete(id) ?? false;
    if (tickets?.size === 0) this.pools.delete(pool);
    return Promise.resolve(removed);
  }

  tickets(pool: string): Promise<PooledTicket[]> {
    return Promise.resolve([...this.pools.get(pool)?.values() ?? []]);
  }

  takeTickets(pool: string, ids: readonly string[]): Promise<boolean> {
    const tickets = this.pools.get(pool);
    if (!tickets || ids.some((id) => !tickets.has(id))) return Promise.resolve(false);
    for (const id of ids) tickets.delete(id);
    if (tickets.size === 0) this.pools.delete(pool);
    return Promise.resolve(true);
  }

  groupSeed(pool: string, fresh: string): Promise<string> {
    let seed = this.seeds.get(pool);
    if (seed === undefined) {
      // Bounded: past this many groups the one first seen is forgotten and starts afresh.
      if (this.seeds.size >= 10_000) this.seeds.delete(this.seeds.keys().next().value!);
      this.seeds.set(pool, seed = fresh);
    }
    return Promise.resolve(seed);
  }

  lease(name: string, holder: string, ms: number): Promise<boolean> {
    const now = performance.now();
    const held = this.leases.get(name);
    if (held && held.holder !== holder && held.until > now) return Promise.resolve(false);
    this.leases.set(name, { holder, until: now + ms });
    return Promise.resolve(true);
  }

  release(name: string, holder: string): Promise<void> {
    if (this.leases.get(name)?.holder === holder) this.leases.delete(name);
    return Promise.resolve();
  }

  /** A token's slots, without those lapsed, each with when it lapses (Infinity: held until released). */
  private live(token: string): Map<Slot, number> {
    const slots = this.tokenSlots.get(token) ?? new Map<Slot, number>();
    const now = Date.now();
    for (const [slot, until] of slots) if (until <= now) slots.delete(slot);
    return slots;
  }

  reserve(token: string, slot: Slot, max: number): Promise<true | Slot[]> {
    const slots = this.live(token);
    if (!slots.has(slot) && slots.size >= max) return Promise.resolve([...slots.keys()]);
    slots.set(slot, slot.startsWith("p:") ? Date.now() + PENDING_SLOT_MS : Infinity);
    this.tokenSlots.set(token, slots);
    return Promise.resolve(true);
  }

  hold(token: string, slot: Slot): Promise<void> {
    const slots = this.live(token);
    slots.set(slot, Infinity);
    this.tokenSlots.set(token, slots);
    return Promise.resolve();
  }

  releaseSlot(token: string, slot: Slot): Promise<void> {
    const slots = this.tokenSlots.get(token);
    slots?.delete(slot);
    if (slots?.size === 0) this.tokenSlots.delete(token);
    return Promise.resolve();
  }

  slots(token: string): Promise<Slot[]> {
    return Promise.resolve([...this.live(token).keys()]);
  }

  putSeat(ticket: string, value: string, ttlMs: number): Promise<void> {
    const now = performance.now();
    for (const [key, seat] of this.seats) if (seat.until <= now) this.seats.delete(key);
    this.seats.set(ticket, { value, until: now + ttlMs });
    return Promise.resolve();
  }

  takeSeat(ticket: string): Promise<string | null> {
    const seat = this.seats.get(ticket);
    this.seats.delete(ticket);
    return Promise.resolve(seat && seat.until > performance.now() ? seat.value : null);
  }

  countFrames(window: number, counts: ReadonlyMap<string, number>): Promise<Map<string, number>> {
    const totals = new Map<string, number>();
    for (const [token, n] of counts) {
      const kept = this.frames.get(token);
      const total = (kept?.window === window ? kept.n : 0) + n;
      this.frames.set(token, { window, n: total });
      totals.set(token, total);
    }
    for (const [token, kept] of this.frames) if (kept.window < window) this.frames.delete(token);
    return Promise.resolve(totals);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
