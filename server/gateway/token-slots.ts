import type { ReplayStore } from "../../db/store.ts";
import type { ClusterState, HeldSlot, Slot } from "../cluster/state.ts";

/**
 * How long a match slot may go without its match in the store before it is taken for stale: a match is written as
 * it starts (a queue's, without waiting), so a young slot's match may not be there yet; one never written at all
 * (its process died before) is not played anywhere.
 */
const UNWRITTEN_MS = 60_000;

/**
 * A token's `maxMatches`, counted over every process of the cluster: the live matches it sits in and the tickets
 * it waits with are its slots (cluster/state.ts), held and released where they begin and end. A slot is taken before
 * a request that may make a match, so two requests on two processes cannot both take the last one.
 *
 * In a cluster a slot can outlive what it stood for (a process killed between a match's end and the slot's release):
 * when a token looks full, and when it connects, its slots are checked against the store and the pools, and the
 * stale ones let go.
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
    const held = (await this.state.slots(token)).filter((h) => h.slot.startsWith("m:"));
    if (!this.state.shared || held.length === 0) return held.map((h) => h.slot.slice(2));
    // What ended without its slot let go is not live: left out, and let go now.
    const stale = new Set(await this.stale(held).catch(() => []));
    for (const s of stale) this.release(token, s);
    return held.filter((h) => !stale.has(h.slot)).map((h) => h.slot.slice(2));
  }

  /**
   * Slots whose match has ended (or was never written, long ago), and tickets no longer in their pool (seated, or
   * their process gone).
   */
  private async stale(held: readonly HeldSlot[]): Promise<Slot[]> {
    const matches = held.filter((h) => h.slot.startsWith("m:"));
    const stored = matches.length && this.store
      ? await this.store.ended(matches.map((h) => h.slot.slice(2)))
      : new Map<string, boolean>();
    const now = Date.now();
    const stale: Slot[] = matches.filter((h) => {
      const ended = stored.get(h.slot.slice(2));
      return ended === true || (ended === undefined && now - h.since > UNWRITTEN_MS);
    }).map((h) => h.slot);
    for (const { slot } of held.filter((h) => h.slot.startsWith("t:"))) {
      const [id, pool] = [slot.slice(2, slot.indexOf("|")), slot.slice(slot.indexOf("|") + 1)];
      if (!(await this.state.tickets(pool)).some((t) => t.id === id)) stale.push(slot);
    }
    return stale;
  }
}
