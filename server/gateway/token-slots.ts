import type { ReplayStore } from "../../db/store.ts";
import type { ClusterState, Slot } from "../cluster/state.ts";
import { quietWhileAway, StoreUnavailableError } from "../match/live-matches.ts";

/**
 * A token's `maxMatches`, counted over every process of the cluster: the live matches it sits in and the tickets
 * it waits with are its slots (cluster/state.ts), held and released where they begin and end. A slot is taken before
 * a request that may make a match, so two requests on two processes cannot both take the last one.
 *
 * In a cluster a slot can outlive what it stood for (a process killed between a match's end and the slot's release,
 * or before a new match was written at all): when a token looks full, and when it connects, its slots are checked,
 * and the stale ones let go. A match is live if the store has it unfinished, or if a live process plays it (a match
 * is written as it starts, without waiting, so a new one may not be in the store yet).
 */
export class TokenSlots {
  constructor(
    private readonly state: ClusterState,
    private readonly store: ReplayStore | undefined,
    /** Those of `ids` that some live process plays now (this one asked first). */
    private readonly playing: (ids: readonly string[]) => Promise<Set<string>>,
    /** The token's live matches this process plays: what `matches` answers while the cluster's state is away. */
    private readonly here: (token: string) => string[],
  ) {}

  /** Takes `slot` for `token` unless it is at `max`: true, or how many it holds. */
  async reserve(token: string, slot: Slot, max: number): Promise<true | number> {
    const first = await this.state.reserve(token, slot, max);
    if (first === true || !this.state.shared) return first === true ? true : first.length;
    const stale = await this.stale(first);
    if (stale.length === 0) return first.length;
    await Promise.all(stale.map((s) => this.state.releaseSlot(token, s)));
    const again = await this.state.reserve(token, slot, max);
    return again === true ? true : again.length;
  }

  /** Gives a slot back (nothing waits for it). */
  release(token: string, slot: Slot): void {
    this.state.releaseSlot(token, slot).catch(quietWhileAway("a token's slot could not be let go"));
  }

  /** The live matches the token sits in, on any process (this one's alone while Redis is away). */
  async matches(token: string): Promise<string[]> {
    const slots = await this.state.slots(token).catch((error) => {
      if (error instanceof StoreUnavailableError) return undefined;
      throw error;
    });
    if (!slots) return this.here(token);
    const held = slots.filter((s) => s.startsWith("m:"));
    if (!this.state.shared || held.length === 0) return held.map((s) => s.slice(2));
    // What ended, or was never written and is played nowhere, is not live: left out, and let go now.
    // (The store or a peer not answering: every slot is listed; a resume of one that is gone says so.)
    const stale = new Set(await this.stale(held).catch(() => []));
    for (const s of stale) this.release(token, s);
    return held.filter((s) => !stale.has(s)).map((s) => s.slice(2));
  }

  /** Slots of matches that are not live (see above), and of tickets no longer in their pool. */
  private async stale(slots: readonly Slot[]): Promise<Slot[]> {
    const matches = slots.filter((s) => s.startsWith("m:")).map((s) => s.slice(2));
    const stored = matches.length && this.store ? await this.store.ended(matches) : new Map<string, boolean>();
    const unwritten = matches.filter((id) => !stored.has(id));
    const played = unwritten.length ? await this.playing(unwritten) : new Set<string>();
    const stale: Slot[] = matches.filter((id) => stored.get(id) === true || (!stored.has(id) && !played.has(id)))
      .map((id) => `m:${id}` as Slot);
    for (const slot of slots.filter((s) => s.startsWith("t:"))) {
      const [id, pool] = [slot.slice(2, slot.indexOf("|")), slot.slice(slot.indexOf("|") + 1)];
      if (!(await this.state.tickets(pool)).some((t) => t.id === id)) stale.push(slot);
    }
    return stale;
  }
}
