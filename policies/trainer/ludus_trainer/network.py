"""The policy network: an MLP from the game's information-state tensor to one logit per action id, written to
ONNX by hand (MatMul/Add and Relu or Tanh: the graph the server's onnxruntime-node session runs) and read back
from it, so a run resumes from the last version it registered."""

from __future__ import annotations

import base64
from typing import cast

import onnx
import torch
from onnx import TensorProto, helper, numpy_helper


ACTIVATIONS = {"relu": ("Relu", torch.relu), "tanh": ("Tanh", torch.tanh)}


class PolicyNet(torch.nn.Module):
    def __init__(
        self, inputs: int, actions: int, hidden: tuple[int, ...] = (128, 128), activation: str = "relu"
    ) -> None:
        super().__init__()
        sizes = (inputs, *hidden, actions)
        self.layers = torch.nn.ModuleList(torch.nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))
        self.inputs = inputs
        self.actions = actions
        self.activation = activation

    @property
    def linears(self) -> list[torch.nn.Linear]:
        """The layers, as what they are: to a type checker a ModuleList holds plain Modules (whose attributes are
        `Tensor | Module`), while __init__ fills this one with Linear layers only."""
        return cast(list[torch.nn.Linear], list(self.layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        act = ACTIVATIONS[self.activation][1]
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = act(x)
        return x

    def to_onnx(self) -> bytes:
        """The network as an ONNX model: input `observation` [batch, inputs], output `logits` [batch, actions]."""
        nodes, weights = [], []
        current = "observation"
        last = len(self.layers) - 1
        for i, layer in enumerate(self.linears):
            w, b = f"W{i}", f"b{i}"
            weights.append(numpy_helper.from_array(layer.weight.detach().cpu().T.contiguous().numpy(), w))
            weights.append(numpy_helper.from_array(layer.bias.detach().cpu().numpy(), b))
            product, summed = f"h{i}_product", ("logits" if i == last else f"h{i}_sum")
            nodes.append(helper.make_node("MatMul", [current, w], [product]))
            nodes.append(helper.make_node("Add", [product, b], [summed]))
            current = summed
            if i < last:
                current = f"h{i}"
                nodes.append(helper.make_node(ACTIVATIONS[self.activation][0], [summed], [current]))
        graph = helper.make_graph(
            nodes,
            "ludus-policy",
            [helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", self.inputs])],
            [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", self.actions])],
            weights,
        )
        model = helper.make_model(graph, producer_name="ludus-trainer", opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        return model.SerializeToString()

    @staticmethod
    def from_onnx(data: bytes) -> "PolicyNet":
        """A network this module wrote, read back with its weights."""
        model = onnx.load_from_string(data)
        arrays = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
        count = sum(1 for name in arrays if name.startswith("W"))
        if count == 0 or any(f"W{i}" not in arrays or f"b{i}" not in arrays for i in range(count)):
            raise ValueError("not a network the Ludus trainer wrote (it reads MLPs with weights W0, b0, W1, b1, ...)")
        shapes = [arrays[f"W{i}"].shape for i in range(count)]
        ops = {node.op_type for node in model.graph.node}
        activation = next((name for name, (op, _) in ACTIVATIONS.items() if op in ops), "relu")
        net = PolicyNet(shapes[0][0], shapes[-1][1], tuple(s[1] for s in shapes[:-1]), activation)
        with torch.no_grad():
            for i, layer in enumerate(net.linears):
                layer.weight.copy_(torch.from_numpy(arrays[f"W{i}"].T.copy()))
                layer.bias.copy_(torch.from_numpy(arrays[f"b{i}"].copy()))
        return net


def with_metadata(model: bytes, key: str, value: bytes) -> bytes:
    """The ONNX model with `value` in its metadata under `key` (onnxruntime ignores it; a resumed run reads it back)."""
    proto = onnx.load_from_string(model)
    entry = proto.metadata_props.add()
    entry.key, entry.value = key, base64.b64encode(value).decode("ascii")
    return proto.SerializeToString()


def metadata_of(model: bytes, key: str) -> bytes | None:
    """What `with_metadata` put in the model under `key`, if anything."""
    for entry in onnx.load_from_string(model).metadata_props:
        if entry.key == key:
            return base64.b64decode(entry.value)
    return None
