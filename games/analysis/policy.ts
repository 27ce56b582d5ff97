import type { Action, ActionSpace } from "../core/action.ts";
import type { GameRules } from "../core/game.ts";
import { Rng } from "../core/rng.ts";
import { AnalysisError, type GameTree } from "./tree.ts";

/**
 * A behaviour policy over a tree: for information set I, the probability of its j-th action is
 * `policy[I.offset + j]`. One array holds both seats' information sets.
 */
export type TabularPolicy = Float64Array;

/** What a built-in strategy offers exact analysis (the shape of policies/strategy.ts's Strategy). */
export interface DistributionSource<A extends Action> {
  readonly name: string;
  distribution?(context: {
    readonly seat: number;
    readonly legal: ActionSpace<A>;
    observation(): unknown;
    readonly rng: Rng;
  }): readonly { readonly action: A; readonly probability: number }[];
}

/** Every legal action equally likely. */
export function uniformPolicy<S, A extends Action>(tree: GameTree<S, A>): TabularPolicy {
  const policy = new Float64Array(tree.width);
  for (const set of tree.infosets) policy.fill(1 / set.actions.length, set.offset, set.offset + set.actions.length);
  return policy;
}

/** A policy from one probability vector per information set (in its actions' order). */
export function policyFrom<S, A extends Action>(
  tree: GameTree<S, A>,
  probabilities: (infoset: GameTree<S, A>["infosets"][number]) => readonly number[],
): TabularPolicy {
  const policy = new Float64Array(tree.width);
  for (const set of tree.infosets) {
    const p = probabilities(set);
    if (p.length !== set.actions.length) {
      throw new AnalysisError(`${set.key}: ${set.actions.length} probabilities needed, got ${p.length}`);
    }
    checkSum(p, set.key);
    policy.set(p, set.offset);
  }
  return policy;
}

/**
 * The policy a strategy plays, asked once per information set through its `distribution`, with
 * the observation of one of the set's states (a strategy sees nothing else).
 */
export function strategyPolicy<S, A extends Action, C>(
  tree: GameTree<S, A>,
  game: Pick<GameRules<S, A, C, unknown>, "legal" | "observe">,
  strategy: DistributionSource<A>,
): TabularPolicy {
  const distribution = strategy.distribution;
  if (!distribution) throw new AnalysisError(`strategy \`${strategy.name}\` does not state its probabilities`);
  // Distributions must not draw; a fixed stream keeps any that do deterministic.
  const rng = new Rng(0);
  return policyFrom(tree, (set) => {
    const legal = game.legal(set.state, set.seat);
    const given = distribution.call(strategy, {
      seat: set.seat,
      legal,
      observation: () => game.observe(set.state, set.seat),
      rng,
    });
    const p = new Array<number>(set.actions.length).fill(0);
    for (const { action, probability } of given) {
      const j = set.actions.findIndex((a) => JSON.stringify(a) === JSON.stringify(action));
      if (j < 0) {
        throw new AnalysisError(
          `strategy \`${strategy.name}\` offers ${JSON.stringify(action)}, not legal at ${set.key}`,
        );
      }
      p[j] += probability;
    }
    return p;
  });
}

/** Seat 0 plays `policies[0]` and seat 1 `policies[1]`. */
export function profile<S, A extends Action>(
  tree: GameTree<S, A>,
  policies: readonly [TabularPolicy, TabularPolicy],
): TabularPolicy {
  const policy = new Float64Array(tree.width);
  for (const set of tree.infosets) {
    const n = set.actions.length;
    policy.set(policies[set.seat].subarray(set.offset, set.offset + n), set.offset);
  }
  return policy;
}

/** The probabilities a policy gives each information set, by key (for tables and inspection). */
export function policyTable<S, A extends Action>(tree: GameTree<S, A>, policy: TabularPolicy): Map<string, number[]> {
  const table = new Map<string, number[]>();
  for (const set of tree.infosets) {
    table.set(set.key, Array.from(policy.subarray(set.offset, set.offset + set.actions.length)));
  }
  return table;
}

function checkSum(p: readonly number[], key: string): void {
  let sum = 0;
  for (const x of p) {
    if (!(x >= 0)) throw new AnalysisError(`${key}: probabilities must be non-negative, got ${x}`);
    sum += x;
  }
  if (Math.abs(sum - 1) > 1e-9) throw new AnalysisError(`${key}: probabilities sum to ${sum}, not 1`);
}
