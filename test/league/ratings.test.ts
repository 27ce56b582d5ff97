import { describe, expect, it } from "vitest";
import { Rng } from "../../games/core/rng.ts";
import {
  bootstrapBradleyTerry,
  type Comparison,
  eloOf,
  fitBradleyTerry,
  quantile,
  scoreOf,
} from "../../server/league/ratings/bradley-terry.ts";
import { conservative, newRating, rateMatch } from "../../server/league/ratings/online.ts";
import { fitBoard } from "../../server/league/board.ts";
import { alphaRank } from "../../server/league/ratings/alpha-rank.ts";

/** Matches between random pairs of players of known log-strengths, won with Bradley–Terry's odds. */
function simulated(theta: readonly number[], matches: number, seed: number): Comparison[] {
  const rng = new Rng(seed, 0);
  return Array.from({ length: matches }, () => {
    const a = rng.int(theta.length);
    const b = (a + 1 + rng.int(theta.length - 1)) % theta.length;
    const p = 1 / (1 + Math.exp(theta[b] - theta[a]));
    return { a, b, score: rng.float() < p ? 1 : 0 };
  });
}

describe("Bradley–Terry ratings", () => {
  it("recovers the strengths that generated the results", () => {
    const theta = [-1, -0.4, 0, 0.3, 1.1];
    const fitted = fitBradleyTerry(theta.length, simulated(theta, 40_000, 3), { prior: 0.01 });
    fitted.forEach((t, i) => expect(t).toBeCloseTo(theta[i], 1));
    expect(fitted.reduce((s, t) => s + t, 0)).toBeCloseTo(0, 9);
  });

  it("keeps a player who won every match at a finite rating, above the rest", () => {
    const comparisons = [
      ...Array.from({ length: 20 }, () => ({ a: 0, b: 1, score: 1 })),
      ...Array.from({ length: 20 }, () => ({ a: 2, b: 0, score: 0 })),
      ...Array.from({ length: 20 }, () => ({ a: 1, b: 2, score: 0.5 })),
    ];
    const fitted = fitBradleyTerry(3, comparisons);
    expect(fitted.every(Number.isFinite)).toBe(true);
    expect(fitted[0]).toBeGreaterThan(fitted[1] + 1);
    expect(fitted[1]).toBeCloseTo(fitted[2], 9);
  });

  it("gives intervals that cover the truth and narrow with more matches", () => {
    const theta = [-0.5, 0, 0.5];
    const width = (matches: number) => {
      const fit = bootstrapBradleyTerry(3, simulated(theta, matches, 7).map((c) => [c]), { samples: 200, seed: 1 });
      fit.theta.forEach((_, i) => {
        expect(fit.low[i]).toBeLessThanOrEqual(fit.theta[i]);
        expect(fit.high[i]).toBeGreaterThanOrEqual(fit.theta[i]);
        expect(theta[i]).toBeGreaterThan(fit.low[i] - 0.05);
        expect(theta[i]).toBeLessThan(fit.high[i] + 0.05);
      });
      return fit.high[2] - fit.low[2];
    };
    const few = width(600);
    const many = width(9600);
    expect(many).toBeLessThan(few / 2.5); // ~√16 = 4 in theory
  });

  it("resamples a unit whole: luck that cancels inside a unit stays cancelled", () => {
    // Each unit: one deal won by whoever sat first (pure luck), played twice with the seats swapped.
    const rng = new Rng(5, 0);
    const units = Array.from({ length: 400 }, () => {
      const first = rng.float() < 0.5 ? 1 : 0;
      return [{ a: 0, b: 1, score: first }, { a: 1, b: 0, score: first }];
    });
    const paired = bootstrapBradleyTerry(2, units, { seed: 2 });
    const apart = bootstrapBradleyTerry(2, units.flat().map((c) => [c]), { seed: 2 });
    expect(paired.theta[0]).toBeCloseTo(0, 9);
    expect(paired.high[0] - paired.low[0]).toBeLessThan(1e-9);
    expect(apart.high[0] - apart.low[0]).toBeGreaterThan(0.1);
  });

  it("is deterministic for a seed", () => {
    const units = simulated([0, 1, 2], 500, 1).map((c) => [c]);
    expect(bootstrapBradleyTerry(3, units, { seed: "x" })).toEqual(bootstrapBradleyTerry(3, units, { seed: "x" }));
  });

  it("refuses what it cannot rate, saying what is allowed", () => {
    expect(() => fitBradleyTerry(2, [{ a: 0, b: 2, score: 1 }])).toThrow(/player 2 is not one of the 2 players/);
    expect(() => fitBradleyTerry(2, [{ a: 1, b: 1, score: 1 }])).toThrow(/cannot be compared with itself/);
    expect(() => fitBradleyTerry(2, [{ a: 0, b: 1, score: 1.5 }])).toThrow(/score must be in \[0, 1\]/);
    expect(() => fitBradleyTerry(2, [], { prior: 0 })).toThrow(/positive number of virtual games/);
    expect(() => bootstrapBradleyTerry(2, [], { samples: 1 })).toThrow(/samples must be an integer ≥ 2/);
    expect(() => bootstrapBradleyTerry(2, [], { level: 1 })).toThrow(/level must be in \(0, 1\)/);
  });

  it("scores margins against the largest one, and puts log-strengths on the Elo scale", () => {
    expect(scoreOf([1, -1], 2)).toBe(1);
    expect(scoreOf([0, 0], 2)).toBe(0.5);
    expect(scoreOf([-1, 1], 4)).toBe(0.25);
    expect(scoreOf([3, 3], 0)).toBe(0.5);
    expect(eloOf(0)).toBe(1500);
    expect(eloOf(Math.LN10)).toBeCloseTo(1900, 9);
    expect(quantile([3, 1, 2], 0.5)).toBe(2);
    expect(quantile([1, 2], 0.25)).toBe(1.25);
  });
});

describe("online ratings (OpenSkill)", () => {
  it("moves the winner up and the loser down, leaves a draw level, and grows more certain", () => {
    const [a, b] = [newRating(), newRating()];
    const [wa, lb] = rateMatch([a, b], [2, -2]);
    expect(wa.mu).toBeGreaterThan(a.mu);
    expect(lb.mu).toBeLessThan(b.mu);
    expect(wa.sigma).toBeLessThan(a.sigma);
    const [da, db] = rateMatch([a, b], [0, 0]);
    expect(da.mu).toBeCloseTo(db.mu, 9);
    expect(conservative(wa)).toBeGreaterThan(conservative(lb));
  });

  it("rates a match of many seats by their returns", () => {
    const before = Array.from({ length: 12 }, newRating);
    const after = rateMatch(before, before.map((_, i) => i));
    for (let i = 1; i < 12; i++) expect(after[i].mu).toBeGreaterThan(after[i - 1].mu);
    expect(() => rateMatch([newRating()], [1])).toThrow(/at least two seats/);
  });
});

describe("published boards", () => {
  const result = (game: string, i: number, players: string[], returns: number[]) => ({
    matchId: `${game}-${i}`,
    game,
    variant: "v",
    players,
    returns,
  });

  it("weighs every game alike when pooled, whatever its number of matches", () => {
    const results = [
      // x beats y 3 times in 4 in a game with many matches, y beats x as often in a game with few.
      ...Array.from({ length: 400 }, (_, i) => result("a", i, ["x", "y"], i % 4 ? [1, -1] : [-1, 1])),
      ...Array.from({ length: 8 }, (_, i) => result("b", i, ["x", "y"], i % 4 ? [-1, 1] : [1, -1])),
    ];
    const rows = fitBoard(results);
    const [x, y] = ["x", "y"].map((p) => rows.find((r) => r.player === p)!);
    expect(Math.abs(x.rating - y.rating)).toBeLessThan(1);
    expect(x.matches).toBe(408);
    // Alone, the big game would rank x far above y.
    const [bx, by] = ["x", "y"].map((p) => fitBoard(results.slice(0, 400)).find((r) => r.player === p)!);
    expect(bx.rating - by.rating).toBeGreaterThan(100);
  });

  it("rates a match of many seats as every pair of its seats, and marks thin records provisional", () => {
    const rows = fitBoard(Array.from({ length: 30 }, (_, i) => result("donor", i, ["a", "b", "c"], [3, 2, 1])));
    expect(rows.map((r) => r.player)).toEqual(["a", "b", "c"]);
    expect(rows.every((r) => r.matches === 30)).toBe(true);
    const thin = fitBoard([result("g", 0, ["a", "b"], [1, 0])]);
    expect(thin.every((r) => r.provisional)).toBe(true);
  });
});

describe("α-Rank", () => {
  it("shares the mass of a rock-paper-scissors cycle and gives a dominant strategy all of it", () => {
    const rps = [[0, -1, 1], [1, 0, -1], [-1, 1, 0]];
    for (const mass of alphaRank(rps)) expect(mass).toBeCloseTo(1 / 3, 6);
    // Paper beats rock, loses to scissors; a fourth strategy beats all three.
    const dominated = [[0, -1, 1, -1], [1, 0, -1, -1], [-1, 1, 0, -1], [1, 1, 1, 0]];
    expect(alphaRank(dominated)[3]).toBeGreaterThan(0.99);
    expect(alphaRank([[0]])).toEqual([1]);
    expect(() => alphaRank([[0, 1]])).toThrow(/must be 1 × 1/);
  });
});
