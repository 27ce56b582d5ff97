import type { SkillRating } from "../../db/league.ts";
import { playerId } from "../../protocol/players.ts";
import { mayMeet, type PairingRule, type Ticket } from "./matchmaker.ts";

/**
 * Rating-aware pairing for the public queue: players of similar online rating meet first, and the band of ratings a
 * ticket accepts widens as it waits, so nobody waits long for a perfect opponent (Lichess's pool pairs the same way).
 * A player with no rating yet counts as a new one (OpenSkill's μ = 25). The band is in μ, whose new-player σ is 25/3.
 */

export interface RatedPairingOptions {
  /** A player's online rating in a game and variant, if it has one (read from a cache: pairing does not wait). */
  readonly ratingOf: (game: string, variant: string, player: string) => SkillRating | undefined;
  /** The band a ticket accepts as it joins (default 2: about a quarter of a new player's σ). */
  readonly band?: number;
  /** How much the band widens each second a ticket waits (default 1: anyone after ten seconds or so). */
  readonly widenPerSecond?: number;
  /** The clock (tests). */
  readonly now?: () => number;
}

/** The μ a new player starts at. */
const NEW_PLAYER_MU = 25;

export function ratedPairing(options: RatedPairingOptions): PairingRule {
  const band = options.band ?? 2;
  const widen = options.widenPerSecond ?? 1;
  const now = options.now ?? Date.now;
  return (waiting, seats) => {
    if (waiting.length < seats) return undefined;
    const at = now();
    const mu = new Map(waiting.map((t) => [
      t,
      options.ratingOf(t.game, t.variant, playerId(t.participant))?.mu ?? NEW_PLAYER_MU,
    ]));
    const accepts = (t: Ticket) => band + (widen * Math.max(0, at - t.since)) / 1000;
    // The oldest ticket that can be seated chooses first, its nearest ratings first; each pair of the group must
    // be within the wider of the two tickets' bands.
    for (const anchor of waiting) {
      const group = [anchor];
      const nearest = waiting
        .filter((t) => t !== anchor)
        .sort((a, b) => Math.abs(mu.get(a)! - mu.get(anchor)!) - Math.abs(mu.get(b)! - mu.get(anchor)!));
      for (const candidate of nearest) {
        if (group.length === seats) break;
        const fits = group.every((t) =>
          mayMeet(t, candidate) && Math.abs(mu.get(t)! - mu.get(candidate)!) <= Math.max(accepts(t), accepts(candidate))
        );
        if (fits) group.push(candidate);
      }
      if (group.length === seats) return group;
    }
    return undefined;
  };
}
