import type { Action } from "../../games/core/action.ts";
import type { Episode } from "../../games/core/episode.ts";
import type { MatchRecord, StepRecordRow } from "../../db/records.ts";
import { ReplayError, replayMatch } from "../../db/replay.ts";

/** A stored log that does not replay to the same match (the game's rules or a strategy changed). */
export class RestoreError extends Error {
  constructor(matchId: string, message: string) {
    super(`match ${matchId} cannot be restored: ${message}`);
    this.name = "RestoreError";
  }
}

/** What a restored match does with its log, turn by turn. */
export interface Replayer {
  /** Takes a complete turn's logged decisions again (the state still before it), giving the moves to apply. */
  retake(rows: readonly StepRecordRow[], toAct: readonly number[]): readonly (Action | undefined)[];
  /** The turn was applied, with these rewards. */
  stepped(toAct: readonly number[], rewards: readonly number[]): void;
}

/**
 * Replays a match's log into its freshly started `episode` through the re-simulation every stored match goes
 * through (db/replay.ts): each complete turn is retaken and applied. Returns the rows of a turn the log ends
 * inside (a simultaneous step cut short by the stop, or a misconduct that ended the match), for the match to
 * take as it goes on; a log that cannot be followed is a RestoreError.
 */
export function replayLog(
  record: MatchRecord,
  steps: readonly StepRecordRow[],
  episode: Episode,
  replayer: Replayer,
): readonly StepRecordRow[] {
  let replayed = 0;
  if (steps.length === 0) return [];
  try {
    for (
      const event of replayMatch(record, steps, undefined, {
        episode,
        beforeStep: (rows, toAct) => replayer.retake(rows, toAct),
      })
    ) {
      if (event.kind === "end") break;
      if (event.problem) throw new RestoreError(record.id, event.problem.message);
      if (!event.rewards) return event.rows;
      replayer.stepped(event.toAct, event.rewards);
      replayed += event.rows.length;
      if (replayed === steps.length) break; // not asking for the end: the match goes on from here
    }
  } catch (error) {
    if (error instanceof ReplayError) throw new RestoreError(record.id, error.message);
    throw error;
  }
  return [];
}
