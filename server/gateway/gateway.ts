import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import type { PlayerKind, TokenStore } from "../../db/tokens.ts";
import type { LiveMatches } from "../match/live-matches.ts";
import type { Match } from "../match/match.ts";
import type { Matchmaker } from "../matchmaking/matchmaker.ts";
import { BotSession, CLOSE } from "./session.ts";

export interface GatewayLimits {
  /** Largest frame a connection may send, per token kind; LLM relays carry prompts, so they get more. */
  readonly frameBytes: Readonly<Record<PlayerKind, number>>;
  /** Before `auth`, only small frames. */
  readonly unauthenticatedFrameBytes: number;
  readonly framesPerSecond: number;
  readonly burst: number;
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
  authTimeoutMs: 10_000,
  maxConnections: 10_000,
};

/**
 * The bot gateway: plain websockets at /bot, speaking docs/protocol.md. It authenticates bots, and
 * keeps, per token, the tickets it waits on (the matches it sits in are LiveMatches'). Each connection
 * is a BotSession.
 */
export class Gateway {
  private readonly wss: WebSocketServer;
  private readonly sessions = new Set<BotSession>();
  private readonly ticketsByToken = new Map<string, number>();

  constructor(
    readonly tokens: TokenStore,
    readonly matches: LiveMatches,
    readonly matchmaker: Matchmaker,
    readonly limits: GatewayLimits = DEFAULT_LIMITS,
  ) {
    // ws closes a connection whose frame exceeds maxPayload with 1009 before we see it; anything up
    // to the largest per-kind limit reaches the session, which answers with a `frame_too_large` error.
    const maxPayload = Math.max(...Object.values(limits.frameBytes)) * 4;
    this.wss = new WebSocketServer({ noServer: true, maxPayload, perMessageDeflate: false });
    this.wss.on("connection", (socket) => this.sessions.add(new BotSession(socket, this)));
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

  ticketsOf(tokenId: string): number {
    return this.ticketsByToken.get(tokenId) ?? 0;
  }

  trackTicket(tokenId: string): void {
    this.ticketsByToken.set(tokenId, this.ticketsOf(tokenId) + 1);
  }

  untrackTicket(tokenId: string): void {
    const n = this.ticketsOf(tokenId) - 1;
    if (n > 0) this.ticketsByToken.set(tokenId, n);
    else this.ticketsByToken.delete(tokenId);
  }

  forget(session: BotSession): void {
    this.sessions.delete(session);
  }

  /**
   * Gives a connection of `tokenId` its seats of `match`, made for it by the server (a tournament's): the oldest
   * connection of that token takes them. False when none is connected; the seats wait, and a program that connects
   * later finds the match in `welcome.matches` and resumes it.
   */
  seatHeld(match: Match, tokenId: string): boolean {
    for (const session of this.sessions) {
      if (session.tokenId !== tokenId) continue;
      session.take(match);
      return true;
    }
    return false;
  }

  get connections(): number {
    return this.sessions.size;
  }

  private stopped = false;

  /**
   * Closes every connection with 1012 (service restart): a stop keeps the matches for the next start, so
   * bots reconnect and resume.
   */
  close(): void {
    this.stopped = true;
    for (const session of [...this.sessions]) {
      session.close(CLOSE.restart, "server restarting: reconnect and resume your matches");
    }
    this.wss.close();
  }
}
