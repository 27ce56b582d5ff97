import { configure } from "../../games/core/config.ts";
import { getGame, numericInfo } from "../../games/registry.ts";
import { type PolicyRecord, type PolicyRegistry, PolicyRegistryError } from "../../db/policies.ts";
import type { AnyGame } from "../../games/core/game.ts";
import { Episode } from "../../games/core/episode.ts";
import { PolicyError, PolicyNetwork } from "./network.ts";
import { HostedNetwork, type HostOptions, PolicyBudgetError } from "./hosted.ts";
import { refuseExternalData } from "./inspect.ts";

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

/** Seeds of the deals whose first observations a trial run asks about, beside an all-zero tensor. */
const TRIAL_SEEDS = ["trial-1", "trial-2", "trial-3"];

/**
 * The trial batch: a tensor of zeros, then each seat's first observation in a few seeded deals. It is what
 * play will ask first, so a model that cannot answer it within its budget, or answers NaN or ±Inf, is refused.
 */
function trialBatch(game: AnyGame, config: unknown, size: number): { rows: Float32Array; count: number } {
  const tensors: Float32Array[] = [new Float32Array(size)];
  for (const seed of TRIAL_SEEDS) {
    const episode = new Episode(game, config, seed);
    for (const seat of episode.toAct) tensors.push(episode.encode(seat, new Float32Array(size)));
  }
  const rows = new Float32Array(tensors.length * size);
  tensors.forEach((t, i) => rows.set(t, i * size));
  return { rows, count: tensors.length };
}

/**
 * Runs `model` as play would, in a process of its own within the budget of `options`: loaded and checked
 * against the game config (PolicyNetwork.load's checks, and no external data), then asked the trial batch.
 * Throws PolicyError saying why it may not play.
 */
export async function trialRun(
  model: Uint8Array,
  game: AnyGame,
  config: unknown,
  options: HostOptions & { readonly isolated?: boolean } = {},
) {
  if (options.isolated === false) refuseExternalData(model);
  const network = options.isolated === false
    ? await PolicyNetwork.load(model, game, config, options)
    : await HostedNetwork.open(model, game, config, "the model", options);
  try {
    const { rows, count } = trialBatch(game, config, network.size);
    const logits = await network.logits(rows, count);
    // A hosted network refuses non-finite logits itself; one in this process is checked here.
    const bad = logits.find((x) => !Number.isFinite(x));
    if (bad !== undefined) throw new PolicyError(`its trial run failed: it answered a non-finite logit (${bad})`);
  } catch (error) {
    if (error instanceof PolicyBudgetError) throw new PolicyError(`its trial run failed: ${error.message}`);
    throw error;
  } finally {
    await network.release();
  }
}

/**
 * Checks an ONNX model against the game config it claims (onnxruntime loads it; its input is the config's
 * tensor with a dynamic batch, its output one logit per action id; no tensor's data is outside the file; a
 * trial batch is answered within the budget, with finite logits) and registers it. Every refusal names
 * what was expected and what was found; nothing is stored unless all of it holds.
 */
export async function registerPolicy(
  registry: Pick<PolicyRegistry, "add" | "get">,
  upload: PolicyUpload,
  model: Uint8Array,
  budget: HostOptions & { readonly isolated?: boolean } = {},
): Promise<PolicyRecord> {
  const game = getGame(upload.game);
  const { variant, config } = configure(game, upload.config ?? {}, upload.variant);
  const face = numericInfo(game, config);
  if ("numericFace" in face) throw new PolicyError(`${game.id} (${variant}) has no numeric face: ${face.numericFace}`);
  await trialRun(model, game, config, budget);
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
