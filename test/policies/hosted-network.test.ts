import { describe, expect, it } from "vitest";
import { configure } from "../../games/core/config.ts";
import { getGame } from "../../games/registry.ts";
import { HostedNetwork, NetworkReleasedError, PolicyBudgetError } from "../../policies/onnx/hosted.ts";
import { loopModel } from "../support/onnx-models.ts";

/**
 * A model in its inference process (policies/onnx/hosted.ts): how a batch ends says whose fault it was. Over the
 * budget is the model's (the runtime quarantines it); a batch still in flight when its owner lets the network go is
 * nobody's (the runtime must not quarantine a sound version it merely unloaded).
 */

const game = getGame("kuhn-poker");
const { config } = configure(game, {});
const observation = new Float32Array(11);

describe("a hosted network", () => {
  it("fails a batch past its budget as the model's fault, and every later one with it", async () => {
    const network = await HostedNetwork.open(loopModel(11, 2, 2n ** 62n), game, config, "endless", { batchMs: 200 });
    const over = await network.logits(observation, 1).catch((error) => error);
    expect(over).toBeInstanceOf(PolicyBudgetError);
    expect(over.message).toMatch(/endless: a batch of 1 took longer than its budget of 200 ms/);
    await expect(network.logits(observation, 1)).rejects.toBe(over);
    await network.release();
  });

  it("fails a batch in flight when it is released as released, not over budget", async () => {
    const network = await HostedNetwork.open(loopModel(11, 2, 2n ** 62n), game, config, "busy", { batchMs: 60_000 });
    const asked = network.logits(observation, 1).catch((error) => error);
    await network.release();
    const failure = await asked;
    expect(failure).toBeInstanceOf(NetworkReleasedError);
    expect(failure).not.toBeInstanceOf(PolicyBudgetError);
    expect(failure.message).toBe("busy was released");
  });
});
