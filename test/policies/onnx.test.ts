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
import { strategyAsNetwork } from "../support/policy-models.ts";
import { checkDevice } from "../../policies/onnx/probe.ts";
import { ludus } from "../support/cli.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { strategyPolicy } from "../../games/analysis/policy.ts";
import { createStrategy } from "../../policies/baselines/index.ts";

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

  it("runs on CUDA where onnxruntime can use it, and says why not where it cannot", async () => {
    const usable = await checkDevice("cuda").then(() => true, (error) => error);
    if (usable === true) {
      const network = await PolicyNetwork.load(linearModel(11, 2, weights(22), [0, 0]), kuhn, kuhnConfig, {
        device: "cuda",
      });
      expect(await network.logits(new Float32Array(11), 1)).toHaveLength(2);
      return await network.release();
    }
    expect(usable).toBeInstanceOf(PolicyError);
    expect(usable.message).toMatch(/^--policy-device cuda: onnxruntime-node cannot use CUDA on this machine \(/);
    expect(usable.message).toContain("use --policy-device cpu otherwise");
    const dir = mkdtempSync(join(tmpdir(), "ludus-cuda-"));
    const { code, err } = await ludus("serve", "--port", "0", "--policy-device", "cuda", "--data-dir", dir);
    rmSync(dir, { recursive: true, force: true });
    expect(code).toBe(2);
    expect(err).toContain("--policy-device cuda: onnxruntime-node cannot use CUDA");
  });

  it("batches up to its size, and waits the time it is given for more", async () => {
    const network = await PolicyNetwork.load(linearModel(11, 2, weights(22), [0, 0]), kuhn, kuhnConfig);
    const row = (i: number) => (into: Float32Array) => into.fill(0).set([i % 2, 1 - (i % 2)]);
    const small = new PolicyBatcher(network, { maxBatch: 4 });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => small.logits(row(i)).then((l) => [...l])));
    expect([small.batches, small.decisions]).toEqual([3, 10]); // 4, 4 and the 2 left at the end of the turn
    expect(answers[0]).toEqual(answers[2]);
    expect(answers[0]).not.toEqual(answers[1]);
    // Decisions a few turns of the event loop apart share a batch that waits for them.
    const patient = new PolicyBatcher(network, { waitMs: 500 });
    const spread = Array.from({ length: 5 }, (_, i) =>
      new Promise<Float32Array>((resolve) => {
        let turns = i;
        const ask = () => (turns-- > 0 ? setImmediate(ask) : resolve(patient.logits(row(i))));
        ask();
      }));
    await Promise.all(spread);
    expect([patient.batches, patient.decisions]).toEqual([1, 5]);
    expect(() => new PolicyBatcher(network, { maxBatch: 0 })).toThrow("a batch holds a whole number ≥ 1");
    // One decision out of step (a match that started late) must not split the rest into groups that take
    // turns: with one batch at a time, the eight matches that ask again at once share each batch.
    const shared = new PolicyBatcher(network, { maxBatch: 8 });
    const stray = shared.logits(row(0));
    const play = async (i: number) => {
      for (let k = 0; k < 20; k++) await shared.logits(row(i));
    };
    await Promise.all([stray, ...Array.from({ length: 8 }, (_, i) => play(i))]);
    expect(shared.decisions).toBe(161);
    expect(shared.batches).toBeLessThanOrEqual(22);
    await network.release();
  });

  it("gives the exploitability of the table it encodes: Leduc's Nash table as a network, all 936 sets", async () => {
    const tree = buildTree(leduc, leducConfig);
    const network = await PolicyNetwork.load(strategyAsNetwork("leduc-poker", "nash"), leduc, leducConfig);
    const table = exploitability(tree, strategyPolicy(tree, leduc, createStrategy("leduc-poker", "nash")));
    const played = exploitability(tree, await networkPolicy(tree, leduc, network));
    expect(tree.infosets.length).toBe(936);
    expect(played.exploitability).toBeCloseTo(table.exploitability, 6);
    expect(played.exploitability).toBeLessThan(1e-3);
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
