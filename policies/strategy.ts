import type { Action, ActionSpace } from "../games/core/action.ts";
import type { Rng } from "../games/core/rng.ts";
import type { Seat } from "../games/core/seat.ts";

/** What a built-in strategy sees when it is to act: nothing beyond its seat's observation. */
export interface StrategyContext<A extends Action = Action, O = unknown> {
  readonly seat: number;
  readonly legal: ActionSpace<A>;
  /** The seat's observation, built on first call (random play never needs it). */
  observation(): O;
  /** The strategies' own random stream, separate from the game's chance. */
  readonly rng: Rng;
}

/** A built-in player. Returns a legal action. */
export interface Strategy<A extends Action = Action, O = unknown> {
  readonly name: string;
  act(context: StrategyContext<A, O>): A;
  /**
   * The probability of each action it may take here, for exact analysis (expected values, best
   * responses, exploitability). Only strategies over finite choices that know it implement it.
   */
  distribution?(context: StrategyContext<A, O>): readonly { readonly action: A; readonly probability: number }[];
}

/** A named strategy, optionally with one argument written `name:arg` (e.g. `donate:0.5`). */
export interface StrategyDef {
  /** The name before any `:`. */
  readonly name: string;
  /** `*` for every game, else the game id. */
  readonly game: string;
  readonly description: string;
  /** The argument, when the strategy takes one: what it means, and its value when omitted. */
  readonly arg?: { readonly name: string; readonly description: string; readonly default?: string };
  /** Builds the strategy; throws StrategyError on a bad argument. */
  create(arg: string | undefined): Strategy;
}

/** An unknown strategy or a bad strategy argument. */
export class StrategyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StrategyError";
  }
}

/** Parses a number argument in [min, max], or explains what is allowed. */
export function numberArg(def: string, arg: string | undefined, min: number, max: number): number {
  const text = arg ?? "";
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value) || value < min || value > max) {
    throw new StrategyError(`strategy \`${def}\` takes a number in [${min}, ${max}], got ${JSON.stringify(text)}`);
  }
  return value;
}

/** A built-in strategy as the episode engine's seat: it answers at once, drawing its coin flips from `rng`. */
export function strategySeat(strategy: Strategy, rng: Rng): Seat {
  return { decide: (turn) => strategy.act({ seat: turn.seat, legal: turn.legal, observation: turn.observation, rng }) };
}
