import type { TournamentFormat } from "../../../db/league.ts";

/**
 * Who plays whom, in which seats, on which seeds. Deterministic: a tournament's row (and, for Swiss, the results of
 * its earlier rounds) gives the same schedule every time, which is how an interrupted tournament resumes.
 *
 * Each pairing plays `matches` matches with the seats alternating. Plain matches draw a seed each; the k-th match
 * of every pairing shares its seed (common random numbers: pairings differ by their players, not their luck).
 * Duplicate matches come in pairs on one seed with the seats swapped, so each player is dealt both hands of every
 * deal and the luck of the cards cancels (duplicate poker, as in the Annual Computer Poker Competition).
 */

export interface PlannedSlot {
  readonly slot: number;
  readonly round: number;
  /** Player indexes in seat order. */
  readonly seats: readonly number[];
  readonly seed: string;
}

export const FORMATS: readonly TournamentFormat[] = ["round-robin", "swiss", "gauntlet", "duplicate"];

/** The pairings of the formats fixed from the start: every pair, or the first player against each other one. */
export function fixedPairings(format: Exclude<TournamentFormat, "swiss">, players: number): [number, number][] {
  if (format === "gauntlet") return Array.from({ length: players - 1 }, (_, j) => [0, j + 1]);
  const pairs: [number, number][] = [];
  for (let i = 0; i < players; i++) for (let j = i + 1; j < players; j++) pairs.push([i, j]);
  return pairs;
}

/** The slots of one round's pairings, numbered from `firstSlot`, made as they are asked for (a round may be long). */
export function* slotsOf(
  pairings: readonly (readonly [number, number])[],
  options: { matches: number; duplicate: boolean; round: number; firstSlot: number; seed: string },
): Generator<PlannedSlot> {
  const { matches, duplicate, round, seed } = options;
  let slot = options.firstSlot;
  for (const [a, b] of pairings) {
    for (let k = 0; k < matches; k++) {
      const deal = duplicate ? Math.floor(k / 2) : k;
      yield { slot: slot++, round, seats: k % 2 === 0 ? [a, b] : [b, a], seed: `${seed}/${round}/${deal}` };
    }
  }
}

/** Swiss rounds that separate `players` (⌈log₂ n⌉, at least one). */
export const defaultSwissRounds = (players: number): number => Math.max(1, Math.ceil(Math.log2(players)));

/**
 * One Swiss round: players ordered by points (ties by their order in the field) are paired top down, each with the
 * nearest player below it that it has not met, backtracking where a choice would force a rematch further down
 * (a bounded search; past it, or where no round without a rematch exists, the nearest player is taken). With an
 * odd field the lowest-placed player without a bye sits out (a bye scores a win in points, as in chess).
 */
export function swissPairings(
  points: readonly number[],
  met: ReadonlySet<string>,
  byes: ReadonlySet<number>,
): { pairings: [number, number][]; bye?: number } {
  const order = points.map((_, i) => i).sort((x, y) => points[y] - points[x] || x - y);
  // Byes in the order they are tried: lowest-placed first, those who had one last.
  const byeOrder = order.length % 2 === 1
    ? [...order].reverse().sort((x, y) => Number(byes.has(x)) - Number(byes.has(y)))
    : [undefined];
  let budget = 100_000;
  const search = (left: readonly number[]): [number, number][] | undefined => {
    if (left.length === 0) return [];
    const [first, ...rest] = left;
    for (let k = 0; k < rest.length; k++) {
      if (met.has(pairKey(first, rest[k])) || --budget < 0) continue;
      const below = search(rest.filter((_, i) => i !== k));
      if (below) return [[first, rest[k]], ...below];
    }
    return undefined;
  };
  for (const bye of byeOrder) {
    const field = order.filter((p) => p !== bye);
    const pairings = search(field);
    if (pairings) return bye === undefined ? { pairings } : { pairings, bye };
  }
  const bye = byeOrder[0];
  const field = order.filter((p) => p !== bye);
  const pairings: [number, number][] = [];
  for (let i = 0; i < field.length; i += 2) pairings.push([field[i], field[i + 1]]);
  return bye === undefined ? { pairings } : { pairings, bye };
}

export const pairKey = (a: number, b: number): string => (a < b ? `${a}-${b}` : `${b}-${a}`);
