import type { RatingRecord, SlotRecord, TournamentRecord } from "../../../db/league.ts";
import { playerId } from "../../../protocol/players.ts";
import { bootstrapBradleyTerry, type Comparison, eloOf, scoreOf } from "../ratings/bradley-terry.ts";
import { conservative } from "../ratings/online.ts";
import { alphaRank } from "../ratings/alpha-rank.ts";
import { pairKey } from "./schedule.ts";
import { estimate } from "../estimate.ts";

/**
 * A tournament's table, computed from its stored slots alone: a resumed or re-read tournament gives the same table,
 * and a slot holds one match, so none counts twice.
 */

export interface StandingRow {
  readonly rank: number;
  /** The player as the tournament named it. */
  readonly player: string;
  /** As the store records who sat: `kind:name` (a policy's exact version). */
  readonly id: string | null;
  /** Bradley–Terry on the Elo scale (1500 the field's average), with its bootstrap interval. */
  readonly rating: number;
  readonly ci: readonly [number, number];
  readonly matches: number;
  /** By the sign of the margin over the opponent. */
  readonly wins: number;
  readonly draws: number;
  readonly losses: number;
  /** Mean return per match, and the half-width of its 95 % interval. */
  readonly meanReturn: number;
  readonly meanReturnCi95: number;
  /** Swiss: a pairing won 1, drawn ½, a bye 1. Null for the other formats. */
  readonly points: number | null;
  /** The online rating (OpenSkill) after this tournament's matches, and its conservative μ − 3σ. */
  readonly skill: { readonly mu: number; readonly sigma: number; readonly ordinal: number } | null;
  /** Its α-Rank mass (see `Standings.alphaRank`); null where α-Rank does not apply. */
  readonly alphaRank: number | null;
}

export interface PayoffCell {
  /** The row player's mean return per match against the column player, both seats pooled. */
  readonly mean: number;
  readonly ci95: number;
  readonly matches: number;
}

export interface Standings {
  readonly tournament: TournamentRecord;
  readonly slots: { readonly planned: number; readonly completed: number; readonly failed: number };
  readonly standings: readonly StandingRow[];
  /** payoff.cells[i][j]: player i (in the tournament's order) against player j; null where they never met. */
  readonly payoff: { readonly players: readonly string[]; readonly cells: readonly (readonly (PayoffCell | null)[])[] };
  /** How a match's margin became a Bradley–Terry score. */
  readonly scoring: string;
  /**
   * α-Rank over the payoff matrix, for a non-transitive field a rating cannot order (Swiss and round robins of
   * zero-sum games, every pair met); otherwise null with the reason in `alphaRankWhyNot`.
   */
  readonly alphaRank: { readonly alpha: number; readonly populationSize: number } | null;
  readonly alphaRankWhyNot?: string;
}

const completed = (s: SlotRecord): s is SlotRecord & { returns: readonly number[] } =>
  s.endReason === "completed" && s.returns !== null;

/** Swiss points after the rounds before `round`, who met whom, and who had a bye. */
export function swissTable(players: number, slots: readonly SlotRecord[], round: number) {
  const points = new Array<number>(players).fill(0);
  const met = new Set<string>();
  const byes = new Set<number>();
  for (let r = 0; r < round; r++) {
    const inRound = slots.filter((s) => s.round === r);
    const margins = new Map<string, { a: number; b: number; margin: number }>();
    for (const s of inRound) {
      const [x, y] = s.seats;
      const key = pairKey(x, y);
      met.add(key);
      const entry = margins.get(key) ?? { a: Math.min(x, y), b: Math.max(x, y), margin: 0 };
      if (completed(s)) entry.margin += x === entry.a ? s.returns[0] - s.returns[1] : s.returns[1] - s.returns[0];
      margins.set(key, entry);
    }
    for (const { a, b, margin } of margins.values()) {
      points[a] += margin > 0 ? 1 : margin === 0 ? 0.5 : 0;
      points[b] += margin < 0 ? 1 : margin === 0 ? 0.5 : 0;
    }
    const seated = new Set(inRound.flatMap((s) => s.seats));
    for (let p = 0; p < players; p++) {
      if (inRound.length > 0 && !seated.has(p)) {
        points[p] += 1;
        byes.add(p);
      }
    }
  }
  return { points, met, byes };
}

export function standings(
  t: TournamentRecord,
  slots: readonly SlotRecord[],
  plannedTotal: number,
  online: readonly RatingRecord[],
): Standings {
  const n = t.players.length;
  const done = slots.filter(completed);
  const failed = slots.filter((s) => s.endReason !== null && !completed(s)).length;
  const scale = Math.max(0, ...done.map((s) => Math.abs(s.returns[0] - s.returns[1])));
  // Resampled whole: a match, or both matches of a duplicate deal (one seed, one pairing, one round).
  const units = new Map<string, Comparison[]>();
  const returns: number[][] = Array.from({ length: n }, () => []);
  const wdl = Array.from({ length: n }, () => [0, 0, 0]);
  /** cells[i][j]: what i earned in each match against j. */
  const cells: number[][][] = Array.from({ length: n }, () => Array.from({ length: n }, () => []));
  const ids = new Array<string | null>(n).fill(null);
  for (const s of done) {
    const [a, b] = s.seats;
    const key = t.duplicate ? `${s.round}|${pairKey(a, b)}|${s.seed}` : `${s.slot}`;
    const unit = units.get(key) ?? [];
    unit.push({ a, b, score: scoreOf(s.returns, scale) });
    units.set(key, unit);
    s.seats.forEach((p, seat) => {
      const own = s.returns[seat], other = s.returns[1 - seat];
      returns[p].push(own);
      wdl[p][own > other ? 0 : own === other ? 1 : 2]++;
      cells[p][s.seats[1 - seat]].push(own);
      const record = s.seatRecords?.[seat];
      if (record && ids[p] === null) ids[p] = playerId(record);
    });
  }
  const fitted = bootstrapBradleyTerry(n, [...units.values()], { seed: t.seed });
  const evolution = alphaRankOf(done, cells);
  const swiss = t.format === "swiss" ? swissTable(n, slots, Math.max(0, ...slots.map((s) => s.round + 1))) : undefined;
  const skill = new Map(online.map((r) => [r.player, r]));
  const rows = t.players.map((player, i) => {
    const mine = estimate(returns[i]);
    const online = ids[i] ? skill.get(ids[i]!) : undefined;
    return {
      player,
      id: ids[i],
      rating: round(eloOf(fitted.theta[i])),
      ci: [round(eloOf(fitted.low[i])), round(eloOf(fitted.high[i]))] as const,
      matches: returns[i].length,
      wins: wdl[i][0],
      draws: wdl[i][1],
      losses: wdl[i][2],
      meanReturn: round(mine.mean, 4),
      meanReturnCi95: round(mine.ci95, 4),
      points: swiss ? swiss.points[i] : null,
      skill: online
        ? { mu: round(online.mu, 3), sigma: round(online.sigma, 3), ordinal: round(conservative(online), 3) }
        : null,
      alphaRank: evolution.mass ? round(evolution.mass[i], 4) : null,
    };
  });
  const order = rows.map((_, i) => i).sort((x, y) =>
    (swiss ? swiss.points[y] - swiss.points[x] : 0) || fitted.theta[y] - fitted.theta[x] || x - y
  );
  return {
    tournament: t,
    slots: { planned: plannedTotal, completed: done.length, failed },
    standings: order.map((i, rank) => ({ rank: rank + 1, ...rows[i] })),
    payoff: {
      players: t.players,
      cells: cells.map((row) =>
        row.map((earned) => {
          if (earned.length === 0) return null;
          const { mean, ci95 } = estimate(earned);
          return { mean: round(mean, 4), ci95: round(ci95, 4), matches: earned.length };
        })
      ),
    },
    alphaRank: evolution.mass ? { alpha: ALPHA, populationSize: POPULATION } : null,
    ...(evolution.whyNot ? { alphaRankWhyNot: evolution.whyNot } : {}),
    scoring: `a match scores ½ + margin / (2 × ${scale}), ${scale} being the largest margin of the tournament's ` +
      "matches: a win 1, a draw ½, and in games of margins (chips) the size of the win counts",
  };
}

const round = (x: number, digits = 1): number => Number(x.toFixed(digits));

const ALPHA = 50;
const POPULATION = 50;

/** α-Rank's mass per player, where the table allows it: zero-sum matches (so a player's own cell is 0), all pairs met. */
function alphaRankOf(
  done: readonly (SlotRecord & { returns: readonly number[] })[],
  cells: readonly (readonly (readonly number[])[])[],
): { mass?: number[]; whyNot?: string } {
  if (done.length === 0) return { whyNot: "no match counted yet" };
  if (done.some((s) => Math.abs(s.returns[0] + s.returns[1]) > 1e-9)) {
    return { whyNot: "the game is not zero-sum: α-Rank needs each player's payoff against itself, not played here" };
  }
  const missing = cells.some((row, i) => row.some((earned, j) => i !== j && earned.length === 0));
  if (missing) {
    return { whyNot: "not every pair of players met (a gauntlet, or a Swiss field): the payoff table has holes" };
  }
  const payoff = cells.map((row, i) => row.map((earned, j) => (i === j ? 0 : estimate(earned).mean)));
  return { mass: alphaRank(payoff, { alpha: ALPHA, populationSize: POPULATION }) };
}
