import { expect } from "vitest";
import { ActionError } from "../../games/core/action.ts";
import type { AnyGame } from "../../games/core/game.ts";
import type { Rng } from "../../games/core/rng.ts";

/** The action, or a thrown error carrying the game's own sentence. */
export function must<A>(result: A | ActionError): A {
  if (result instanceof ActionError) throw new Error(result.message);
  return result;
}

/** Asserts the result is an ActionError and returns it. */
export function actionError(result: unknown): ActionError {
  expect(result).toBeInstanceOf(ActionError);
  return result as ActionError;
}

/** Parses each input for the one seat to act and applies it; returns the last step's rewards. */
export function playInputs(game: AnyGame, state: unknown, rng: Rng, ...inputs: unknown[]): readonly number[] {
  let rewards: readonly number[] = new Array(game.seatCount((state as { config: unknown }).config)).fill(0);
  for (const input of inputs) {
    const [seat] = game.toAct(state);
    rewards = game.apply(state, Object.assign([], { [seat]: must(game.parse(input, state, seat)) }), rng);
  }
  return rewards;
}
