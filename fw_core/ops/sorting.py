"""Sorting: ``argsort`` is the one op (the order of each row, int64, not differentiable); ``sort``,
``topk`` and ``msort`` are that order plus a ``gather`` of the values, so their values carry the
gradient back to the elements they came from, as in PyTorch.

The order is stable: equal elements keep their original order, ascending or descending (PyTorch
promises that only with ``stable=True``; fw always gives it). NaN sorts above every number, so
it comes last ascending and first descending, as in PyTorch.

The order statistics read that order too: ``kthvalue`` and ``median`` take one position of it,
``mode`` is one op (the index of the most frequent value, int64) plus a gather. Their values are
gathered, so each gets its gradient from the element it names, as in PyTorch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["argsort", "kthvalue", "median", "mode", "msort", "sort", "topk"]

import math

from .. import dtypes as _dt
from ..errors import FwError, IndexOutOfRangeError, InvalidArgumentError
from ..records import Structure, TensorSpec
from . import anchors
from .creation import full, zeros
from .dispatch import apply
from .elementwise import isnan, where
from .indexing import gather
from .meta import argument_error, located, normalize_dim
from .reduction import ValuesIndices
from .reduction import sum as _sum
from .registry import define_op
from .shape import narrow, reshape, squeeze, unsqueeze

if TYPE_CHECKING:
    from ..tensor import Tensor


def _argsort_meta(x, dim, descending):
    return TensorSpec(tuple(x.shape), _dt.int64)


ARGSORT = define_op(
    "argsort", family="sorting", builtin=True,
    doc="The indices that sort x along dim (stable; descending puts the largest and NaN first).",
    signature="argsort(x: Tensor, dim: int, descending: bool) -> Tensor[int64]",
    meta=_argsort_meta, vjp=None, structure=Structure.OPAQUE,
    anchor=anchors.flat("an order is piecewise constant in the values: no gradient flows "
                        "through the indices (sort's values get theirs through gather)"))


def argsort(input, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The int64 indices that sort ``input`` along ``dim``; always stable (``stable`` is
    accepted for PyTorch's signature)."""
    axis = normalize_dim(dim, input.ndim, "argsort")
    return apply(ARGSORT, (input,), {"dim": axis, "descending": bool(descending)})


def sort(input, dim: int = -1, descending: bool = False, stable: bool = False):
    """``(values, indices)`` of ``input`` sorted along ``dim``; the values are differentiable."""
    indices = argsort(input, dim, descending)
    if input.ndim == 0:
        return ValuesIndices(input, indices)
    return ValuesIndices(gather(input, dim, indices), indices)


def msort(input) -> Tensor:
    """``input`` sorted along its first dimension (the values of ``sort(input, 0)``)."""
    return sort(input, 0).values


def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):  # noqa: A002
    """``(values, indices)`` of the ``k`` largest (or, with ``largest=False``, smallest)
    elements along ``dim``, in sorted order (``sorted`` is accepted: they always are)."""
    size = input.shape[dim] if input.ndim else 1
    if not isinstance(k, int) or not 0 <= k <= size:
        raise argument_error("topk", f"k must be an int in [0, {size}] for a dimension of "
                             f"size {size}, got {k!r}", f"pick k <= {size}", values=(input,),
                             k=k)
    indices = argsort(input, dim, descending=largest)
    if input.ndim:
        indices = narrow(indices, dim, 0, k)
        return ValuesIndices(gather(input, dim, indices), indices)
    return ValuesIndices(input, indices)


# -- order statistics ----------------------------------------------------------------------------
def _mode_index_meta(x, dim):
    return TensorSpec(tuple(n for i, n in enumerate(x.shape) if i != dim), _dt.int64)


MODE_INDEX = define_op(
    "mode_index", family="sorting", builtin=True,
    doc="Where the most frequent value of x along dim last occurs (int64, dim removed); equal "
        "counts go to the smallest value; each NaN counts as its own value.",
    signature="mode_index(x: Tensor, dim: int) -> Tensor[int64]", meta=_mode_index_meta,
    vjp=None, structure=Structure.REDUCTION,
    anchor=anchors.flat("an index is piecewise constant in the values: mode's value gets its "
                        "gradient through the gather instead"))


def _reduced_axis(op: str, input, dim: int) -> int:
    """``dim`` as an axis of ``input`` that has elements (IndexError otherwise, as PyTorch)."""
    axis = normalize_dim(dim, input.ndim, op)
    if input.ndim and input.shape[axis] == 0:
        raise IndexOutOfRangeError(f"expected reduction dim {dim} to have non-zero size",
                                   op=op, hint="reduce over a dimension with elements")
    return axis


def _picked(input, axis: int, indices, keepdim: bool) -> ValuesIndices:
    """The values at ``indices`` (size 1 along ``axis``) and the indices, ``axis`` kept or not."""
    values = gather(input, axis, indices)
    if keepdim:
        return ValuesIndices(values, indices)
    return ValuesIndices(squeeze(values, axis), squeeze(indices, axis))


def _scalar_pick(input) -> ValuesIndices:
    return ValuesIndices(input, zeros((), dtype=_dt.int64, device=input.device))


def kthvalue(input, k: int, dim: int = -1, keepdim: bool = False):
    """``(values, indices)``: the ``k``-th smallest element along ``dim`` (``k`` from 1) and
    where it is; NaN counts as the largest. Among equal elements the index follows their
    original order (PyTorch's quickselect may name another of the equal ones).
    InvalidArgumentError (a RuntimeError, as torch's) for a k outside [1, size]."""
    try:
        axis = _reduced_axis("kthvalue", input, dim)
        size = input.shape[axis] if input.ndim else 1
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= size:
            raise argument_error("kthvalue", f"selected number k={k!r} out of range for "
                                 f"dimension {dim} of size {size}", f"pick k in [1, {size}]",
                                 error=InvalidArgumentError, values=(input,), k=k)
    except FwError as err:
        raise located(err, "kthvalue", (input,), k=k, dim=dim) from None
    if input.ndim == 0:
        return _scalar_pick(input)
    return _picked(input, axis, narrow(argsort(input, axis), axis, k - 1, 1), keepdim)


def median(input, dim: int | None = None, keepdim: bool = False):
    """The lower median (``sorted[(n - 1) // 2]``), as PyTorch's; NaN wherever the slice holds
    one. Without ``dim``, of every element, as a 0-d tensor (NaN when empty); with ``dim``,
    ``(values, indices)`` along it, the index that of the first NaN or, among equal medians,
    the first in the original order (PyTorch's too)."""
    if dim is None:
        flat = reshape(input, -1)
        if flat.shape[0] == 0:
            return full((), math.nan, dtype=input.dtype, device=input.device)
        return median(flat, 0).values
    try:
        axis = _reduced_axis("median", input, dim)
    except FwError as err:
        raise located(err, "median", (input,), dim=dim) from None
    if input.ndim == 0:
        return _scalar_pick(input)
    order, size = argsort(input, axis), input.shape[axis]
    # NaN sorts last and stably, so the first NaN sits where the NaN count says
    nans = _sum(isnan(input), axis, keepdim=True)
    position = where(nans > 0, size - nans, (size - 1) // 2)
    return _picked(input, axis, gather(order, axis, position), keepdim)


def mode(input, dim: int = -1, keepdim: bool = False):
    """``(values, indices)``: the most frequent value along ``dim`` and its last occurrence,
    as PyTorch's; equal counts go to the smallest value. Each NaN counts as its own value
    (PyTorch's answer with NaN depends on how its sort met the unordered values)."""
    try:
        axis = _reduced_axis("mode", input, dim)
    except FwError as err:
        raise located(err, "mode", (input,), dim=dim) from None
    if input.ndim == 0:
        return _scalar_pick(input)
    indices = unsqueeze(apply(MODE_INDEX, (input,), {"dim": axis}), axis)
    return _picked(input, axis, indices, keepdim)


#: Tensor methods this family provides (bound by fw_core.tensor_methods)
METHODS = {name: globals()[name] for name in __all__}
