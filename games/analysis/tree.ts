import type { Action } from "../core/action.ts";
import type { Game } from "../core/game.ts";

/**
 * Exact analysis of two-player zero-sum games with chance and hidden information (Kuhn, Leduc):
 * the whole game tree, walked once through the game's own rules and kept as flat arrays, so that
 * values, best responses and CFR run over typed arrays instead of game states.
 */

/**
 * What exact analysis needs beyond the game contract: chance as explicit outcomes to enumerate
 * rather than draw, and a key per information state. The game's `init` and `apply` resolve
 * chance through the same `resolve`, with the outcome drawn from the Rng, so the walk plays the
 * real rules.
 */
export interface ExactGame<S, A extends Action, C> {
  readonly game: Game<S, A, C, unknown>;
  /** A fresh match before any chance event: what `init` builds before it draws. */
  start(config: C): S;
  /** The probabilities of the outcomes of the chance event pending now; empty when none is. */
  chance(state: S): readonly number[];
  /** Resolves the pending chance event with outcome `outcome`, an index into `chance(state)`. */
  resolve(state: S, outcome: number): void;
  /** Applies `seat`'s action as `apply` does, but leaves any chance event that follows pending. */
  play(state: S, seat: number, action: A): void;
  /** What `seat` knows now, with perfect recall: equal keys exactly when the seat cannot tell the states apart. */
  infoState(state: S, seat: number): string;
}

// Callers that hold several games' enumerations narrow by game id, as with AnyGame.
// deno-lint-ignore no-explicit-any
export type AnyExactGame = ExactGame<any, Action, any>;

/** The states a seat cannot tell apart, with the actions it has there. */
export interface InfoSet<S, A extends Action> {
  readonly key: string;
  readonly seat: number;
  /** The legal actions, in the game's order: a policy gives one probability per action. */
  readonly actions: readonly A[];
  /** Where this information set's probabilities start in a policy. */
  readonly offset: number;
  /** One of its states, to ask a strategy what it does here. */
  readonly state: S;
  /** The decision nodes in it. */
  readonly nodes: Int32Array;
}

/** Node kinds besides decision nodes, whose kind is their information set's index. */
export const TERMINAL = -1;
export const CHANCE = -2;

/** A game tree as flat arrays; node 0 is the root, and a node's children are consecutive. */
export interface GameTree<S, A extends Action> {
  readonly infosets: readonly InfoSet<S, A>[];
  /** Actions over all information sets: the length of a policy. */
  readonly width: number;
  /** Per node: TERMINAL, CHANCE, or the index of its information set. */
  readonly kind: Int32Array;
  readonly firstChild: Int32Array;
  readonly childCount: Int32Array;
  /** Per node: the probability chance picks it at its parent (1 below decision nodes). */
  readonly chanceProb: Float64Array;
  /** Per node: seat 0's payoff at a terminal node (seat 1's is its negation). */
  readonly utility: Float64Array;
  /** Per information set: its seat and its offset into a policy, for the hot loops. */
  readonly seatOf: Int8Array;
  readonly offsetOf: Int32Array;
  /** The most actions any information set has. */
  readonly maxActions: number;
  /** The deepest node's depth (the root is 0). */
  readonly depth: number;
  readonly counts: { readonly decision: number; readonly chance: number; readonly terminal: number };
}

export interface TreeOptions<S> {
  /** Groups decision nodes into information sets by this key instead of `infoState` (an abstraction). */
  readonly key?: (state: S, seat: number) => string;
  /** Refuse games with more nodes than this (default 1,000,000: about a second of walking). */
  readonly maxNodes?: number;
}

/** A game, config or policy that exact analysis cannot handle, and why. */
export class AnalysisError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AnalysisError";
  }
}

/** Walks every history of `config`'s game through its rules and returns the tree. */
export function buildTree<S, A extends Action, C>(
  exact: ExactGame<S, A, C>,
  config: C,
  options: TreeOptions<S> = {},
): GameTree<S, A> {
  const { game } = exact;
  if (game.seatCount(config) !== 2) {
    throw new AnalysisError(`exact analysis handles two seats; ${game.id} has ${game.seatCount(config)} here`);
  }
  const keyOf = options.key ?? exact.infoState;
  const maxNodes = options.maxNodes ?? 1_000_000;
  const kind: number[] = [0];
  const firstChild: number[] = [0];
  const childCount: number[] = [0];
  const chanceProb: number[] = [1];
  const utility: number[] = [0];
  const ids = new Map<string, number>();
  const infosets: { key: string; seat: number; actions: A[]; offset: number; state: S; nodes: number[] }[] = [];
  const counts = { decision: 0, chance: 0, terminal: 0 };
  let width = 0;
  let maxActions = 0;
  let deepest = 0;

  /** Reserves `n` consecutive slots for a node's children. */
  const reserve = (n: number): number => {
    const first = kind.length;
    if (first + n > maxNodes) {
      throw new AnalysisError(
        `${game.id} has more than ${maxNodes} nodes with this config: too large to analyse exactly`,
      );
    }
    for (let j = 0; j < n; j++) {
      kind.push(0);
      firstChild.push(0);
      childCount.push(0);
      chanceProb.push(1);
      utility.push(0);
    }
    return first;
  };

  const walk = (state: S, slot: number, depth: number): void => {
    if (depth > deepest) deepest = depth;
    const odds = exact.chance(state);
    if (odds.length > 0) {
      counts.chance++;
      kind[slot] = CHANCE;
      const first = reserve(odds.length);
      firstChild[slot] = first;
      childCount[slot] = odds.length;
      for (let k = 0; k < odds.length; k++) {
        // The last child may take the state itself: nothing reads it afterwards.
        const child = k === odds.length - 1 ? state : game.clone(state);
        exact.resolve(child, k);
        chanceProb[first + k] = odds[k];
        walk(child, first + k, depth + 1);
      }
      return;
    }
    const toAct = game.toAct(state);
    if (toAct.length === 0) {
      counts.terminal++;
      const r = game.returns(state);
      if (Math.abs(r[0] + r[1]) > 1e-9) {
        throw new AnalysisError(`${game.id} is not zero-sum with this config (returns ${r[0]} and ${r[1]})`);
      }
      kind[slot] = TERMINAL;
      utility[slot] = r[0];
      return;
    }
    if (toAct.length > 1) {
      throw new AnalysisError(`exact analysis needs one seat to act at a time; ${game.id} has more`);
    }
    counts.decision++;
    const seat = toAct[0];
    const actions = game.legal(state, seat).map((form) => {
      if (form.kind !== "fixed") {
        throw new AnalysisError(`exact analysis needs finite choices; ${game.id} offers a ${form.kind} action`);
      }
      return form.action;
    });
    const key = keyOf(state, seat);
    let id = ids.get(key);
    if (id === undefined) {
      id = infosets.length;
      ids.set(key, id);
      infosets.push({ key, seat, actions, offset: width, state: game.clone(state), nodes: [] });
      width += actions.length;
      if (actions.length > maxActions) maxActions = actions.length;
    } else {
      const known = infosets[id];
      if (known.seat !== seat || !sameActions(known.actions, actions)) {
        throw new AnalysisError(`information state ${JSON.stringify(key)} of ${game.id} groups states that differ`);
      }
    }
    infosets[id].nodes.push(slot);
    kind[slot] = id;
    const first = reserve(actions.length);
    firstChild[slot] = first;
    childCount[slot] = actions.length;
    for (let j = 0; j < actions.length; j++) {
      const child = j === actions.length - 1 ? state : game.clone(state);
      exact.play(child, seat, actions[j]);
      walk(child, first + j, depth + 1);
    }
  };

  walk(exact.start(config), 0, 0);
  const frozen = infosets.map((set) =>
    Object.freeze({ ...set, actions: Object.freeze(set.actions), nodes: Int32Array.from(set.nodes) })
  );
  return {
    infosets: frozen,
    width,
    kind: Int32Array.from(kind),
    firstChild: Int32Array.from(firstChild),
    childCount: Int32Array.from(childCount),
    chanceProb: Float64Array.from(chanceProb),
    utility: Float64Array.from(utility),
    seatOf: Int8Array.from(infosets, (set) => set.seat),
    offsetOf: Int32Array.from(infosets, (set) => set.offset),
    maxActions,
    depth: deepest,
    counts,
  };
}

function sameActions(a: readonly Action[], b: readonly Action[]): boolean {
  return a.length === b.length && a.every((x, i) => JSON.stringify(x) === JSON.stringify(b[i]));
}
