import onnxProto from "onnx-proto";
import { openSession, type PolicyDevice } from "./network.ts";

const { onnx } = onnxProto;

/**
 * Checks that onnxruntime can run on `device` here, with a one-node model, so a server asked for CUDA on a
 * machine without it says so when it starts, not at its first policy match. Throws PolicyError saying why.
 */
export async function checkDevice(device: PolicyDevice): Promise<void> {
  const FLOAT = onnx.TensorProto.DataType.FLOAT;
  const shape = { dim: [{ dimParam: "batch" }, { dimValue: 1 }] };
  const model = onnx.ModelProto.encode(onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: "", version: 13 }],
    graph: {
      name: "probe",
      node: [{ opType: "Identity", input: ["x"], output: ["y"] }],
      input: [{ name: "x", type: { tensorType: { elemType: FLOAT, shape } } }],
      output: [{ name: "y", type: { tensorType: { elemType: FLOAT, shape } } }],
    },
  })).finish();
  await (await openSession(model, { device })).release();
}
