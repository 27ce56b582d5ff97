import onnxProto from "onnx-proto";
import { PolicyError } from "./network.ts";

const { onnx } = onnxProto;
const EXTERNAL = onnx.TensorProto.DataLocation.EXTERNAL;

/**
 * Refuses a model whose tensors keep their data outside the file. onnxruntime would read such data from a
 * path relative to the server's working directory (location=data/server.json is accepted by it), so a model
 * could read the server's files. Every TensorProto counts: initializers, sparse ones, constants in node
 * attributes, and those of subgraphs (Loop, If, Scan bodies), functions and training info, at any depth.
 */
export function refuseExternalData(model: Uint8Array): void {
  let decoded: object;
  try {
    decoded = onnx.ModelProto.decode(model);
  } catch (error) {
    throw new PolicyError(`not an ONNX model onnxruntime can load: ${(error as Error).message.split("\n")[0]}`);
  }
  const found = externalTensor(decoded);
  if (found !== undefined) {
    throw new PolicyError(
      `tensor ${JSON.stringify(found)} keeps its data outside the model (external data); a policy must be one ` +
        "self-contained ONNX file (onnx.save(model, path, save_as_external_data=False))",
    );
  }
}

/** The name of the first tensor with external data under `value`, walking every message field. */
function externalTensor(value: unknown): string | undefined {
  const stack: unknown[] = [value];
  while (stack.length) {
    const node = stack.pop();
    if (node === null || typeof node !== "object" || ArrayBuffer.isView(node)) continue;
    if (Array.isArray(node)) {
      // Numbers (floatData and the like) hold no messages: skip them without walking millions of entries.
      if (node.length > 0 && typeof node[0] === "object") stack.push(...node);
      continue;
    }
    const message = node as { dataLocation?: number; externalData?: unknown[]; name?: string };
    if (message.dataLocation === EXTERNAL || (Array.isArray(message.externalData) && message.externalData.length)) {
      return message.name ?? "";
    }
    for (const field of Object.values(node)) if (field !== null && typeof field === "object") stack.push(field);
  }
  return undefined;
}
