import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import type { MatchOwner, NodeLife, NodeRecord } from "../../db/nodes.ts";
import type { PlayerKind, TokenStore } from "../../db/tokens.ts";
import type { Cluster } from "../cluster/cluster.ts";
import type { LiveMatches } from "../match/live-matches.ts";
import type { Match } from "../match/match.ts";
import type { Matchmaker } from "../matchmaking/matchmaker.ts";
import { SeatsHost, type SeatsNews } from "./remote-seats.ts";
import { BotSession, CLOSE } from "./session.ts";
import { TokenRates } from "./token-rates.ts";
import { TokenSlots } from "./token-slots.ts";

export interface GatewayLimits {
  /** Largest frame a connection may send, per token kind; LLM relays carry prompts, so they get more. */
  readonly frameBytes: Readonly<Record<PlayerKind, number>>;
  /** Before `auth`, only small frames. */
  readonly unauthenticatedFrameBytes: number;
  readonly framesPerSecond: number;
  readonly burst: number;
  /** Frames a second one token may send over all its connections, on every process of the cluster (0: no limit). */
  readonly tokenFramesPerSecond: number;
  /** A connection that has not authenticated by then is closed (4002). */
  readonly authTimeoutMs: number;
  /** Bot connections at once; more are refused at the upgrade with HTTP 503 (keeps the process off its file limit). */
  readonly maxConnections: number;
}

export const DEFAULT_LIMITS: GatewayLimits = {
  frameBytes: { bot: 16 * 1024, llm: 256 * 1024 },
  unauthenticatedFrameBytes: 4 * 1024,
  framesPerSecond: 2_000,
  burst: 4_000,
  tokenFramesPerSecond: 20_000,
  authTimeoutMs: 10_000,
  maxConnections: 10_000,
};

/** How often matches being found are looked up again while their owner is gone and no peer has them yet. */
const LOOK_AGAIN_MS = 250;

/**
 * The bot gateway: plain websockets at /bot, speaking docs/protocol.md. It authenticates bots and keeps each
 * connection a BotSession. In a cluster it is every process's: a bot connects to any of them and reaches any match
 * (its frames go to the match's owner and back over the bus, see remote-seats.ts), and when a process stops, the
 * matches of its bots are found again where its peers restored them and resumed for them.
 */
export class Gateway {
  private readonly wss: WebSocketServer;
  private readonly sessions = new Map<string, BotSession>();
  /** Authenticated sessions per token, oldest first (a tournament's seats go to the oldest). */
  private readonly byToken = new Map<string, Set<BotSession>>();
  readonly slots: TokenSlots;
  readonly rates: TokenRates;
  private readonly host?: SeatsHost;
  /** Matches being found, by session, with when each began. */
  private readonly finding = new Map<BotSession, Map<string, number>>();
  private looking?: ReturnType<typeof setTimeout>;
  private lookInFlight = false;

  constructor(
    readonly tokens: TokenStore,
    readonly matches: LiveMatches,
    readonly matchmaker: Matchmaker,
    readonly cluster: Cluster,
    readonly limits: GatewayLimits = DEFAULT_LIMITS,
  ) {
    // ws closes a connection whose frame exceeds maxPayload with 1009 before we see it; anything up
    // to the largest per-kind limit reaches the session, which answers with a `frame_too_large` error.
    const maxPayload = Math.max(...Object.values(limits.frameBytes)) * 4;
    this.wss = new WebSocketServer({ noServer: true, maxPayload, perMessageDeflate: false });
    this.wss.on("connection", (socket) => {
      const session = new BotSession(socket, this);
      this.sessions.set(session.id, session);
    });
    this.slots = new TokenSlots(cluster.state, matches.store, (ids) => this.playing(ids), (t) => matches.heldBy(t));
    this.rates = new TokenRates(cluster.state, limits.tokenFramesPerSecond);
    const bus = cluster.bus;
    if (bus) {
      this.host = new SeatsHost(bus, matches, () => cluster.epoch);
      bus.on<SeatsNews>("seats.to", (news, from) => this.sessions.get(news.c)?.news(news, from));
      bus.on<string[]>("matches.playing", (ids) => this.playingHere(ids));
      bus.on<{ token: string; match: string; seats: number[] }>(
        "seats.take",
        ({ token, match, seats }, from) => this.take(token, match, from, seats),
      );
    }
    cluster.onMoved((ids, to) => this.moved(ids, to));
    // Frames between processes were lost while Redis was away: every seat on a peer is resumed there afresh.
    cluster.bus?.onRecovered(() => {
      for (const session of this.sessions.values()) {
        for (const seats of session.remoteSeats()) session.moved(seats.match);
      }
    });
    cluster.onNodes((nodes) => this.nodesSeen(nodes));
  }

  frameBytes(kind: PlayerKind | undefined): number {
    return kind ? this.limits.frameBytes[kind] : this.limits.unauthenticatedFrameBytes;
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (this.sessions.size >= this.limits.maxConnections || this.stopped) {
      const why = this.stopped
        ? "the server is shutting down"
        : `the gateway holds its most connections (${this.limits.maxConnections})`;
      socket.end(
        `HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${why}; try again shortly\n`,
      );
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.wss.emit("connection", ws, req));
  }

  /** A session proved its token. */
  authenticated(session: BotSession): void {
    const token = session.tokenId!;
    let held = this.byToken.get(token);
    if (!held) this.byToken.set(token, held = new Set());
    held.add(session);
  }

  forget(session: BotSession): void {
    this.sessions.delete(session.id);
    this.finding.delete(session);
    const held = session.tokenId === undefined ? undefined : this.byToken.get(session.tokenId);
    held?.delete(session);
    if (held?.size === 0) this.byToken.delete(session.tokenId!);
  }

  /** The oldest connection of `token` here takes its seats of `match` (played by `owner`); false if it has none. */
  private take(token: string, match: string, owner: string, seats: readonly number[]): boolean {
    for (const session of this.byToken.get(token) ?? []) if (session.take(match, owner, seats)) return true;
    return false;
  }

  /**
   * Gives a connection of `tokenId` its seats of `match`, made for it by the server (a tournament's): the oldest
   * connection of that token here takes them, else one on a peer. False when none is connected anywhere; the seats
   * wait, and a program that connects later finds the match in `welcome.matches` and resumes it.
   */
  async seatHeld(match: Match, tokenId: string): Promise<boolean> {
    const seats = match.seatsOf(tokenId);
    if (this.take(tokenId, match.id, this.cluster.node, seats)) return true;
    const bus = this.cluster.bus;
    for (const peer of this.cluster.peers()) {
      const taken = await bus!.ask<boolean>(peer, "seats.take", { token: tokenId, match: match.id, seats })
        .catch(() => false);
      if (taken) return true;
    }
    return false;
  }

  /** Those of `ids` this process plays now. */
  private playingHere(ids: readonly string[]): string[] {
    return ids.filter((id) => {
      const match = this.matches.get(id);
      return match !== undefined && !match.ended && !match.suspended;
    });
  }

  /** Those of `ids` some live process plays now: this one's, then each peer's (one that does not answer, none). */
  private async playing(ids: readonly string[]): Promise<Set<string>> {
    const found = new Set(this.playingHere(ids));
    const left = ids.filter((id) => !found.has(id));
    const bus = this.cluster.bus;
    if (left.length === 0 || !bus) return found;
    const answers = await Promise.all(
      this.cluster.peers().map((peer) => bus.ask<string[]>(peer, "matches.playing", left, 1000).catch(() => [])),
    );
    for (const id of answers.flat()) found.add(id);
    return found;
  }

  /** Finds where `match` is played now for `session`, and resumes it there (BotSession.found). */
  reseat(session: BotSession, match: string): void {
    let mine = this.finding.get(session);
    if (!mine) this.finding.set(session, mine = new Map());
    if (!mine.has(match)) mine.set(match, performance.now());
    this.lookSoon(0);
  }

  private lookSoon(ms: number): void {
    if (this.looking || this.lookInFlight) return;
    this.looking = setTimeout(() => {
      this.looking = undefined;
      this.look().catch((error) => console.warn(`ludus: gateway: finding matches failed: ${error.message}`))
        .finally(() => {
          this.lookInFlight = false;
          if (this.finding.size > 0) this.lookSoon(LOOK_AGAIN_MS);
        });
    }, ms);
  }

  /** One look at the directory for every match being found; those still ownerless wait for the next. */
  private async look(): Promise<void> {
    this.lookInFlight = true;
    const ids = new Set<string>();
    for (const mine of this.finding.values()) for (const id of mine.keys()) ids.add(id);
    // The store away: nothing is found this time, but patience runs out all the same.
    const found = await this.cluster.owners([...ids]).catch(() => undefined);
    const owners = new Map<string, MatchOwner>((found ?? []).map((o) => [o.match, o]));
    // A stopped process's matches go to a peer within its lease; past that and a margin, the bot is told to ask again.
    const patience = 2 * this.cluster.leaseMs + 10_000;
    for (const [session, mine] of [...this.finding]) {
      for (const [match, since] of [...mine]) {
        if (!ids.has(match)) continue; // asked for while this look was under way: the next look has it
        if (found && session.found(match, owners.get(match))) mine.delete(match);
        else if (performance.now() - since > patience) {
          mine.delete(match);
          session.lost(match);
        }
      }
      if (mine.size === 0) this.finding.delete(session);
    }
  }

  /**
   * Matches a process restored (taken over, or back after a restart): their seats here are found again there (but
   * those attached to that life already).
   */
  private moved(ids: readonly string[], to: NodeLife): void {
    const moved = new Set(ids);
    for (const session of this.sessions.values()) {
      for (const seats of session.remoteSeats()) {
        if (moved.has(seats.match) && (seats.owner.node !== to.node || seats.owner.epoch !== to.epoch)) {
          session.moved(seats.match);
        }
      }
    }
    if (this.finding.size > 0) this.lookSoon(0);
  }

  /** A look at the directory: seats on a process whose life is over are found again; its connections let go. */
  private nodesSeen(nodes: readonly NodeRecord[]): void {
    const live = new Map(nodes.filter((n) => n.live).map((n) => [n.node, n.epoch]));
    for (const session of this.sessions.values()) {
      for (const seats of session.remoteSeats()) {
        if (live.get(seats.owner.node) !== seats.owner.epoch) session.moved(seats.match);
      }
    }
    for (const node of nodes) {
      if (node.node !== this.cluster.node) this.host?.dropNode(node.node, live.get(node.node));
    }
  }

  get connections(): number {
    return this.sessions.size;
  }

  /** Connections on peers holding seats in this process's matches. */
  get remoteConnections(): number {
    return this.host?.connections ?? 0;
  }

  private stopped = false;

  /**
   * Closes every connection with 1012 (service restart): a stop keeps the matches for the next start, so
   * bots reconnect and resume.
   */
  close(): void {
    this.stopped = true;
    clearTimeout(this.looking);
    for (const session of [...this.sessions.values()]) {
      session.close(CLOSE.restart, "server restarting: reconnect and resume your matches");
    }
    this.rates.close();
    this.wss.close();
  }
}
