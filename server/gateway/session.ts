import type { WebSocket } from "ws";
import type {
  ActFrame,
  AgentInfo,
  AuthFrame,
  ClientFrame,
  CreateFrame,
  ErrorCode,
  ErrorFrame,
  QueueFrame,
  ServerFrame,
  WithdrawFrame,
} from "../../protocol/frames.ts";
import { PROTOCOL_VERSION } from "../../protocol/frames.ts";
import type { PlayerKind, TokenRecord } from "../../db/tokens.ts";
import { MatchRequestError, requestRefusal } from "../match/live-matches.ts";
import { matchEndFrame } from "../match/frames.ts";
import { type Match, type Participant, type SeatLink } from "../match/match.ts";
import { VERSION } from "../version.ts";
import { decode, encode, type Format, FrameError } from "./client-frames.ts";
import type { Gateway } from "./gateway.ts";
import { RateLimit } from "../rate-limit.ts";

/** Close codes a bot can act on (4000-4999 are the application's). */
export const CLOSE = {
  badToken: 4001,
  authTimeout: 4002,
  rateLimited: 1008,
  tooLarge: 1009,
  restart: 1012,
} as const;

/** The seats this connection holds in one match (several in self-play), and its subscription to the match. */
interface Seated {
  readonly match: Match;
  readonly links: Map<number, SeatLink>;
  readonly unsubscribe: () => void;
}

/** One bot connection: authenticates, then carries frames between the socket and its matches. */
export class BotSession {
  private format: Format = "json";
  private bot?: TokenRecord & { kind: PlayerKind };
  /** While a token is being checked: the frames that came after it, handled once it is. */
  private authenticating?: [ClientFrame, boolean][];
  private text = false;
  /** Whether this connection asked for the numeric face (tensors and legal ids in its turns). */
  private numeric = false;
  /**
   * Who plays behind the token, as its `auth` declared it: recorded with every seat this connection takes, but
   * those a `create` names in its `agents`.
   */
  private agent?: AgentInfo;
  private readonly seated = new Map<string, Seated>();
  private readonly tickets = new Set<string>();
  private readonly limit: RateLimit;
  private lastRateNotice = -Infinity;
  private closed = false;
  private readonly authTimer: ReturnType<typeof setTimeout>;

  constructor(private readonly socket: WebSocket, private readonly gateway: Gateway) {
    this.limit = new RateLimit(gateway.limits.framesPerSecond, gateway.limits.burst);
    socket.on("message", (data, binary) => this.receive(data as Buffer, binary));
    socket.on("close", () => this.onClose());
    socket.on("error", () => socket.terminate());
    // A socket that never authenticates holds a file descriptor for nothing: it gets a little while only.
    this.authTimer = setTimeout(() => {
      if (this.bot) return;
      this.error("not_authenticated", `no \`auth\` within ${gateway.limits.authTimeoutMs / 1000} s; closing`);
      this.close(CLOSE.authTimeout, "no auth in time");
    }, gateway.limits.authTimeoutMs);
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
    // Frames that come while the token is checked wait for the answer, so they are handled in order.
    if (this.authenticating) this.authenticating.push([frame, binary]);
    else this.dispatch(frame, binary);
  }

  private dispatch(frame: ClientFrame, binary: boolean): void {
    try {
      this.handle(frame, binary);
    } catch (error) {
      this.reportFailure(error, frame);
    }
  }

  /** Turns the known failures of a request into its error frame; anything else is a bug, logged. */
  private reportFailure(error: unknown, frame: ClientFrame): void {
    const refusal = requestRefusal(error);
    if (refusal) {
      // A refusal about one match names it (`not_seated` on a resume, say), and an act's its `seq`; a
      // store refusal is about none.
      const about = error instanceof MatchRequestError && "match" in frame
        ? { match: frame.match, ...(frame.type === "act" ? { seq: frame.seq } : {}) }
        : {};
      return this.error(refusal.code, refusal.message, about);
    }
    console.error("ludus: gateway frame failed:", error);
    this.error("internal_error", `the server failed to handle this \`${frame.type}\` frame; the connection stays open`);
  }

  private handle(frame: ClientFrame, binary: boolean): void {
    if (frame.type === "ping") {
      return this.send({ type: "pong", ...(frame.id !== undefined ? { id: frame.id } : {}), time: Date.now() });
    }
    if (frame.type === "auth") return this.auth(frame, binary);
    if (!this.bot) return this.error("not_authenticated", "send `auth` with your bot token first");
    switch (frame.type) {
      case "queue":
        return this.queue(frame);
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

  private auth(frame: AuthFrame, binary: boolean): void {
    if (this.bot) return this.error("already_authenticated", `this connection is already ${this.bot.name}`);
    if (binary) this.format = "msgpack";
    const held: [ClientFrame, boolean][] = this.authenticating = [];
    this.gateway.tokens.verify(frame.token).then(
      (record) => this.authenticated(frame, record),
      (error) => {
        console.error("ludus: a token could not be checked:", error);
        this.error("store_unavailable", "the server could not check the token just now; send `auth` again");
      },
    ).catch((error) => this.reportFailure(error, frame)).finally(() => {
      this.authenticating = undefined;
      for (const [next, binary] of held) {
        if (this.closed) return;
        this.dispatch(next, binary);
      }
    });
  }

  private authenticated({ text = false, numeric = false, agent }: AuthFrame, record: TokenRecord | undefined): void {
    if (this.closed) return;
    if (record?.kind === "admin") {
      this.error(
        "bad_token",
        `${record.name}'s token is an admin token: it registers policies over HTTP and never plays; ` +
          "create a player's token with `ludus token create --name <bot>`",
      );
      return this.close(CLOSE.badToken, "admin token");
    }
    const bot = record as (TokenRecord & { kind: PlayerKind }) | undefined;
    if (!bot) {
      this.error(
        "bad_token",
        "the token is not valid here: create one in this server's store with `ludus token create --name <bot>` " +
          "and the `--data-dir` or `--database-url` that `ludus serve` uses",
      );
      return this.close(CLOSE.badToken, "bad token");
    }
    clearTimeout(this.authTimer);
    this.bot = bot;
    this.text = text;
    this.numeric = numeric;
    this.agent = agent && recordedAgent(agent);
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
      matches: this.gateway.matches.heldBy(bot.id).map((m) => m.id),
    });
  }

  /** The token this connection authenticated with, once it has. */
  get tokenId(): string | undefined {
    return this.bot?.id;
  }

  /** Takes this token's seats of a match the server made for it (a tournament's): `match_start` follows. */
  take(match: Match): void {
    if (!this.closed) this.sit(match, match.seatsOf(this.bot!.id));
  }

  private participant(): Participant {
    return {
      kind: this.bot!.kind,
      name: this.bot!.name,
      tokenId: this.bot!.id,
      ...(this.agent && { agent: this.agent }),
    };
  }

  /** Live matches and queue tickets count against the token's limit, across all its connections. */
  private checkCapacity(): boolean {
    const used = this.gateway.matches.heldBy(this.bot!.id).length + this.gateway.ticketsOf(this.bot!.id);
    if (used < this.bot!.maxMatches) return true;
    this.error(
      "too_many_matches",
      `this token may be in ${this.bot!.maxMatches} matches or queues at once; it is in ${used}`,
    );
    return false;
  }

  private queue({ game, variant, selfPlay = false, group }: QueueFrame): void {
    if (!this.checkCapacity()) return;
    const { ticket, fillAt } = this.gateway.matchmaker.enqueue({
      game,
      variant,
      participant: this.participant(),
      selfPlay,
      group,
      seated: (match, seat) => {
        this.tickets.delete(ticket.id);
        this.gateway.untrackTicket(this.bot!.id);
        this.sit(match, [seat]);
      },
    });
    this.tickets.add(ticket.id);
    this.gateway.trackTicket(this.bot!.id);
    this.send({ type: "queued", ticket: ticket.id, game: ticket.game, variant: ticket.variant, fillAt });
  }

  private create(frame: CreateFrame): void {
    if (!this.checkCapacity()) return;
    const { type: _, agents, ...request } = frame;
    const { match, seats } = this.gateway.matches.createPrivate(
      {
        ...request,
        ...(agents && {
          agents: Object.fromEntries(Object.entries(agents).map(([seat, agent]) => [seat, recordedAgent(agent)])),
        }),
      },
      this.participant(),
    );
    this.announce(match, seats, true);
  }

  /**
   * `created`, once the match's record is durable (nobody holds a match a crash could take back); with `sit`
   * the seats are taken only then, so that their `match_start` follows it.
   */
  private announce(match: Match, seats: readonly number[], sit = false): void {
    match.deliver(() => {
      this.send({ type: "created", match: match.id, invite: match.invite, seat: seats[0] ?? null, seats });
      if (sit && !this.closed && seats.length > 0) this.sit(match, seats);
    });
  }

  private join(matchOrInvite: string): void {
    const { match, invited } = this.gateway.matches.find(matchOrInvite);
    if (!invited) return this.resume(match.id);
    const mine = match.seatsOf(this.bot!.id);
    if (mine.length > 0) {
      throw new MatchRequestError(
        "already_seated",
        `this token already sits in seat ${mine.join(" and ")} of match ${match.id}; an invite is for another player ` +
          '(for self-play, create the match with `"self"` opponents or queue with `selfPlay`)',
      );
    }
    if (!this.checkCapacity()) return;
    const { seat } = this.gateway.matches.joinByInvite(matchOrInvite, this.participant());
    this.sit(match, [seat]);
  }

  /**
   * Re-attaches this connection to every seat its token holds in a match. A match still waiting for players
   * answers `created` again; one that has ended, even before a restart, answers each seat's `match_end`
   * (from the replay store once the match is no longer in memory).
   */
  private resume(matchId: string): void {
    const match = this.gateway.matches.get(matchId);
    if (!match) {
      return void this.resumeEnded(matchId).catch((error) =>
        this.reportFailure(error, { type: "resume", match: matchId })
      );
    }
    const seats = match.seatsOf(this.bot!.id);
    if (seats.length === 0) {
      throw new MatchRequestError("not_seated", `this token has no seat in match ${match.id}`);
    }
    const held = seats.filter((seat) => match.resumable(seat));
    if (held.length === 0 && !match.ended) {
      throw new MatchRequestError("not_seated", `your seat in match ${match.id} was released after its hold expired`);
    }
    if (!match.started) this.announce(match, seats);
    this.sit(match, match.ended ? seats : held);
  }

  /** A resume of a match that is not live: its `match_end` from the store, if the token sat in it. */
  private async resumeEnded(matchId: string): Promise<void> {
    const record = await this.gateway.matches.store?.match(matchId);
    const seats = record?.seats.flatMap((s, seat) => (s?.tokenId === this.bot!.id ? [seat] : [])) ?? [];
    if (!record || record.endedAt === null) {
      throw new MatchRequestError("unknown_match", `no live match or invite \`${matchId}\``);
    }
    if (seats.length === 0) throw new MatchRequestError("not_seated", `this token has no seat in match ${matchId}`);
    const end = {
      match: record.id,
      returns: record.returns ?? record.seats.map(() => 0),
      statuses: record.statuses,
      reason: record.endReason ?? "error",
      culprit: record.culprit,
      seed: record.seed,
      steps: record.steps,
    };
    for (const seat of seats) this.send(matchEndFrame(end, seat));
  }

  /** Attaches this connection to `seats` of `match` (a first join, a resume, or several seats of a self-play). */
  private sit(match: Match, seats: readonly number[]): void {
    let seated = this.seated.get(match.id);
    if (!seated) {
      // A long-lived connection plays thousands of matches: forget each one once its `match_end` is out (not
      // before: frames still waiting for the journal, a resent act's ack among them, come first).
      const unsubscribe = match.subscribe((event) => {
        if (event.kind !== "end") return;
        match.deliver(() => {
          if (this.seated.get(match.id) === seated) this.seated.delete(match.id);
        });
      });
      seated = { match, links: new Map(), unsubscribe };
      this.seated.set(match.id, seated);
    }
    for (const seat of seats) {
      const link: SeatLink = { send: (frame) => this.send(frame), text: this.text, numeric: this.numeric };
      seated.links.set(seat, link);
      match.connect(seat, link);
    }
  }

  /** The seat of this connection an `act` or `withdraw` is for: the one that holds decision `seq`, or the given one. */
  private seatFor(
    frame: { type: "act" | "withdraw"; match: string; seq?: number; seat?: number },
  ): [Match, number, SeatLink] {
    const seated = this.seated.get(frame.match);
    if (!seated) {
      const over = this.gateway.matches.isOver(frame.match); // unknown_match when there is no such match
      if (frame.type === "withdraw" && over) {
        throw new MatchRequestError("match_over", `match ${frame.match} is over: there is nothing to withdraw from`);
      }
      throw new MatchRequestError(
        "not_seated",
        `this connection has no seat in match ${frame.match}; \`join\` or \`resume\` first`,
      );
    }
    const { match, links } = seated;
    let seat = frame.seat ?? (frame.seq !== undefined ? match.decisionSeat(frame.seq) : undefined);
    if (seat === undefined || !links.has(seat)) {
      if (frame.seat !== undefined) {
        throw new MatchRequestError(
          "not_seated",
          `this connection does not hold seat ${frame.seat} of match ${match.id}`,
        );
      }
      if (links.size > 1 && frame.seq === undefined) {
        throw new MatchRequestError(
          "not_seated",
          `this connection holds seats ${
            [...links.keys()].join(" and ")
          } of match ${match.id}: say which with \`seat\``,
        );
      }
      seat = links.keys().next().value!; // the match answers a seq that is not this seat's
    }
    return [match, seat, links.get(seat)!];
  }

  private act(frame: ActFrame): void {
    const [match, seat, link] = this.seatFor(frame);
    if (frame.actionId !== undefined) match.actById(seat, frame.seq, frame.actionId, frame.meta, link);
    else match.act(seat, frame.seq, frame.action, frame.meta, link);
  }

  private withdraw(frame: WithdrawFrame): void {
    const [match, seat, link] = this.seatFor(frame);
    match.withdraw(seat, frame.reason, link);
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.socket.close(code, reason);
    this.onClose();
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.authTimer);
    for (const ticket of this.tickets) {
      if (this.gateway.matchmaker.cancel(ticket)) this.gateway.untrackTicket(this.bot!.id);
    }
    this.tickets.clear();
    for (const { match, links, unsubscribe } of this.seated.values()) {
      unsubscribe();
      for (const [seat, link] of links) match.disconnect(seat, link);
    }
    this.seated.clear();
    this.gateway.forget(this);
  }
}

/**
 * An agent as recorded (`auth.agent`, each of `create.agents`): its endpoint without credentials, query or
 * fragment (an API key in a URL stays out).
 */
function recordedAgent(agent: AgentInfo): AgentInfo {
  if (agent.endpoint === undefined) return agent;
  let endpoint = agent.endpoint;
  try {
    const url = new URL(agent.endpoint);
    endpoint = `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    endpoint = agent.endpoint.split(/[?#]/)[0].replace(/\/\/[^/@]*@/, "//");
  }
  return { ...agent, endpoint };
}
