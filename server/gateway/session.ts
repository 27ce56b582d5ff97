import type { WebSocket } from "ws";
import { ConfigError } from "../../games/core/config.ts";
import { UnknownGameError } from "../../games/registry.ts";
import { StrategyError } from "../../policies/strategy.ts";
import type {
  ActFrame,
  ClientFrame,
  CreateFrame,
  ErrorCode,
  ErrorFrame,
  ServerFrame,
  WithdrawFrame,
} from "../../protocol/frames.ts";
import { PROTOCOL_VERSION } from "../../protocol/frames.ts";
import type { TokenRecord } from "../auth/tokens.ts";
import { MatchLookupError, StoreUnavailableError } from "../match/live-matches.ts";
import type { Match, Participant, SeatLink } from "../match/match.ts";
import { VERSION } from "../version.ts";
import { decode, encode, type Format, FrameError } from "./client-frames.ts";
import type { Gateway } from "./gateway.ts";
import { RateLimit } from "./rate-limit.ts";

/** Close codes a bot can act on (4000-4999 are the application's). */
export const CLOSE = { badToken: 4001, rateLimited: 1008, tooLarge: 1009, shutdown: 1001 } as const;

interface Seated {
  readonly match: Match;
  readonly seat: number;
  readonly link: SeatLink;
  readonly unsubscribe: () => void;
}

/** One bot connection: authenticates, then carries frames between the socket and its matches. */
export class BotSession {
  private format: Format = "json";
  private bot?: TokenRecord;
  private text = false;
  private readonly seated = new Map<string, Seated>();
  private readonly tickets = new Set<string>();
  private readonly limit: RateLimit;
  private lastRateNotice = -Infinity;
  private closed = false;

  constructor(private readonly socket: WebSocket, private readonly gateway: Gateway) {
    this.limit = new RateLimit(gateway.limits.framesPerSecond, gateway.limits.burst);
    socket.on("message", (data, binary) => this.receive(data as Buffer, binary));
    socket.on("close", () => this.onClose());
    socket.on("error", () => socket.terminate());
  }

  private send(frame: ServerFrame): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(encode(frame, this.format));
  }

  private error(code: ErrorCode, message: string, extra: Partial<ErrorFrame> = {}): void {
    this.send({ type: "error", code, message, ...extra });
  }

  private receive(data: Buffer, binary: boolean): void {
    if (this.closed) return;
    if (!this.limit.take()) {
      if (this.limit.refusedThisSecond > this.limit.burst) {
        this.close(CLOSE.rateLimited, `more than ${this.limit.rate} frames a second; closing`);
      } else if (performance.now() - this.lastRateNotice > 1000) {
        // One notice a second: answering every refused frame would amplify the flood.
        this.lastRateNotice = performance.now();
        this.error(
          "rate_limited",
          `at most ${this.limit.rate} frames a second (bursts of ${this.limit.burst}); frames are being dropped`,
        );
      }
      return;
    }
    const maxBytes = this.gateway.frameBytes(this.bot?.kind);
    if (data.byteLength > maxBytes) {
      return this.error(
        "frame_too_large",
        `a frame may be at most ${maxBytes} bytes for ${
          this.bot ? `a ${this.bot.kind} token` : "an unauthenticated connection"
        }; this one is ${data.byteLength}`,
      );
    }
    let frame: ClientFrame;
    try {
      frame = decode(
        binary ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : data.toString("utf8"),
        binary,
      );
    } catch (error) {
      if (error instanceof FrameError) return this.error(error.code, error.message);
      throw error;
    }
    try {
      this.handle(frame, binary);
    } catch (error) {
      this.reportFailure(error, frame);
    }
  }

  /** Turns the known failures of a request into its error frame; anything else is a bug, logged. */
  private reportFailure(error: unknown, frame: ClientFrame): void {
    const match = "match" in frame ? { match: frame.match } : {};
    if (error instanceof MatchLookupError) return this.error(error.code, error.message, match);
    if (error instanceof StoreUnavailableError) return this.error(error.code, error.message);
    if (error instanceof UnknownGameError) return this.error("unknown_game", error.message);
    if (error instanceof ConfigError) return this.error("bad_config", error.message);
    if (error instanceof StrategyError) return this.error("bad_strategy", error.message);
    if (error instanceof RangeError) return this.error("bad_config", error.message);
    console.error("ludus: gateway frame failed:", error);
    this.error("internal_error", `the server failed to handle this \`${frame.type}\` frame; the connection stays open`);
  }

  private handle(frame: ClientFrame, binary: boolean): void {
    if (frame.type === "ping") {
      return this.send({ type: "pong", ...(frame.id !== undefined ? { id: frame.id } : {}), time: Date.now() });
    }
    if (frame.type === "auth") return this.auth(frame.token, frame.text ?? false, binary);
    if (!this.bot) return this.error("not_authenticated", "send `auth` with your bot token first");
    switch (frame.type) {
      case "queue":
        return this.queue(frame.game, frame.variant);
      case "cancel":
        if (!this.tickets.delete(frame.ticket) || !this.gateway.matchmaker.cancel(frame.ticket)) {
          return this.error("unknown_ticket", `no waiting ticket \`${frame.ticket}\` on this connection`);
        }
        this.gateway.untrackTicket(this.bot.id);
        return this.send({ type: "cancelled", ticket: frame.ticket });
      case "create":
        return this.create(frame);
      case "join":
        return this.join(frame.match);
      case "resume":
        return this.resume(frame.match);
      case "act":
        return this.act(frame);
      case "withdraw":
        return this.withdraw(frame);
    }
  }

  private auth(token: string, text: boolean, binary: boolean): void {
    if (this.bot) return this.error("already_authenticated", `this connection is already ${this.bot.name}`);
    if (binary) this.format = "msgpack";
    const bot = this.gateway.tokens.verify(token);
    if (!bot) {
      this.error("bad_token", "the token is not valid: create one with `ludus token create --name <bot>`");
      return this.close(CLOSE.badToken, "bad token");
    }
    this.bot = bot;
    this.text = text;
    const l = this.gateway.limits;
    this.send({
      type: "welcome",
      server: { name: "ludus", version: VERSION, protocol: PROTOCOL_VERSION },
      bot: { id: bot.id, name: bot.name, kind: bot.kind },
      limits: {
        frameBytes: this.gateway.frameBytes(bot.kind),
        framesPerSecond: l.framesPerSecond,
        burst: l.burst,
        maxMatches: bot.maxMatches,
      },
      matches: this.gateway.heldMatches(bot.id).map((m) => m.id),
    });
  }

  private participant(): Participant {
    return { kind: this.bot!.kind, name: this.bot!.name, tokenId: this.bot!.id };
  }

  /** Live matches and queue tickets count against the token's limit, across all its connections. */
  private checkCapacity(): boolean {
    const used = this.gateway.heldMatches(this.bot!.id).length + this.gateway.ticketsOf(this.bot!.id);
    if (used < this.bot!.maxMatches) return true;
    this.error(
      "too_many_matches",
      `this token may be in ${this.bot!.maxMatches} matches or queues at once; it is in ${used}`,
    );
    return false;
  }

  private queue(game: string, variant: string | undefined): void {
    if (!this.checkCapacity()) return;
    const { ticket, fillAt } = this.gateway.matchmaker.enqueue({
      game,
      variant,
      participant: this.participant(),
      seated: (match, seat) => {
        this.tickets.delete(ticket.id);
        this.gateway.untrackTicket(this.bot!.id);
        this.sit(match, seat);
      },
    });
    this.tickets.add(ticket.id);
    this.gateway.trackTicket(this.bot!.id);
    this.send({ type: "queued", ticket: ticket.id, game: ticket.game, variant: ticket.variant, fillAt });
  }

  private create(frame: CreateFrame): void {
    if (!this.checkCapacity()) return;
    const { type: _, ...request } = frame;
    const { match, seat } = this.gateway.matches.createPrivate(request, this.participant());
    this.send({ type: "created", match: match.id, invite: this.gateway.matches.inviteOf(match), seat });
    this.sit(match, seat);
  }

  private join(matchOrInvite: string): void {
    const { match, invited } = this.gateway.matches.find(matchOrInvite);
    if (!invited) return this.resume(match.id);
    const mine = match.participants().findIndex((_, seat) => match.participant(seat)?.tokenId === this.bot!.id);
    if (mine >= 0) {
      return this.error(
        "already_seated",
        `this token already sits in seat ${mine} of match ${match.id}; an invite is for another player`,
        {
          match: match.id,
        },
      );
    }
    if (!this.checkCapacity()) return;
    const { seat } = this.gateway.matches.joinByInvite(matchOrInvite, this.participant());
    this.sit(match, seat);
  }

  private resume(matchId: string): void {
    const { match } = this.gateway.matches.find(matchId);
    for (let seat = 0; seat < match.seatCount; seat++) {
      if (match.participant(seat)?.tokenId !== this.bot!.id) continue;
      if (!match.resumable(seat)) {
        return this.error("not_seated", `your seat in match ${match.id} was released after its hold expired`, {
          match: match.id,
        });
      }
      return this.sit(match, seat);
    }
    this.error("not_seated", `this token has no seat in match ${match.id}`, { match: match.id });
  }

  private sit(match: Match, seat: number): void {
    const link: SeatLink = { send: (frame) => this.send(frame), text: this.text };
    this.seated.get(match.id)?.unsubscribe();
    // A long-lived connection plays thousands of matches: forget each one when it ends.
    const unsubscribe = match.subscribe((event) => {
      if (event.kind === "end" && this.seated.get(match.id)?.link === link) this.seated.delete(match.id);
    });
    this.seated.set(match.id, { match, seat, link, unsubscribe });
    this.gateway.trackSeat(this.bot!.id, match);
    match.connect(seat, link);
  }

  private act(frame: ActFrame): void {
    const seated = this.seated.get(frame.match);
    if (!seated) {
      this.gateway.matches.find(frame.match); // unknown_match when there is no such match
      return this.error(
        "not_seated",
        `this connection has no seat in match ${frame.match}; \`join\` or \`resume\` first`,
        {
          match: frame.match,
          seq: frame.seq,
        },
      );
    }
    seated.match.act(seated.seat, frame.seq, frame.action, frame.meta, seated.link);
  }

  private withdraw(frame: WithdrawFrame): void {
    const seated = this.seated.get(frame.match);
    if (!seated) {
      const { match } = this.gateway.matches.find(frame.match); // unknown_match when there is no such match
      if (match.ended) {
        return this.error("match_over", `match ${match.id} is over: there is nothing to withdraw from`, {
          match: match.id,
        });
      }
      return this.error("not_seated", `this connection has no seat in match ${frame.match} to withdraw`, {
        match: frame.match,
      });
    }
    seated.match.withdraw(seated.seat, frame.reason, seated.link);
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.socket.close(code, reason);
    this.onClose();
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    for (const ticket of this.tickets) {
      if (this.gateway.matchmaker.cancel(ticket)) this.gateway.untrackTicket(this.bot!.id);
    }
    this.tickets.clear();
    for (const { match, seat, link, unsubscribe } of this.seated.values()) {
      unsubscribe();
      match.disconnect(seat, link);
    }
    this.seated.clear();
    this.gateway.forget(this);
  }
}
