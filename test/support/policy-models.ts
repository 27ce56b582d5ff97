import { configure } from "../../games/core/config.ts";
import type { AnyGame } from "../../games/core/game.ts";
import { strategyPolicy } from "../../games/analysis/policy.ts";
import { buildTree } from "../../games/analysis/tree.ts";
import { getGame } from "../../games/registry.ts";
import { createStrategy } from "../../policies/baselines/index.ts";
import { tableModel } from "./onnx-models.ts";

/**
 * A built-in strategy's exact behaviour as an ONNX network: one row per information set of the game's tree,
 * the tensor its seat sees there and the log of each legal id's probability (a vanishing logit for the rest).
 */
export function strategyAsNetwork(gameId: string, strategy: string, variant?: string): Uint8Array {
  const game: AnyGame = getGame(gameId);
  const { config } = configure(game, {}, variant);
  const tree = buildTree(game, config);
  const policy = strategyPolicy(tree, game, createStrategy(gameId, strategy));
  const [inputs] = game.observationShape(config);
  const outputs = game.actionCount(config);
  const rows = tree.infosets.map((set) => {
    const tensor = new Float32Array(inputs);
    game.encode(game.observe(set.state, set.seat), tensor);
    const logits = new Array<number>(outputs).fill(-60);
    set.actions.forEach((action, j) => {
      logits[game.actionId(action, set.state, set.seat)] = Math.log(Math.max(policy[set.offset + j], 1e-26));
    });
    return { tensor, logits };
  });
  return tableModel(inputs, outputs, rows);
}
