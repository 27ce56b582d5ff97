import type { z } from "zod";
import type { Action, ActionError, ActionSpace } from "./action.ts";
import type { Rng } from "./rng.ts";

/** Who looks at a state: a seat, or the public (spectators). */
export type Viewer = number | "public";

/** A named preset of a game's config. */
export interface Variant<C> {
  readonly description: string;
  readonly config: Partial<C>;
}

/**
 * One game's rules. Pure: no I/O, no clock, no Math.random; chance comes only from the Rng
 * handed in. Same (version, config, seed, moves) ⇒ same states, rewards, observations.
 *
 * States are mutated in place by `apply` (as OpenSpiel does) because the engine's hot loops
 * run millions of steps a second; `clone` gives an independent copy where one is needed.
 */
export interface Game<S, A extends Action, C, O> {
  /** Kebab-case id, e.g. `trust-and-split`. */
  readonly id: string;
  /** Bumped whenever the rules change; every replay pins it. */
  readonly version: number;
  readonly title: string;
  /** A paragraph on the rules, for lobbies and `ludus games`. */
  readonly summary: string;
  readonly seats: { readonly min: number; readonly max: number };
  /** A strict schema with documented defaults: unknown keys, wrong types, out-of-range values fail. */
  readonly schema: z.ZodType<C>;
  readonly variants: Readonly<Record<string, Variant<C>>>;
  readonly defaultVariant: string;

  /** How many seats a match with this config has. */
  seatCount(config: C): number;
  /**
   * The config as every seat and spectator may see it: everything private removed (a seat's own values
   * reach it through its observation), so it reveals nothing that `observe` does not show every seat at
   * the start. The config itself where nothing in it is private.
   */
  publicConfig(config: C): unknown;
  /**
   * The full rules for this config, in the project's words: what an LLM seat reads first. Sent to every
   * seat, so it states nothing private.
   */
  rules(config: C): string;
  init(config: C, rng: Rng): S;
  /** Seats that must act now: one for turn-based steps, several for simultaneous ones, none when over. */
  toAct(state: S): readonly number[];
  /** What `seat` may do now (empty when it is not to act). */
  legal(state: S, seat: number): ActionSpace<A>;
  /**
   * Applies one action per seat in `toAct` (indexed by seat) and returns the step's rewards, one per
   * seat. The actions must be legal, as `parse` returns them: callers validate, `apply` does not re-check.
   */
  apply(state: S, moves: readonly (A | undefined)[], rng: Rng): readonly number[];
  /** Raw payoffs so far (final once `toAct` is empty), one per seat. */
  returns(state: S): readonly number[];
  /** Only what `viewer` may know; a fresh JSON-safe object that does not alias the state. */
  observe(state: S, viewer: Viewer): O;
  /** The observation as text for an LLM seat. */
  describe(observation: O): string;
  /** JSON or text input → a legal action, or an error naming what is legal. */
  parse(input: unknown, state: S, seat: number): A | ActionError;
  clone(state: S): S;
}

// The registry holds games of many state/action/config types; callers narrow by id.
// deno-lint-ignore no-explicit-any
export type AnyGame = Game<any, Action, any, any>;
