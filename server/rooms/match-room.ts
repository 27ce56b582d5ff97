import { type Client, Room } from "@colyseus/core";
import type { ErrorFrame } from "../../protocol/frames.ts";
import type { PrivateMatchRequest } from "../match/live-matches.ts";
import type { Match, SeatLink } from "../match/match.ts";
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
}

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
  /** A person who creates a private match takes this seat on joining. */
  private creatorSeat: number | null = null;

  override onCreate(options: MatchRoomOptions & { context: RoomContext }): void {
    this.context = options.context;
    this.match = options.matchId !== undefined ? this.context.liveMatch(options.matchId) : this.createPrivate(options);
    this.roomId = this.match.id;
    this.setMetadata({ match: this.match.id });
    this.state = new MatchState();
    syncPublicState(this.state, this.match);
    this.unsubscribe = this.match.subscribe((event) =>
      this.match.deliver(() => {
        syncPublicState(this.state, this.match);
        if (event.kind === "step" || event.kind === "end") this.sendViews();
      })
    );
    this.onMessage("act", (client, message: unknown) => this.act(client, message));
    this.onMessage("*", (client, type) =>
      this.sendError(client, {
        code: "unknown_type",
        message: `a match room takes only \`act\` messages; got \`${String(type)}\``,
      }));
  }

  /** The person creating the room takes their seat on joining, when their name is known. */
  private createPrivate(options: MatchRoomOptions): Match {
    const { variant, config, seat, opponents } = options;
    const created = this.context.matches.createPrivate({ game: this.roomName, variant, config, seat, opponents });
    this.creatorSeat = created.seat;
    return created.match;
  }

  override onJoin(client: Client, options: MatchRoomOptions = {}): void {
    const link: SeatLink = { send: (frame) => client.send(frame.type, frame), text: false };
    const name = (options.name ?? "").trim().slice(0, 40) || "guest";
    let seat: number | null = null;
    if (this.creatorSeat !== null && !options.spectate) {
      seat = this.creatorSeat;
      this.creatorSeat = null;
      this.match.claim(seat, { kind: "human", name });
      client.send("created", {
        type: "created",
        match: this.match.id,
        invite: this.context.matches.inviteOf(this.match),
        seat,
      });
    } else if (options.ticket !== undefined) {
      seat = this.context.redeem(options.ticket, this.match.id);
    } else if (options.invite !== undefined) {
      if (this.context.matches.find(options.invite).match !== this.match) {
        throw new Error(`invite \`${options.invite}\` is not for match ${this.match.id}`);
      }
      seat = this.context.matches.joinByInvite(options.invite, { kind: "human", name }).seat;
    } else if (!options.spectate) {
      throw new Error("join with a seat `ticket` (from the queue), an `invite`, or with `spectate: true`");
    }
    this.viewers.set(client.sessionId, { seat, link });
    if (seat === null) this.match.watch(link);
    else this.match.connect(seat, link);
  }

  override onDrop(client: Client): void {
    const viewer = this.viewers.get(client.sessionId);
    if (viewer?.seat === undefined || viewer.seat === null || this.match.ended) return;
    this.match.disconnect(viewer.seat, viewer.link);
    this.allowReconnection(client, Math.ceil(this.match.conduct.holdMs / 1000));
  }

  override onReconnect(client: Client): void {
    const viewer = this.viewers.get(client.sessionId);
    if (viewer?.seat === undefined || viewer.seat === null) return;
    const link: SeatLink = { send: (frame) => client.send(frame.type, frame), text: false };
    this.viewers.set(client.sessionId, { seat: viewer.seat, link });
    this.match.connect(viewer.seat, link); // a full snapshot: match_start (resumed) and the open turn
  }

  override onLeave(client: Client): void {
    const viewer = this.viewers.get(client.sessionId);
    this.viewers.delete(client.sessionId);
    if (viewer && viewer.seat !== null) this.match.disconnect(viewer.seat, viewer.link);
  }

  override onDispose(): void {
    this.unsubscribe?.();
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
    const m = (typeof message === "object" && message !== null ? message : {}) as Record<string, unknown>;
    if (!viewer) return;
    if (viewer.seat === null) {
      return this.sendError(client, { code: "spectator", message: "spectators watch; they cannot act" });
    }
    const meta = typeof m.meta === "object" && m.meta !== null ? m.meta as Record<string, unknown> : undefined;
    this.match.act(viewer.seat, m.seq, m.action, meta, viewer.link);
  }

  private sendError(client: Client, error: Pick<ErrorFrame, "code" | "message">): void {
    client.send("error", { type: "error", match: this.match.id, ...error });
  }
}
