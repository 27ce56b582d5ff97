import type * as Ort from "onnxruntime-node";
import type { AnyGame } from "../../games/core/game.ts";
import { shapeSize } from "../../games/core/numeric.ts";

/**
 * An ONNX policy network for one game config, in onnxruntime-node: it reads a batch of the game's
 * information-state tensors and answers one logit per action id. Loading checks the model against the
 * game's numeric face, so a network never sees a tensor of the wrong shape.
 */

/** A model that cannot play this game config, and why: what was expected, what was found. */
export class PolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PolicyError";
  }
}

/** Where inference runs: onnxruntime's CPU provider, or its CUDA provider on a machine with a GPU. */
export type PolicyDevice = "cpu" | "cuda";
export const POLICY_DEVICES: readonly PolicyDevice[] = ["cpu", "cuda"];

export interface NetworkOptions {
  /** onnxruntime's intra-op threads (default 1: faster at the small batches live matches make). */
  readonly threads?: number;
  /** Default cpu. cuda fails, saying why, where onnxruntime-node cannot use a GPU. */
  readonly device?: PolicyDevice;
}

/** onnxruntime, loaded by the first model a process opens (a server that seats none never loads it). */
export const onnxruntime = (): Promise<typeof Ort> => import("onnxruntime-node");

/** A session for `model` on `options.device`, or a PolicyError saying why it cannot be had. */
export async function openSession(model: Uint8Array, options: NetworkOptions): Promise<Ort.InferenceSession> {
  const device = options.device ?? "cpu";
  const ort = await onnxruntime();
  try {
    return await ort.InferenceSession.create(model, {
      intraOpNumThreads: options.threads ?? 1,
      executionProviders: [device],
    });
  } catch (error) {
    const why = (error as Error).message.split("\n")[0];
    if (device === "cuda" && /cuda|provider|shared library/i.test(why)) {
      throw new PolicyError(
        `--policy-device cuda: onnxruntime-node cannot use CUDA on this machine (${why}). Its CUDA provider needs ` +
          "an NVIDIA GPU with CUDA 12 and cuDNN 9, installed with ONNXRUNTIME_NODE_INSTALL_CUDA=v12 npm install; " +
          "use --policy-device cpu otherwise",
      );
    }
    throw new PolicyError(`not an ONNX model onnxruntime can load: ${why}`);
  }
}

const shapeText = (shape: readonly (number | string)[]) => `[${shape.join(", ")}]`;

export class PolicyNetwork {
  /** Entries in one observation tensor. */
  readonly size: number;
  /** Logits per observation: the game's actionCount. */
  readonly actions: number;

  private constructor(
    private readonly ort: typeof Ort,
    private readonly session: Ort.InferenceSession,
    private readonly input: string,
    private readonly output: string,
    readonly shape: readonly number[],
    actions: number,
  ) {
    this.size = shapeSize(shape);
    this.actions = actions;
  }

  /**
   * Loads `model` (ONNX bytes) for `config` of `game`: one float input of shape [batch, ...observationShape]
   * (the batch dimension dynamic) and one output of [batch, actionCount]. Anything else is refused naming the
   * expected and the found shapes.
   */
  static async load(model: Uint8Array, game: AnyGame, config: unknown, options: NetworkOptions = {}) {
    const shape = game.observationShape(config);
    const actions = game.actionCount(config);
    const session = await openSession(model, options);
    const fail = async (why: string) => {
      await session.release();
      throw new PolicyError(`this model does not fit ${game.id}: ${why}`);
    };
    if (session.inputNames.length !== 1 || session.outputNames.length !== 1) {
      return await fail(
        `it must have one input and one output, it has ${session.inputNames.length} and ${session.outputNames.length}`,
      );
    }
    const [input] = session.inputMetadata;
    const [output] = session.outputMetadata;
    const expectedIn = ["batch", ...shape];
    const found = (meta: Ort.InferenceSession.ValueMetadata) => (meta.isTensor ? meta.shape : []);
    const fits = (dims: readonly (number | string)[], want: readonly number[]) =>
      dims.length === want.length + 1 && typeof dims[0] === "string" && want.every((n, i) => dims[i + 1] === n);
    if (!input.isTensor || input.type !== "float32" || !fits(found(input), shape)) {
      return await fail(
        `its input must be float32 ${shapeText(expectedIn)} (a dynamic batch, then the observation shape), ` +
          `found ${input.isTensor ? `${input.type} ${shapeText(found(input))}` : "a non-tensor"}`,
      );
    }
    if (!output.isTensor || output.type !== "float32" || !fits(found(output), [actions])) {
      return await fail(
        `its output must be float32 [batch, ${actions}] (one logit per action id), ` +
          `found ${output.isTensor ? `${output.type} ${shapeText(found(output))}` : "a non-tensor"}`,
      );
    }
    return new PolicyNetwork(
      await onnxruntime(),
      session,
      session.inputNames[0],
      session.outputNames[0],
      shape,
      actions,
    );
  }

  /** The logits of `count` observations laid end to end in `observations`: `count × actions` numbers. */
  async logits(observations: Float32Array, count: number): Promise<Float32Array> {
    const input = new this.ort.Tensor("float32", observations.subarray(0, count * this.size), [count, ...this.shape]);
    const result = await this.session.run({ [this.input]: input });
    return result[this.output].data as Float32Array;
  }

  release(): Promise<void> {
    return this.session.release();
  }
}
