/// <reference lib="dom" />
import { Client, type Room } from "@colyseus/sdk";
import type {
  ErrorFrame,
  MatchEndFrame,
  MatchStartFrame,
  SeatKind,
  SeatStatus,
  TurnFrame,
} from "../../protocol/frames.ts";
import type { Action } from "./tables/types.ts";

/**
 * A page's place in one live match, over `@colyseus/sdk`: a seat (created, queued for, invited to, or
 * taken back after a reload) or a spectator's chair. It folds the room's synchronised public state and its
 * seat's frames (`match_start`, `turn`, `view`, `ack`, `error`, `match_end`) into one snapshot the table
 * page draws. Rooms outlive page navigation (a created match moves to its own URL) in `sessions`.
 */

export interface SeatSnapshot {
  readonly seat: number;
  readonly name: string;
  readonly kind: SeatKind;
  readonly status: SeatStatus;
  readonly connected: boolean;
  /** Time left on the seat's clock at `receivedAt` (page clock), counting down while `running`. */
  readonly remainingMs: number;
  readonly running: boolean;
  readonly receivedAt: number;
}

export interface Notice {
  readonly kind: "error" | "info";
  readonly text: string;
}

export interface Snapshot {
  readonly matchId: string;
  readonly game: string;
  readonly variant: string;
  /** waiting | playing | ended, from the server; "lost" once the room connection is gone for good. */
  readonly phase: string;
  readonly seat: number | null;
  readonly seats: readonly SeatSnapshot[];
  readonly toAct: readonly number[];
  readonly publicObservation: unknown;
  /** The seat's own view (null for spectators). */
  readonly view: unknown;
  readonly start?: MatchStartFrame;
  readonly turn?: TurnFrame;
  readonly end?: MatchEndFrame;
  readonly publicReturns: readonly number[];
  readonly reason: string;
  readonly invite?: string;
  readonly notice?: Notice;
}

type Listener = (snapshot: Snapshot) => void;

const SEAT_KEY = (matchId: string) => `ludus.seat.${matchId}`;

let client: Client | undefined;
function colyseus(): Client {
  return (client ??= new Client(`${location.protocol}//${location.host}`));
}

interface PublicState {
  match: string;
  game: string;
  variant: string;
  phase: string;
  seats: Omit<SeatSnapshot, "receivedAt">[];
  toAct: number[];
  publicObservation: string;
  returns: number[];
  reason: string;
}

export class MatchSession {
  private snapshot: Snapshot;
  private readonly listeners = new Set<Listener>();

  private constructor(private readonly room: Room, seat: number | null) {
    this.snapshot = {
      matchId: room.roomId,
      game: room.name,
      variant: "",
      phase: "waiting",
      seat,
      seats: [],
      toAct: [],
      publicObservation: null,
      view: null,
      publicReturns: [],
      reason: "",
    };
    room.onStateChange((state: { toJSON(): PublicState }) => this.fold(state.toJSON()));
    room.onMessage(
      "match_start",
      (f: MatchStartFrame) => this.update({ start: f, seat: f.seat, view: f.observation, turn: undefined }),
    );
    room.onMessage("turn", (f: TurnFrame) => this.update({ turn: f, view: f.observation }));
    room.onMessage("view", (f: { observation: unknown }) => this.update({ view: f.observation }));
    room.onMessage("ack", (f: { seq: number }) => {
      if (this.snapshot.turn?.seq === f.seq) this.update({ turn: undefined, notice: undefined });
    });
    room.onMessage("error", (f: ErrorFrame) => {
      const retries = f.retriesLeft === undefined ? "" : ` (${f.retriesLeft} more forgiven this turn)`;
      this.update({ notice: { kind: "error", text: `${f.message}${retries}` } });
    });
    room.onMessage("match_end", (f: MatchEndFrame) => this.update({ end: f, turn: undefined }));
    room.onMessage("created", (f: { invite: string; seat: number }) => this.update({ invite: f.invite, seat: f.seat }));
    room.onLeave((code: number) => {
      sessions.delete(this.snapshot.matchId);
      if (this.snapshot.phase !== "ended") {
        this.update({
          phase: "lost",
          notice: { kind: "error", text: `The connection to the match closed (${code}).` },
        });
      }
    });
    if (seat !== null) this.remember();
  }

  get current(): Snapshot {
    return this.snapshot;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    listener(this.snapshot);
    return () => this.listeners.delete(listener);
  }

  /** Answers the open turn; the server judges it and acks or says why not. */
  act(action: Action): void {
    const turn = this.snapshot.turn;
    if (!turn) return;
    this.update({ notice: undefined });
    this.room.send("act", { seq: turn.seq, action });
  }

  dismissNotice(): void {
    this.update({ notice: undefined });
  }

  async leave(): Promise<void> {
    sessionStorage.removeItem(SEAT_KEY(this.snapshot.matchId));
    sessions.delete(this.snapshot.matchId);
    await this.room.leave(true).catch(() => {});
  }

  /** Keeps the seat's reconnection token for this tab, so a reload takes the seat back. */
  private remember(): void {
    sessionStorage.setItem(SEAT_KEY(this.room.roomId), this.room.reconnectionToken);
  }

  private fold(state: PublicState): void {
    const now = performance.now();
    let publicObservation: unknown = null;
    try {
      publicObservation = JSON.parse(state.publicObservation);
    } catch {
      publicObservation = null;
    }
    this.update({
      game: state.game || this.snapshot.game,
      variant: state.variant,
      phase: this.snapshot.phase === "lost" ? "lost" : state.phase,
      seats: state.seats.map((s) => ({ ...s, receivedAt: now })),
      toAct: state.toAct,
      publicObservation,
      publicReturns: state.returns,
      reason: state.reason,
    });
  }

  private update(change: Partial<Snapshot>): void {
    this.snapshot = { ...this.snapshot, ...change };
    if (change.seat !== undefined && change.seat !== null) this.remember();
    for (const listener of this.listeners) listener(this.snapshot);
  }

  // ---- ways into a match ----

  /** A new private match: the person at `seat` 0, the other seats a built-in strategy or left open for an invite. */
  static async create(
    game: string,
    options: { variant?: string; name: string; opponents: Record<string, string> },
  ): Promise<MatchSession> {
    const room = await colyseus().create(game, { ...options, seat: 0 });
    return track(new MatchSession(room, 0));
  }

  /** Takes the seat the queue reserved. */
  static async seat(game: string, matchId: string, ticket: string, seat: number, name: string): Promise<MatchSession> {
    const room = await colyseus().joinOrCreate(game, { matchId, ticket, name });
    return track(new MatchSession(room, seat));
  }

  /** Takes the first open seat of a private match by its invite. */
  static async invited(game: string, matchId: string, invite: string, name: string): Promise<MatchSession> {
    const room = await colyseus().joinOrCreate(game, { matchId, invite, name });
    return track(new MatchSession(room, null));
  }

  static async spectate(game: string, matchId: string): Promise<MatchSession> {
    const room = await colyseus().joinOrCreate(game, { matchId, spectate: true });
    return track(new MatchSession(room, null));
  }

  /** This tab's seat in `matchId` again (after a reload), if the server still holds it. */
  static async resume(matchId: string): Promise<MatchSession | null> {
    const token = sessionStorage.getItem(SEAT_KEY(matchId));
    if (!token) return null;
    try {
      const room = await colyseus().reconnect(token);
      return track(new MatchSession(room, null));
    } catch {
      sessionStorage.removeItem(SEAT_KEY(matchId));
      return null;
    }
  }
}

/** Live sessions of this page, by match id: a route change keeps its room. */
export const sessions = new Map<string, MatchSession>();

function track(session: MatchSession): MatchSession {
  sessions.set(session.current.matchId, session);
  return session;
}

/** Waits in the public queue; resolves with the seat once the matchmaker has found a match. */
export async function queue(
  game: string,
  variant: string | undefined,
  name: string,
  onQueued: (info: { fillAt: number | null }) => void,
): Promise<{ leave: () => void; matched: Promise<MatchSession> }> {
  const room = await colyseus().joinOrCreate("queue", { game, variant, name });
  const matched = new Promise<MatchSession>((resolve, reject) => {
    room.onMessage("queued", (f: { fillAt: number | null }) => onQueued(f));
    room.onMessage("matched", (f: { match: string; game: string; seat: number; ticket: string }) => {
      MatchSession.seat(f.game, f.match, f.ticket, f.seat, name).then(resolve, reject).finally(() => room.leave(true));
    });
    room.onMessage("error", (f: ErrorFrame) => reject(new Error(f.message)));
  });
  return { leave: () => void room.leave(true), matched };
}
