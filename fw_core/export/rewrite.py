"""The rewrites that turn an inference trace into a program: weights become constants, eval-mode
batch norm folds into the convolution or linear layer before it, constant subgraphs fold, common
subexpressions merge, dead code goes, and linear weights are stored pre-transposed.

Every rewrite keeps the values the function computes: the exporter runs the written program on
the example inputs and compares (see :func:`fw_core.export.export`).
"""

from __future__ import annotations

import numpy as np

from ..compile.ir import Node, Value
from ..compile.passes.constfold import fold_constants
from ..compile.passes.cse import eliminate_common_subexpressions, substitute
from ..compile.passes.dce import eliminate_dead_code

#: ops whose output channels are dim 0 of their weight and dim 1 of their result
_CHANNEL_FIRST = frozenset({"conv1d", "conv2d", "conv3d", "linear"})


def prepare(graph, hold: set[int], tensor_names: dict[int, str], fills: dict, shapes: dict,
            ) -> dict[int, str]:
    """Rewrite ``graph`` in place and return the names of its constants (value index -> the
    parameter or buffer each came from). ``hold``: ids of nodes never folded (their attributes
    follow a dynamic dimension, so their results are not constants of the program);
    ``tensor_names``: id of each parameter and buffer -> its name in the model; ``fills`` and
    ``shapes``: the filled constants whose size follows a dynamic dimension, made by a ``full``
    node instead (see :func:`~fw_core.export.sizes.fit_graph`)."""
    hold = hold | _fills_as_nodes(graph, fills, shapes)
    names = _weights_as_constants(graph, tensor_names)
    _fold_batch_norms(graph, names)
    from ..device import get

    cpu = get("cpu")
    fold_constants(graph, lambda node: cpu.kernels[node.op], max_bytes=2**40, keep=hold)
    eliminate_common_subexpressions(graph)
    eliminate_dead_code(graph)
    _transpose_linear_weights(graph, names)
    return names


def _fills_as_nodes(graph, fills: dict, shapes: dict) -> set[int]:
    """Each filled constant whose size moves becomes the output of a ``full`` node at the start
    of the program; returns the nodes' ids (never folded back into constants)."""
    from ..ops.creation import FULL

    made = []
    for v in {v.index: v for s in graph.steps for v in s.reads if v.index in fills}.values():
        attrs = {"shape": tuple(shapes[v.index]), "fill_value": fills[v.index], "dtype": v.dtype}
        node = Node(FULL, (), attrs, v, "", "forward")
        v.source, v.payload, v.producer = "node", None, node
        made.append(node)
    graph.steps[:0] = made
    return {id(n) for n in made}


def _weights_as_constants(graph, tensor_names: dict[int, str]) -> dict[int, str]:
    """Parameters and buffers (external values) are fixed in a program: constants whose arrays
    the file holds, named after the tensors they were."""
    names = {}
    for step in graph.steps:
        for v in step.reads:
            if v.source == "external":
                tensor = v.payload
                v.source, v.payload = "const", np.array(tensor.detach().numpy(), copy=True)
                if id(tensor) in tensor_names:
                    names[v.index] = tensor_names[id(tensor)]
    return names


def _fold_batch_norms(graph, names: dict[int, str]) -> None:
    """``batch_norm(conv(x, w, b))`` in eval mode is ``conv(x, w * s, (b - mean) * s + beta)``
    with ``s = gamma / sqrt(var + eps)`` per output channel: one op instead of two."""
    users = graph.users()
    for step in list(graph.steps):
        if step.__class__ is not Node or step.op.name != "batch_norm" or step.attrs["training"] \
                or not step.attrs["has_running"]:
            continue
        x = step.inputs[0]
        producer = x.producer
        if producer is None or producer.op.name not in _CHANNEL_FIRST or \
                len(users.get(x.index, ())) != 1 or x in graph.outputs:
            continue
        weight, bias = (list(producer.inputs[1:3]) + [None])[:2]
        params = [v for v in step.inputs[1:] if v.__class__ is Value]
        if weight.__class__ is not Value or weight.source != "const" or \
                any(v.source != "const" for v in params) or \
                (bias.__class__ is Value and bias.source != "const"):
            continue
        mean, var, gamma, beta = _bn_params(step)
        scale = gamma / np.sqrt(var + step.attrs["eps"])
        w = weight.payload * scale.reshape((-1,) + (1,) * (weight.payload.ndim - 1))
        b = (0 if bias is None else bias.payload) - mean
        new_w = graph.value(w.shape, weight.dtype, "const", w.astype(weight.dtype))
        new_b = graph.value(b.shape, weight.dtype, "const", (b * scale + beta).astype(weight.dtype))
        _rename(names, new_w, weight)
        if bias.__class__ is Value:
            _rename(names, new_b, bias)
        producer.inputs = (producer.inputs[0], new_w, new_b, *producer.inputs[3:])
        producer.out = step.out
        step.out.producer = producer
        graph.steps.remove(step)
        graph.log.append(f"export: folded batch_norm into {producer.op.name} ({producer.module})")


def _bn_params(step):
    """(running_mean, running_var, weight, bias) of an eval batch norm as float64 arrays."""
    a = step.attrs
    present = iter(step.inputs[1:])
    mean, var = next(present).payload, next(present).payload
    channels = mean.shape[0]
    gamma = next(present).payload if a["has_weight"] else np.ones(channels)
    beta = next(present).payload if a["has_bias"] else np.zeros(channels)
    return (np.asarray(p, np.float64) for p in (mean, var, gamma, beta))


def _transpose_linear_weights(graph, names: dict[int, str]) -> None:
    """Store each constant linear weight as ``[in, out]`` C-contiguous, so a GEMM reads it
    without a transpose: ``weight_layout="in_out"`` on the node."""
    transposed: dict[int, Value] = {}
    for step in graph.steps:
        if step.__class__ is not Node or step.op.name != "linear":
            continue
        weight = step.inputs[1]
        if weight.__class__ is not Value or weight.source != "const" or weight.payload.ndim != 2:
            step.attrs["weight_layout"] = "out_in"
            continue
        new = transposed.get(weight.index)
        if new is None:
            array = np.ascontiguousarray(weight.payload.T)
            new = graph.value(array.shape, array.dtype, "const", array)
            _rename(names, new, weight)
            transposed[weight.index] = new
        substitute(step, {weight.index: new})
        step.attrs["weight_layout"] = "in_out"


def _rename(names: dict[int, str], new: Value, old: Value) -> None:
    if old.index in names:
        names[new.index] = names[old.index]
