import { configure } from "../../games/core/config.ts";
import { getGame, numericInfo } from "../../games/registry.ts";
import { type PolicyRecord, type PolicyRegistry, PolicyRegistryError } from "../../db/policies.ts";
import { PolicyError, PolicyNetwork } from "./network.ts";

/** What a caller registers a policy with (the CLI's flags, the JSON beside an upload). */
export interface PolicyUpload {
  readonly name: string;
  readonly game: string;
  readonly variant?: string;
  /** Overrides of the variant's config, as for a match. */
  readonly config?: Record<string, unknown>;
  /** A fixed version (refused if it exists); the name's next version by default. */
  readonly version?: number;
  /** The policy it was trained from: an id, a name (its latest version) or name@version. */
  readonly parent?: string;
  readonly run?: string;
  readonly datasetCursor?: string;
  readonly notes?: string;
}

/**
 * Checks an ONNX model against the game config it claims (onnxruntime loads it; its input is the config's
 * tensor with a dynamic batch, its output one logit per action id) and registers it. Every refusal names
 * what was expected and what was found; nothing is stored unless all of it holds.
 */
export async function registerPolicy(
  registry: Pick<PolicyRegistry, "add" | "get">,
  upload: PolicyUpload,
  model: Uint8Array,
): Promise<PolicyRecord> {
  const game = getGame(upload.game);
  const { variant, config } = configure(game, upload.config ?? {}, upload.variant);
  const face = numericInfo(game, config);
  if ("numericFace" in face) throw new PolicyError(`${game.id} (${variant}) has no numeric face: ${face.numericFace}`);
  await (await PolicyNetwork.load(model, game, config)).release();
  let parent: string | null = null;
  if (upload.parent !== undefined) {
    const found = await registry.get(upload.parent);
    if (!found) {
      throw new PolicyRegistryError("bad_policy", `no registered policy ${upload.parent} to name as the parent`);
    }
    parent = found.id;
  }
  return await registry.add({
    name: upload.name,
    version: upload.version,
    game: game.id,
    gameVersion: game.version,
    variant,
    config,
    encoderVersion: face.encoderVersion,
    inputShape: ["batch", ...face.observationShape],
    outputShape: ["batch", face.actionCount],
    parent,
    run: upload.run ?? null,
    datasetCursor: upload.datasetCursor ?? null,
    notes: upload.notes ?? null,
  }, model);
}
