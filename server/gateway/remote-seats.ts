import type { NodeLife } from "../../db/nodes.ts";
import type { ActFrame, ClientFrame, ServerFrame, WithdrawFrame } from "../../protocol/frames.ts";
import type { Bus } from "../cluster/bus.ts";
import { type LiveMatches, MatchRequestError } from "../match/live-matches.ts";
import type { Participant } from "../match/match.ts";
import { internalError, LocalSeats, refusalFrame, type SeatHolder, type Seats } from "./seats.ts";

/**
 * A bot plays a match another process of the cluster plays as if it were this one's: the connection stays where it
 * is (the edge), and its requests about the match go to the match's owner over the cluster's bus, where a LocalSeats
 * serves them; the frames the match sends come back the same way, in order. The socket tier is split from the game
 * authority as lila-ws splits it from lila. Every message between two nodes keeps its order, so an `act` reaches the
 * match after the `sit` or `resume` that attached its seat, and a match's `match_end` before the word that it is done.
 */

/** A connection on a peer, as the process playing its match knows it. */
export interface RemoteConnection {
  readonly id: string;
  /** The edge's life: a later life of that node has none of this one's connections. */
  readonly epoch: number;
  readonly tokenId: string;
  readonly text: boolean;
  readonly numeric: boolean;
}

/** What an edge asks of a match's owner (`seats` messages, handled in the order sent). */
export type SeatsOp =
  | { readonly op: "sit"; readonly conn: RemoteConnection; readonly match: string; readonly seats: readonly number[] }
  | { readonly op: "resume"; readonly conn: RemoteConnection; readonly match: string }
  | {
    readonly op: "join";
    readonly conn: RemoteConnection;
    readonly invite: string;
    readonly participant: Participant;
  }
  | { readonly op: "act"; readonly conn: string; readonly frame: ActFrame }
  | { readonly op: "withdraw"; readonly conn: string; readonly frame: WithdrawFrame }
  | { readonly op: "close"; readonly conn: string; readonly match: string };

/** What an owner tells an edge about one of its connections (`seats.to` messages, in order with the frames). */
export type SeatsNews =
  /** A frame for the connection's socket. */
  | { readonly c: string; readonly frame: ServerFrame }
  /** The match ended and its last frames were sent: forget it. */
  | { readonly c: string; readonly done: string }
  /** The match is not played here (any more): find where it is now. */
  | { readonly c: string; readonly moved: string }
  /**
   * A `join` by this invite took a seat of this match (its frames follow; `epoch`: the life of the process playing
   * it), or was refused (its error went before).
   */
  | { readonly c: string; readonly joined: string; readonly invite: string; readonly epoch: number }
  | { readonly c: string; readonly refused: string }
  /**
   * The oldest `withdraw` the connection sent about this match is settled: carried out and durable, or refused (its
   * error went before). One the owner never settles (it died, or handed the match over first) is sent again where the
   * match is found.
   */
  | { readonly c: string; readonly withdrew: string };

/** The edge's side: a connection's seats in a match a peer plays. */
export class RemoteSeats implements Seats {
  /** The `withdraw`s sent to the owner that it has not settled yet, oldest first. */
  private readonly unsettled: WithdrawFrame[] = [];

  constructor(
    readonly match: string,
    /** The life of the node playing it, when these seats were attached there. */
    readonly owner: NodeLife,
    private readonly conn: RemoteConnection,
    private readonly bus: Bus,
  ) {}

  private post(op: SeatsOp): void {
    this.bus.send(this.owner.node, "seats", op);
  }

  sit(seats: readonly number[]): void {
    this.post({ op: "sit", conn: this.conn, match: this.match, seats });
  }

  resume(): void {
    this.post({ op: "resume", conn: this.conn, match: this.match });
  }

  act(frame: ActFrame): void {
    this.post({ op: "act", conn: this.conn.id, frame });
  }

  withdraw(frame: WithdrawFrame): void {
    this.unsettled.push(frame);
    this.post({ op: "withdraw", conn: this.conn.id, frame });
  }

  /** The owner settled the oldest `withdraw` it was sent. */
  settled(): void {
    this.unsettled.shift();
  }

  /** The `withdraw`s the owner never settled: the match moved first, and they are to be sent where it went. */
  get unsettledWithdrawals(): readonly WithdrawFrame[] {
    return this.unsettled;
  }

  close(): void {
    this.post({ op: "close", conn: this.conn.id, match: this.match });
  }
}

/** Asks the owner of the match an invite is for to take its first open seat for the connection. */
export function joinRemote(
  bus: Bus,
  owner: string,
  conn: RemoteConnection,
  invite: string,
  participant: Participant,
): void {
  bus.send(owner, "seats", { op: "join", conn, invite, participant } satisfies SeatsOp);
}

interface Held {
  readonly conn: RemoteConnection;
  readonly seats: Map<string, LocalSeats>;
}

/** The owner's side: the seats that connections on peers hold in this process's matches. */
export class SeatsHost {
  /** By edge node, then connection id. */
  private readonly edges = new Map<string, Map<string, Held>>();

  constructor(private readonly bus: Bus, private readonly matches: LiveMatches, private readonly epoch: () => number) {
    bus.on<SeatsOp>("seats", (op, from) => this.handle(op, from));
  }

  private tell(node: string, news: SeatsNews): void {
    this.bus.send(node, "seats.to", news);
  }

  private held(from: string, conn: RemoteConnection): Held {
    let conns = this.edges.get(from);
    if (!conns) this.edges.set(from, conns = new Map());
    let held = conns.get(conn.id);
    if (!held) conns.set(conn.id, held = { conn, seats: new Map() });
    return held;
  }

  private holder(from: string, held: Held): SeatHolder {
    const c = held.conn.id;
    const forget = (match: string, seats: unknown) => {
      if (held.seats.get(match) !== seats) return false;
      held.seats.delete(match);
      if (held.seats.size === 0 && this.edges.get(from)?.get(c) === held) this.edges.get(from)!.delete(c);
      return true;
    };
    return {
      tokenId: held.conn.tokenId,
      text: held.conn.text,
      numeric: held.conn.numeric,
      send: (frame) => this.tell(from, { c, frame }),
      done: (match, seats) => forget(match, seats) && this.tell(from, { c, done: match }),
      moved: (match, seats) => forget(match, seats) && this.tell(from, { c, moved: match }),
    };
  }

  /** The connection's seats in `match`, made if need be; undefined when the match is not played here. */
  private seats(from: string, conn: RemoteConnection, match: string): LocalSeats | undefined {
    const kept = this.edges.get(from)?.get(conn.id)?.seats.get(match);
    if (kept) return kept;
    const live = this.matches.get(match);
    if (!live || live.suspended) return undefined;
    const held = this.held(from, conn);
    const seats = new LocalSeats(live, this.holder(from, held));
    held.seats.set(match, seats);
    return seats;
  }

  private handle(op: SeatsOp, from: string): void {
    const frame = clientFrame(op);
    const conn = typeof op.conn === "string" ? this.edges.get(from)?.get(op.conn)?.conn : op.conn;
    const c = typeof op.conn === "string" ? op.conn : op.conn.id;
    try {
      switch (op.op) {
        case "sit":
        case "resume": {
          const seats = this.seats(from, op.conn, op.match);
          if (!seats) return this.tell(from, { c, moved: op.match });
          return op.op === "sit" ? seats.sit(op.seats) : seats.resume();
        }
        case "join":
          return this.join(from, op.conn, op.invite, op.participant);
        case "act":
        case "withdraw": {
          const seats = conn && this.edges.get(from)?.get(c)?.seats.get(op.frame.match);
          if (!seats) return this.tell(from, { c, moved: op.frame.match });
          if (op.op === "act") return seats.act(op.frame);
          return this.withdraw(from, c, seats, op.frame);
        }
        case "close": {
          const held = this.edges.get(from)?.get(c);
          const seats = held?.seats.get(op.match);
          if (!seats) return;
          held!.seats.delete(op.match);
          if (held!.seats.size === 0) this.edges.get(from)!.delete(c);
          return seats.close();
        }
      }
    } catch (error) {
      this.tell(from, { c, frame: refusalFrame(error, frame) ?? internalError(error, frame) });
    }
  }

  /**
   * A withdrawal, settled to the edge once what it did is durable (its refusal, if any, goes before): a match handed
   * over before then never settles it, and the edge sends it again where the match went.
   */
  private withdraw(from: string, c: string, seats: LocalSeats, frame: WithdrawFrame): void {
    const settled = () => this.tell(from, { c, withdrew: frame.match });
    const live = this.matches.get(frame.match);
    try {
      seats.withdraw(frame);
    } catch (error) {
      this.tell(from, { c, frame: refusalFrame(error, frame) ?? internalError(error, frame) });
      return settled();
    }
    if (live) live.deliver(settled);
    else settled();
  }

  private join(from: string, conn: RemoteConnection, invite: string, participant: Participant): void {
    try {
      const { match, invited } = this.matches.find(invite);
      if (match.suspended) throw new MatchRequestError("unknown_match", `no live match or invite \`${invite}\``);
      const joined = () => {
        this.tell(from, { c: conn.id, joined: match.id, invite, epoch: this.epoch() });
        return this.seats(from, conn, match.id)!;
      };
      // A match id rather than an invite: a resume, as on the bot's own process.
      if (!invited) return joined().resume();
      const { seat } = this.matches.joinByInvite(invite, participant);
      joined().sit([seat]);
    } catch (error) {
      const frame: ClientFrame = { type: "join", match: invite };
      this.tell(from, { c: conn.id, frame: refusalFrame(error, frame) ?? internalError(error, frame) });
      this.tell(from, { c: conn.id, refused: invite });
    }
  }

  /**
   * Lets go of the seats held by `node`'s connections of lives before `epoch` (all of them without one): that life
   * of the node is over. Each seat is held for its player to resume, as after a drop; a connection that outlived its
   * node's life (the node joined again after its lease lapsed) is told to find its match again, as its current life.
   */
  dropNode(node: string, epoch?: number): void {
    const conns = this.edges.get(node);
    if (!conns) return;
    for (const [id, held] of conns) {
      if (epoch !== undefined && held.conn.epoch >= epoch) continue;
      conns.delete(id);
      for (const [match, seats] of held.seats) {
        seats.close();
        if (epoch !== undefined) this.tell(node, { c: id, moved: match });
      }
    }
    if (conns.size === 0) this.edges.delete(node);
  }

  /** Connections on peers holding seats here (for /health). */
  get connections(): number {
    let n = 0;
    for (const conns of this.edges.values()) n += conns.size;
    return n;
  }
}

/** The client frame an op stands for, for the error frames its refusals become. */
function clientFrame(op: SeatsOp): ClientFrame {
  switch (op.op) {
    case "sit":
    case "resume":
      return { type: "resume", match: op.match };
    case "join":
      return { type: "join", match: op.invite };
    case "act":
    case "withdraw":
      return op.frame;
    case "close":
      return { type: "resume", match: op.match };
  }
}
