"""Reductions over dimensions: sums, means, extremes, products, norms, variances, arg-extremes."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..graph import GraphBuilder, tensor_type
from .call import Call, axes


def _axes_input(g: GraphBuilder, c: Call) -> list[str]:
    """The reduction's ``axes`` input (none: every axis)."""
    dims = c.attrs.get("dim")
    return [] if dims is None else [g.const(np.array(axes(dims, c.rank()), np.int64), "axes")]


def _keep(c: Call) -> int:
    return int(bool(c.attrs.get("keepdim", False)))


def _reduction(onnx_op: str) -> Callable:
    def convert(g: GraphBuilder, c: Call) -> None:
        g.add(onnx_op, [c.inputs[0], *_axes_input(g, c)], [c.out], keepdims=_keep(c))

    return convert


def norm(g: GraphBuilder, c: Call) -> None:
    kinds = {1: "ReduceL1", 2: "ReduceL2"}
    p = c.attrs.get("p", 2)
    if p not in kinds:
        raise c.refuse(f"the {p}-norm", "use p=1 or p=2")
    _reduction(kinds[p])(g, c)


def variance(root: bool) -> Callable:
    """``sum((x - mean)^2) / max(0, n - correction)`` (its square root for std)."""

    def convert(g: GraphBuilder, c: Call) -> None:
        dims = c.attrs.get("dim")
        reduced = range(c.rank()) if dims is None else axes(dims, c.rank())
        sizes = [c.values[0]["shape"][a] for a in reduced]
        x, over = c.inputs[0], _axes_input(g, c)
        mean = g.one("ReduceMean", [x, *over], keepdims=1)
        centred = g.one("Sub", [x, mean])
        total = g.one("ReduceSum", [g.one("Mul", [centred, centred]), *over], keepdims=_keep(c))
        count = g.one("Cast", [g.one("ReduceProd", [g.shape(sizes)], keepdims=0)],
                      to=tensor_type(c.dtype()))
        divisor = g.one("Max", [g.one("Sub", [count, _number(g, c.attrs.get("correction", 1),
                                                             c)]), _number(g, 0, c)])
        out = g.one("Div", [total, divisor])
        g.add("Sqrt" if root else "Identity", [out], [c.out])

    return convert


def _number(g: GraphBuilder, value, c: Call) -> str:
    return g.const(np.array(value, c.dtype()), "k")


def arg_extreme(onnx_op: str) -> Callable:
    """ArgMax/ArgMin along ``dim``, of the flattened tensor for ``dim=None``; the first of ties."""

    def convert(g: GraphBuilder, c: Call) -> None:
        dim, keep = c.attrs.get("dim"), _keep(c)
        x = c.inputs[0]
        if dim is None:
            x = g.one("Reshape", [x, g.const(np.array([-1], np.int64), "shape")])
            found = g.one(onnx_op, [x], axis=0, keepdims=0)
            if keep:
                found = g.one("Reshape", [found, g.const(np.ones(c.rank(), np.int64),
                                                         "shape")])
            g.add("Identity", [found], [c.out])
            return
        g.add(onnx_op, [x], [c.out], axis=axes(dim, c.rank())[0], keepdims=keep,
              select_last_index=0)

    return convert


CONVERTERS = {"sum": _reduction("ReduceSum"), "mean": _reduction("ReduceMean"),
              "amax": _reduction("ReduceMax"), "amin": _reduction("ReduceMin"),
              "max": _reduction("ReduceMax"), "min": _reduction("ReduceMin"),
              "prod": _reduction("ReduceProd"), "norm": norm, "var": variance(False),
              "std": variance(True), "argmax": arg_extreme("ArgMax"),
              "argmin": arg_extreme("ArgMin")}
