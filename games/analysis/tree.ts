import type { Action } from "../core/action.ts";
import type { GameRules } from "../core/game.ts";

/**
 * Exact analysis of two-player zero-sum games with chance and hidden information (Kuhn, Leduc, any game
 * small enough): the whole game tree, walked once through the game's own rules — chance enumerated
 * through `chance` and `resolve`, moves through `play` — and kept as flat arrays, so that values, best
 * responses and CFR run over typed arrays instead of game states.
 */

/** What the walk reads of a game: any game's rules have all of it. */
export type AnalysableGame<S, A extends Action, C> = Pick<
  GameRules<S, A, C, unknown>,
  | "id"
  | "seatCount"
  | "start"
  | "chance"
  | "resolve"
  | "toAct"
  | "legal"
  | "play"
  | "returns"
  | "observe"
  | "infoState"
  | "clone"
>;

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
  /**
   * Groups decision nodes into information sets by this key (an abstraction) instead of the game's
   * `infoState`, or, for a game without one, its observation of the seat as JSON.
   */
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

/** Walks every history of `game` under `config` through its rules and returns the tree. */
export function buildTree<S, A extends Action, C>(
  game: AnalysableGame<S, A, C>,
  config: C,
  options: TreeOptions<S> = {},
): GameTree<S, A> {
  if (game.seatCount(config) !== 2) {
    throw new AnalysisError(`exact analysis handles two seats; ${game.id} has ${game.seatCount(config)} here`);
  }
  const keyOf = options.key ?? game.infoState?.bind(game) ??
    ((state: S, seat: number) => JSON.stringify(game.observe(state, seat)));
  // One seat acts at each node; `play` reads its slot and keeps nothing.
  const moves: (A | undefined)[] = [undefined, undefined];
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
    const odds = game.chance(state);
    const outcomes = odds.length;
    if (outcomes > 0) {
      counts.chance++;
      kind[slot] = CHANCE;
      const first = reserve(outcomes);
      firstChild[slot] = first;
      childCount[slot] = outcomes;
      // Copied before the walk goes deeper: a game may hand out the same array at every chance node.
      for (let k = 0; k < outcomes; k++) chanceProb[first + k] = odds[k];
      for (let k = 0; k < outcomes; k++) {
        // The last child may take the state itself: nothing reads it afterwards.
        const child = k === outcomes - 1 ? state : game.clone(state);
        game.resolve(child, k);
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
        throw new AnalysisError(
          `exact analysis needs finite choices; ${game.id} offers an action of kind \`${form.kind}\``,
        );
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
      moves[seat] = actions[j];
      game.play(child, moves);
      moves[seat] = undefined;
      walk(child, first + j, depth + 1);
    }
  };

  walk(game.start(config), 0, 0);
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
