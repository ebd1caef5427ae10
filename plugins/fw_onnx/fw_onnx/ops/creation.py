"""Filled tensors and ranges, and ``pointwise`` nodes (rendered from their formula)."""

from __future__ import annotations

import numpy as np

from .. import pointwise
from ..graph import GraphBuilder, tensor_type
from .call import Call, scalar_tensor


def _fill(value):
    def convert(g: GraphBuilder, c: Call) -> None:
        number = c.attrs["fill_value"] if value is None else value
        g.add("ConstantOfShape", [g.shape(c.attrs["shape"])], [c.out],
              value=scalar_tensor(number, c.out_value["dtype"]))

    return convert


def arange(g: GraphBuilder, c: Call) -> None:
    """Range over the call's bounds: numbers, or size expressions computed from the inputs."""
    dtype = np.dtype(c.out_value["dtype"])

    def bound(entry) -> str:
        if isinstance(entry, dict):
            size = g.one("Squeeze", [g.size(entry), g.const(np.array([0], np.int64), "axes")])
            return g.one("Cast", [size], to=tensor_type(dtype))
        return g.const(np.array(entry, dtype), "bound")

    a = c.attrs
    g.add("Range", [bound(a.get("start", 0)), bound(a["end"]), bound(a.get("step", 1))],
          [c.out])


def pointwise_node(g: GraphBuilder, c: Call) -> None:
    inputs = [(name, np.dtype(v["dtype"])) for name, v in zip(c.inputs, c.values)]
    pointwise.render(g, c.attrs, inputs, c.out, np.dtype(c.out_value["dtype"]))


CONVERTERS = {"zeros": _fill(0), "ones": _fill(1), "full": _fill(None), "arange": arange,
              "pointwise": pointwise_node}
