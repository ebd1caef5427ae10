"""Scans along one dimension: running selections and running products and log-sums.

``cummax`` and ``cummin``: the ops are their index scans (int64, not differentiable): where the
running maximum (minimum) along ``dim`` was last reached. The values are a ``gather`` of those
indices, so each running value's gradient goes to the element it came from, as in PyTorch. Ties
take the latest index, and a NaN, once met, stays the running value (with its own index), as in
PyTorch.

``cumprod`` and ``logcumsumexp`` are ops with gradients written in fw ops (so they differentiate
twice): cumprod's is exact where the input holds zeros, logcumsumexp's stays finite for large
values, both as PyTorch computes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["cummax", "cummin", "cumprod", "logcumsumexp"]

import numpy as np

from .. import dtypes as _dt
from ..errors import FwError
from ..records import Structure, TensorSpec
from . import anchors
from .creation import cast
from .dispatch import apply
from .elementwise import abs as _abs
from .elementwise import exp, log, logical_and, logical_or, where
from .indexing import gather
from .meta import located, normalize_dim, require_floating
from .reduction import CUMSUM, ValuesIndices, cumsum
from .registry import define_op

if TYPE_CHECKING:
    from ..tensor import Tensor


def _index_meta(x, dim):
    return TensorSpec(tuple(x.shape), _dt.int64)


def _scan_op(name, which):
    return define_op(
        name, family="scans", builtin=True,
        doc=f"Where the running {which} of x along dim was last reached (int64); NaN, once "
            "met, stays.",
        signature=f"{name}(x: Tensor, dim: int) -> Tensor[int64]", meta=_index_meta, vjp=None,
        structure=Structure.OPAQUE,
        anchor=anchors.flat("indices are piecewise constant in the values: the gradient flows "
                            "through the gathered values instead"))


CUMMAX_INDEX = _scan_op("cummax_index", "maximum")
CUMMIN_INDEX = _scan_op("cummin_index", "minimum")


def _running(op, input, dim):
    axis = normalize_dim(dim, input.ndim, op.name)
    indices = apply(op, (input,), {"dim": axis})
    if input.ndim == 0:
        return ValuesIndices(input, indices)
    return ValuesIndices(gather(input, axis, indices), indices)


def cummax(input, dim: int):
    """``(values, indices)``: the running maximum of ``input`` along ``dim`` and where each
    was reached."""
    return _running(CUMMAX_INDEX, input, dim)


def cummin(input, dim: int):
    """``(values, indices)``: the running minimum of ``input`` along ``dim`` and where each
    was reached."""
    return _running(CUMMIN_INDEX, input, dim)


# -- running products and log-sums ----------------------------------------------------------------
def _cumprod_meta(x, dim):
    normalize_dim(dim, len(x.shape), "cumprod")
    return TensorSpec(tuple(x.shape), x.dtype if x.dtype.is_floating_point else _dt.int64)


def _logcumsumexp_meta(x, dim, reverse=False):
    normalize_dim(dim, len(x.shape), "logcumsumexp")
    require_floating(x, "logcumsumexp")
    return TensorSpec(tuple(x.shape), x.dtype)


def _reverse_cumsum(t, dim):
    return apply(CUMSUM, (t,), {"dim": dim, "reverse": True})


def _cumprod_vjp(ctx, g):
    """``grad_i = sum_{k >= i} g_k prod_{j <= k, j != i} x_j``, exactly, zeros included (as
    PyTorch's): before a row's first zero it is ``revcumsum(g * out) / x_i``; at the first
    zero it is ``revcumsum(g * cumprod(x with that zero read as 1))``; after it, 0."""
    x, dim = ctx.inputs[0], ctx.attrs["dim"]
    if x.ndim == 0:
        return (g,)
    is_zero = x == 0
    zeros_so_far = cumsum(is_zero, dim)
    before = zeros_so_far == 0
    first = logical_and(is_zero, zeros_so_far == 1)
    divided = _reverse_cumsum(g * ctx.out, dim) / where(before, x, 1.0)
    bridged = apply(CUMPROD, (where(first, 1.0, x),), {"dim": dim})
    at_first = _reverse_cumsum(g * bridged, dim)
    return (where(before, divided, where(first, at_first, 0.0)),)


def _logcumsumexp_vjp(ctx, g):
    """``grad_j = sum_{k >= j} g_k exp(x_j - out_k)``, summed in the log domain (PyTorch's
    formula): the positive and the negative parts of g each as a reverse logcumsumexp of
    ``log|g_k| - out_k``, plus ``x_j``, exponentiated. An absent part is the dtype's lowest
    finite value, not -inf, so the second derivative stays finite too."""
    x, out = ctx.inputs[0], ctx.out
    if x.ndim == 0:
        return (g,)
    attrs = {"dim": ctx.attrs["dim"], "reverse": not ctx.attrs["reverse"]}
    lowest = float(np.finfo(x.dtype.numpy).min)
    positive, negative = g > 0, g < 0
    log_abs = log(where(logical_or(positive, negative), _abs(g), 1.0))
    parts = [exp(apply(LOGCUMSUMEXP, (where(side, log_abs, lowest) - out,), attrs) + x)
             for side in (positive, negative)]
    return (parts[0] - parts[1],)


CUMPROD = define_op(
    "cumprod", family="scans", builtin=True,
    doc="Running products along dim: out[i] = x[0] * ... * x[i] (integers and bools in int64).",
    signature="cumprod(x: Tensor, dim: int) -> Tensor", meta=_cumprod_meta, vjp=_cumprod_vjp,
    structure=Structure.REDUCTION,
    anchor=anchors.smooth("a product: element i's gradient is the product of the others "
                          "(exact at zeros); it vanishes or explodes with long runs of small "
                          "or large factors"),
    saves=("inputs", "out"))
LOGCUMSUMEXP = define_op(
    "logcumsumexp", family="scans", builtin=True,
    doc="Running log(sum(exp(x))) along dim (from the end with reverse=True), computed "
        "stably: exact for values whose exp overflows.",
    signature="logcumsumexp(x: Tensor, dim: int, reverse: bool = False) -> Tensor",
    meta=_logcumsumexp_meta, vjp=_logcumsumexp_vjp, structure=Structure.REDUCTION,
    anchor=anchors.smooth("smooth: element j's gradient is the softmax weight it has in each "
                          "running sum from j onwards"),
    saves=("inputs", "out"))


def cumprod(input, dim: int, *, dtype=None) -> Tensor:
    """Running products of ``input`` along ``dim``: ``out[..., i] = x[..., 0] * ... *
    x[..., i]``. Integers and bools multiply in int64; ``dtype`` converts ``input`` first.
    The gradient is exact where the input holds zeros, as PyTorch's."""
    try:
        axis = normalize_dim(dim, input.ndim, "cumprod")
    except FwError as err:
        raise located(err, "cumprod", (input,), dim=dim) from None
    if dtype is not None:
        input = cast(input, dtype)
    return apply(CUMPROD, (input,), {"dim": axis})


def logcumsumexp(input, dim: int) -> Tensor:
    """``log(cumsum(exp(input), dim))`` without overflow: ``logcumsumexp([0., 100.], 0)`` is
    ``[0., 100.]``. Floating-point input only (DTypeError otherwise, as PyTorch refuses)."""
    try:
        axis = normalize_dim(dim, input.ndim, "logcumsumexp")
        require_floating(input, "logcumsumexp")  # the kernel would take integers silently
    except FwError as err:
        raise located(err, "logcumsumexp", (input,), dim=dim) from None
    return apply(LOGCUMSUMEXP, (input,), {"dim": axis, "reverse": False})


#: Tensor methods this family provides (bound by fw_core.tensor_methods)
METHODS = {name: globals()[name] for name in __all__}
