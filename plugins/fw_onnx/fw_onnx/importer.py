"""``fw_onnx.load``: an ONNX model as a trainable fw module.

The module's parameters are the model's floating-point initializers (named after them, dots and
other characters a Python name cannot hold replaced by ``_``; :attr:`OnnxModule.onnx_names` maps
back), and the float tensors of more than one element that ``Constant`` nodes hold (converters
such as paddle2onnx store weights that way); its integer initializers are buffers. ``forward``
runs the graph's nodes in order as fw ops (:mod:`fw_onnx.handlers`), so autograd,
``fw.compile``, the debugger and the visualiser see an imported model as they see one written
in fw.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

import fw_core as fw
from fw_core import capture
from fw_core.errors import UnsupportedError

from .control import CONTROL, Branch
from .handlers import HANDLERS, Node

#: the opsets of the default domain this importer reads (up to the installed onnx's newest)
OPSETS = range(7, onnx.defs.onnx_opset_version() + 1)


class OnnxModule(fw.nn.Module):
    """An ONNX graph run with fw ops. Call it with the graph inputs (by position, in the
    graph's order, or by name); it returns one tensor for one output, else a tuple."""

    def __init__(self, model: onnx.ModelProto):
        super().__init__()
        graph = model.graph
        _check_opset(model)
        self.graph_name = graph.name
        self.onnx_names: dict[str, str] = {}
        for init in graph.initializer:
            self._hold(init.name, numpy_helper.to_array(init))
        known = {init.name for init in graph.initializer}
        self.input_names = [i.name for i in graph.input if i.name not in known]
        self.output_names = [o.name for o in graph.output]
        nodes = _nodes(graph.node, _opset(model))
        for node in nodes:
            if _holds_weight(node):
                self._hold(node.outputs[0], node.attrs["value"])
        self._nodes = [node for node in nodes if not _holds_weight(node)]

    def _hold(self, onnx_name: str, array: np.ndarray) -> None:
        """Keep ``array`` as a parameter (floats) or a buffer, under a Python name."""
        name = _attribute_name(onnx_name, self.onnx_names)
        self.onnx_names[name] = onnx_name
        if array.dtype.kind == "f":
            self.register_parameter(name, fw.nn.Parameter(fw.tensor(array.copy())))
        else:
            self.register_buffer(name, fw.tensor(array.copy()))

    def initializer(self, onnx_name: str) -> fw.Tensor:
        """The parameter or buffer holding the ONNX initializer ``onnx_name``."""
        by_onnx = {v: k for k, v in self.onnx_names.items()}
        return getattr(self, by_onnx[onnx_name])

    def forward(self, *inputs, **named):
        values: dict[str, fw.Tensor] = {}
        static: dict[str, np.ndarray] = {}
        for name, attribute in self.onnx_names.items():
            tensor = getattr(self, name)
            if isinstance(tensor, fw.nn.Parameter):
                values[attribute] = tensor
            else:
                static[attribute] = tensor.numpy()
        for name, value in [*zip(self.input_names, inputs), *named.items()]:
            values[name] = _as_tensor(value)
        missing = [n for n in self.input_names if n not in values]
        if missing:
            raise UnsupportedError(f"the model needs the inputs {missing}",
                                   op=self.graph_name, hint=f"pass {self.input_names}")
        _run(self._nodes, values, static)
        results = tuple(values[name] if name in values else fw.tensor(static[name])
                        for name in self.output_names)
        return results[0] if len(results) == 1 else results


def _holds_weight(node: Node) -> bool:
    """A Constant holding a float tensor of several elements: a weight to train."""
    value = node.attrs.get("value") if node.op_type == "Constant" else None
    return isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.size > 1


def _nodes(protos, opset: int) -> list[Node]:
    """The nodes of a graph as handlers run them, subgraphs decoded; an op fw_onnx does not
    import is refused here, when the model loads."""
    nodes = []
    for proto in protos:
        node = Node.of(proto)
        if node.op_type in CONTROL and node.domain in ("", "ai.onnx"):
            attrs = {k: Branch.of(v, lambda protos: _nodes(protos, opset))
                     if isinstance(v, onnx.GraphProto) else v for k, v in node.attrs.items()}
            node = Node(node.op_type, node.domain, node.name, node.inputs, node.outputs, attrs)
        elif node.op_type not in HANDLERS or node.domain not in ("", "ai.onnx"):
            raise UnsupportedError(
                f"node {node.name or '(unnamed)'} is {node.domain or 'ai.onnx'}:"
                f"{node.op_type}, which fw_onnx does not import", op=node.op_type,
                inputs=f"opset {opset}",
                hint="rewrite the model without it, or add a handler to fw_onnx.handlers")
        nodes.append(node)
    return nodes


def _run(nodes: list[Node], values: dict, static: dict) -> None:
    """Run ``nodes`` in order: ``values`` holds the tensors data flows through, ``static`` the
    arrays known before the data (folded on the host; see :data:`_FOLDED`)."""
    for node in nodes:
        present = [i for i in node.inputs if i]
        if node.op_type in CONTROL:
            CONTROL[node.op_type](node, values, static, _run)
            continue
        if node.op_type in _SHAPE_OF or node.op_type in _FOLDED and all(
                i in static for i in present):
            with capture.paused():  # host arithmetic on shapes: not part of a trace
                outs = _call(node, lambda i: fw.tensor(static[i]) if i in static
                             else values[i])
            static.update((name, out.numpy()) for name, out in outs if name)
            continue
        for i in present:
            if i not in values:  # a folded value read by data: a constant of the run
                values[i] = fw.tensor(static[i])
        values.update((name, out) for name, out in _call(node, values.__getitem__) if name)


def _call(node: Node, value_of) -> list:
    outs = HANDLERS[node.op_type](node, *(value_of(i) if i else None for i in node.inputs))
    return list(zip(node.outputs, outs if isinstance(outs, (tuple, list)) else (outs,)))


#: ops that only read their input's shape: their result is known before the data is
_SHAPE_OF = frozenset({"Shape", "Size"})
#: ops computed on the host when every input is known before the data (constants, integer
#: initializers, shapes): the arithmetic that builds a reshape target or a slice bound, which a
#: trace then sees as constants rather than as host reads in the middle of the graph. Range and
#: ConstantOfShape are not folded: they run as fw's creation ops, whose sizes a trace can
#: follow when they come from an input's shape
_FOLDED = frozenset({"Constant", "Gather", "Concat", "Unsqueeze", "Squeeze",
                     "Slice", "Cast", "Add", "Sub", "Mul", "Div", "Equal", "Where",
                     "Reshape", "Expand", "ReduceProd", "Max", "Min", "Identity", "Neg",
                     "Abs", "Mod", "Less", "Greater", "Not", "And", "Or", "Flatten",
                     "Transpose", "Tile", "CastLike", "Floor", "Ceil", "Sqrt"})


def load(model) -> OnnxModule:
    """The ONNX model at ``model`` (a path, bytes or a ``ModelProto``) as an fw module.

    Raises:
        UnsupportedError: a node whose op type, domain or opset fw_onnx does not import,
            naming the node, its op type, domain and opset.
    """
    if isinstance(model, (str, Path)):
        model = onnx.load(str(model))
    elif isinstance(model, bytes):
        model = onnx.load_from_string(model)
    return OnnxModule(model)


def _opset(model) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)


def _check_opset(model) -> None:
    version = _opset(model)
    if version not in OPSETS:
        raise UnsupportedError(f"the model uses opset {version} of the ONNX domain",
                               op="load", hint=f"convert it to an opset in {OPSETS.start}.."
                               f"{OPSETS.stop - 1} (onnx.version_converter)")


def _attribute_name(name: str, taken) -> str:
    base = re.sub(r"\W", "_", name) or "initializer"
    base = f"_{base}" if base[0].isdigit() else base
    candidate, k = base, 1
    while candidate in taken:
        k += 1
        candidate = f"{base}_{k}"
    return candidate


def _as_tensor(value) -> fw.Tensor:
    return value if isinstance(value, fw.Tensor) else fw.tensor(np.asarray(value))
