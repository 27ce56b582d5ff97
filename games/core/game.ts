import type { z } from "zod";
import type { Action, ActionError, ActionSpace } from "./action.ts";
import type { Rng } from "./rng.ts";

/**
 * OpenSpiel's utility types: `zero-sum` (the returns sum to 0), `constant-sum` (to the same constant), `identical`
 * (every seat gets the same), `general-sum` (anything else).
 */
export type Utility = "zero-sum" | "constant-sum" | "identical" | "general-sum";

/**
 * OpenSpiel's chance modes: `deterministic` (no chance event ever), `explicit-stochastic` (chance events with
 * published odds, as `chance`/`resolve` give them).
 */
export type ChanceMode = "deterministic" | "explicit-stochastic";

/** OpenSpiel's information types: `perfect` (every seat sees the whole state), `imperfect` (something is hidden). */
export type Information = "perfect" | "imperfect";

/** OpenSpiel's dynamics: `sequential` (one seat acts at a time), `simultaneous` (several may act at once). */
export type Dynamics = "sequential" | "simultaneous";

/** Who looks at a state: a seat, or the public (spectators). */
export type Viewer = number | "public";

/** A named preset of a game's config. */
export interface Variant<C> {
  readonly description: string;
  readonly config: Partial<C>;
}

/**
 * One game's rules, as a game module writes them. Pure: no I/O, no clock, no Math.random. Chance is
 * explicit, as in OpenSpiel: a state may wait for a chance event (`chance` lists its outcomes with their
 * probabilities) which `resolve` settles, so exact analysis enumerates it and a live match draws it.
 * Same (version, config, seed, moves) ⇒ same states, rewards, observations.
 *
 * States are mutated in place by `play` (as OpenSpiel does) because the engine's hot loops run
 * millions of steps a second; `clone` gives an independent copy where one is needed.
 */
export interface GameRules<S, A extends Action, C, O> extends NumericFace<S, A, C, O> {
  /** Kebab-case id, e.g. `trust-and-split`. */
  readonly id: string;
  /** Bumped whenever the rules change; every replay pins it, and the registry keeps earlier versions. */
  readonly version: number;
  readonly title: string;
  /** A paragraph on the rules, for lobbies and `ludus games`. */
  readonly summary: string;
  /** How the seats' returns relate in every outcome (OpenSpiel's GameType.Utility). */
  readonly utility: Utility;
  /** Whether chance ever acts, in some config (OpenSpiel's GameType.ChanceMode). */
  readonly chanceMode: ChanceMode;
  /** Whether some config hides anything from a seat (OpenSpiel's GameType.Information). */
  readonly information: Information;
  /** Whether some config has several seats act at once (OpenSpiel's GameType.Dynamics). */
  readonly dynamics: Dynamics;
  /**
   * One legal answer, written as this game's turns ask (e.g. `mark 4`): what an LLM seat's answer format shows
   * as its example, so that it never shows another game's action. Sent in `match_start` and `GET /games`.
   */
  readonly answerExample: string;
  /**
   * The largest value each capped config key accepts (a number's maximum, a list's or a text's length): the
   * bounds that keep one match's stored observations bounded (test/games/caps.test.ts plays every game at them).
   */
  readonly caps: Readonly<Record<string, number>>;
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
  /** A match before any chance event (OpenSpiel's initial state): chance may be pending. */
  start(config: C): S;
  /**
   * The probabilities of the outcomes of the chance event due now, indexed by outcome (they sum to 1);
   * empty when a seat is to act or the match is over. Never pending at the same time as a seat's turn.
   */
  chance(state: S): readonly number[];
  /** Settles the pending chance event with `outcome`, an index into `chance(state)`. */
  resolve(state: S, outcome: number): void;
  /**
   * Draws the pending event's outcome from `rng` the way this version of the game always has, so stored
   * matches re-simulate exactly. Without it a draw is `rng.int(n)` for n equally likely outcomes and one
   * `rng.float()` against the cumulative odds otherwise (see `drawOutcome`).
   */
  sample?(state: S, rng: Rng): number;
  /** Seats that must act now: one for turn-based steps, several for simultaneous ones, none when over or chance is due. */
  toAct(state: S): readonly number[];
  /**
   * Whether every step of a match with this config has every seat act at once (the prisoner's dilemma without
   * talk), so that no seat ever waits for another's move: what PettingZoo's parallel API can play. Absent: never.
   */
  simultaneous?(config: C): boolean;
  /** What `seat` may do now (empty when it is not to act). */
  legal(state: S, seat: number): ActionSpace<A>;
  /**
   * Applies one action per seat in `toAct` (indexed by seat), leaving any chance event that follows
   * pending, and returns the step's rewards, one per seat. The actions must be legal, as `parse`
   * returns them: callers validate, `play` does not re-check.
   */
  play(state: S, moves: readonly (A | undefined)[]): readonly number[];
  /** Raw payoffs so far (final once the match is over), one per seat. */
  returns(state: S): readonly number[];
  /** Only what `viewer` may know; a fresh JSON-safe object that does not alias the state. */
  observe(state: S, viewer: Viewer): O;
  /**
   * What `seat` knows now, with perfect recall, as a string (OpenSpiel's information-state string): equal
   * exactly when the seat cannot tell the states apart. Exact analysis keys information sets by it; without
   * it they are keyed by the seat's observation as JSON.
   */
  infoState?(state: S, seat: number): string;
  /** The observation as text for an LLM seat. */
  describe(observation: O): string;
  /** JSON or text input → a legal action, or an error naming what is legal. */
  parse(input: unknown, state: S, seat: number): A | ActionError;
  clone(state: S): S;
}

/**
 * OpenSpiel's numeric view of a game, what policies and trainers read: a fixed number of action ids
 * with a legal mask, and an information-state tensor of a fixed shape, both fixed by the config. Where a
 * game's actions are continuous or textual, the ids are a documented discretisation of them, and a
 * numeric policy plays only what they cover. A config the face does not cover throws NumericFaceError.
 */
export interface NumericFace<S, A extends Action, C, O> {
  /**
   * The version of the tensor encoding and the action ids (default 1), raised whenever either changes: a
   * policy trained on one version is refused by a game that encodes another.
   */
  readonly encoderVersion?: number;
  /** How many action ids there are (OpenSpiel's NumDistinctActions). */
  actionCount(config: C): number;
  /** The id of a legal `action` of `seat` now, or -1 where the discretisation has no id for it. */
  actionId(action: A, state: S, seat: number): number;
  /** The action id `id` stands for now, or `illegal_action` naming the legal ids. */
  actionOf(id: number, state: S, seat: number): A | ActionError;
  /** Writes 1 for each legal id of `seat` now and 0 elsewhere; `out.length` is `actionCount`. */
  legalMask(state: S, seat: number, out: Uint8Array): void;
  /** The shape of the information-state tensor (OpenSpiel's InformationStateTensorShape). */
  observationShape(config: C): readonly number[];
  /**
   * Writes everything the observing seat has seen, as numbers, into `out` (every entry; its length is the
   * product of the shape). Encodes an observation, never a state, so a tensor knows only what `observe` shows.
   */
  encode(observation: O, out: Float32Array): void;
  /**
   * The same tensor as `encode(observe(state, seat), out)`, written without building the observation: a fast
   * path for the engine's hot loops, which must equal it entry for entry (the shared numeric-face test checks
   * this on every state its playouts reach), so it knows nothing the observation does not show.
   */
  encodeState?(state: S, seat: number, out: Float32Array): void;
}

/** A config a game's numeric face does not cover, said by name. */
export class NumericFaceError extends Error {
  constructor(game: string, why: string) {
    super(`${game} has no numeric face here: ${why}`);
    this.name = "NumericFaceError";
  }
}

/**
 * A game as every loop uses it: its rules, plus `init` and `apply`, which draw each chance event from
 * the match's Rng as it falls due (the sampled path; exact analysis enumerates chance instead).
 */
export interface Game<S, A extends Action, C, O> extends GameRules<S, A, C, O> {
  /** A new match with its opening chance events drawn. */
  init(config: C, rng: Rng): S;
  /** `play`, then the chance events that follow drawn: what a live match does each step. */
  apply(state: S, moves: readonly (A | undefined)[], rng: Rng): readonly number[];
}

/**
 * An outcome of `odds` drawn from `rng`: `rng.int(n)` when all n are equally likely (one draw, as the
 * games always drew), else one `rng.float()` against the cumulative odds.
 */
export function drawOutcome(odds: readonly number[], rng: Rng): number {
  const n = odds.length;
  let uniform = true;
  for (let i = 1; i < n && uniform; i++) uniform = odds[i] === odds[0];
  if (uniform) return rng.int(n);
  let u = rng.float();
  for (let i = 0; i < n - 1; i++) {
    u -= odds[i];
    if (u < 0) return i;
  }
  return n - 1;
}

/** Draws every chance event due now, until a seat is to act or the match is over; `onChance` hears each outcome. */
export function settleChance<S>(
  rules: GameRules<S, Action, unknown, unknown>,
  state: S,
  rng: Rng,
  onChance?: (outcome: number, odds: readonly number[]) => void,
): void {
  for (let odds = rules.chance(state); odds.length > 0; odds = rules.chance(state)) {
    const outcome = rules.sample ? rules.sample(state, rng) : drawOutcome(odds, rng);
    onChance?.(outcome, odds);
    rules.resolve(state, outcome);
  }
}

/** A game from its rules: `init` and `apply` draw chance through `settleChance`. */
export function defineGame<S, A extends Action, C, O>(rules: GameRules<S, A, C, O>): Game<S, A, C, O> {
  return {
    ...rules,
    init(config, rng) {
      const state = rules.start(config);
      settleChance(rules, state, rng);
      return state;
    },
    apply(state, moves, rng) {
      const rewards = rules.play(state, moves);
      settleChance(rules, state, rng);
      return rewards;
    },
  };
}

// The registry holds games of many state/action/config types; callers narrow by id.
// deno-lint-ignore no-explicit-any
export type AnyGame = Game<any, Action, any, any>;

/** Whether matches of `config` are two-player zero-sum: where one symmetric policy learns both seats. */
export function twoPlayerZeroSum(game: AnyGame, config: unknown): boolean {
  return game.utility === "zero-sum" && game.seatCount(config) === 2;
}
