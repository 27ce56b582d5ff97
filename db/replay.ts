import { type Action, ActionError } from "../games/core/action.ts";
import { type AnyGame, NumericFaceError, type Viewer } from "../games/core/game.ts";
import { maskIds } from "../games/core/numeric.ts";
import { Episode } from "../games/core/episode.ts";
import { registry, UnknownGameError, UnknownVersionError } from "../games/registry.ts";
import type { MatchRecord, StepRecordRow } from "./records.ts";

/**
 * Re-simulation of a stored match: the game played again from (game, version, config, seed) with the
 * logged actions, exactly as the server's Match plays it. `ludus replay verify` compares what it yields
 * with what was stored; the HTTP API shows one seat's (or the public's) side of it.
 */

/** What part of a record a problem is about. */
export type ReplayProblem = "game" | "version" | "config" | "sequence" | "action";

/** Why a stored match cannot be re-simulated (any further): its record and the game's rules disagree. */
export class ReplayError extends Error {
  constructor(
    readonly what: ReplayProblem,
    message: string,
    /** Where: the decision's sequence number and its turn, when the problem is at a decision. */
    readonly at: { readonly seq?: number; readonly turn?: number },
    readonly expected: unknown = null,
    readonly stored: unknown = null,
  ) {
    super(message);
    this.name = "ReplayError";
  }
}

/** What re-simulation reads of a stored decision. */
export type ReplayRow = Pick<StepRecordRow, "seq" | "turn" | "seat" | "action">;

/** One game step as re-simulated, with the decisions stored for it. */
export interface ReplayTurn<R extends ReplayRow = StepRecordRow> {
  readonly kind: "turn";
  /** The game step's index (0-based), as the rows' `turn`. */
  readonly turn: number;
  /** The seats the game asked to act. */
  readonly toAct: readonly number[];
  /** The stored decisions of this turn, in sequence order. */
  readonly rows: readonly R[];
  /** What each row's seat saw when it was asked (aligned with `rows`): what its stored observation must be. */
  readonly observations: readonly unknown[];
  /** What the requested viewer sees before the step is applied (undefined when none was requested). */
  readonly view: unknown;
  /** The step's rewards, one per seat; null when the log ends before every seat moved (forfeit, abort, unfinished). */
  readonly rewards: readonly number[] | null;
  /**
   * Why the log cannot be followed past this turn: a stored action the game refuses, or a turn left
   * unfinished with decisions after it. The replay stops here.
   */
  readonly problem?: ReplayError;
  /**
   * With `numeric`, and where the game has a numeric face for the config: per row, the seat's legal action
   * ids and the id of the action it took (-1 for none: no id in the discretisation, or no move).
   */
  readonly legalIds?: readonly (readonly number[])[];
  readonly actionIds?: readonly number[];
}

/** Where the re-simulation ended. */
export interface ReplayEnd {
  readonly kind: "end";
  /** Steps applied. */
  readonly turns: number;
  /** Whether the game is over (no seat is to act). */
  readonly over: boolean;
  /** The game's returns after the last step applied. */
  readonly returns: readonly number[];
  /** What the requested viewer sees at the end (undefined when none was requested). */
  readonly view: unknown;
}

export type ReplayEvent<R extends ReplayRow = StepRecordRow> = ReplayTurn<R> | ReplayEnd;

export interface ReplayOptions<R extends ReplayRow> {
  /** Per turn, each row's legal action ids and the id of its action (see ReplayTurn.legalIds). */
  readonly numeric?: boolean;
  /**
   * The episode to play, freshly started, instead of a new one of the record's game: a live match restored from its
   * log plays its own, which ends where the log does.
   */
  readonly episode?: Episode;
  /**
   * Called with each complete turn's rows (while the state is still before it); it may give the moves to apply
   * instead of the stored actions (as a live match read them: parsed, or its built-ins' own).
   */
  readonly beforeStep?: (rows: readonly R[], toAct: readonly number[]) => readonly (Action | undefined)[] | void;
}

/** The game a match was recorded with, at the version it pins, if this build has that version. */
export function replayableGame(match: MatchRecord): AnyGame {
  try {
    return registry.get(match.game, match.gameVersion);
  } catch (error) {
    if (error instanceof UnknownGameError) throw new ReplayError("game", error.message, {}, null, match.game);
    if (error instanceof UnknownVersionError) {
      const has = error.versions.length === 1
        ? `version ${error.versions[0]}`
        : `versions ${error.versions.join(", ")}`;
      throw new ReplayError(
        "version",
        `recorded with ${match.game} version ${match.gameVersion}; this build has ${has}`,
        {},
        error.versions,
        match.gameVersion,
      );
    }
    throw error;
  }
}

/** A legal-mask buffer for `config`, or undefined where the game has no numeric face for it. */
function maskFor(game: AnyGame, config: unknown): Uint8Array | undefined {
  try {
    return new Uint8Array(game.actionCount(config));
  } catch (error) {
    if (error instanceof NumericFaceError) return undefined;
    throw error;
  }
}

/**
 * A turn's moves, indexed by seat, from its rows (a row without an action leaves its seat's move out);
 * a ReplayError when the game refuses a stored action.
 */
function movesOf(
  game: AnyGame,
  state: unknown,
  seats: number,
  rows: readonly ReplayRow[],
): (Action | undefined)[] | ReplayError {
  const moves: (Action | undefined)[] = new Array(seats).fill(undefined);
  for (const row of rows) {
    if (row.action === null) continue; // the seat never moved: its misconduct ended the match
    const at = { seq: row.seq, turn: row.turn };
    let parsed: Action | ActionError;
    try {
      parsed = game.parse(row.action, state, row.seat);
    } catch (cause) {
      return new ReplayError(
        "action",
        `decision ${row.seq}: ${(cause as Error)?.message ?? cause}`,
        at,
        null,
        row.action,
      );
    }
    if (parsed instanceof ActionError) {
      return new ReplayError("action", `decision ${row.seq}: ${parsed.message}`, at, null, row.action);
    }
    // The stored action is what the match applied (a built-in's choice is applied as it came), so it is
    // applied here too; `parse` only checks that it is legal.
    moves[row.seat] = row.action as Action;
  }
  return moves;
}

/** Runs a game function on a stored record, turning a throw into a ReplayError of `what`. */
function guarded<T>(what: ReplayProblem, at: ReplayError["at"], describe: string, run: () => T): T {
  try {
    return run();
  } catch (cause) {
    if (cause instanceof ReplayError) throw cause;
    throw new ReplayError(what, `${describe}: ${(cause as Error)?.message ?? cause}`, at);
  }
}

/**
 * Re-simulates `match` from its stored decisions (`steps`, in sequence order), yielding each turn and then
 * the end. `viewer`, when given, also gets its view before every turn and at the end (for `"all"`, the public
 * view and every seat's, as {public, seats}: the full view of a finished match). Where the log cannot
 * be followed, a turn's `problem` says why (after what its seats saw) and the replay stops there; a record
 * that cannot even be laid out in turns (another game version, a decision by a seat the game did not ask,
 * a turn out of order, decisions past the game's end) throws ReplayError.
 */
export function* replayMatch<R extends ReplayRow = StepRecordRow>(
  match: MatchRecord,
  steps: readonly R[],
  viewer?: Viewer | "all",
  { numeric = false, episode: playing, beforeStep }: ReplayOptions<R> = {},
): Generator<ReplayEvent<R>, void, void> {
  const game = playing?.game ?? replayableGame(match);
  const config = playing ? playing.config : match.config;
  const episode = playing ?? guarded(
    "config",
    {},
    "the stored config does not start a game",
    () => new Episode(game, match.config, match.seed),
  );
  const { state } = episode;
  const seats = game.seatCount(config);
  const mask = numeric ? maskFor(game, config) : undefined;
  const view = () => {
    if (viewer !== "all") return viewer === undefined ? undefined : game.observe(state, viewer);
    return {
      public: game.observe(state, "public"),
      seats: Array.from({ length: seats }, (_, s) => game.observe(state, s)),
    };
  };
  let turn = 0;
  for (let i = 0; i < steps.length;) {
    const first = steps[i];
    const toAct = episode.toAct;
    if (toAct.length === 0) {
      throw new ReplayError(
        "sequence",
        `the game ended after turn ${turn - 1}, but the log goes on`,
        { seq: first.seq, turn: first.turn },
        null,
        first.turn,
      );
    }
    if (first.turn !== turn) {
      throw new ReplayError(
        "sequence",
        `decision ${first.seq} is stored for turn ${first.turn}, but the game is at turn ${turn}`,
        { seq: first.seq, turn: first.turn },
        turn,
        first.turn,
      );
    }
    let end = i;
    while (end < steps.length && steps[end].turn === turn) end++;
    const rows = steps.slice(i, end);
    const moved = new Set<number>();
    for (const row of rows) {
      const wrong = !toAct.includes(row.seat)
        ? `at turn ${turn} the game asks seat ${toAct.join(" and ")}`
        : moved.has(row.seat)
        ? `seat ${row.seat} already moved at turn ${turn}`
        : undefined;
      if (wrong) {
        throw new ReplayError(
          "sequence",
          `decision ${row.seq} is seat ${row.seat}'s, but ${wrong}`,
          { seq: row.seq, turn },
          toAct,
          row.seat,
        );
      }
      moved.add(row.seat);
    }
    const observations = rows.map((row) => game.observe(state, row.seat));
    const before = view();
    const moves = movesOf(game, state, seats, rows);
    const face = numeric && mask && !(moves instanceof ReplayError)
      ? {
        legalIds: rows.map((row) => {
          game.legalMask(state, row.seat, mask);
          return maskIds(mask);
        }),
        actionIds: rows.map((row) => {
          const move = moves[row.seat];
          return move === undefined ? -1 : game.actionId(move, state, row.seat);
        }),
      }
      : {};
    const missing = moves instanceof ReplayError ? [] : toAct.filter((seat) => moves[seat] === undefined);
    if (moves instanceof ReplayError || missing.length > 0) {
      // The log ends inside this turn (a forfeit, an abort, a match still running), or cannot go past it.
      const problem = moves instanceof ReplayError ? moves : end < steps.length
        ? new ReplayError(
          "sequence",
          `turn ${turn} never got seat ${missing.join(" and ")}'s move, but the log goes on`,
          { seq: steps[end].seq, turn: steps[end].turn },
        )
        : undefined;
      // The seats that did move keep their numeric face (a simultaneous turn cut short by a withdrawal).
      yield {
        kind: "turn",
        turn,
        toAct,
        rows,
        observations,
        view: before,
        rewards: null,
        ...face,
        ...(problem && { problem }),
      };
      if (problem) return;
      break;
    }
    const applied = beforeStep?.(rows, toAct) ?? moves;
    const rewards = guarded("action", { seq: rows.at(-1)!.seq, turn }, `turn ${turn} cannot be applied`, () => [
      ...episode.step(applied),
    ]);
    yield { kind: "turn", turn, toAct, rows, observations, view: before, rewards, ...face };
    turn++;
    i = end;
  }
  yield {
    kind: "end",
    turns: turn,
    over: episode.over,
    returns: [...episode.returns()],
    view: view(),
  };
}
