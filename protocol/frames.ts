import type { ActionForm } from "./action-forms.ts";

/**
 * The bot protocol's frame shapes (docs/protocol.md is the prose; this is the type). Shared by the
 * server's gateway and by every client in `clients/`: it imports only the action forms beside it.
 *
 * Every frame is one JSON object with a string `type`: a websocket text frame, or a binary frame of
 * the same object in msgpack when the connection's `auth` frame was binary.
 */

/** Who sits in a seat. `builtin` is a strategy running inside the server, `policy` a network it runs. */
export type SeatKind = "human" | "bot" | "llm" | "builtin" | "policy";

/** A seat's standing. ACTIVE while playing; the rest say how its part ended. */
export type SeatStatus = "ACTIVE" | "DONE" | "ERROR" | "INVALID" | "TIMEOUT" | "DISCONNECTED";

/** A seat's clock, in milliseconds: main time (topped up by the increment) and the overage bank behind it. */
export interface ClockView {
  readonly mainMs: number;
  readonly overageMs: number;
  readonly incrementMs: number;
}

export interface ParticipantView {
  readonly seat: number;
  readonly kind: SeatKind;
  readonly name: string;
  /** Nobody has taken the seat yet (a private match waiting for its invite): `kind` and `name` say nothing. */
  readonly open: boolean;
  /** Whether a client is connected to the seat now (always true for built-ins). */
  readonly connected: boolean;
  readonly status: SeatStatus;
}

/** What the match does when a seat keeps acting illegally or runs out of time. */
export interface ConductPolicy {
  /** Illegal or malformed actions forgiven per decision before `onIllegal` applies. */
  readonly retries: number;
  readonly onIllegal: Outcome;
  readonly onTimeout: Outcome;
  /** How long a dropped seat is held for a `resume` before `onTimeout` applies to it. */
  readonly holdMs: number;
}

/**
 * `default`: the seat plays its default action (the first action its game lists) and the match goes on;
 * `forfeit`: the match ends, the offender's status records why; `abort`: the match ends unplayed-out.
 */
export type Outcome = "default" | "forfeit" | "abort";

// ---- client → server ----

/** Who plays behind a token, as an LLM seat declares it: recorded with every seat it takes. */
export interface AgentInfo {
  readonly model?: string;
  /** The endpoint's address (the server keeps it without credentials or query). */
  readonly endpoint?: string;
  /** Sampling parameters: temperature, max tokens, seed, top_p, ... */
  readonly sampling?: Readonly<Record<string, string | number | boolean | null>>;
}

export interface AuthFrame {
  readonly type: "auth";
  readonly token: string;
  /** Ask for the text rendering of each observation in `turn` frames (for LLM seats). */
  readonly text?: boolean;
  /**
   * Ask for the numeric face in every `turn` frame (`tensor`, `legalIds`) and `match_start` (`numeric`), for
   * seats played by a network; such a seat may answer with `actionId`.
   */
  readonly numeric?: boolean;
  /** Who plays behind the token (an LLM seat's model, endpoint and sampling), for the record. */
  readonly agent?: AgentInfo;
}

export interface QueueFrame {
  readonly type: "queue";
  readonly game: string;
  readonly variant?: string;
  /**
   * May this ticket be seated with other tickets of the same token (self-play)? By default a token never
   * meets itself: its tickets wait for other players (or built-ins) instead.
   */
  readonly selfPlay?: boolean;
  /**
   * A seed group: tickets of a group meet only each other (or built-ins), and every match of the group starts
   * from the same seed, drawn when its first match forms, so a group is the same start played against whoever
   * the pool seats (group-relative baselines). The seed is kept while the server runs.
   */
  readonly group?: string;
}

export interface CancelFrame {
  readonly type: "cancel";
  /** The ticket `queued` returned. */
  readonly ticket: string;
}

export interface CreateFrame {
  readonly type: "create";
  readonly game: string;
  readonly variant?: string;
  /** Overrides of the variant's config. */
  readonly config?: Record<string, unknown>;
  /** The seat the creator takes (default 0); null takes none (a match of built-ins the creator only watches). */
  readonly seat?: number | null;
  /**
   * Other seats, by seat index: `"open"` (someone joins by the invite), a built-in strategy
   * `"strategy:<name[:arg]>"`, or `"self"` (this connection plays that seat too: self-play). Seats not named
   * are open.
   */
  readonly opponents?: Readonly<Record<string, string>>;
  /**
   * Who plays each of this connection's seats here (`seat` and its `"self"` opponents), by seat index, where they
   * differ (several models over one connection): recorded for that seat in place of `auth.agent`. A seat not
   * named keeps `auth.agent`.
   */
  readonly agents?: Readonly<Record<string, AgentInfo>>;
  /** Fix the match's seed (for reproducible research matches); a fresh random one by default. */
  readonly seed?: string;
  /**
   * A seed group: a name shared by matches of the same start played several times (group-relative
   * baselines); recorded with the match and exported.
   */
  readonly group?: string;
}

export interface JoinFrame {
  readonly type: "join";
  /** A match id or invite code from `created`. */
  readonly match: string;
}

export interface ActFrame {
  readonly type: "act";
  readonly match: string;
  /** The `seq` of the `turn` frame being answered. */
  readonly seq: number;
  /** The action as JSON (`{"type": "raise", "amount": 4}`) or as text (`"raise 4"`); or give `actionId` instead. */
  readonly action?: unknown;
  /** Instead of `action`: an action id of the game's numeric face (one of the turn's `legalIds`). */
  readonly actionId?: number;
  /** Free fields kept with the step in the replay (an LLM's prompt, raw response, token counts). */
  readonly meta?: Record<string, unknown>;
}

/**
 * The seat cannot go on (an LLM endpoint that refuses every request, an engine that crashed): its status
 * becomes ERROR with `reason` kept in the replay, and the match applies its timeout policy to it at once.
 */
export interface WithdrawFrame {
  readonly type: "withdraw";
  readonly match: string;
  /** Why, in one sentence: kept with the seat's open decision in the replay. */
  readonly reason: string;
  /** Which seat, when this connection holds several seats of the match (self-play). */
  readonly seat?: number;
}

export interface ResumeFrame {
  readonly type: "resume";
  readonly match: string;
}

export interface PingFrame {
  readonly type: "ping";
  readonly id?: string | number;
}

export type ClientFrame =
  | AuthFrame
  | QueueFrame
  | CancelFrame
  | CreateFrame
  | JoinFrame
  | ActFrame
  | WithdrawFrame
  | ResumeFrame
  | PingFrame;

// ---- server → client ----

export interface WelcomeFrame {
  readonly type: "welcome";
  readonly server: { readonly name: "ludus"; readonly version: string; readonly protocol: number };
  readonly bot: { readonly id: string; readonly name: string; readonly kind: SeatKind };
  readonly limits: {
    readonly frameBytes: number;
    readonly framesPerSecond: number;
    readonly burst: number;
    /** Frames a second the token may send over all its connections, on every process of a cluster (0: no limit). */
    readonly tokenFramesPerSecond: number;
    readonly maxMatches: number;
  };
  /** Matches this token still has a seat in (to `resume` after a reconnect). */
  readonly matches: readonly string[];
}

export interface QueuedFrame {
  readonly type: "queued";
  readonly ticket: string;
  readonly game: string;
  readonly variant: string;
  /** When empty seats are filled with a built-in strategy, if nobody else comes (epoch ms). */
  readonly fillAt: number | null;
}

export interface CancelledFrame {
  readonly type: "cancelled";
  readonly ticket: string;
}

export interface CreatedFrame {
  readonly type: "created";
  readonly match: string;
  /** Give this to whoever should take an open seat (`join`, or the browser's invite link). */
  readonly invite: string;
  /** The creator's seat (`create.seat`); null when it took none. */
  readonly seat: number | null;
  /** Every seat this connection holds in the match: `seat`, then the `"self"` opponents. */
  readonly seats: readonly number[];
}

/**
 * The numeric face of a match's config, for a connection that asked for it, as `GET /games` gives it per
 * variant: the tensor's shape, the number of action ids and the encoding's version, or why the config has none
 * (`numericFace`; its turns then carry no tensor).
 */
export type NumericInfo =
  | { readonly observationShape: readonly number[]; readonly actionCount: number; readonly encoderVersion: number }
  | { readonly numericFace: string };

/** The full state for a seat: the first frame of a match, and of every resume (like Lichess's `gameFull`). */
export interface MatchStartFrame {
  readonly type: "match_start";
  readonly match: string;
  readonly game: string;
  readonly version: number;
  readonly variant: string;
  readonly config: unknown;
  /** The rules in the project's words: what an LLM seat reads first. */
  readonly rules: string;
  /** One legal answer, written as this game's turns ask (e.g. `mark 4`): the example an answer format may show. */
  readonly answerExample: string;
  readonly seat: number;
  readonly participants: readonly ParticipantView[];
  readonly clock: ClockView;
  readonly conduct: ConductPolicy;
  /** This seat's observation now. */
  readonly observation: unknown;
  readonly resumed: boolean;
  /** The config's numeric face, when the connection asked for it (`auth.numeric`). */
  readonly numeric?: NumericInfo;
}

export interface TurnFrame {
  readonly type: "turn";
  readonly match: string;
  readonly seq: number;
  readonly seat: number;
  readonly observation: unknown;
  /** The observation as text, when the connection asked for it. */
  readonly text?: string;
  /** The legal action forms (see docs/protocol.md, "Actions"). */
  readonly legal: readonly ActionForm[];
  /** The same forms as one readable line, e.g. `check | bet`. */
  readonly legalText: string;
  /**
   * The seat's information-state tensor, flat (shape `match_start.numeric.observationShape`), encoded from
   * `observation`, when the connection asked for the numeric face and the config has one.
   */
  readonly tensor?: readonly number[];
  /** The legal action ids, ascending: alongside `tensor`. */
  readonly legalIds?: readonly number[];
  /** Epoch milliseconds by which the action must arrive (main time plus the overage bank). */
  readonly deadline: number;
  readonly clock: ClockView;
  /** Illegal actions still forgiven for this decision. */
  readonly retriesLeft: number;
}

export interface AckFrame {
  readonly type: "ack";
  readonly match: string;
  readonly seq: number;
  /** The action as the game read it (canonical JSON). */
  readonly action: unknown;
  /** True when this answers a resend of an action already taken. */
  readonly duplicate: boolean;
}

export type ErrorCode =
  | "bad_frame"
  | "unknown_type"
  | "frame_too_large"
  | "rate_limited"
  | "not_authenticated"
  | "bad_token"
  | "already_authenticated"
  | "unknown_game"
  | "bad_config"
  | "bad_strategy"
  | "unknown_match"
  | "match_full"
  | "already_seated"
  | "too_many_matches"
  | "not_seated"
  | "spectator"
  | "unknown_ticket"
  | "not_your_turn"
  | "malformed_action"
  | "illegal_action"
  | "stale_sequence"
  | "wrong_sequence"
  | "match_over"
  | "store_unavailable"
  | "server_stopping"
  | "internal_error";

export interface ErrorFrame {
  readonly type: "error";
  readonly code: ErrorCode;
  /** What was wrong and what is allowed, in one sentence. */
  readonly message: string;
  readonly match?: string;
  readonly seq?: number;
  /** For illegal actions: how many more are forgiven this decision. */
  readonly retriesLeft?: number;
}

/** `error`: the server could not go on with the match (its replay log could not be written or restored). */
export type EndReason = "completed" | "forfeit" | "aborted" | "error";

export interface MatchEndFrame {
  readonly type: "match_end";
  readonly match: string;
  readonly seat: number;
  /** Raw payoffs per seat. */
  readonly returns: readonly number[];
  readonly statuses: readonly SeatStatus[];
  readonly reason: EndReason;
  /** Which seat's conduct ended the match early, when one did. */
  readonly culprit: number | null;
  /** Revealed at the end so anyone can re-simulate the match from its actions. */
  readonly seed: string;
  readonly steps: number;
}

export interface PongFrame {
  readonly type: "pong";
  readonly id?: string | number;
  readonly time: number;
}

export type ServerFrame =
  | WelcomeFrame
  | QueuedFrame
  | CancelledFrame
  | CreatedFrame
  | MatchStartFrame
  | TurnFrame
  | AckFrame
  | ErrorFrame
  | MatchEndFrame
  | PongFrame;

/** Bumped when a frame changes incompatibly. */
export const PROTOCOL_VERSION = 1;

/** The websocket path of the bot gateway. */
export const GATEWAY_PATH = "/bot";
