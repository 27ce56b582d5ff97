import type {
  ActFrame,
  ClientFrame,
  CreatedFrame,
  ErrorCode,
  ServerFrame,
  WithdrawFrame,
} from "../../protocol/frames.ts";
import { MatchRequestError, requestRefusal } from "../match/live-matches.ts";
import type { Match, SeatLink } from "../match/match.ts";

/**
 * A bot connection's seats in one match, wherever the connection is: the same object serves a connection on this
 * process (gateway.ts) and one on a peer whose frames the cluster's bus carries (remote-seats.ts).
 */

/** What a connection's seats need of it: whose they are, what its turns carry, where its frames go. */
export interface SeatHolder {
  readonly tokenId: string;
  readonly text: boolean;
  readonly numeric: boolean;
  send(frame: ServerFrame): void;
  /** The match ended and its last frames went out: the connection forgets it. */
  done(match: string, seats: Seats): void;
  /**
   * Another process took the match over (this one lost its lease): its seats must be found again there. `unsent` is
   * a `created` that was waiting for the match's record to be durable (a `create`'s answer): the connection owes it.
   */
  moved(match: string, seats: Seats, unsent?: UnsentCreated): void;
}

/** The answer to a `create` that its process could not give before the match moved; `started`: no open seat was left. */
export interface UnsentCreated {
  readonly frame: CreatedFrame;
  readonly started: boolean;
}

/** A connection's seats in one match, this process's or a peer's: what a session does with them. */
export interface Seats {
  readonly match: string;
  /** Attaches `seats` (a first join, a queue's pairing, a tournament's seat, several seats of a self-play). */
  sit(seats: readonly number[]): void;
  /**
   * Re-attaches every seat the token holds: `created` again for a match still waiting, `match_start` (resumed)
   * and the open turns for a live one, each seat's `match_end` for one that has ended.
   */
  resume(): void;
  act(frame: ActFrame): void;
  withdraw(frame: WithdrawFrame): void;
  /** The connection closed: its seats are let go (each held for its player to resume). */
  close(): void;
}

/**
 * The error frame for a known refusal of a client's request (a bad game, a seat that cannot be had, a store that
 * cannot take the match), naming the match and the act's `seq` when it is about them; undefined for anything else,
 * which is a bug.
 */
export function refusalFrame(error: unknown, frame: ClientFrame): ServerFrame | undefined {
  const refusal = requestRefusal(error);
  if (!refusal) return undefined;
  // A refusal about one match names it (`not_seated` on a resume, say), and an act's its `seq`; a store refusal is
  // about none.
  const about = error instanceof MatchRequestError && "match" in frame
    ? { match: frame.match, ...(frame.type === "act" ? { seq: frame.seq } : {}) }
    : {};
  return { type: "error", code: refusal.code as ErrorCode, message: refusal.message, ...about };
}

/** The frame for a failure nobody expected (a bug; logged), sent so the client knows its frame was not handled. */
export function internalError(error: unknown, frame: ClientFrame): ServerFrame {
  console.error("ludus: gateway frame failed:", error);
  return {
    type: "error",
    code: "internal_error",
    message: `the server failed to handle this \`${frame.type}\` frame; the connection stays open`,
  };
}

/** A connection's seats in a match this process plays. */
export class LocalSeats implements Seats {
  private readonly links = new Map<number, SeatLink>();
  private readonly unsubscribe: () => void;
  /** Set once the connection let go (closed, or the match moved): nothing is attached from then on. */
  private closed = false;
  /** A `created` waiting for the match's record to be durable. */
  private unsent?: CreatedFrame;

  constructor(private readonly live: Match, private readonly holder: SeatHolder) {
    // A long-lived connection plays thousands of matches: each is forgotten once its `match_end` is out (not
    // before: frames still waiting for the journal, a resent act's ack among them, come first).
    this.unsubscribe = live.subscribe((event) => {
      if (event.kind === "handed_over") {
        this.detach();
        this.links.clear();
        const unsent = this.unsent && { frame: this.unsent, started: live.started };
        this.unsent = undefined;
        holder.moved(live.id, this, unsent);
      } else if (event.kind === "end") live.deliver(() => holder.done(live.id, this));
    });
  }

  get match(): string {
    return this.live.id;
  }

  sit(seats: readonly number[]): void {
    if (this.closed) return;
    for (const seat of seats) {
      const link: SeatLink = {
        send: (frame) => this.holder.send(frame),
        text: this.holder.text,
        numeric: this.holder.numeric,
      };
      this.links.set(seat, link);
      this.live.connect(seat, link);
    }
  }

  resume(): void {
    const match = this.live;
    const seats = match.seatsOf(this.holder.tokenId);
    if (seats.length === 0) {
      throw new MatchRequestError("not_seated", `this token has no seat in match ${match.id}`);
    }
    const held = seats.filter((seat) => match.resumable(seat));
    if (held.length === 0 && !match.ended) {
      throw new MatchRequestError("not_seated", `your seat in match ${match.id} was released after its hold expired`);
    }
    if (!match.started) this.announce(seats);
    this.sit(match.ended ? seats : held);
  }

  /**
   * `created`, once the match's record is durable (nobody holds a match a crash could take back); with `sit`
   * the seats are taken only then, so that their `match_start` follows it.
   */
  announce(seats: readonly number[], sit = false): void {
    const match = this.live;
    const created: CreatedFrame = {
      type: "created",
      match: match.id,
      invite: match.invite,
      seat: seats[0] ?? null,
      seats,
    };
    this.unsent = created;
    match.deliver(() => {
      this.unsent = undefined;
      this.holder.send(created);
      // Not on a server stopping meanwhile: the match is at rest, and its players resume it after the restart.
      if (sit && seats.length > 0 && !match.suspended) this.sit(seats);
    });
  }

  /** The seat of this connection an `act` or `withdraw` is for: the one that holds decision `seq`, or the given one. */
  private seatFor(frame: { match: string; seq?: number; seat?: number }): [number, SeatLink] {
    const match = this.live;
    let seat = frame.seat ?? (frame.seq !== undefined ? match.decisionSeat(frame.seq) : undefined);
    if (seat === undefined || !this.links.has(seat)) {
      if (frame.seat !== undefined) {
        throw new MatchRequestError(
          "not_seated",
          `this connection does not hold seat ${frame.seat} of match ${match.id}`,
        );
      }
      if (this.links.size > 1 && frame.seq === undefined) {
        throw new MatchRequestError(
          "not_seated",
          `this connection holds seats ${
            [...this.links.keys()].join(" and ")
          } of match ${match.id}: say which with \`seat\``,
        );
      }
      if (this.links.size === 0) {
        throw new MatchRequestError(
          "not_seated",
          `this connection has no seat in match ${match.id}; \`join\` or \`resume\` first`,
        );
      }
      seat = this.links.keys().next().value!; // the match answers a seq that is not this seat's
    }
    return [seat, this.links.get(seat)!];
  }

  act(frame: ActFrame): void {
    const [seat, link] = this.seatFor(frame);
    if (frame.actionId !== undefined) this.live.actById(seat, frame.seq, frame.actionId, frame.meta, link);
    else this.live.act(seat, frame.seq, frame.action, frame.meta, link);
  }

  withdraw(frame: WithdrawFrame): void {
    const [seat, link] = this.seatFor(frame);
    this.live.withdraw(seat, frame.reason, link);
  }

  close(): void {
    this.detach();
    for (const [seat, link] of this.links) this.live.disconnect(seat, link);
    this.links.clear();
  }

  /** Nothing of this connection is attached to the match from now on (it closed, or the match moved). */
  private detach(): void {
    this.closed = true;
    this.unsubscribe();
  }
}
