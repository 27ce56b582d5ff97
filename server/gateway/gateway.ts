import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import type { TokenKind, TokenStore } from "../auth/tokens.ts";
import type { LiveMatches } from "../match/live-matches.ts";
import type { Match } from "../match/match.ts";
import type { Matchmaker } from "../matchmaking/matchmaker.ts";
import { BotSession, CLOSE } from "./session.ts";

export interface GatewayLimits {
  /** Largest frame a connection may send, per token kind; LLM relays carry prompts, so they get more. */
  readonly frameBytes: Readonly<Record<TokenKind, number>>;
  /** Before `auth`, only small frames. */
  readonly unauthenticatedFrameBytes: number;
  readonly framesPerSecond: number;
  readonly burst: number;
}

export const DEFAULT_LIMITS: GatewayLimits = {
  frameBytes: { bot: 16 * 1024, llm: 256 * 1024 },
  unauthenticatedFrameBytes: 4 * 1024,
  framesPerSecond: 2_000,
  burst: 4_000,
};

/**
 * The bot gateway: plain websockets at /bot, speaking docs/protocol.md. It authenticates bots, and
 * keeps, per token, the matches it sits in and the tickets it waits on (for the per-token limit and
 * for `welcome.matches`). Each connection is a BotSession.
 */
export class Gateway {
  private readonly wss: WebSocketServer;
  private readonly sessions = new Set<BotSession>();
  private readonly seatsByToken = new Map<string, Set<Match>>();
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

  frameBytes(kind: TokenKind | undefined): number {
    return kind ? this.limits.frameBytes[kind] : this.limits.unauthenticatedFrameBytes;
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => this.wss.emit("connection", ws, req));
  }

  heldMatches(tokenId: string): Match[] {
    return [...(this.seatsByToken.get(tokenId) ?? [])];
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

  /** Remembers that a token sits in a match until it ends (resumable from any connection of the token). */
  trackSeat(tokenId: string, match: Match): void {
    let held = this.seatsByToken.get(tokenId);
    if (!held) this.seatsByToken.set(tokenId, held = new Set());
    if (held.has(match) || match.ended) return;
    held.add(match);
    match.subscribe((event) => {
      if (event.kind !== "end") return;
      held.delete(match);
      if (held.size === 0 && this.seatsByToken.get(tokenId) === held) this.seatsByToken.delete(tokenId);
    });
  }

  forget(session: BotSession): void {
    this.sessions.delete(session);
  }

  get connections(): number {
    return this.sessions.size;
  }

  close(): void {
    for (const session of [...this.sessions]) session.close(CLOSE.shutdown, "server shutting down");
    this.wss.close();
  }
}
