import { randomBytes } from "node:crypto";
import type { WebSocket } from "ws";
import type {
  AgentInfo,
  AuthFrame,
  ClientFrame,
  CreateFrame,
  ErrorCode,
  ErrorFrame,
  QueueFrame,
  ServerFrame,
} from "../../protocol/frames.ts";
import { PROTOCOL_VERSION } from "../../protocol/frames.ts";
import type { PlayerKind, TokenRecord } from "../../db/tokens.ts";
import type { MatchOwner } from "../../db/nodes.ts";
import { MatchRequestError } from "../match/live-matches.ts";
import { matchEndFrame } from "../match/frames.ts";
import type { Match, Participant } from "../match/match.ts";
import { pendingSlot, type Slot, ticketSlot } from "../cluster/state.ts";
import { VERSION } from "../version.ts";
import { decode, encode, type Format, FrameError } from "./client-frames.ts";
import type { Gateway } from "./gateway.ts";
import { RateLimit } from "../rate-limit.ts";
import { internalError, LocalSeats, refusalFrame, type SeatHolder, type Seats, type UnsentCreated } from "./seats.ts";
import { joinRemote, type RemoteConnection, RemoteSeats, type SeatsNews } from "./remote-seats.ts";

/** How long a join waits for the peer playing the invite's match to answer. */
const JOIN_ANSWER_MS = 5000;

/** The refusal of a request about a match whose process is gone and whose new one is not known yet. */
const moving = (match: string) =>
  new MatchRequestError(
    "server_stopping",
    `match ${match} is being moved to another server process after its own stopped; try again shortly`,
  );

/** Close codes a bot can act on (4000-4999 are the application's). */
export const CLOSE = {
  badToken: 4001,
  authTimeout: 4002,
  rateLimited: 1008,
  tooLarge: 1009,
  restart: 1012,
} as const;

/**
 * One bot connection: authenticates, then carries frames between the socket and its matches. A match may be played
 * by this process (LocalSeats) or by a peer of the cluster (RemoteSeats): the session treats them alike. A match whose
 * process stopped, or handed it over, is found again where it went and resumed for the bot (see Gateway.reseat).
 */
export class BotSession {
  /** Names the connection to the peers whose matches it plays. */
  readonly id = randomBytes(9).toString("base64url");
  private format: Format = "json";
  private bot?: TokenRecord & { kind: PlayerKind };
  /**
   * While a frame's answer waits on something (its token being checked, a token slot taken in the cluster's state,
   * a peer's answer to a join): the frames that came after it, handled once it is answered. A connection's frames
   * are answered in the order they came, which clients count on (a `ping` after a request says it was taken).
   */
  private held?: [ClientFrame, boolean][];
  private text = false;
  /** Whether this connection asked for the numeric face (tensors and legal ids in its turns). */
  private numeric = false;
  /**
   * Who plays behind the token, as its `auth` declared it: recorded with every seat this connection takes, but
   * those a `create` names in its `agents`.
   */
  private agent?: AgentInfo;
  /** The seats this connection holds, by match. */
  private readonly seated = new Map<string, Seats>();
  /**
   * Matches whose seats are being found (where a peer plays them, or where a stopped process's matches went), with
   * the frames about them that came meanwhile: handled in order once they are.
   */
  private readonly finding = new Map<string, ClientFrame[]>();
  /** The `created` this connection is owed for matches being found: they moved before it could go out. */
  private readonly unsent = new Map<string, UnsentCreated>();
  /** Waiting tickets, with the slot each holds. */
  private readonly tickets = new Map<string, Slot>();
  /** Joins by invite that a peer answers, with the slot each holds until it does, and its wait for the answer. */
  private readonly joining = new Map<
    string,
    { slot: Slot; timer: ReturnType<typeof setTimeout>; answered: () => void }
  >();
  private readonly limit: RateLimit;
  private lastRateNotice = -Infinity;
  private closed = false;
  private readonly authTimer: ReturnType<typeof setTimeout>;
  /** What this connection's seats need of it: set once its token is known. */
  private holder!: SeatHolder;

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
      } else {
        this.rateNotice(`at most ${this.limit.rate} frames a second (bursts of ${this.limit.burst})`);
      }
      return;
    }
    if (this.bot && !this.gateway.rates.take(this.bot.id)) {
      return this.rateNotice(
        `at most ${this.gateway.rates.perSecond} frames a second for this token, over all its connections`,
      );
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
    this.dispatch(frame, binary);
  }

  /** One notice a second: answering every refused frame would amplify the flood. */
  private rateNotice(limit: string): void {
    if (performance.now() - this.lastRateNotice <= 1000) return;
    this.lastRateNotice = performance.now();
    this.error("rate_limited", `${limit}; frames are being dropped`);
  }

  private dispatch(frame: ClientFrame, binary: boolean): void {
    if (this.held) return void this.held.push([frame, binary]);
    const pending = this.run(frame, binary);
    if (pending) this.hold(pending);
  }

  /** Handles a frame, its failure included; what it returns is pending while its answer waits. */
  private run(frame: ClientFrame, binary: boolean): Promise<void> | undefined {
    try {
      return this.handle(frame, binary)?.catch((error) => this.reportFailure(error, frame));
    } catch (error) {
      this.reportFailure(error, frame);
    }
  }

  /** Holds the frames that come until `pending` is answered, then handles them in order; returns those held. */
  private hold(pending: Promise<void>): [ClientFrame, boolean][] {
    const held: [ClientFrame, boolean][] = this.held = [];
    void pending.finally(() => {
      this.held = undefined;
      for (let i = 0; i < held.length && !this.closed; i++) {
        const next = this.run(...held[i]);
        // It waits in turn: the rest wait behind it.
        if (next) return void this.hold(next).push(...held.slice(i + 1));
      }
    });
    return held;
  }

  /** Turns the known failures of a request into its error frame; anything else is a bug, logged. */
  private reportFailure(error: unknown, frame: ClientFrame): void {
    if (this.closed) return;
    this.send(refusalFrame(error, frame) ?? internalError(error, frame));
  }

  private handle(frame: ClientFrame, binary: boolean): Promise<void> | void {
    if (frame.type === "ping") {
      return this.send({ type: "pong", ...(frame.id !== undefined ? { id: frame.id } : {}), time: Date.now() });
    }
    if (frame.type === "auth") return this.auth(frame, binary);
    if (!this.bot) return this.error("not_authenticated", "send `auth` with your bot token first");
    // A match being found again takes its frames in order once it is (a `resume`, then the `act`s it asked for).
    if ("match" in frame && frame.type !== "join" && this.finding.has(frame.match)) {
      return void this.finding.get(frame.match)!.push(frame);
    }
    switch (frame.type) {
      case "queue":
        return this.queue(frame);
      case "cancel":
        return this.cancel(frame.ticket);
      case "create":
        return this.create(frame);
      case "join":
        return this.join(frame.match);
      case "resume":
        return this.resume(frame.match);
      case "act":
      case "withdraw": {
        const seats = this.seated.get(frame.match);
        if (!seats) return this.unseated(frame);
        return frame.type === "act" ? seats.act(frame) : seats.withdraw(frame);
      }
    }
  }

  private auth(frame: AuthFrame, binary: boolean): Promise<void> | void {
    if (this.bot) return this.error("already_authenticated", `this connection is already ${this.bot.name}`);
    if (binary) this.format = "msgpack";
    return this.gateway.tokens.verify(frame.token).then(
      async (record) => {
        const matches = record && record.kind !== "admin" ? await this.gateway.slots.matches(record.id) : [];
        this.authenticated(frame, record, matches);
      },
      (error) => {
        console.error("ludus: a token could not be checked:", error);
        this.error("store_unavailable", "the server could not check the token just now; send `auth` again");
      },
    );
  }

  private authenticated(
    { text = false, numeric = false, agent }: AuthFrame,
    record: TokenRecord | undefined,
    matches: readonly string[],
  ): void {
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
    this.holder = {
      tokenId: bot.id,
      text,
      numeric,
      send: (frame) => this.send(frame),
      done: (match, seats) => this.seated.get(match) === seats && this.seated.delete(match),
      moved: (match, seats, unsent) => this.seated.get(match) === seats && this.moved(match, unsent),
    };
    this.gateway.authenticated(this);
    const l = this.gateway.limits;
    this.send({
      type: "welcome",
      server: { name: "ludus", version: VERSION, protocol: PROTOCOL_VERSION },
      bot: { id: bot.id, name: bot.name, kind: bot.kind },
      limits: {
        frameBytes: this.gateway.frameBytes(bot.kind),
        framesPerSecond: l.framesPerSecond,
        burst: l.burst,
        tokenFramesPerSecond: l.tokenFramesPerSecond,
        maxMatches: bot.maxMatches,
      },
      matches: [...matches],
    });
  }

  /** The token this connection authenticated with, once it has. */
  get tokenId(): string | undefined {
    return this.bot?.id;
  }

  /** This connection as the peer playing one of its matches knows it. */
  private get remote(): RemoteConnection {
    return {
      id: this.id,
      epoch: this.gateway.cluster.epoch,
      tokenId: this.bot!.id,
      text: this.text,
      numeric: this.numeric,
    };
  }

  private participant(): Participant {
    return {
      kind: this.bot!.kind,
      name: this.bot!.name,
      tokenId: this.bot!.id,
      ...(this.agent && { agent: this.agent }),
    };
  }

  /** This connection's seats in a match of this process. */
  private local(match: Match): LocalSeats {
    const kept = this.seated.get(match.id);
    if (kept instanceof LocalSeats) return kept;
    kept?.close();
    const seats = new LocalSeats(match, this.holder);
    this.seated.set(match.id, seats);
    return seats;
  }

  /**
   * This connection's seats in `match`, played here or by the peer `owner` (in its life `epoch`, as the directory
   * said; else as this process last saw it).
   */
  private seatsAt(match: string, owner: string, epoch?: number): Seats | undefined {
    if (owner === this.gateway.cluster.node) {
      const live = this.gateway.matches.get(match);
      return live && !live.suspended ? this.local(live) : undefined;
    }
    const life = epoch === undefined ? this.gateway.cluster.lifeOf(owner) : { node: owner, epoch };
    const bus = this.gateway.cluster.bus;
    if (!life || !bus) return undefined;
    this.seated.get(match)?.close();
    const seats = new RemoteSeats(match, life, this.remote, bus);
    this.seated.set(match, seats);
    return seats;
  }

  /** Takes this token's seats of a match the server made for it (a tournament's): `match_start` follows. */
  take(match: string, owner: string, seats: readonly number[]): boolean {
    if (this.closed) return false;
    const taken = this.seatsAt(match, owner);
    taken?.sit(seats);
    return taken !== undefined;
  }

  /**
   * Takes a slot of the token's `maxMatches`, or says it is full. `briefly`: given back at once (a request this
   * process answers now, whose match then holds a slot of its own).
   */
  private async reserve(slot: Slot, briefly = false): Promise<boolean> {
    const held = await this.gateway.slots.reserve(this.bot!.id, slot, this.bot!.maxMatches);
    if (held === true) {
      if (briefly) queueMicrotask(() => this.gateway.slots.release(this.bot!.id, slot));
      return true;
    }
    this.error(
      "too_many_matches",
      `this token may be in ${this.bot!.maxMatches} matches or queues at once; it is in ${held}`,
    );
    return false;
  }

  private async queue({ game, variant, selfPlay = false, group }: QueueFrame): Promise<void> {
    const ticket = this.gateway.matchmaker.ticket({ game, variant, participant: this.participant(), selfPlay, group });
    const slot = ticketSlot(ticket.id, ticket.pool);
    if (!await this.reserve(slot)) return;
    this.tickets.set(ticket.id, slot);
    let fillAt: number | null;
    try {
      ({ fillAt } = await this.gateway.matchmaker.enqueue(ticket, (match, seat, owner) => {
        if (this.tickets.delete(ticket.id)) this.gateway.slots.release(this.bot!.id, slot);
        this.take(match, owner, [seat]);
      }));
    } catch (error) {
      this.tickets.delete(ticket.id);
      this.gateway.slots.release(this.bot!.id, slot);
      throw error;
    }
    if (this.closed) return void this.cancelTicket(ticket.id);
    this.send({ type: "queued", ticket: ticket.id, game: ticket.game, variant: ticket.variant, fillAt });
  }

  private async cancel(ticket: string): Promise<void> {
    if (!this.tickets.has(ticket) || !await this.cancelTicket(ticket)) {
      return this.error("unknown_ticket", `no waiting ticket \`${ticket}\` on this connection`);
    }
    this.send({ type: "cancelled", ticket });
  }

  /** Takes a ticket out of its queue and gives its slot back; false when it was seated meanwhile. */
  private async cancelTicket(ticket: string): Promise<boolean> {
    if (!await this.gateway.matchmaker.cancel(ticket)) return false;
    const slot = this.tickets.get(ticket);
    this.tickets.delete(ticket);
    if (slot) this.gateway.slots.release(this.bot!.id, slot);
    return true;
  }

  private async create(frame: CreateFrame): Promise<void> {
    if (!await this.reserve(pendingSlot(), true)) return;
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
    this.local(match).announce(seats, true);
  }

  private async join(matchOrInvite: string): Promise<void> {
    let found: { match: Match; invited: boolean } | undefined;
    try {
      found = this.gateway.matches.find(matchOrInvite);
    } catch (error) {
      if (!(error instanceof MatchRequestError) || !this.gateway.cluster.bus) throw error;
    }
    if (found && !found.invited) return this.resume(found.match.id);
    if (found) {
      if (found.match.seatsOf(this.bot!.id).length === 0 && !await this.reserve(pendingSlot(), true)) return;
      const { match, seat } = this.gateway.matches.joinByInvite(matchOrInvite, this.participant());
      this.local(match).sit([seat]);
      return;
    }
    // Not here: the invite of a match a peer plays, or a match id (a resume), or nothing at all.
    const owner = await this.gateway.cluster.ownerOfInvite(matchOrInvite);
    if (!owner) return this.resume(matchOrInvite);
    if (!owner.live) throw moving(owner.match);
    const slot = pendingSlot();
    if (!await this.reserve(slot)) return;
    // The peer answers with the seat (`joined`, its frames after it) or the refusal; one that does not answer in
    // time (it stopped meanwhile) is said so, and the slot given back. Later frames wait for the answer.
    await new Promise<void>((answered) => {
      const timer = setTimeout(() => {
        if (this.releaseJoin(matchOrInvite)) {
          this.reportFailure(moving(owner.match), { type: "join", match: matchOrInvite });
        }
      }, JOIN_ANSWER_MS);
      this.joining.set(matchOrInvite, { slot, timer, answered });
      joinRemote(this.gateway.cluster.bus!, owner.node, this.remote, matchOrInvite, this.participant());
    });
  }

  /**
   * Re-attaches this connection to every seat its token holds in a match. A match still waiting for players
   * answers `created` again; one that has ended, even before a restart, answers each seat's `match_end`
   * (from the replay store once the match is no longer in memory). A match a peer plays is resumed there.
   */
  private resume(matchId: string): void {
    const seats = this.seated.get(matchId);
    if (seats) return seats.resume();
    const live = this.gateway.matches.get(matchId);
    if (live && !live.suspended) return this.local(live).resume();
    this.find(matchId);
  }

  /** Finds where a match is played now and resumes it there (see Gateway.reseat); frames about it wait meanwhile. */
  private find(matchId: string): void {
    if (this.closed || this.finding.has(matchId)) return;
    this.finding.set(matchId, []);
    this.gateway.reseat(this, matchId);
  }

  /**
   * Where a match being found is played now (from the directory), or undefined when it is not live anywhere:
   * resumes it there, or answers from the store, then handles the frames that waited for it. False while its
   * owner is gone and no peer has taken it yet.
   */
  found(matchId: string, owner: MatchOwner | undefined): boolean {
    const waiting = this.finding.get(matchId);
    if (!waiting) return true;
    if (owner && !owner.live) return false;
    const seats = owner && this.seatsAt(matchId, owner.node, owner.epoch);
    if (owner && !seats) return false; // claimed here, still being restored
    this.finding.delete(matchId);
    const unsent = this.unsent.get(matchId);
    this.unsent.delete(matchId);
    const then = () => {
      for (const frame of waiting) this.dispatch(frame, this.format === "msgpack");
    };
    if (seats) {
      try {
        // A match still waiting answers the resume with `created` itself; one that started answers `match_start`.
        if (unsent?.started) this.send(unsent.frame);
        seats.resume();
      } catch (error) {
        this.reportFailure(error, { type: "resume", match: matchId });
      }
      then();
      return true;
    }
    this.resumeEnded(matchId, unsent).catch((error) => this.reportFailure(error, { type: "resume", match: matchId }))
      .finally(then);
    return true;
  }

  /** A match being found was not found in time: its frames are refused, saying why (a withdrawal: to send it again). */
  lost(matchId: string): void {
    const waiting = this.finding.get(matchId);
    if (!waiting) return;
    this.finding.delete(matchId);
    this.unsent.delete(matchId);
    this.reportFailure(moving(matchId), { type: "resume", match: matchId });
    for (const frame of waiting) {
      if (frame.type !== "withdraw") continue;
      this.error(
        "server_stopping",
        `your \`withdraw\` from match ${matchId} was not carried out: the match is being moved to another server ` +
          "process and was not found in time; `resume` it, then send the `withdraw` again",
        { match: matchId },
      );
    }
  }

  /** Matches being found, for the gateway's next look at the directory. */
  get lookingFor(): readonly string[] {
    return [...this.finding.keys()];
  }

  /** Matches this connection holds on a peer, with the life it was attached to there. */
  remoteSeats(): RemoteSeats[] {
    return [...this.seated.values()].filter((s): s is RemoteSeats => s instanceof RemoteSeats);
  }

  /**
   * A match of this connection went elsewhere: its seats are found again there, and the withdrawals its owner never
   * settled are sent there first, ahead of what came meanwhile.
   */
  moved(matchId: string, unsent?: UnsentCreated): void {
    const seats = this.seated.get(matchId);
    if (!seats) return;
    this.seated.delete(matchId);
    if (unsent && !this.closed) this.unsent.set(matchId, unsent);
    this.find(matchId);
    if (seats instanceof RemoteSeats) this.finding.get(matchId)?.unshift(...seats.unsettledWithdrawals);
  }

  /** What `from`, the peer playing one of this connection's matches, says. */
  news(news: SeatsNews, from: string): void {
    if ("frame" in news) return this.send(news.frame);
    if ("done" in news) {
      if (this.seated.get(news.done) instanceof RemoteSeats) this.seated.delete(news.done);
    } else if ("moved" in news) this.moved(news.moved);
    else if ("withdrew" in news) {
      const seats = this.seated.get(news.withdrew);
      if (seats instanceof RemoteSeats) seats.settled();
    } else if ("joined" in news) {
      this.releaseJoin(news.invite);
      // Its seat is taken there already: only the connection's side is made.
      if (!this.closed) this.seatsAt(news.joined, from, news.epoch);
    } else this.releaseJoin(news.refused);
  }

  /** A join a peer answered (it took a seat there, or refused) or never will: its slot is let go. False: none. */
  private releaseJoin(invite: string): boolean {
    const waiting = this.joining.get(invite);
    if (!waiting) return false;
    this.joining.delete(invite);
    clearTimeout(waiting.timer);
    this.gateway.slots.release(this.bot!.id, waiting.slot);
    waiting.answered();
    return true;
  }

  /**
   * A resume of a match that is not live anywhere: its `match_end` from the store, if the token sat in it. A match
   * whose `created` this connection is owed (`unsent`) gets it first, or, when its record never became durable,
   * the `create` is refused: the process that made it lost its lease first, and the match is gone with it.
   */
  private async resumeEnded(matchId: string, unsent?: UnsentCreated): Promise<void> {
    const record = await this.gateway.matches.store?.match(matchId);
    if (unsent && !record) {
      return this.send({
        type: "error",
        code: "server_stopping",
        message: "your `create` was not made: the server process that took it lost its place in the cluster " +
          "(its lease lapsed) before the match was stored; send `create` again",
      });
    }
    if (unsent) this.send(unsent.frame);
    if (!record || record.endedAt === null) {
      throw new MatchRequestError("unknown_match", `no live match or invite \`${matchId}\``);
    }
    const seats = record.seats.flatMap((s, seat) => (s?.tokenId === this.bot!.id ? [seat] : []));
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

  /** An `act` or `withdraw` for a match this connection holds no seat of: why not, as the protocol says. */
  private async unseated(frame: ClientFrame & { type: "act" | "withdraw" }): Promise<void> {
    let over: boolean;
    try {
      over = this.gateway.matches.isOver(frame.match);
    } catch (error) {
      // Not known here: in a cluster it may be a peer's, or one that has ended.
      if (!this.gateway.cluster.bus || !(error instanceof MatchRequestError)) throw error;
      const record = await this.gateway.matches.store?.match(frame.match);
      if (!record) throw error;
      over = record.endedAt !== null;
    }
    if (frame.type === "withdraw" && over) {
      throw new MatchRequestError("match_over", `match ${frame.match} is over: there is nothing to withdraw from`);
    }
    throw new MatchRequestError(
      "not_seated",
      `this connection has no seat in match ${frame.match}; \`join\` or \`resume\` first`,
    );
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
    for (const ticket of [...this.tickets.keys()]) void this.cancelTicket(ticket).catch(() => {});
    for (const invite of [...this.joining.keys()]) this.releaseJoin(invite);
    for (const seats of this.seated.values()) seats.close();
    this.seated.clear();
    this.finding.clear();
    this.gateway.forget(this);
  }
}

/** Sampling keys that name a credential (`api_key`, `token`, `authorization`, …): never part of a public record. */
const CREDENTIAL_KEY =
  /(^|[_-])(api[_-]?key|key|token|secret|password|passwd|auth|authorization|bearer|credentials?)$/i;
/** Values that are credentials whatever their key: a bearer header, an OpenAI-style secret key. */
const CREDENTIAL_VALUE = /^(bearer\s|sk-)/i;

/**
 * An agent as recorded (`auth.agent`, each of `create.agents`), which is public (match records, exports, the
 * players list): its endpoint without credentials, query or fragment (an API key in a URL stays out), and its
 * sampling parameters without those that hold a credential.
 */
function recordedAgent(agent: AgentInfo): AgentInfo {
  const sampling = agent.sampling && Object.fromEntries(
    Object.entries(agent.sampling).filter(([key, value]) =>
      !CREDENTIAL_KEY.test(key) && !(typeof value === "string" && CREDENTIAL_VALUE.test(value))
    ),
  );
  if (agent.endpoint === undefined) return sampling ? { ...agent, sampling } : agent;
  let endpoint = agent.endpoint;
  try {
    const url = new URL(agent.endpoint);
    endpoint = `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    endpoint = agent.endpoint.split(/[?#]/)[0].replace(/\/\/[^/@]*@/, "//");
  }
  return { ...agent, endpoint, ...(sampling && { sampling }) };
}
