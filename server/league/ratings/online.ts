import { ordinal, rate, rating } from "openskill";
import type { SkillRating } from "../../../db/league.ts";

/**
 * Online ratings: OpenSkill's Plackett–Luce model (Weng & Lin 2011, the `openskill` package), updated as each rated
 * match ends. Every seat is a team of one, ranked by its return; seats whose returns tie draw. It takes any number
 * of seats, so a Donor Game of twelve is rated like a heads-up hand.
 */

/** A player who has not played yet. */
export const newRating = (): SkillRating => rating();

/** The ratings after one match: `before[i]` is the rating of the player in seat i, `returns[i]` that seat's return. */
export function rateMatch(before: readonly SkillRating[], returns: readonly number[]): SkillRating[] {
  if (before.length !== returns.length || before.length < 2) {
    throw new RangeError(`a rated match needs one rating per seat and at least two seats, got ${before.length}`);
  }
  const after = rate(before.map((r) => [{ mu: r.mu, sigma: r.sigma }]), { score: [...returns] });
  return after.map(([r]) => ({ mu: r.mu, sigma: r.sigma }));
}

/** The conservative estimate a leaderboard sorts by: μ − 3σ (a player is this good with ~99.7 % confidence). */
export const conservative = (r: SkillRating): number => ordinal(r);
