import type { ReplayStore } from "../../db/store.ts";
import type { ClusterState, Slot } from "../cluster/state.ts";

/**
 * A token's `maxMatches`, counted over every process of the cluster: the live matches it sits in and the tickets
 * it waits with are its slots (cluster/state.ts), held and released where they begin and end. A slot is taken before
 * a request that may make a match, so two requests on two processes cannot both take the last one.
 *
 * In a cluster a slot can outlive what it stood for (a process killed between a match's end and the slot's release):
 * when a token looks full, its slots are checked against the store and the pools, and the stale ones let go.
 */
export class TokenSlots {
  constructor(private readonly state: ClusterState, private readonly store?: ReplayStore) {}

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
    this.state.releaseSlot(token, slot).catch((error: Error) =>
      console.warn(`ludus: a token's slot could not be released: ${error.message}`)
    );
  }

  /** The live matches the token sits in, on any process. */
  async matches(token: string): Promise<string[]> {
    const slots = await this.state.slots(token);
    const ids = slots.filter((s) => s.startsWith("m:"));
    if (!this.state.shared || ids.length === 0) return ids.map((s) => s.slice(2));
    // What ended without its slot let go is not live: left out, and let go now.
    const stale = new Set(await this.stale(ids).catch(() => []));
    for (const s of stale) this.release(token, s);
    return ids.filter((s) => !stale.has(s)).map((s) => s.slice(2));
  }

  /** Slots whose match has ended or is not in the store, and tickets no longer in their pool. */
  private async stale(slots: readonly Slot[]): Promise<Slot[]> {
    const matches = slots.filter((s) => s.startsWith("m:")).map((s) => s.slice(2));
    const unfinished = new Set(
      matches.length && this.store ? (await this.store.unfinished(matches)).map((m) => m.id) : matches,
    );
    const stale: Slot[] = matches.filter((id) => !unfinished.has(id)).map((id) => `m:${id}` as Slot);
    for (const slot of slots.filter((s) => s.startsWith("t:"))) {
      const [id, pool] = [slot.slice(2, slot.indexOf("|")), slot.slice(slot.indexOf("|") + 1)];
      if (!(await this.state.tickets(pool)).some((t) => t.id === id)) stale.push(slot);
    }
    return stale;
  }
}
