"""An fw program (the ``.fwm`` format, docs/fwm_format.md) translated into an ONNX model.

The program is fw's traced inference graph after fw.export's rewrites (weights as constants,
batch norm folded, elementwise chains as formulas), so ONNX export and edge export share one
tracer and one set of rewrites; this module only writes nodes.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from fw_core.errors import ExportError

from .graph import GraphBuilder, value_info
from .ops import CONVERTERS, Call

#: the opset written unless the caller asks for another (LayerNormalization needs 17)
DEFAULT_OPSET = 18
MIN_OPSET = 18


def supported_ops() -> list[str]:
    """The program ops fw_onnx writes."""
    return sorted(CONVERTERS)


def to_onnx(program: dict, arrays: dict[str, np.ndarray], opset: int | None = None,
            name: str = "fw") -> onnx.ModelProto:
    """The ONNX model computing ``program`` with the weights ``arrays`` (as a ``.fwm`` file
    holds them)."""
    opset = DEFAULT_OPSET if opset is None else opset
    if opset < MIN_OPSET:
        raise ExportError(f"opset {opset} is older than fw_onnx writes",
                          hint=f"use opset={MIN_OPSET} or later (onnxruntime runs up to 23)")
    dims = {}
    for entry in program["inputs"]:
        for axis, size in enumerate(entry["shape"]):
            if isinstance(size, str):
                dims.setdefault(size, (entry["name"], axis))
    g = GraphBuilder(dims)
    names = {entry["value"]: entry["name"] for entry in program["inputs"]}
    consts = {}
    for vid, weight in program["weights"].items():
        if "tensor" not in weight:
            raise ExportError("the program holds int8 weights, which fw_onnx does not write",
                              hint="export without quantize=")
        names[int(vid)] = g.weight(weight["tensor"], arrays[weight["tensor"]])
        consts[int(vid)] = arrays[weight["tensor"]]
    outputs = {entry["value"]: entry["name"] for entry in program["outputs"]}
    values = program["values"]
    for node in program["nodes"]:
        convert = CONVERTERS.get(node["op"])
        module = node.get("module") or "<top level>"
        if convert is None:
            raise ExportError(f"{node['op']} has no ONNX form in fw_onnx", op=node["op"],
                              module=module, hint="rewrite the model with ops fw_onnx writes "
                              f"({', '.join(supported_ops())})")
        out = node["output"]
        names[out] = outputs.get(out, f"v{out}")
        inputs = node["inputs"]
        convert(g, Call(node["op"], [None if i is None else names[i] for i in inputs],
                        [None if i is None else values[str(i)] for i in inputs],
                        [None if i is None else consts.get(i) for i in inputs],
                        node["attrs"], names[out], values[str(out)], node.get("module", ""),
                        consts))
    g.finish()
    graph = helper.make_graph(
        g.nodes, name,
        [value_info(e["name"], e["dtype"], e["shape"]) for e in program["inputs"]],
        [value_info(e["name"], e["dtype"], e["shape"]) for e in program["outputs"]],
        g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             producer_name="fw_onnx", producer_version=_version())


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fw-onnx")
    except PackageNotFoundError:
        return "0"
