import type { Action } from "../../games/core/action.ts";
import type { AnyGame } from "../../games/core/game.ts";
import { Rng } from "../../games/core/rng.ts";
import { createStrategy } from "../../policies/baselines/index.ts";
import { GAME_STREAM } from "../../games/core/rng.ts";
import { playMatch } from "../../policies/simulate.ts";

/** A match as data: every step's moves and rewards, every viewer's observation before each step. */
export interface Recording {
  readonly moves: (Action | undefined)[][];
  readonly rewards: (readonly number[])[];
  readonly observations: string[];
  readonly returns: readonly number[];
}

function viewers(seats: number): (number | "public")[] {
  return [...Array.from({ length: seats }, (_, s) => s), "public"];
}

/** Plays a match with the given strategies (random by default) and records it. */
export function record(game: AnyGame, config: unknown, seed: string, specs?: string[]): Recording {
  const seats = game.seatCount(config);
  const strategies = (specs ?? new Array(seats).fill("random")).map((s) => createStrategy(game.id, s));
  const moves: (Action | undefined)[][] = [];
  const rewards: (readonly number[])[] = [];
  const outcome = playMatch(game, config, strategies, seed, (m, r) => {
    moves.push(m.map((a) => (a === undefined ? undefined : JSON.parse(JSON.stringify(a)))));
    rewards.push([...r]);
  });
  return { ...replay(game, config, seed, moves), returns: outcome.returns };
}

/** Re-plays recorded moves from the seed alone, as the replay store will. */
export function replay(game: AnyGame, config: unknown, seed: string, moves: (Action | undefined)[][]): Recording {
  const rng = new Rng(seed, GAME_STREAM);
  const state = game.init(config, rng);
  const seats = game.seatCount(config);
  const observations: string[] = [];
  const rewards: (readonly number[])[] = [];
  for (const step of moves) {
    observations.push(JSON.stringify(viewers(seats).map((v) => game.observe(state, v))));
    rewards.push([...game.apply(state, step, rng)]);
  }
  observations.push(JSON.stringify(viewers(seats).map((v) => game.observe(state, v))));
  return { moves, rewards, observations, returns: game.returns(state) };
}
