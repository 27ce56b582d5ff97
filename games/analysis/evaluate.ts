import type { Action } from "../core/action.ts";
import type { TabularPolicy } from "./policy.ts";
import { CHANCE, type GameTree, TERMINAL } from "./tree.ts";

/** Seat 0's expected payoff when both seats follow `policy` (seat 1's is its negation). */
export function expectedValue<S, A extends Action>(tree: GameTree<S, A>, policy: TabularPolicy): number {
  const { kind, firstChild, childCount, chanceProb, utility, offsetOf } = tree;
  const value = (node: number): number => {
    const k = kind[node];
    if (k === TERMINAL) return utility[node];
    const first = firstChild[node];
    const n = childCount[node];
    let v = 0;
    if (k === CHANCE) {
      for (let j = 0; j < n; j++) v += chanceProb[first + j] * value(first + j);
    } else {
      const offset = offsetOf[k];
      for (let j = 0; j < n; j++) {
        const p = policy[offset + j];
        if (p > 0) v += p * value(first + j);
      }
    }
    return v;
  };
  return value(0);
}

export interface BestResponse {
  /** The best responder's expected payoff. */
  readonly value: number;
  /** `policy` with the responder's information sets replaced by a pure best response. */
  readonly policy: TabularPolicy;
}

/**
 * A best response of `seat` to the other seat's part of `policy`. At each of the seat's information
 * sets it picks the action with the highest value summed over the set's nodes, each weighted by the
 * chance and opponent probability of reaching it; deeper sets are settled first, through the memo.
 */
export function bestResponse<S, A extends Action>(
  tree: GameTree<S, A>,
  policy: TabularPolicy,
  seat: number,
): BestResponse {
  const { kind, firstChild, childCount, chanceProb, utility, seatOf, offsetOf, infosets } = tree;
  const size = kind.length;
  const sign = seat === 0 ? 1 : -1;
  // Probability that chance and the opponent bring play to each node.
  const reach = new Float64Array(size);
  const down = (node: number, r: number): void => {
    reach[node] = r;
    const k = kind[node];
    if (k === TERMINAL) return;
    const first = firstChild[node];
    const n = childCount[node];
    for (let j = 0; j < n; j++) {
      const p = k === CHANCE ? chanceProb[first + j] : seatOf[k] === seat ? 1 : policy[offsetOf[k] + j];
      down(first + j, r * p);
    }
  };
  down(0, 1);

  const memo = new Float64Array(size).fill(NaN);
  const chosen = new Int32Array(infosets.length).fill(-1);
  const choose = (set: number): number => {
    if (chosen[set] >= 0) return chosen[set];
    const { nodes } = infosets[set];
    const n = childCount[nodes[0]];
    let best = 0;
    let bestValue = -Infinity;
    for (let j = 0; j < n; j++) {
      let q = 0;
      for (let i = 0; i < nodes.length; i++) q += reach[nodes[i]] * value(firstChild[nodes[i]] + j);
      if (q > bestValue + 1e-12) {
        best = j;
        bestValue = q;
      }
    }
    chosen[set] = best;
    return best;
  };
  const value = (node: number): number => {
    const cached = memo[node];
    if (cached === cached) return cached; // not NaN
    const k = kind[node];
    let v = 0;
    if (k === TERMINAL) {
      v = sign * utility[node];
    } else {
      const first = firstChild[node];
      const n = childCount[node];
      if (k === CHANCE) {
        for (let j = 0; j < n; j++) v += chanceProb[first + j] * value(first + j);
      } else if (seatOf[k] === seat) {
        v = value(first + choose(k));
      } else {
        const offset = offsetOf[k];
        for (let j = 0; j < n; j++) {
          const p = policy[offset + j];
          if (p > 0) v += p * value(first + j);
        }
      }
    }
    memo[node] = v;
    return v;
  };
  const v = value(0);
  const response = policy.slice();
  for (let set = 0; set < infosets.length; set++) {
    if (seatOf[set] !== seat) continue;
    const offset = offsetOf[set];
    const n = infosets[set].actions.length;
    response.fill(0, offset, offset + n);
    response[offset + choose(set)] = 1;
  }
  return { value: v, policy: response };
}

export interface Exploitability {
  /** What each seat earns by best-responding to the other seat's part of the policy. */
  readonly bestResponseValues: readonly [number, number];
  /** Each seat's expected payoff when both follow the policy. */
  readonly values: readonly [number, number];
  /** The sum of what each seat gains by deviating to a best response: 0 exactly at an equilibrium. */
  readonly nashConv: number;
  /** NashConv / 2: in a zero-sum game, the average of what a best response wins. */
  readonly exploitability: number;
}

/** How far `policy`, played by both seats, is from an equilibrium. */
export function exploitability<S, A extends Action>(tree: GameTree<S, A>, policy: TabularPolicy): Exploitability {
  const br0 = bestResponse(tree, policy, 0).value;
  const br1 = bestResponse(tree, policy, 1).value;
  const v0 = expectedValue(tree, policy);
  // Zero-sum: the values cancel, so NashConv is the sum of the best-response values.
  const nashConv = br0 + br1;
  return { bestResponseValues: [br0, br1], values: [v0, 0 - v0], nashConv, exploitability: nashConv / 2 };
}
