import onnxProto from "onnx-proto";

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;

/**
 * A tiny ONNX model built in the test: logits = observation · W + b, with the given input and output widths
 * (a dynamic batch first). Real networks are exported by the trainer; this one has the same interface.
 */
export function linearModel(inputs: number, outputs: number, weights: readonly number[], bias: readonly number[]) {
  const dims = (width: number) => ({ dim: [{ dimParam: "batch" }, { dimValue: width }] });
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: "", version: 13 }],
    producerName: "ludus-test",
    graph: {
      name: "linear",
      node: [
        { opType: "MatMul", input: ["observation", "W"], output: ["product"] },
        { opType: "Add", input: ["product", "b"], output: ["logits"] },
      ],
      initializer: [
        { name: "W", dataType: FLOAT, dims: [inputs, outputs], floatData: [...weights] },
        { name: "b", dataType: FLOAT, dims: [outputs], floatData: [...bias] },
      ],
      input: [{ name: "observation", type: { tensorType: { elemType: FLOAT, shape: dims(inputs) } } }],
      output: [{ name: "logits", type: { tensorType: { elemType: FLOAT, shape: dims(outputs) } } }],
    },
  });
  return onnx.ModelProto.encode(model).finish();
}
