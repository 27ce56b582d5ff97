import { describe, expect, it } from "vitest";
import type { Action } from "../../games/core/action.ts";
import { configure } from "../../games/core/config.ts";
import { Episode } from "../../games/core/episode.ts";
import { Rng } from "../../games/core/rng.ts";
import { playEpisode } from "../../games/core/seat.ts";
import { getGame } from "../../games/registry.ts";
import { exploitability } from "../../games/analysis/evaluate.ts";
import { buildTree } from "../../games/analysis/tree.ts";
import { PolicyBatcher } from "../../policies/onnx/batcher.ts";
import { networkPolicy } from "../../policies/onnx/evaluate.ts";
import { PolicyError, PolicyNetwork } from "../../policies/onnx/network.ts";
import { policySeat } from "../../policies/onnx/seat.ts";
import { linearModel } from "../support/onnx-models.ts";

/** ONNX networks in seats: loaded against a game's numeric face, batched across matches, sampling reproducibly. */

const kuhn = getGame("kuhn-poker");
const leduc = getGame("leduc-poker");
const kuhnConfig = configure(kuhn, {}).config;
const leducConfig = configure(leduc, {}).config;
const weights = (n: number) => Array.from({ length: n }, (_, i) => ((i * 7) % 5) / 10 - 0.2);

describe("ONNX policy networks", () => {
  it("loads a network for a game config and answers a logit per action id for a batch", async () => {
    const w = weights(11 * 2);
    const network = await PolicyNetwork.load(linearModel(11, 2, w, [0.5, -0.5]), kuhn, kuhnConfig);
    expect([network.size, network.actions]).toEqual([11, 2]);
    const x = Float32Array.from({ length: 22 }, (_, i) => (i % 4 === 0 ? 1 : 0));
    const logits = await network.logits(x, 2);
    for (let row = 0; row < 2; row++) {
      for (let a = 0; a < 2; a++) {
        let expected = a === 0 ? 0.5 : -0.5;
        for (let i = 0; i < 11; i++) expected += x[row * 11 + i] * w[i * 2 + a];
        expect(logits[row * 2 + a]).toBeCloseTo(expected, 5);
      }
    }
    await network.release();
  });

  it("refuses a model of the wrong shape, or no model at all, naming what it expected and found", async () => {
    await expect(PolicyNetwork.load(linearModel(12, 2, weights(24), [0, 0]), kuhn, kuhnConfig)).rejects.toThrow(
      "this model does not fit kuhn-poker: its input must be float32 [batch, 11] (a dynamic batch, then the " +
        "observation shape), found float32 [batch, 12]",
    );
    await expect(PolicyNetwork.load(linearModel(11, 3, weights(33), [0, 0, 0]), kuhn, kuhnConfig)).rejects.toThrow(
      "its output must be float32 [batch, 2] (one logit per action id), found float32 [batch, 3]",
    );
    const garbage = new TextEncoder().encode("not a model at all");
    await expect(PolicyNetwork.load(garbage, kuhn, kuhnConfig)).rejects.toThrow(PolicyError);
    await expect(PolicyNetwork.load(garbage, kuhn, kuhnConfig)).rejects.toThrow(/^not an ONNX model onnxruntime/);
  });

  it("plays only legal ids, the same match again for the same seeds, batching matches that ask at once", async () => {
    // Fold is the network's favourite by far: the mask must keep it out wherever folding is not legal.
    const network = await PolicyNetwork.load(linearModel(30, 3, weights(90), [5, 0, 0]), leduc, leducConfig);
    const play = async (seed: string, batcher: PolicyBatcher) => {
      const episode = new Episode(leduc, leducConfig, seed);
      const rng = new Rng(seed, 1);
      const moves: Action[] = [];
      await playEpisode(episode, [policySeat(batcher, rng), policySeat(batcher, rng)], (step) => {
        moves.push(...step.filter((m): m is Action => m !== undefined));
      });
      expect(episode.over).toBe(true);
      return { moves, returns: episode.returns() };
    };
    const batcher = new PolicyBatcher(network);
    const seeds = Array.from({ length: 16 }, (_, i) => `onnx-${i}`);
    const first = await Promise.all(seeds.map((seed) => play(seed, batcher)));
    // Sixteen matches asking at once share batches.
    expect(batcher.batches).toBeLessThan(batcher.decisions);
    expect(first.flatMap((m) => m.moves).some((m) => m.type === "fold")).toBe(true);
    const again = await Promise.all(seeds.map((seed) => play(seed, new PolicyBatcher(network))));
    expect(again).toEqual(first);
    // Greedy: always the most likely legal id.
    const greedy = new Episode(leduc, leducConfig, "greedy");
    await playEpisode(greedy, [policySeat(batcher, undefined), policySeat(batcher, undefined)]);
    expect(greedy.over).toBe(true);
    await network.release();
  });

  it("is evaluated exactly over the whole tree: a uniform network is 11/24 exploitable in Kuhn poker", async () => {
    const tree = buildTree(kuhn, kuhnConfig);
    const uniform = await PolicyNetwork.load(linearModel(11, 2, new Array(22).fill(0), [0, 0]), kuhn, kuhnConfig);
    expect(exploitability(tree, await networkPolicy(tree, kuhn, uniform)).exploitability).toBeCloseTo(11 / 24, 6);
    // Greedy on a network that always prefers Bet (bet, call): the always-raise policy, which loses every fold.
    const betting = await PolicyNetwork.load(linearModel(11, 2, new Array(22).fill(0), [0, 1]), kuhn, kuhnConfig);
    const policy = await networkPolicy(tree, kuhn, betting, { greedy: true });
    for (const set of tree.infosets) {
      const bet = set.actions.findIndex((a) => a.type === "bet" || a.type === "call");
      expect(policy[set.offset + bet]).toBe(1);
    }
    await uniform.release();
    await betting.release();
  });
});
