import onnxProto from "onnx-proto";

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;

/**
 * A tiny ONNX model built in the test: logits = observation · W + b, with the given input and output widths
 * (a dynamic batch first). Real networks are exported by the trainer; this one has the same interface.
 */
export function linearModel(inputs: number, outputs: number, weights: readonly number[], bias: readonly number[]) {
  return model(inputs, outputs, {
    node: [
      { opType: "MatMul", input: ["observation", "W"], output: ["product"] },
      { opType: "Add", input: ["product", "b"], output: ["logits"] },
    ],
    initializer: [weightsOf("W", [inputs, outputs], weights), weightsOf("b", [outputs], bias)],
  });
}

/** A float initializer of the given dims. */
const weightsOf = (name: string, dims: number[], values: ArrayLike<number>) => ({
  name,
  dataType: FLOAT,
  dims,
  floatData: Array.from(values),
});

/** A graph from observation [batch, inputs] to logits [batch, outputs], encoded as ONNX bytes. */
function model(inputs: number, outputs: number, graph: { node: object[]; initializer: object[] }) {
  const dims = (width: number) => ({ dim: [{ dimParam: "batch" }, { dimValue: width }] });
  // A copy with a buffer of its own: protobufjs hands out views of a pool it reuses.
  return new Uint8Array(
    onnx.ModelProto.encode(onnx.ModelProto.create({
      irVersion: 8,
      opsetImport: [{ domain: "", version: 13 }],
      producerName: "ludus-test",
      graph: {
        name: "policy",
        ...graph,
        input: [{ name: "observation", type: { tensorType: { elemType: FLOAT, shape: dims(inputs) } } }],
        output: [{ name: "logits", type: { tensorType: { elemType: FLOAT, shape: dims(outputs) } } }],
      },
    })).finish(),
  );
}

/**
 * A 2-layer MLP (observation → hidden ReLU → logits) with small weights drawn from `seed`: the shape of a
 * small trained policy, for benchmarks and sampling tests.
 */
export function mlpModel(inputs: number, hidden: number, outputs: number, seed = 1) {
  let s = seed >>> 0 || 1;
  const draw = (n: number, scale: number) =>
    Array.from({ length: n }, () => {
      s ^= s << 13, s ^= s >>> 17, s ^= s << 5;
      return ((s >>> 0) / 2 ** 32 - 0.5) * 2 * scale;
    });
  return model(inputs, outputs, {
    node: [
      { opType: "MatMul", input: ["observation", "W1"], output: ["h1"] },
      { opType: "Add", input: ["h1", "b1"], output: ["h2"] },
      { opType: "Relu", input: ["h2"], output: ["h"] },
      { opType: "MatMul", input: ["h", "W2"], output: ["l1"] },
      { opType: "Add", input: ["l1", "b2"], output: ["logits"] },
    ],
    initializer: [
      weightsOf("W1", [inputs, hidden], draw(inputs * hidden, 1 / Math.sqrt(inputs))),
      weightsOf("b1", [hidden], draw(hidden, 0.1)),
      weightsOf("W2", [hidden, outputs], draw(hidden * outputs, 1 / Math.sqrt(hidden))),
      weightsOf("b2", [outputs], draw(outputs, 0.1)),
    ],
  });
}

/**
 * A table as a network: for each row, a hidden unit that fires (1) on exactly that binary tensor and
 * nowhere else (weights ±1, bias 1 − its ones), and the row's logits behind it. Any tabular policy of a game
 * with binary information-state tensors (Kuhn, Leduc) becomes an ONNX model that plays it exactly.
 */
export function tableModel(
  inputs: number,
  outputs: number,
  rows: readonly { tensor: ArrayLike<number>; logits: readonly number[] }[],
) {
  const w1 = new Float32Array(inputs * rows.length);
  const b1 = new Float32Array(rows.length);
  const w2 = new Float32Array(rows.length * outputs);
  rows.forEach(({ tensor, logits }, r) => {
    let ones = 0;
    for (let i = 0; i < inputs; i++) {
      if (tensor[i] !== 0 && tensor[i] !== 1) throw new RangeError(`tableModel needs binary tensors, got ${tensor[i]}`);
      w1[i * rows.length + r] = tensor[i] ? 1 : -1;
      ones += tensor[i];
    }
    b1[r] = 1 - ones;
    logits.forEach((l, a) => (w2[r * outputs + a] = l));
  });
  return model(inputs, outputs, {
    node: [
      { opType: "MatMul", input: ["observation", "W1"], output: ["h1"] },
      { opType: "Add", input: ["h1", "b1"], output: ["h2"] },
      { opType: "Relu", input: ["h2"], output: ["h"] },
      { opType: "MatMul", input: ["h", "W2"], output: ["logits"] },
    ],
    initializer: [
      weightsOf("W1", [inputs, rows.length], w1),
      weightsOf("b1", [rows.length], b1),
      weightsOf("W2", [rows.length, outputs], w2),
    ],
  });
}

// Hostile models, as an outside contributor could upload them: each is a valid ONNX file with the interface a
// Kuhn policy has ([batch, inputs] in, [batch, outputs] out), so only running it shows what it does.

const INT64 = onnx.TensorProto.DataType.INT64;
const BOOL = onnx.TensorProto.DataType.BOOL;
const scalar = (name: string, elemType: number) => ({ name, type: { tensorType: { elemType, shape: { dim: [] } } } });

/** logits = observation · 0.1 + extra · 0, where `extra` is [1, 1] (or broadcast to it): the model's real work. */
const withExtra = (inputs: number, outputs: number, node: object[], initializer: object[]) =>
  model(inputs, outputs, {
    node: [
      ...node,
      { opType: "MatMul", input: ["observation", "W"], output: ["product"] },
      { opType: "Mul", input: ["extra", "zero"], output: ["nothing"] },
      { opType: "Add", input: ["product", "nothing"], output: ["logits"] },
    ],
    initializer: [
      weightsOf("W", [inputs, outputs], new Array(inputs * outputs).fill(0.1)),
      weightsOf("zero", [], [0]),
      ...initializer,
    ],
  });

/**
 * An ONNX Loop of `trips` iterations (2 ** 62: it never ends) adding 1 to a counter that starts at the
 * observation's sum, so it cannot be folded away when the session is made.
 */
export function loopModel(inputs: number, outputs: number, trips: bigint) {
  const body = {
    name: "body",
    node: [
      { opType: "Identity", input: ["cond"], output: ["cond_out"] },
      { opType: "Add", input: ["count", "one"], output: ["count_out"] },
    ],
    initializer: [weightsOf("one", [], [1])],
    input: [scalar("i", INT64), scalar("cond", BOOL), scalar("count", FLOAT)],
    output: [scalar("cond_out", BOOL), scalar("count_out", FLOAT)],
  };
  return withExtra(inputs, outputs, [
    {
      opType: "ReduceSum",
      input: ["observation"],
      output: ["start"],
      attribute: [{ name: "keepdims", type: 2, i: 0 }],
    },
    {
      opType: "Loop",
      input: ["trips", "true", "start"],
      output: ["extra"],
      attribute: [{ name: "body", type: onnx.AttributeProto.AttributeType.GRAPH, g: body }],
    },
  ], [
    { name: "trips", dataType: INT64, dims: [], int64Data: [trips.toString()] },
    { name: "true", dataType: BOOL, dims: [], int32Data: [1] },
  ]);
}

/** Each observation row tiled `repeats` times (memory and time grow with it), summed. */
export function tileModel(inputs: number, outputs: number, repeats: number) {
  return withExtra(inputs, outputs, [
    { opType: "Tile", input: ["observation", "repeats"], output: ["tiled"] },
    { opType: "ReduceSum", input: ["tiled"], output: ["extra"], attribute: [{ name: "keepdims", type: 2, i: 1 }] },
  ], [{ name: "repeats", dataType: INT64, dims: [2], int64Data: ["1", String(repeats)] }]);
}

/** A model of about `bytes` bytes: a float initializer of zeros that large (raw data), summed. */
export function bigModel(inputs: number, outputs: number, bytes: number) {
  const count = Math.floor(bytes / 4);
  return withExtra(inputs, outputs, [
    { opType: "ReduceSum", input: ["big"], output: ["extra"], attribute: [{ name: "keepdims", type: 2, i: 1 }] },
  ], [{ name: "big", dataType: FLOAT, dims: [count], rawData: new Uint8Array(count * 4) }]);
}

/** A model whose weights live in an external file at `location` (relative: onnxruntime reads it from the cwd). */
export function externalDataModel(inputs: number, outputs: number, location: string) {
  return model(inputs, outputs, {
    node: [{ opType: "MatMul", input: ["observation", "W"], output: ["logits"] }],
    initializer: [{
      name: "W",
      dataType: FLOAT,
      dims: [inputs, outputs],
      dataLocation: onnx.TensorProto.DataLocation.EXTERNAL,
      externalData: [{ key: "location", value: location }, { key: "offset", value: "0" }, {
        key: "length",
        value: String(inputs * outputs * 4),
      }],
    }],
  });
}
