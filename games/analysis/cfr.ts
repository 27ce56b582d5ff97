import type { Action } from "../core/action.ts";
import { exploitability } from "./evaluate.ts";
import type { TabularPolicy } from "./policy.ts";
import { CHANCE, type GameTree, TERMINAL } from "./tree.ts";

/**
 * CFR+ (Tammelin 2014; Tammelin, Burch, Johanson & Bowling 2015): regret matching with regrets
 * floored at zero, seats updated in turn, and the average policy weighted by iteration number.
 * Its average policy converges to an equilibrium of a two-player zero-sum game, in practice much
 * faster than plain CFR.
 */
export class CfrPlus<S, A extends Action> {
  /** Iterations done (each updates both seats). */
  iteration = 0;
  private readonly regret: Float64Array;
  private readonly current: Float64Array;
  private readonly total: Float64Array;
  /** Action values by depth, so the recursion allocates nothing. */
  private readonly scratch: Float64Array;
  // The tree's arrays as own fields: the recursion reads them at every node.
  private readonly kind: Int32Array;
  private readonly firstChild: Int32Array;
  private readonly childCount: Int32Array;
  private readonly chanceProb: Float64Array;
  private readonly utility: Float64Array;
  private readonly seatOf: Int8Array;
  private readonly offsetOf: Int32Array;
  private readonly stride: number;

  constructor(readonly tree: GameTree<S, A>) {
    this.regret = new Float64Array(tree.width);
    this.current = new Float64Array(tree.width);
    this.total = new Float64Array(tree.width);
    this.stride = tree.maxActions;
    this.scratch = new Float64Array((tree.depth + 1) * tree.maxActions);
    this.kind = tree.kind;
    this.firstChild = tree.firstChild;
    this.childCount = tree.childCount;
    this.chanceProb = tree.chanceProb;
    this.utility = tree.utility;
    this.seatOf = tree.seatOf;
    this.offsetOf = tree.offsetOf;
  }

  /** Runs `n` more iterations. */
  run(n: number): this {
    for (let i = 0; i < n; i++) {
      this.iteration++;
      for (let seat = 0; seat < 2; seat++) {
        this.match();
        this.walk(0, seat, 1, 1, 0);
      }
    }
    return this;
  }

  /** The average policy so far: the one that converges (uniform where a set was never reached). */
  average(): TabularPolicy {
    const { infosets } = this.tree;
    const policy = new Float64Array(this.tree.width);
    for (const set of infosets) {
      const n = set.actions.length;
      let sum = 0;
      for (let j = 0; j < n; j++) sum += this.total[set.offset + j];
      for (let j = 0; j < n; j++) policy[set.offset + j] = sum > 0 ? this.total[set.offset + j] / sum : 1 / n;
    }
    return policy;
  }

  /** Regret matching+: play each action in proportion to its positive regret (uniform when none is). */
  private match(): void {
    const { regret, current } = this;
    for (const set of this.tree.infosets) {
      const n = set.actions.length;
      let sum = 0;
      for (let j = 0; j < n; j++) sum += regret[set.offset + j];
      for (let j = 0; j < n; j++) current[set.offset + j] = sum > 0 ? regret[set.offset + j] / sum : 1 / n;
    }
  }

  /** Counterfactual value of `node` for `seat`; updates the seat's regrets and average below it. */
  private walk(node: number, seat: number, ownReach: number, otherReach: number, depth: number): number {
    const k = this.kind[node];
    if (k === TERMINAL) return seat === 0 ? this.utility[node] : -this.utility[node];
    // Unreachable by everyone: nothing below can change, and every caller weighs this value by zero.
    if (ownReach === 0 && otherReach === 0) return 0;
    const first = this.firstChild[node];
    const n = this.childCount[node];
    let v = 0;
    if (k === CHANCE) {
      for (let j = 0; j < n; j++) {
        const p = this.chanceProb[first + j];
        v += p * this.walk(first + j, seat, ownReach, otherReach * p, depth + 1);
      }
      return v;
    }
    const offset = this.offsetOf[k];
    const current = this.current;
    if (this.seatOf[k] !== seat) {
      // Subtrees the opponent never enters still feed the seat's average policy, so they are walked too.
      for (let j = 0; j < n; j++) {
        const p = current[offset + j];
        v += p * this.walk(first + j, seat, ownReach, otherReach * p, depth + 1);
      }
      return v;
    }
    const values = this.scratch;
    const base = depth * this.stride;
    for (let j = 0; j < n; j++) {
      const p = current[offset + j];
      const q = this.walk(first + j, seat, ownReach * p, otherReach, depth + 1);
      values[base + j] = q;
      v += p * q;
    }
    const { regret, total } = this;
    const weight = this.iteration * ownReach;
    for (let j = 0; j < n; j++) {
      const r = regret[offset + j] + otherReach * (values[base + j] - v);
      regret[offset + j] = r > 0 ? r : 0;
      total[offset + j] += weight * current[offset + j];
    }
    return v;
  }
}

export interface SolveOptions {
  readonly iterations: number;
  /** Measure the average policy's exploitability every this many iterations (0: only at the end). */
  readonly every?: number;
}

export interface Solution {
  /** The average policy after the last iteration. */
  readonly policy: TabularPolicy;
  readonly iterations: number;
  /** Exploitability of the average policy as it went. */
  readonly trace: readonly { readonly iteration: number; readonly exploitability: number }[];
}

/** Runs CFR+ for `iterations` and returns the average policy with its exploitability trace. */
export function solve<S, A extends Action>(tree: GameTree<S, A>, options: SolveOptions): Solution {
  const solver = new CfrPlus(tree);
  const every = options.every ?? 0;
  const trace: { iteration: number; exploitability: number }[] = [];
  while (solver.iteration < options.iterations) {
    const step = every > 0 ? Math.min(every, options.iterations - solver.iteration) : options.iterations;
    solver.run(step);
    if (every > 0 || solver.iteration === options.iterations) {
      trace.push({
        iteration: solver.iteration,
        exploitability: exploitability(tree, solver.average()).exploitability,
      });
    }
  }
  return { policy: solver.average(), iterations: solver.iteration, trace };
}
