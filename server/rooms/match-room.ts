import { createHash } from "node:crypto";
import { type Client, CloseCode, ErrorCode, Room, ServerError } from "@colyseus/core";
import { z } from "zod";
import { decodeRoomAct, FrameError } from "../gateway/client-frames.ts";
import type { ErrorFrame } from "../../protocol/frames.ts";
import type { PrivateMatchRequest } from "../match/live-matches.ts";
import { type Match, MatchRequestError, type SeatLink } from "../match/match.ts";
import { MatchState, type MatchStateInstance, syncPublicState } from "./public-state.ts";
import type { RoomContext } from "./room-context.ts";

/**
 * How a browser enters a match room (`client.joinOrCreate(gameId, options)`); without `matchId` the
 * create request's fields open a private match for the room's game.
 */
export interface MatchRoomOptions extends Partial<Omit<PrivateMatchRequest, "game">> {
  /** The live match to mirror; without it, a new private match is created with the joining person in `seat`. */
  readonly matchId?: string;
  /** A seat the queue reserved for this client. */
  readonly ticket?: string;
  /** A private match's invite: the first open seat goes to the person joining with it. */
  readonly invite?: string;
  readonly spectate?: boolean;
  readonly name?: string;
  /**
   * A secret the page keeps for its seat. Given with a way into a seat (creating, a ticket, an invite), it keys the
   * seat; given alone, it takes back the seat it keys: after a restart too, when a reconnection token is of no use.
   */
  readonly seatKey?: string;
}

/**
 * Set by the server on the request that creates a private match, never by a client (BrowserRooms strips
 * them): the creator's seat goes only to the seat reservation of that very request, and the match counts
 * against the address that asked for it.
 */
export interface CreatorOptions {
  readonly creatorKey?: string;
  readonly creatorAddress?: string;
}

const id = z.string().min(1).max(128);
/** The options a page may send; anything else is refused with the field named. */
export const ROOM_OPTIONS = z.strictObject({
  matchId: id.optional(),
  ticket: id.optional(),
  invite: id.optional(),
  spectate: z.boolean().optional(),
  name: z.string().max(200).optional(),
  variant: id.optional(),
  config: z.record(z.string(), z.unknown()).optional(),
  seat: z.number().int().min(0).max(1023).optional(),
  opponents: z.record(z.string(), z.string().max(128)).optional(),
  seed: id.optional(),
  seatKey: z.string().min(16).max(128).optional(),
});

/** What the match keeps of a seat's key: its SHA-256, so the store never holds the secret itself. */
const keyHash = (seatKey: string): string => createHash("sha256").update(seatKey).digest("hex");

/** Messages a client may send a match room each second; a flood closes its connection (Colyseus counts). */
const MESSAGES_PER_SECOND = 20;

interface Viewer {
  readonly seat: number | null;
  readonly link: SeatLink;
}

/**
 * One room per live match that browsers take part in, one room type per registered game. The Match
 * referees; the room only mirrors its public state into schema and carries a seat's frames as room
 * messages of the same names and shapes as the bot protocol (`match_start`, `turn`, `ack`, `error`,
 * `match_end`; the client sends `act`). A page also gets `view` {observation} after every step, so a
 * person's table shows what the opponents did while it is not their turn. Everything a page sees waits
 * until the match's log is durable, as the bots' frames do.
 */
export class MatchRoom extends Room<{ state: MatchStateInstance }> {
  private match!: Match;
  private context!: RoomContext;
  private readonly viewers = new Map<string, Viewer>();
  private unsubscribe?: () => void;
  /** A person who creates a private match takes this seat on joining, with the creating request's key. */
  private creatorSeat: number | null = null;
  private creatorKey?: string;
  /** Whether this is its match's room on this process (see RoomContext.roomOpened). */
  private counted = false;

  override onCreate(options: MatchRoomOptions & CreatorOptions & { context: RoomContext }): void {
    this.context = options.context;
    this.maxMessagesPerSecond = MESSAGES_PER_SECOND;
    this.match = options.matchId !== undefined ? this.context.liveMatch(options.matchId) : this.createPrivate(options);
    // Two processes may ask this one for the room of one match at once: the second asks in vain, and joins the first.
    if (!this.context.roomOpened(this.match.id)) throw new Error(`match ${this.match.id} has its room already`);
    this.counted = true;
    this.roomId = this.match.id;
    this.setMetadata({ match: this.match.id });
    this.state = new MatchState();
    syncPublicState(this.state, this.match);
    this.unsubscribe = this.match.subscribe((event) => {
      // Another process plays the match now (this one lost its lease): its pages find it there.
      if (event.kind === "handed_over") return void this.disconnect();
      this.match.deliver(() => {
        syncPublicState(this.state, this.match);
        if (event.kind === "step" || event.kind === "end") this.sendViews();
      });
    });
    this.onMessage("act", (client, message: unknown) => this.act(client, message));
    this.onMessage("*", (client, type) =>
      this.sendError(client, {
        code: "unknown_type",
        message: `a match room takes only \`act\` messages; got \`${String(type).slice(0, 64)}\``,
      }));
  }

  /** The person creating the room takes their seat on joining, when their name is known. */
  private createPrivate(options: MatchRoomOptions & CreatorOptions): Match {
    const { variant, config, seat, opponents, seed } = options;
    const created = this.context.matches.createPrivate({ game: this.roomName, variant, config, seat, opponents, seed });
    this.creatorSeat = created.seats[0];
    this.creatorKey = options.creatorKey;
    if (options.creatorAddress !== undefined) this.context.createdBy(options.creatorAddress, created.match);
    return created.match;
  }

  override async onJoin(client: Client, options: MatchRoomOptions & CreatorOptions = {}): Promise<void> {
    const link: SeatLink = { send: (frame) => client.send(frame.type, frame), text: false };
    const name = (options.name ?? "").trim().slice(0, 40) || "guest";
    let seat: number | null = null;
    if (this.creatorSeat !== null && options.creatorKey !== undefined && options.creatorKey === this.creatorKey) {
      const mine = seat = this.creatorSeat;
      this.creatorSeat = null;
      this.match.claim(seat, { kind: "human", name });
      if (options.seatKey !== undefined) this.match.keySeat(seat, keyHash(options.seatKey));
      this.viewers.set(client.sessionId, { seat, link });
      // `created` once the record is durable, and the seat taken only then, so its `match_start` follows.
      const created = {
        type: "created",
        match: this.match.id,
        invite: this.match.invite,
        seat,
        seats: [seat],
        conduct: this.match.conduct,
      };
      return this.match.deliver(() => {
        client.send("created", created);
        if (this.viewers.get(client.sessionId)?.link === link) this.match.connect(mine, link);
      });
    } else if (options.ticket !== undefined) {
      seat = await this.context.redeem(options.ticket, this.match.id);
    } else if (options.invite !== undefined) {
      if (this.context.matches.find(options.invite).match !== this.match) {
        throw new Error(`invite \`${options.invite}\` is not for match ${this.match.id}`);
      }
      seat = this.context.matches.joinByInvite(options.invite, { kind: "human", name }).seat;
    } else if (options.seatKey !== undefined && !options.spectate) {
      return this.takeBack(client, link, options.seatKey);
    } else if (!options.spectate) {
      throw new Error(
        "join with a seat `ticket` (from the queue), an `invite`, a `seatKey` of yours, or with `spectate: true`",
      );
    }
    if (seat !== null && options.seatKey !== undefined) this.match.keySeat(seat, keyHash(options.seatKey));
    this.viewers.set(client.sessionId, { seat, link });
    if (seat === null) this.match.watch(link);
    else this.match.connect(seat, link);
  }

  /**
   * The seat a page's key opens, taken back as a resume (a full snapshot and the open turn). A page of the seat still
   * here is told the seat went elsewhere, as when a reconnection token is used from another tab.
   */
  private takeBack(client: Client, link: SeatLink, seatKey: string): void {
    const seat = this.match.seatWithKey(keyHash(seatKey));
    // The page is told in Colyseus's numeric codes: a refusal it stops at, or one to try again shortly.
    if (seat === undefined) {
      throw new ServerError(ErrorCode.AUTH_FAILED, `that key opens no seat of match ${this.match.id}`);
    }
    try {
      this.match.connect(seat, link);
    } catch (error) {
      if (!(error instanceof MatchRequestError)) throw error;
      const code = error.code === "server_stopping" ? CloseCode.MAY_TRY_RECONNECT : ErrorCode.AUTH_FAILED;
      throw new ServerError(code, error.message);
    }
    this.viewers.set(client.sessionId, { seat, link });
    for (const other of this.clients) {
      if (other !== client && this.viewers.get(other.sessionId)?.seat === seat) {
        other.leave(CloseCode.WITH_ERROR, "your seat was taken over by another page");
      }
    }
  }

  override onDrop(client: Client): void {
    const viewer = this.viewers.get(client.sessionId);
    if (viewer?.seat === undefined || viewer.seat === null || this.match.ended) return;
    this.match.disconnect(viewer.seat, viewer.link);
    // A room disposed while the browser was away (the server stopping) refuses the wait: nothing to hold then.
    this.allowReconnection(client, Math.max(1, Math.floor(this.match.conduct.holdMs / 1000))).catch(() => {});
  }

  override onReconnect(client: Client): void {
    const viewer = this.viewers.get(client.sessionId);
    if (viewer?.seat === undefined || viewer.seat === null) return;
    const link: SeatLink = { send: (frame) => client.send(frame.type, frame), text: false };
    this.viewers.set(client.sessionId, { seat: viewer.seat, link });
    try {
      this.match.connect(viewer.seat, link); // a full snapshot: match_start (resumed) and the open turn
    } catch (error) {
      // Back a moment after the match's hold released the seat: an expected end, said to the page, not logged.
      if (!(error instanceof MatchRequestError)) throw error;
      this.sendError(client, { code: error.code, message: error.message });
      client.leave(4000, error.message.slice(0, 120));
    }
  }

  override onLeave(client: Client): void {
    const viewer = this.viewers.get(client.sessionId);
    this.viewers.delete(client.sessionId);
    if (viewer && viewer.seat !== null) this.match.disconnect(viewer.seat, viewer.link);
  }

  override onDispose(): void {
    this.unsubscribe?.();
    if (this.counted) this.context.roomClosed(this.match.id);
    // The creator never came (a closed tab, a reservation never used): nobody can take that seat now.
    if (this.creatorSeat !== null && !this.match.started) this.match.abort();
  }

  /** Each seated page's own view of the match now. */
  private sendViews(): void {
    for (const client of this.clients) {
      const seat = this.viewers.get(client.sessionId)?.seat;
      if (seat === undefined || seat === null) continue;
      client.send("view", { type: "view", match: this.match.id, seat, observation: this.match.observation(seat) });
    }
  }

  private act(client: Client, message: unknown): void {
    const viewer = this.viewers.get(client.sessionId);
    if (!viewer) return;
    if (viewer.seat === null) {
      return this.sendError(client, { code: "spectator", message: "spectators watch; they cannot act" });
    }
    let act;
    try {
      act = decodeRoomAct(message);
    } catch (error) {
      if (!(error instanceof FrameError)) throw error;
      return this.sendError(client, { code: error.code, message: error.message });
    }
    if (act.actionId !== undefined) this.match.actById(viewer.seat, act.seq, act.actionId, act.meta, viewer.link);
    else this.match.act(viewer.seat, act.seq, act.action, act.meta, viewer.link);
  }

  private sendError(client: Client, error: Pick<ErrorFrame, "code" | "message">): void {
    client.send("error", { type: "error", match: this.match.id, ...error });
  }
}
