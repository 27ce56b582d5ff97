import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { makeDataDir } from "../../db/data-dir.ts";
import { NODE_ID, type NodeLife, type NodeRecord } from "../../db/nodes.ts";
import type { ReplayStore } from "../../db/store.ts";
import type { LiveMatches } from "../match/live-matches.ts";

/** How long a node's lease runs without a renewal before its peers take its matches over. */
export const DEFAULT_LEASE_MS = 10_000;

/**
 * The node id a server takes when none is given: kept in its data directory, so that a restarted process is the
 * same node and takes its own unfinished matches back at once (a peer would wait for the lease to lapse).
 */
export function defaultNodeId(dataDir: string): string {
  const file = join(dataDir, "node-id");
  if (existsSync(file)) {
    const id = readFileSync(file, "utf8").trim();
    if (NODE_ID.test(id)) return id;
  }
  const host = hostname().replace(/[^A-Za-z0-9_.-]/g, "").slice(0, 40) || "ludus";
  const id = `${host}-${randomBytes(4).toString("hex")}`;
  makeDataDir(dataDir);
  writeFileSync(file, `${id}\n`);
  return id;
}

/** Refuses an id `--node` would refuse, saying what is allowed. */
export function checkNodeId(node: string): void {
  if (!NODE_ID.test(node)) {
    throw new Error(
      `node id ${JSON.stringify(node)}: use 1 to 64 letters, digits and _ . : - (starting with a letter or digit)`,
    );
  }
}

export type Restored = Awaited<ReturnType<LiveMatches["restore"]>>;

export interface MembershipOptions {
  readonly node: string;
  readonly leaseMs?: number;
  /** Whether this process shares the cluster's Redis with its peers (see NodeDirectory.join). */
  readonly shared: boolean;
  /** Told of the matches this process restored (at start, or taken over from a lapsed peer), with its life. */
  readonly onRestored?: (ids: readonly string[], life: NodeLife) => void;
  /** Told of the nodes as each look at the directory found them. */
  readonly onNodes?: (nodes: readonly NodeRecord[]) => void;
  /** Told that another process joined with this node id: this one has handed its matches over and must stop. */
  readonly onEvicted?: (why: string) => void;
  /**
   * Told that this process's lease had lapsed and it plays on (renewed, or joined again as a new life): peers took
   * it for stopped meanwhile and may have dropped what it holds in the cluster's state (its queue tickets).
   */
  readonly onLapsed?: () => void;
}

/** A lease no peer can ever see lapse: an embedded store is this process's alone. */
const FOR_GOOD_MS = 100 * 365 * 24 * 3600_000;

/**
 * This server process as a node of the match directory (db/nodes.ts): it joins, renews its lease, and takes
 * over the matches of peers whose lease lapsed, restoring them here. Should its own lease lapse (a stall longer
 * than the lease, or a store that was away) it renews it if no peer took its matches meanwhile, and plays on; if one
 * did, it hands every match over and joins again as a new life, taking back what no peer took; should
 * another process join with its node id, it hands them over and stops. On an embedded store, which no other process
 * can open, it only joins, for good, and takes every unfinished match: there is nobody to take from or fence.
 */
export class Membership {
  private timer?: ReturnType<typeof setInterval>;
  private ticking?: Promise<void>;
  private url = "";
  private rooms: string | null = null;
  private stopped = false;
  /** Set once the server stops: it renews its lease until it leaves, but takes nothing more over. */
  private quiet = false;
  private peers: readonly NodeRecord[] = [];
  /** Matches this life claimed but could not restore yet (the store failed meanwhile): tried again each tick. */
  private unrestored: string[] = [];

  private constructor(
    private readonly store: ReplayStore,
    private readonly matches: LiveMatches,
    private life: NodeLife,
    private readonly options: MembershipOptions & { readonly leaseMs: number },
  ) {}

  /**
   * Joins as a new life of `options.node` and restores what it takes at the start: its own earlier lives'
   * matches, those of lapsed peers and those nobody owns.
   */
  static async join(
    store: ReplayStore,
    matches: LiveMatches,
    options: MembershipOptions,
  ): Promise<{ membership: Membership; restored: Restored }> {
    checkNodeId(options.node);
    const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    const alone = store.backend === "pglite";
    const life = await store.nodes.join(options.node, {
      url: "",
      shared: options.shared,
      leaseMs: alone ? FOR_GOOD_MS : leaseMs,
    });
    const membership = new Membership(store, matches, life, { ...options, leaseMs });
    store.writer.owner = life;
    const restored = await membership.restore(await store.nodes.claim(life, { start: true, alone }));
    if (!alone) {
      await membership.look();
      membership.timer = setInterval(() => membership.tick(), Math.max(50, leaseMs / 4));
    }
    return { membership, restored };
  }

  get node(): string {
    return this.life.node;
  }

  get epoch(): number {
    return this.life.epoch;
  }

  get leaseMs(): number {
    return this.options.leaseMs;
  }

  /** The nodes as the last look at the directory found them (this one included). */
  get nodes(): readonly NodeRecord[] {
    return this.peers;
  }

  /** Says where this node is reached and its browser rooms' process (peers send players and rooms there). */
  async advertise(url: string, rooms: string | null): Promise<void> {
    this.url = url;
    this.rooms = rooms;
    await this.store.nodes.advertise(this.life, url, rooms);
    if (this.timer) await this.look();
  }

  /**
   * Restores what this life claimed (what a failing store left unrestored before included); a failure leaves the
   * rest for the next tick. Tells of what it restored.
   */
  private async restore(claimed: readonly string[]): Promise<Restored> {
    const ids = [...new Set([...this.unrestored, ...claimed])];
    this.unrestored = ids;
    const restored = await this.matches.restore(ids);
    this.unrestored = [];
    if (ids.length > 0) this.options.onRestored?.(ids, this.life);
    return restored;
  }

  private async look(): Promise<void> {
    this.peers = await this.store.nodes.nodes();
    this.options.onNodes?.(this.peers);
  }

  /** Looks at the directory (and takes what lapsed peers left) now, not at the next tick: a peer joined or left. */
  refresh(): void {
    this.tick();
  }

  /** Takes nothing more over from now on (the server stops); the lease is renewed until `leave`. */
  quiesce(): void {
    this.quiet = true;
  }

  /** Renews the lease, then takes over what lapsed peers left; one tick at a time. */
  private tick(): void {
    if (this.ticking || this.stopped || !this.timer) return;
    this.ticking = this.renewAndClaim()
      .catch((error) => console.warn(`ludus: node ${this.life.node}: ${(error as Error).message}`))
      .finally(() => (this.ticking = undefined));
  }

  private async renewAndClaim(): Promise<void> {
    const lease = await this.store.nodes.renew(this.life, this.leaseMs);
    if (lease === "superseded") return this.evicted();
    if (lease === "taken-over") await this.rejoin();
    if (lease === "revived") {
      console.warn(
        `ludus: node ${this.life.node}: its lease had lapsed (no renewal for over ${this.leaseMs} ms) and no peer ` +
          "took its matches: renewed, it plays on",
      );
    }
    if (lease !== "renewed" && !this.stopped) this.options.onLapsed?.();
    if (this.stopped) return;
    if (this.quiet) return await this.look();
    const ids = await this.store.nodes.claim(this.life);
    const { restored, failed } = await this.restore(ids);
    await this.look();
    if (restored.length + failed.length === 0) return;
    console.error(
      `ludus: node ${this.life.node} took over ${restored.length} matches of lapsed peers` +
        (failed.length ? ` (${failed.length} could not be restored and were closed)` : ""),
    );
  }

  /** A peer took this life over: any match may be a peer's now. Hands them all over, then joins as a new life. */
  private async rejoin(): Promise<void> {
    const lapsed = this.life;
    console.warn(
      `ludus: node ${lapsed.node}: its lease lapsed (no renewal for over ${this.leaseMs} ms) and a peer took its ` +
        "matches over: handing them over and joining again",
    );
    this.matches.handOverAll();
    this.unrestored = [];
    this.life = await this.store.nodes.join(lapsed.node, {
      url: this.url,
      shared: this.options.shared,
      leaseMs: this.leaseMs,
    });
    this.store.writer.owner = this.life;
    await this.store.nodes.advertise(this.life, this.url, this.rooms);
    await this.restore(await this.store.nodes.claim(this.life, { start: true }));
  }

  /** Another process joined with this node id: two processes would take each other's matches for ever. This stops. */
  private evicted(): void {
    const why = `another server process joined as node ${this.life.node}: each process needs a node id of its own ` +
      "(--node); this one hands its matches over and stops";
    console.error(`ludus: ${why}`);
    this.stopped = true;
    clearInterval(this.timer);
    this.matches.handOverAll();
    this.options.onEvicted?.(why);
  }

  /**
   * Stops renewing and lets the lease lapse at once, so that peers take over at their next look what this
   * process leaves unfinished (a stop keeps its matches in the store).
   */
  async leave(): Promise<void> {
    const evicted = this.stopped;
    this.stopped = true;
    clearInterval(this.timer);
    await this.ticking;
    if (evicted) return; // the lease is another life's now
    await this.store.nodes.leave(this.life).catch((error) =>
      console.warn(`ludus: node ${this.life.node}: could not give up its lease: ${(error as Error).message}`)
    );
  }
}
