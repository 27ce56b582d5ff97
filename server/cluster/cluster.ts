import type { Presence } from "@colyseus/core";
import type { RedisDriver } from "@colyseus/redis-driver";
import type { RedisPresence } from "@colyseus/redis-presence";
import type { MatchOwner, NodeLife, NodeListing, NodeRecord } from "../../db/nodes.ts";
import type { ReplayStore } from "../../db/store.ts";
import type { LiveMatches } from "../match/live-matches.ts";
import { Bus } from "./bus.ts";
import { Membership, type Restored } from "./membership.ts";
import { type ClusterState, LocalState } from "./state.ts";

/**
 * This process's place among the server processes sharing its store (docs/cluster.md). Alone (the embedded store,
 * or PostgreSQL without Redis) it keeps its shared state in memory and has no peers. With Redis beside a PostgreSQL
 * store it is one node of a cluster: the directory in the store says which node plays which match (Membership), the
 * cluster's state is in Redis (RedisState), messages go over Redis pub/sub (Bus), and the browser rooms use
 * Colyseus's Redis presence and driver, so rooms, seat reservations and the lobby span the processes.
 */

export interface ClusterOptions {
  /** This process's node id in the match directory. */
  readonly node: string;
  /** How long its lease runs unrenewed before peers take its matches over. */
  readonly leaseMs?: number;
  /** Redis for a cluster of processes sharing a PostgreSQL store. */
  readonly redisUrl?: string;
}

/** What Colyseus's matchmaker shares between processes: its presence (pub/sub, keys) and its room listings. */
export interface RoomsBackend {
  readonly presence: Presence;
  readonly driver: RedisDriver;
}

export class Cluster {
  private membership?: Membership;
  private readonly movedListeners = new Set<(ids: readonly string[], to: NodeLife) => void>();
  private readonly evictedListeners = new Set<(why: string) => void>();
  private readonly nodesListeners = new Set<(nodes: readonly NodeRecord[]) => void>();
  private readonly lapsedListeners = new Set<() => void>();

  private constructor(
    private readonly store: ReplayStore,
    private readonly options: ClusterOptions,
    readonly state: ClusterState,
    readonly bus?: Bus,
    readonly rooms?: RoomsBackend & { readonly presence: RedisPresence },
  ) {}

  /**
   * Connects what the cluster shares: Redis (when `redisUrl` is given and the store is PostgreSQL), or memory. An
   * embedded store belongs to one process, so with it a Redis URL is refused when asked for explicitly.
   */
  static async open(store: ReplayStore, options: ClusterOptions): Promise<Cluster> {
    if (!options.redisUrl || store.backend !== "postgres") return new Cluster(store, options, new LocalState());
    // Redis's clients load only here: a server alone never loads them.
    const [{ connectRedis, RedisState }, { RedisPresence }, { RedisDriver }] = await Promise.all([
      import("./redis-state.ts"),
      import("@colyseus/redis-presence"),
      import("@colyseus/redis-driver"),
    ]);
    const id = await store.nodes.clusterId();
    const redis = await connectRedis(options.redisUrl, id);
    const presence = new RedisPresence(redis);
    try {
      const bus = await Bus.open(presence, `ludus:${id}:`, options.node);
      return new Cluster(store, options, new RedisState(redis), bus, { presence, driver: new RedisDriver(redis) });
    } catch (error) {
      presence.shutdown();
      throw error;
    }
  }

  /** Joins the directory as a new life of this node and restores the matches it takes at the start. */
  async join(matches: LiveMatches): Promise<Restored> {
    const { membership, restored } = await Membership.join(this.store, matches, {
      node: this.options.node,
      leaseMs: this.options.leaseMs,
      shared: this.state.shared,
      onRestored: (ids, to) => this.bus ? this.bus.broadcast("matches.moved", { ids, to }) : this.tellMoved(ids, to),
      onNodes: (nodes) => this.nodesListeners.forEach((listener) => listener(nodes)),
      onEvicted: (why) => this.evictedListeners.forEach((listener) => listener(why)),
      onLapsed: () => this.lapsedListeners.forEach((listener) => listener()),
    });
    this.membership = membership;
    this.bus?.on<{ ids: string[]; to: NodeLife }>("matches.moved", ({ ids, to }) => this.tellMoved(ids, to));
    this.bus?.on("nodes.changed", () => this.refresh());
    return restored;
  }

  /** Renews the lease and looks at the directory now, not at the next tick: a peer joined or left. */
  refresh(): void {
    this.membership?.refresh();
  }

  private tellMoved(ids: readonly string[], to: NodeLife): void {
    for (const listener of this.movedListeners) listener(ids, to);
  }

  /** Told of matches some process restored (taken over from a stopped peer, or its own after a restart), and where. */
  onMoved(listener: (ids: readonly string[], to: NodeLife) => void): void {
    this.movedListeners.add(listener);
  }

  /** Told that another process joined with this node id: this one has handed its matches over and must stop. */
  onEvicted(listener: (why: string) => void): void {
    this.evictedListeners.add(listener);
  }

  /**
   * Told that this process's lease had lapsed and it plays on, renewed or as a new life (`epoch` says which): what
   * peers dropped as a stopped process's must be put back.
   */
  onLapsed(listener: () => void): void {
    this.lapsedListeners.add(listener);
  }

  /** Takes nothing more over from peers: the server stops (its lease is renewed until it leaves). */
  quiesce(): void {
    this.membership?.quiesce();
  }

  /** Told of the nodes at each look at the directory (every quarter of a lease). */
  onNodes(listener: (nodes: readonly NodeRecord[]) => void): void {
    this.nodesListeners.add(listener);
  }

  get node(): string {
    return this.membership?.node ?? this.options.node;
  }

  get epoch(): number {
    return this.membership?.epoch ?? 0;
  }

  get leaseMs(): number {
    return this.membership!.leaseMs;
  }

  /** The nodes at the last look at the directory. */
  get nodes(): readonly NodeRecord[] {
    return this.membership?.nodes ?? [];
  }

  /** The live peers' node ids (not this one). */
  peers(): string[] {
    return this.nodes.filter((n) => n.live && n.node !== this.node).map((n) => n.node);
  }

  /** The current life of `node` if its lease ran at the last look. */
  lifeOf(node: string): NodeLife | undefined {
    if (node === this.node) return { node, epoch: this.epoch };
    const record = this.nodes.find((n) => n.node === node && n.live);
    return record && { node, epoch: record.epoch };
  }

  /**
   * Whether a life of a node is over, as far as this process knows: the node stopped (its lease lapsed) or started
   * again since. A node this process has not seen yet (it joined after the last look) is taken to be alive.
   */
  outlived(life: NodeLife): boolean {
    if (life.node === this.node) return life.epoch !== this.epoch;
    const seen = this.nodes.find((n) => n.node === life.node);
    if (!seen || seen.epoch < life.epoch) return false;
    return seen.epoch > life.epoch || !seen.live;
  }

  /** Every node the store has seen, read now. */
  directory(): Promise<NodeListing[]> {
    return this.store.nodes.listing();
  }

  /** Where those of `ids` that are unfinished are played now. */
  owners(ids: readonly string[]): Promise<MatchOwner[]> {
    return this.store.nodes.owners(ids);
  }

  /** Where the match an invite is for is played, if it is unfinished. */
  ownerOfInvite(invite: string): Promise<MatchOwner | undefined> {
    return this.store.nodes.ownerOfInvite(invite);
  }

  /** This node's browser rooms' process id in Colyseus's matchmaker, once advertised. */
  roomsProcess?: string;

  /** Says where this node is reached and its rooms' process id in Colyseus. */
  async advertise(url: string, rooms: string): Promise<void> {
    this.roomsProcess = rooms;
    await this.membership!.advertise(url, rooms);
    // Peers look at the directory at once, rather than at their next tick: they may send players here now.
    this.bus?.broadcast("nodes.changed");
  }

  /** Lets the lease lapse, so peers take over what is left (see Membership.leave). */
  async leave(): Promise<void> {
    await this.membership?.leave();
    this.bus?.broadcast("nodes.changed");
  }

  /** Closes the connections to Redis (after the rooms, which use them, have stopped). */
  async close(): Promise<void> {
    await this.bus?.close().catch(() => {});
    // With Redis, the presence's publishing client is the state's and the driver's too: shutting it down quits both.
    if (this.rooms) this.rooms.presence.shutdown();
    else await this.state.close();
  }
}
