import { type Action, type ActionSpace, describeSpace } from "../../games/core/action.ts";
import type { AnyGame } from "../../games/core/game.ts";
import type {
  AckFrame,
  ConductPolicy,
  ErrorCode,
  ErrorFrame,
  MatchEndFrame,
  MatchStartFrame,
  NumericInfo,
  ParticipantView,
  TurnFrame,
} from "../../protocol/frames.ts";

/**
 * The bot protocol's frames for a match, built from what the Match knows. The Match speaks in facts (a
 * decision opened, an action taken, the match ended); how they look on the wire lives here, beside nothing
 * that keeps state.
 */

/** A seat's `match_end`, from a live match's result or a stored record alike. */
export function matchEndFrame(end: Omit<MatchEndFrame, "type" | "seat">, seat: number): MatchEndFrame {
  const { match, returns, statuses, reason, culprit, seed, steps } = end;
  return { type: "match_end", match, seat, returns, statuses, reason, culprit, seed, steps };
}

/** The first frame of a match (and of a resume): everything a seat needs, its private values only in its observation. */
export function matchStartFrame(start: {
  readonly match: string;
  readonly game: AnyGame;
  readonly variant: string;
  readonly config: unknown;
  readonly seat: number;
  readonly participants: readonly ParticipantView[];
  readonly clock: MatchStartFrame["clock"];
  readonly conduct: ConductPolicy;
  readonly observation: unknown;
  readonly resumed: boolean;
  /** The config's numeric face, for a seat that asked for it. */
  readonly numeric?: NumericInfo;
}): MatchStartFrame {
  const { game, config } = start;
  return {
    type: "match_start",
    match: start.match,
    game: game.id,
    version: game.version,
    variant: start.variant,
    config: game.publicConfig(config), // a seat's private values reach it through its observation
    rules: game.rules(config),
    answerExample: game.answerExample,
    seat: start.seat,
    participants: [...start.participants],
    clock: start.clock,
    conduct: start.conduct,
    observation: start.observation,
    resumed: start.resumed,
    ...(start.numeric !== undefined ? { numeric: start.numeric } : {}),
  };
}

/** A decision's `turn`: the observation, the legal forms (and their text), the deadline and the clock. */
export function turnFrame(turn: {
  readonly match: string;
  readonly seq: number;
  readonly seat: number;
  readonly observation: unknown;
  /** The observation as text, for a seat that asked for it. */
  readonly text?: string;
  readonly legal: ActionSpace;
  /** The tensor and legal ids, for a seat that asked for the numeric face of a config that has one. */
  readonly numeric?: { readonly tensor: readonly number[]; readonly legalIds: readonly number[] };
  readonly deadline: number;
  readonly clock: TurnFrame["clock"];
  readonly retriesLeft: number;
}): TurnFrame {
  return {
    type: "turn",
    match: turn.match,
    seq: turn.seq,
    seat: turn.seat,
    observation: turn.observation,
    ...(turn.text !== undefined ? { text: turn.text } : {}),
    legal: turn.legal,
    legalText: describeSpace(turn.legal),
    ...(turn.numeric ? { tensor: turn.numeric.tensor, legalIds: turn.numeric.legalIds } : {}),
    deadline: turn.deadline,
    clock: turn.clock,
    retriesLeft: Math.max(0, turn.retriesLeft),
  };
}

export function ackFrame(match: string, seq: number, action: Action, duplicate: boolean): AckFrame {
  return { type: "ack", match, seq, action, duplicate };
}

/** A refusal about this match: what was wrong, and, for an act, its `seq` and the retries left. */
export function matchErrorFrame(
  match: string,
  code: ErrorCode,
  message: string,
  about: { readonly seq?: unknown; readonly retriesLeft?: number } = {},
): ErrorFrame {
  return {
    type: "error",
    code,
    message,
    match,
    ...(typeof about.seq === "number" ? { seq: about.seq } : {}),
    ...(about.retriesLeft !== undefined ? { retriesLeft: about.retriesLeft } : {}),
  };
}
