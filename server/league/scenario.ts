import { configure } from "../../games/core/config.ts";
import { Rng } from "../../games/core/rng.ts";
import { getGame } from "../../games/registry.ts";
import { type Estimate, estimate } from "./estimate.ts";
import { inParallel } from "./in-parallel.ts";
import type { LiveMatches } from "../match/live-matches.ts";

/**
 * Melting Pot's evaluation (Leibo et al. 2021; Agapiou et al. 2022): focal players dropped into a background
 * population. Each match seats `focalSeats` focal players (drawn from the focal population) at random seats, and the
 * rest from the background population; the focal players' per-capita return is the score, reported beside the
 * background's in the same matches and beside the resident baseline: the same matches (same seeds, same seats) with
 * background players in the focal seats too. A focal player that does better than the residents it replaced has
 * learned something about this population; one that lowers the background's return is exploiting it.
 */

export class ScenarioError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ScenarioError";
  }
}

export interface ScenarioOptions {
  readonly game: string;
  readonly variant?: string;
  readonly config?: Record<string, unknown>;
  readonly focal: readonly string[];
  readonly background: readonly string[];
  /** Focal seats in each match (default 1); at least one seat is left to the background. */
  readonly focalSeats?: number;
  readonly matches: number;
  readonly seed?: string;
  /** Matches played at once (default 64). */
  readonly concurrency?: number;
}

export interface ScenarioReport {
  readonly game: string;
  readonly variant: string;
  readonly seats: number;
  readonly focalSeats: number;
  readonly focal: readonly string[];
  readonly background: readonly string[];
  readonly matches: number;
  readonly seed: string;
  /** The focal players' per-capita return. */
  readonly focalPerCapita: Estimate;
  /** The background players' per-capita return in the same matches. */
  readonly backgroundPerCapita: Estimate;
  /** The per-capita return of the residents the focal players replaced (same matches, background in every seat). */
  readonly residentPerCapita: Estimate;
  /** Focal minus resident per capita, paired match by match. */
  readonly focalVsResident: Estimate;
}

export async function runScenario(live: LiveMatches, options: ScenarioOptions): Promise<ScenarioReport> {
  const game = getGame(options.game);
  const { variant, config } = configure(game, options.config ?? {}, options.variant);
  const seats = game.seatCount(config);
  const focalSeats = options.focalSeats ?? 1;
  if (!Number.isInteger(focalSeats) || focalSeats < 1 || focalSeats >= seats) {
    throw new ScenarioError(
      `${game.id} (${variant}) has ${seats} seats: focal seats must be from 1 to ${seats - 1}, got ${focalSeats}`,
    );
  }
  if (options.focal.length === 0 || options.background.length === 0) {
    throw new ScenarioError("a scenario needs at least one focal player and one background player");
  }
  for (const spec of [...options.focal, ...options.background]) live.checkInProcess(spec, game, config);
  const seed = options.seed ?? "1";
  // Each match's line-up, drawn once: the scenario's and the residents' differ only in the focal seats.
  const rng = new Rng(`${seed}/line-ups`, 0);
  const lineUps = Array.from({ length: options.matches }, () => {
    const focal = new Set(rng.shuffle(Array.from({ length: seats }, (_, i) => i)).slice(0, focalSeats));
    const background = Array.from({ length: seats }, () => rng.pick(options.background));
    const scenario = background.map((b, s) => (focal.has(s) ? rng.pick(options.focal) : b));
    return { focal, scenario, resident: background };
  });
  const play = async (specs: readonly string[], k: number): Promise<readonly number[]> => {
    const match = await live.createWhenWritable({
      game: game.id,
      variant,
      config: options.config,
      seats: specs.map((strategy) => ({ strategy })),
      seed: `${seed}/${k}`,
    });
    const end = await match.durableEnd();
    if (end.reason !== "completed") throw new ScenarioError(`match ${match.id} ended ${end.reason}`);
    return end.returns;
  };
  const focal: number[] = [], background: number[] = [], resident: number[] = [];
  await inParallel(lineUps.length, options.concurrency ?? 64, async (k) => {
    const { focal: seatsOf, scenario, resident: residents } = lineUps[k];
    const [withFocal, withResidents] = await Promise.all([play(scenario, k), play(residents, k)]);
    const perCapita = (returns: readonly number[], inFocal: boolean) => {
      const picked = returns.filter((_, s) => seatsOf.has(s) === inFocal);
      return picked.reduce((a, b) => a + b, 0) / picked.length;
    };
    focal.push(perCapita(withFocal, true));
    background.push(perCapita(withFocal, false));
    resident.push(perCapita(withResidents, true));
  });

  return {
    game: game.id,
    variant,
    seats,
    focalSeats,
    focal: options.focal,
    background: options.background,
    matches: options.matches,
    seed,
    focalPerCapita: estimate(focal),
    backgroundPerCapita: estimate(background),
    residentPerCapita: estimate(resident),
    // Pushed together, the lists pair match by match.
    focalVsResident: estimate(focal.map((f, k) => f - resident[k])),
  };
}
