/// <reference lib="dom" />
import { Client, CloseCode, MatchMakeError, type Room } from "@colyseus/sdk";
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
 * taken back after a reload or a reopened tab) or a spectator's chair. It folds the room's synchronised
 * public state and its seat's frames (`match_start`, `turn`, `view`, `ack`, `error`, `match_end`) into one
 * snapshot the table page draws, with the state of the connection: a dropped seat reconnects by itself
 * while the server holds it, and a seat whose server restarted takes itself back with its key once the server is
 * back. Rooms outlive page navigation (a created match moves to its own URL) in `sessions`.
 */

export interface SeatSnapshot {
  readonly seat: number;
  readonly name: string;
  readonly kind: SeatKind;
  /** Nobody has taken the seat yet. */
  readonly open?: boolean;
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

/**
 * The room connection: open; dropped and being re-established (within the seat's hold); or over: the
 * seat was released (the page was away past its hold), another tab or window took the seat over, or the
 * connection closed for another reason (`notice` says which).
 */
export type Connection = "connected" | "reconnecting" | "released" | "elsewhere" | "closed";

export interface Snapshot {
  readonly matchId: string;
  readonly game: string;
  readonly variant: string;
  /** waiting | playing | ended, from the server. */
  readonly phase: string;
  readonly connection: Connection;
  /** When the connection dropped (page clock), while it is being re-established. */
  readonly droppedAt?: number;
  /** The server stopped (to restart): the seat is taken back once it is back, which restarts its hold. */
  readonly restarting?: boolean;
  readonly seat: number | null;
  readonly seats: readonly SeatSnapshot[];
  readonly toAct: readonly number[];
  readonly publicObservation: unknown;
  /** The seat's own view (null for spectators). */
  readonly view: unknown;
  readonly start?: MatchStartFrame;
  /** The open decision; its `retriesLeft` counts down with each refused action. */
  readonly turn?: TurnFrame;
  /** The seat's move in the step being played was acknowledged: it waits for the others. */
  readonly moved: boolean;
  readonly end?: MatchEndFrame;
  readonly publicReturns: readonly number[];
  readonly reason: string;
  readonly invite?: string;
  readonly notice?: Notice;
  /** The seat's hold: from `created` before the match starts, then from `match_start`. */
  readonly holdMs?: number;
}

type Listener = (snapshot: Snapshot) => void;

/**
 * Reconnection tokens live in localStorage, one per match, so that a reload and a tab closed and opened
 * again both find the seat; they go when the match ends or the seat is gone. A token left behind (the tab
 * never reopened) is of no use after its hold, so old ones are swept when the app loads.
 */
const SEAT_KEY = "ludus.seat.";
const FORGET_AFTER_MS = 24 * 3600_000;

/**
 * A seat's reconnection token and key while its match is played; once it has ended, only which seat it was
 * (`ended`). The token is Colyseus's, good while the server process that issued it runs; the key is the page's own
 * secret, given when it took the seat, which the server keeps (as a digest) with the match: it takes the seat back
 * after a restart too.
 */
type SavedSeat = PlayingSeat | { readonly ended: true; readonly seat: number | null; readonly savedAt: number };
interface PlayingSeat {
  readonly token: string;
  readonly key?: string;
  /** The match's game: its room's name, which a seat taken back by its key joins. */
  readonly game?: string;
  readonly seat: number | null;
  readonly savedAt: number;
  readonly ended?: undefined;
}

/** A new seat key: 144 random bits, base64url. */
function newSeatKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(18));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_");
}

/**
 * Whether a failed way into a room is the server's answer that the seat is not to be had, rather than a server away
 * (no answer: no code), stopping (503, or Colyseus's "may try to reconnect") or a socket lost on the way (1xxx).
 */
function refused(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "number" || Number.isNaN(code)) return false;
  return !(code === 503 || code === CloseCode.MAY_TRY_RECONNECT || code === CloseCode.SERVER_SHUTDOWN ||
    (code >= 1000 && code < 2000));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function savedSeat(matchId: string): SavedSeat | null {
  try {
    return JSON.parse(localStorage.getItem(SEAT_KEY + matchId) ?? "null");
  } catch {
    return null;
  }
}

function forgetSeat(matchId: string): void {
  localStorage.removeItem(SEAT_KEY + matchId);
}

for (const key of Object.keys(localStorage)) {
  const saved = key.startsWith(SEAT_KEY) ? savedSeat(key.slice(SEAT_KEY.length)) : undefined;
  if (saved === null || (saved && Date.now() - saved.savedAt > FORGET_AFTER_MS)) localStorage.removeItem(key);
}

/** The match of this browser's seat has ended: its page shows the result, from the store. */
export class MatchOver {
  constructor(readonly seat: number | null) {}
}

/** The saved seat was refused: its hold is over (or the match with it), so the server played on without it. */
export class SeatGone extends Error {
  constructor(readonly seat: number | null, message: string) {
    super(message);
  }
}

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
  private holdTimer?: ReturnType<typeof setTimeout>;
  /** The page left the match (`leave`): a seat being taken back stays left. */
  private left = false;

  private constructor(
    private room: Room,
    seat: number | null,
    private readonly seated: boolean,
    /** The seat's key (see SavedSeat); none for a spectator, or a seat taken back by a page from before keys. */
    private readonly key?: string,
  ) {
    this.snapshot = {
      matchId: room.roomId,
      game: room.name,
      variant: "",
      phase: "waiting",
      connection: "connected",
      seat,
      seats: [],
      toAct: [],
      publicObservation: null,
      view: null,
      moved: false,
      publicReturns: [],
      reason: "",
    };
    this.attach(room);
    if (seated) this.remember();
  }

  /** Folds what `room` says into the snapshot: the first room, or the one a seat was taken back into. */
  private attach(room: Room): void {
    // The SDK retries a drop only after 5 s of uptime and for about a minute; a seat retries any drop,
    // quickly, for as long as the server holds it (see `dropped`). A spectator's chair is not held.
    Object.assign(room.reconnection, { minUptime: 0, maxRetries: Infinity, delay: 125, maxDelay: 2000 });
    room.reconnection.enabled = this.seated;
    room.onStateChange((state: { toJSON(): PublicState }) => this.fold(state.toJSON()));
    room.onMessage(
      "match_start",
      (f: MatchStartFrame) =>
        this.update({
          start: f,
          seat: f.seat,
          holdMs: f.conduct.holdMs,
          view: f.observation,
          turn: undefined,
          moved: false,
        }),
    );
    room.onMessage("turn", (f: TurnFrame) => this.update({ turn: f, view: f.observation, moved: false }));
    room.onMessage("view", (f: { observation: unknown }) => this.update({ view: f.observation }));
    room.onMessage("ack", (f: { seq: number }) => this.acked(f.seq));
    room.onMessage("error", (f: ErrorFrame) => {
      const turn = this.snapshot.turn;
      const refused = turn && f.seq === turn.seq && f.retriesLeft !== undefined;
      const retries = f.retriesLeft === undefined ? "" : ` (${f.retriesLeft} more forgiven this turn)`;
      this.update({
        ...(refused ? { turn: { ...turn, retriesLeft: f.retriesLeft! } } : {}),
        notice: { kind: "error", text: `${f.message}${retries}` },
      });
    });
    room.onMessage("match_end", (f: MatchEndFrame) => {
      this.update({ end: f, turn: undefined, moved: false });
      // A reload shows the result, in this seat's words.
      if (this.seated) this.remember();
    });
    room.onMessage(
      "created",
      (f: { invite: string; seat: number; conduct?: { holdMs: number } }) =>
        this.update({ invite: f.invite, seat: f.seat, holdMs: f.conduct?.holdMs }),
    );
    room.onDrop(() => this.dropped());
    room.onReconnect(() => this.reconnected());
    room.onLeave((code: number) => room === this.room && this.closed(code));
  }

  get current(): Snapshot {
    return this.snapshot;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    listener(this.snapshot);
    return () => this.listeners.delete(listener);
  }

  /** Answers the open turn; the server judges it and acks or says why not. Nothing is sent while disconnected. */
  act(action: Action): void {
    const turn = this.snapshot.turn;
    if (!turn || this.snapshot.connection !== "connected") return;
    this.update({ notice: undefined });
    this.room.send("act", { seq: turn.seq, action });
  }

  /** Leaves the room for good: its socket closes, and with it everything it held. */
  leave(): void {
    this.left = true;
    void this.room.leave(true);
  }

  dismissNotice(): void {
    this.update({ notice: undefined });
  }

  /** Keeps the seat's reconnection token, so a reload or a reopened tab takes the seat back. */
  private remember(): void {
    const { seat, end } = this.snapshot;
    const saved: SavedSeat = end
      ? { ended: true, seat, savedAt: Date.now() }
      : { token: this.room.reconnectionToken, key: this.key, game: this.snapshot.game, seat, savedAt: Date.now() };
    localStorage.setItem(SEAT_KEY + this.room.roomId, JSON.stringify(saved));
  }

  /**
   * The server took the seat's move: its decision is closed, so the seat is no longer to act and its clock
   * stops, as the room's next state says too; in a simultaneous step it waits for the others.
   */
  private acked(seq: number): void {
    const { turn, seat } = this.snapshot;
    if (turn?.seq !== seq) return;
    const now = performance.now();
    this.update({
      turn: undefined,
      moved: true,
      notice: undefined,
      toAct: this.snapshot.toAct.filter((s) => s !== seat),
      seats: this.snapshot.seats.map((s) =>
        s.seat === seat && s.running
          ? { ...s, running: false, remainingMs: s.remainingMs - (now - s.receivedAt), receivedAt: now }
          : s
      ),
    });
  }

  /** The connection dropped (the network went, the server restarted the socket): the SDK is reconnecting. */
  private dropped(): void {
    if (this.snapshot.connection === "reconnecting") return; // every failed attempt reports a drop again
    const hold = this.snapshot.holdMs;
    // Past the hold the server has released the seat: the attempt in flight is the last.
    if (hold !== undefined) this.holdTimer = setTimeout(() => (this.room.reconnection.enabled = false), hold);
    this.update({ connection: "reconnecting", droppedAt: performance.now() });
  }

  /** Back in the room: the server sends the match again (`match_start`, resumed) and the open turn. */
  private reconnected(): void {
    clearTimeout(this.holdTimer);
    this.room.reconnection.enabled = true;
    // The SDK takes the new connection's token just after this callback.
    queueMicrotask(() => this.remember());
    this.update({ connection: "connected", droppedAt: undefined });
  }

  private closed(code: number): void {
    clearTimeout(this.holdTimer);
    if (this.snapshot.phase === "ended" || code === CloseCode.CONSENTED || this.left) {
      return void sessions.delete(this.snapshot.matchId);
    }
    // The server stopped (4001, a restart) or dropped the room otherwise while the seat is still held: its next
    // start restores the match with the seat held, and the seat's key takes it back there.
    const held = code !== CloseCode.WITH_ERROR && code !== CloseCode.FAILED_TO_RECONNECT &&
      this.room.reconnection.enabled;
    if (this.seated && this.key && held) return void this.takeBack();
    sessions.delete(this.snapshot.matchId);
    if (!this.seated) {
      return this.update({
        connection: "closed",
        notice: {
          kind: "error",
          text: `The connection to the match closed (${code}): reload the page to watch again.`,
        },
      });
    }
    if (code === CloseCode.WITH_ERROR) return this.update({ connection: "elsewhere" });
    if (code === CloseCode.FAILED_TO_RECONNECT || !this.room.reconnection.enabled) {
      forgetSeat(this.snapshot.matchId);
      return this.update({ connection: "released" });
    }
    this.update({
      connection: "closed",
      notice: { kind: "error", text: `The connection to the match closed (${code}).` },
    });
  }

  /**
   * Takes the seat back with its key once the server answers again, trying with a growing pause (to 4 s) for as long
   * as it is away or restarting; a refusal (the seat released, the match gone) ends it as a released seat does.
   */
  private async takeBack(): Promise<void> {
    const { matchId, game } = this.snapshot;
    this.update({ connection: "reconnecting", restarting: true, droppedAt: performance.now() });
    for (let attempt = 0; !this.left; attempt++) {
      await sleep(Math.min(4000, 250 * 2 ** attempt) * (0.75 + Math.random() / 2));
      if (this.left) return;
      let room: Room;
      try {
        room = await colyseus().joinOrCreate(game, { matchId, seatKey: this.key });
      } catch (error) {
        if (!(error instanceof MatchMakeError)) throw error;
        if (!refused(error)) continue;
        sessions.delete(matchId);
        forgetSeat(matchId);
        return this.update({ connection: "released", restarting: undefined });
      }
      if (this.left) return void room.leave(true);
      this.room = room;
      this.attach(room);
      this.remember();
      return this.update({ connection: "connected", restarting: undefined, droppedAt: undefined });
    }
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
      phase: state.phase,
      seats: state.seats.map((s) => ({ ...s, receivedAt: now })),
      toAct: state.toAct,
      publicObservation,
      publicReturns: state.returns,
      reason: state.reason,
    });
  }

  private update(change: Partial<Snapshot>): void {
    this.snapshot = { ...this.snapshot, ...change };
    if (this.seated && change.seat !== undefined && change.seat !== null) this.remember();
    for (const listener of this.listeners) listener(this.snapshot);
  }

  // ---- ways into a match ----

  /** A new private match: the person at `seat` 0, the other seats a built-in strategy or left open for an invite. */
  static async create(
    game: string,
    options: { variant?: string; name: string; opponents: Record<string, string> },
  ): Promise<MatchSession> {
    const key = newSeatKey();
    const room = await colyseus().create(game, { ...options, seat: 0, seatKey: key });
    return track(new MatchSession(room, 0, true, key));
  }

  /** Takes the seat the queue reserved. */
  static async seat(game: string, matchId: string, ticket: string, seat: number, name: string): Promise<MatchSession> {
    const key = newSeatKey();
    const room = await colyseus().joinOrCreate(game, { matchId, ticket, name, seatKey: key });
    return track(new MatchSession(room, seat, true, key));
  }

  /** Takes the first open seat of a private match by its invite. */
  static async invited(game: string, matchId: string, invite: string, name: string): Promise<MatchSession> {
    const key = newSeatKey();
    const room = await colyseus().joinOrCreate(game, { matchId, invite, name, seatKey: key });
    return track(new MatchSession(room, null, true, key));
  }

  static async spectate(game: string, matchId: string): Promise<MatchSession> {
    const room = await colyseus().joinOrCreate(game, { matchId, spectate: true });
    return track(new MatchSession(room, null, false));
  }

  /**
   * This browser's seat in `matchId` again (a reload, a reopened tab), if the server still holds it; null
   * when it has no seat there; MatchOver once its match has ended; SeatGone when the server no longer holds the
   * seat it had. The reconnection token first; refused (the server restarted since it was issued), the seat's key.
   * While the server does not answer or is restarting, it tries again with a growing pause (to 4 s).
   */
  static async resume(matchId: string): Promise<MatchSession | MatchOver | null> {
    const saved = savedSeat(matchId);
    if (!saved) return null;
    if (saved.ended) return new MatchOver(saved.seat);
    for (let attempt = 0;; attempt++) {
      if (attempt > 0) await sleep(Math.min(4000, 250 * 2 ** attempt) * (0.75 + Math.random() / 2));
      try {
        return await MatchSession.takeSeat(matchId, saved);
      } catch (e) {
        // The SDK's own failures (an unreachable server included) are MatchMakeErrors; anything else is a fault here.
        if (!(e instanceof MatchMakeError)) throw e;
        if (refused(e)) {
          forgetSeat(matchId);
          throw new SeatGone(saved.seat, (e as Error).message);
        }
      }
    }
  }

  private static async takeSeat(matchId: string, saved: PlayingSeat): Promise<MatchSession> {
    try {
      const room = await colyseus().reconnect(saved.token);
      return track(new MatchSession(room, saved.seat, true, saved.key));
    } catch (e) {
      if (!refused(e)) throw e;
      // A seat kept from before seat keys has only its token.
      if (!saved.key || !saved.game) throw e;
    }
    const room = await colyseus().joinOrCreate(saved.game, { matchId, seatKey: saved.key });
    return track(new MatchSession(room, saved.seat, true, saved.key));
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
