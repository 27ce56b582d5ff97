import { positionOf, QueryError } from "./query.ts";
import type { MatchRecord, StepRecordRow } from "./records.ts";
import { ReplayError, replayMatch, type ReplayProblem } from "./replay.ts";
import type { MatchPosition, ReplayStore } from "./store.ts";

/**
 * `ludus replay verify`: each stored match re-simulated from (game, version, config, seed, actions) and
 * compared, decision by decision, with what was stored.
 */

/** What a difference is about: the record's structure (see ReplayProblem) or a stored value. */
export type DifferenceKind = ReplayProblem | "observation" | "rewards" | "returns" | "steps";

export interface Difference {
  /** The decision it is at, when it is at one. */
  readonly seq?: number;
  readonly turn?: number;
  readonly what: DifferenceKind;
  /** One sentence saying what differs. */
  readonly message: string;
  /** What the re-simulation gives. */
  readonly expected: unknown;
  /** What the store holds. */
  readonly stored: unknown;
}

export interface VerifyReport {
  readonly matchId: string;
  readonly game: string;
  /** Re-simulated and nothing differs. */
  readonly ok: boolean;
  /** False when this build cannot re-simulate the match at all: its game or game version is gone. */
  readonly verifiable: boolean;
  /** Stored decisions compared with the re-simulation. */
  readonly stepsChecked: number;
  /** The first differences in sequence order, at most MAX_DIFFERENCES; `differenceCount` counts them all. */
  readonly differences: readonly Difference[];
  readonly differenceCount: number;
}

/**
 * A changed action makes every later observation differ: the first few say where a record went wrong,
 * the rest only repeat it.
 */
export const MAX_DIFFERENCES = 20;

/**
 * Whether a value equals its stored JSON: key order aside (jsonb does not keep it), and undefined fields
 * absent, as JSON.stringify writes them.
 */
function jsonEqual(value: unknown, stored: unknown): boolean {
  if (value === stored) return true;
  if (typeof value !== "object" || typeof stored !== "object" || value === null || stored === null) return false;
  if (Array.isArray(value) || Array.isArray(stored)) {
    if (!Array.isArray(value) || !Array.isArray(stored) || value.length !== stored.length) return false;
    return value.every((v, i) => jsonEqual(v ?? null, stored[i]));
  }
  let fields = 0;
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined) continue;
    fields++;
    if (!Object.hasOwn(stored, key) || !jsonEqual(v, (stored as Record<string, unknown>)[key])) return false;
  }
  return fields === Object.keys(stored).length;
}

/** A value as it reads back from the store: undefined fields dropped, -0 as 0, and so on. */
const asStored = (value: unknown): unknown => JSON.parse(JSON.stringify(value) ?? "null");

const short = (value: unknown): string => {
  const text = value === undefined ? "nothing" : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

/** Where two JSON values differ, as `path (game X, stored Y)`: the first few places, for a message. */
function whereDiffer(expected: unknown, stored: unknown, path = "", found: string[] = []): string[] {
  if (found.length >= 3 || jsonEqual(expected, stored)) return found;
  const both = typeof expected === "object" && typeof stored === "object" && expected !== null && stored !== null &&
    Array.isArray(expected) === Array.isArray(stored);
  if (!both) {
    found.push(`${path || "the whole of it"} (game ${short(expected)}, stored ${short(stored)})`);
    return found;
  }
  const keys = new Set([...Object.keys(expected), ...Object.keys(stored)]);
  for (const key of keys) {
    const at = Array.isArray(expected) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    whereDiffer((expected as Record<string, unknown>)[key], (stored as Record<string, unknown>)[key], at, found);
  }
  return found;
}

/** Decisions numbered 1, 2, 3… without gaps, their turns never going back. */
function sequenceDifferences(steps: readonly StepRecordRow[]): Difference[] {
  const found: Difference[] = [];
  let next = 1;
  let lastTurn = -1;
  for (const row of steps) {
    if (row.seq !== next) {
      found.push({
        seq: row.seq,
        turn: row.turn,
        what: "sequence",
        message: `decision ${next} should come next, but the log has ${row.seq}`,
        expected: next,
        stored: row.seq,
      });
    }
    if (row.turn < lastTurn) {
      found.push({
        seq: row.seq,
        turn: row.turn,
        what: "sequence",
        message: `decision ${row.seq} is stored for turn ${row.turn}, after a decision of turn ${lastTurn}`,
        expected: lastTurn,
        stored: row.turn,
      });
    }
    next = row.seq + 1;
    lastTurn = Math.max(lastTurn, row.turn);
  }
  return found;
}

/** Re-simulates one match from its record and decisions (in sequence order) and reports what differs. */
export function verifyMatch(match: MatchRecord, steps: readonly StepRecordRow[]): VerifyReport {
  const found = sequenceDifferences(steps);
  let checked = 0;
  try {
    for (const event of replayMatch(match, steps)) {
      if (event.kind === "end") {
        found.push(...endDifferences(match, event.turns, event.over, event.returns));
        break;
      }
      const { turn, rows, rewards } = event;
      rows.forEach((row, k) => {
        checked++;
        if (!jsonEqual(event.observations[k], row.observation)) {
          const expected = asStored(event.observations[k]);
          found.push({
            seq: row.seq,
            turn,
            what: "observation",
            message: `decision ${row.seq}: seat ${row.seat}'s stored observation differs at ${
              whereDiffer(expected, row.observation).join("; ")
            }`,
            expected,
            stored: row.observation,
          });
        }
      });
      if (event.problem) throw event.problem;
      const carriers = rows.filter((row) => row.rewards !== null);
      const last = rows.at(-1)!;
      if (rewards === null) {
        for (const row of carriers) {
          found.push({
            seq: row.seq,
            turn,
            what: "rewards",
            message: `decision ${row.seq} carries rewards, but turn ${turn} never completed`,
            expected: null,
            stored: row.rewards,
          });
        }
      } else if (carriers.length !== 1) {
        found.push({
          seq: (carriers[1] ?? last).seq,
          turn,
          what: "rewards",
          message: carriers.length === 0
            ? `turn ${turn} completed, but none of its decisions carries its rewards`
            : `turn ${turn}'s rewards are on decisions ${carriers.map((r) => r.seq).join(", ")}; only one carries them`,
          expected: rewards,
          stored: carriers.length === 0 ? null : carriers.map((r) => r.rewards),
        });
      } else if (!jsonEqual(rewards, carriers[0].rewards)) {
        found.push({
          seq: carriers[0].seq,
          turn,
          what: "rewards",
          message: `decision ${carriers[0].seq}: turn ${turn}'s stored rewards are not the game's`,
          expected: rewards,
          stored: carriers[0].rewards,
        });
      }
    }
  } catch (error) {
    if (!(error instanceof ReplayError)) throw error;
    const difference: Difference = {
      ...error.at,
      what: error.what,
      message: error.message,
      expected: error.expected,
      stored: error.stored,
    };
    if (error.what === "game" || error.what === "version") {
      return report(match, false, 0, [difference]);
    }
    found.push(difference);
  }
  return report(match, true, checked, found);
}

/** How a re-simulation ended against how the match is stored as ending. */
function endDifferences(
  match: MatchRecord,
  turns: number,
  over: boolean,
  returns: readonly number[],
): Difference[] {
  const found: Difference[] = [];
  if (match.endReason === "completed" && !over) {
    found.push({
      turn: turns,
      what: "sequence",
      message: `the match is stored as completed, but its log stops at turn ${turns} with the game still going`,
      expected: "more decisions",
      stored: turns,
    });
  } else if (match.endReason === "completed" && !jsonEqual(returns, match.returns)) {
    found.push({
      what: "returns",
      message: "the stored returns are not the game's",
      expected: returns,
      stored: match.returns,
    });
  }
  if (match.endedAt !== null && match.steps !== turns) {
    found.push({
      what: "steps",
      message: `the match is stored as ${match.steps} steps long, but its log replays ${turns}`,
      expected: turns,
      stored: match.steps,
    });
  }
  return found;
}

function report(match: MatchRecord, verifiable: boolean, checked: number, found: Difference[]): VerifyReport {
  // Stable: differences at a decision in sequence order, then those about the whole match.
  const sorted = found.map((d, i) => [d, i] as const).sort(([a, i], [b, j]) =>
    (a.seq ?? Infinity) - (b.seq ?? Infinity) || i - j
  );
  return {
    matchId: match.id,
    game: match.game,
    ok: verifiable && found.length === 0,
    verifiable,
    stepsChecked: checked,
    differences: sorted.slice(0, MAX_DIFFERENCES).map(([d]) => d),
    differenceCount: found.length,
  };
}

export interface VerifyStoreOptions {
  /** Only this match; without it, every match in the store. */
  readonly matchId?: string;
  /** Matches read (with their steps) at a time, so a whole store is verified in bounded memory. */
  readonly pageSize?: number;
}

/** Verifies one match or every match of a store, oldest first, a page at a time. */
export async function* verifyStore(
  store: ReplayStore,
  options: VerifyStoreOptions = {},
): AsyncGenerator<VerifyReport, void, void> {
  if (options.matchId !== undefined) {
    const match = await store.match(options.matchId);
    if (!match) throw new QueryError(`no match \`${options.matchId}\` in the replay store at ${store.where}`);
    yield verifyMatch(match, await store.steps(match.id));
    return;
  }
  const pageSize = options.pageSize ?? 50;
  let after: MatchPosition | undefined;
  for (;;) {
    const page = await store.matches({}, pageSize, after);
    if (page.length === 0) return;
    const steps = await store.stepsOf(page.map((m) => m.id));
    for (const match of page) yield verifyMatch(match, steps.get(match.id)!);
    if (page.length < pageSize) return;
    after = positionOf(page.at(-1)!);
  }
}
