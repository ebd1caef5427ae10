"""Sorting: ``argsort`` is the one op (the order of each row, int64, not differentiable); ``sort``,
``topk`` and ``msort`` are that order plus a ``gather`` of the values, so their values carry the
gradient back to the elements they came from, as in PyTorch.

The order is stable: equal elements keep their original order, ascending or descending (PyTorch
promises that only with ``stable=True``; fw always gives it). NaN sorts above every number, so
it comes last ascending and first descending, as in PyTorch.
"""

from __future__ import annotations

__all__ = ["argsort", "msort", "sort", "topk"]

from .. import dtypes as _dt
from ..records import Structure, TensorSpec
from . import anchors
from .dispatch import apply
from .indexing import gather
from .meta import argument_error, normalize_dim
from .reduction import ValuesIndices
from .registry import define_op
from .shape import narrow


def _argsort_meta(x, dim, descending):
    return TensorSpec(tuple(x.shape), _dt.int64)


ARGSORT = define_op(
    "argsort", family="sorting", builtin=True,
    doc="The indices that sort x along dim (stable; descending puts the largest and NaN first).",
    signature="argsort(x: Tensor, dim: int, descending: bool) -> Tensor[int64]",
    meta=_argsort_meta, vjp=None, structure=Structure.NONE,
    anchor=anchors.flat("an order is piecewise constant in the values: no gradient flows "
                        "through the indices (sort's values get theirs through gather)"))


def argsort(input, dim: int = -1, descending: bool = False, stable: bool = False):
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


def msort(input):
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


#: Tensor methods this family provides (bound by fw_core.tensor_methods)
METHODS = {name: globals()[name] for name in __all__}
