import type { Action } from "../../games/core/action.ts";
import type { AnyGame } from "../../games/core/game.ts";
import { policyFrom, type TabularPolicy } from "../../games/analysis/policy.ts";
import type { GameTree } from "../../games/analysis/tree.ts";
import type { PolicyNetwork } from "./network.ts";

/**
 * The policy a network plays over a whole game tree, for exact analysis: every information set's tensor
 * (encoded from the observation of one of its states, as in play) in one batched pass, then per set the
 * softmax of the legal ids' logits — what the seat samples from — or all on the most likely id (greedy).
 */
export async function networkPolicy<S, A extends Action>(
  tree: GameTree<S, A>,
  game: AnyGame,
  network: PolicyNetwork,
  { greedy = false }: { greedy?: boolean } = {},
): Promise<TabularPolicy> {
  const { size, actions } = network;
  const sets = tree.infosets;
  const tensors = new Float32Array(sets.length * size);
  sets.forEach((set, i) => game.encode(game.observe(set.state, set.seat), tensors.subarray(i * size, (i + 1) * size)));
  const logits = await network.logits(tensors, sets.length);
  const index = new Map(sets.map((set, i) => [set, i]));
  return policyFrom(tree, (set) => {
    const at = index.get(set)! * actions;
    // The set's legal actions as ids: the legal mask, in the order the tree lists them.
    const ids = set.actions.map((action) => game.actionId(action, set.state, set.seat));
    const best = ids.reduce((b, id) => (logits[at + id] > logits[at + b] ? id : b), ids[0]);
    if (greedy) return ids.map((id) => (id === best ? 1 : 0));
    const weights = ids.map((id) => Math.exp(logits[at + id] - logits[at + best]));
    const total = weights.reduce((a, b) => a + b, 0);
    return weights.map((w) => w / total);
  });
}
