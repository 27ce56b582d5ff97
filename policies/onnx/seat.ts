import type { Action } from "../../games/core/action.ts";
import { isActionError } from "../../games/core/action.ts";
import type { Rng } from "../../games/core/rng.ts";
import type { Seat } from "../../games/core/seat.ts";
import { PolicyBatcher } from "./batcher.ts";
import { sampleMasked } from "./sample.ts";

/**
 * A network in a seat: its tensor and legal mask from the game's numeric face, the logits from a batcher
 * shared with every other match that asks the same network, and the action id drawn from the masked softmax
 * with `rng` (a stream of the match seed, so the match re-simulates), or the most likely one when `rng` is
 * undefined (greedy). The batcher may still be loading: the first decision waits for it.
 */
export function policySeat(source: PolicyBatcher | Promise<PolicyBatcher>, rng: Rng | undefined): Seat {
  let batcher = source instanceof PolicyBatcher ? source : undefined;
  if (!batcher) (source as Promise<PolicyBatcher>).then((b) => (batcher = b), () => {});
  return {
    async decide(turn): Promise<Action> {
      const b = batcher ?? await source;
      const mask = turn.legalMask(new Uint8Array(b.network.actions));
      const logits = await b.logits((row) => turn.encode(row));
      const action = turn.actionOf(sampleMasked(logits, 0, mask, rng));
      if (isActionError(action)) throw new Error(`the policy's choice is not legal: ${action.message}`);
      return action;
    },
  };
}
