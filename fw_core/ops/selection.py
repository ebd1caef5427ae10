"""Selections whose result size the values decide, and the index reads built on them:
``nonzero``, ``masked_select``, ``masked_scatter``, ``take``, ``take_along_dim`` and
``repeat_interleave``, as in PyTorch.

Only ``nonzero`` is an op of its own: its length is counted first (one host read, as PyTorch's
``nonzero`` synchronises too), so its meta rule can state the shape. The rest are getitem,
gather, where and index_select calls, so their gradients (and double backward) are those
ops' own.
"""

from __future__ import annotations

__all__ = ["masked_scatter", "masked_select", "nonzero", "repeat_interleave", "take",
           "take_along_dim"]

import numbers

from .. import dtypes as _dt
from ..errors import DTypeError, FwError, InvalidArgumentError, ShapeError
from ..records import Structure, TensorSpec
from ..tensor import Tensor
from . import anchors
from ._elementwise_support import inplace_method
from ._shape_support import _reshape
from .broadcast import broadcast_to
from .creation import arange, ones_like, tensor, zeros
from .dispatch import apply
from .elementwise import ne, where
from .indexing import gather, getitem, index_select, scatter_add
from .meta import broadcast_shapes, located, normalize_dim
from .reduction import cumsum
from .registry import define_op


def _nonzero_meta(x, count):
    return TensorSpec((count, len(x.shape)), _dt.int64)


NONZERO = define_op(
    "nonzero", family="selection", builtin=True,
    doc="The positions of x's non-zero elements, one row of ``x.ndim`` indices each, in "
        "row-major order (int64).",
    signature="nonzero(x: Tensor, count: int) -> Tensor[int64]", meta=_nonzero_meta, vjp=None,
    structure=Structure.OPAQUE,
    anchor=anchors.flat("positions are integers, piecewise constant in the values: not "
                        "differentiable"))


def nonzero(input: Tensor, *, as_tuple: bool = False):
    """The indices of ``input``'s non-zero elements: an int64 tensor of shape ``(n, ndim)``
    (row-major order), or with ``as_tuple=True`` a tuple of ``ndim`` 1-d tensors, one per
    dimension (a 0-d input gives one, as in PyTorch). Reads the count on the host."""
    try:
        count = int(ne(input, 0).sum().item())
        out = apply(NONZERO, (input,), {"count": count})
        if not as_tuple:
            return out
        if input.ndim == 0:  # PyTorch treats a 0-d input as one element here
            return (zeros(count, dtype=_dt.int64, device=input.device),)
        return tuple(out[:, d] for d in range(input.ndim))
    except FwError as err:
        raise located(err, "nonzero", (input,)) from None


def _bool_mask(mask, op: str) -> None:
    if not isinstance(mask, Tensor) or mask.dtype is not _dt.bool_:
        got = mask.dtype.name if isinstance(mask, Tensor) else type(mask).__name__
        raise DTypeError(f"mask must be a bool tensor, got {got}", op=op,
                         hint="compare first (x > 0) or convert with .bool()")


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements of ``input`` where ``mask`` (bool; it and ``input`` broadcast together)
    is True, as a 1-d tensor in row-major order. Differentiable in ``input``: the gradient
    goes back to the selected elements (summed over broadcast copies)."""
    try:
        _bool_mask(mask, "masked_select")
        shape = broadcast_shapes(tuple(input.shape), tuple(mask.shape), op="masked_select")
        flat = _reshape(broadcast_to(input, shape).contiguous(), (-1,) if shape else (1,))
        return getitem(flat, _reshape(broadcast_to(mask, shape).contiguous(), (flat.numel(),)))
    except FwError as err:
        raise located(err, "masked_select", (input, mask)) from None


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``input`` with the elements of ``source`` (read in row-major order) written where
    ``mask`` (bool, broadcast with ``input``) is True: the k-th True position takes
    ``source.flatten()[k]``. Gradients go to ``input`` where the mask is False and to the
    used elements of ``source``."""
    try:
        _bool_mask(mask, "masked_scatter")
        if source.dtype is not input.dtype:
            raise DTypeError(f"source is {source.dtype.name} but the input is "
                             f"{input.dtype.name}", op="masked_scatter",
                             hint="convert source with .to(input.dtype)")
        shape = broadcast_shapes(tuple(input.shape), tuple(mask.shape), op="masked_scatter")
        base, where_mask = broadcast_to(input, shape), broadcast_to(mask, shape)
        flat_mask = _reshape(where_mask.contiguous(), (-1,))
        slots = cumsum(flat_mask, 0) - 1  # the source element each True position takes
        used = int(slots[-1].item()) + 1 if slots.numel() else 0
        if used > source.numel():
            raise ShapeError(f"the mask has {used} True positions but source only "
                             f"{source.numel()} elements", op="masked_scatter",
                             hint="give source at least as many elements as the mask selects")
        if used == 0:
            return base.clone()
        taken = getitem(_reshape(source.contiguous(), (-1,)), slots.clamp(min=0))
        return where(where_mask, _reshape(taken, shape), base)
    except FwError as err:
        raise located(err, "masked_scatter", (input, mask, source)) from None


def _index_tensor(index, op: str) -> None:
    if not isinstance(index, Tensor) or index.dtype.category != _dt.INTEGER:
        got = index.dtype.name if isinstance(index, Tensor) else type(index).__name__
        raise DTypeError(f"index must be an integer tensor, got {got}", op=op,
                         hint="convert it with .long()")


def take(input: Tensor, index: Tensor) -> Tensor:
    """``input`` read as if flattened, at ``index`` (an integer tensor; negative counts from
    the end): the result has index's shape. Out-of-range indices raise an IndexError."""
    try:
        _index_tensor(index, "take")
        return getitem(_reshape(input.contiguous(), (input.numel(),)), index)
    except FwError as err:
        err.op = "take"
        raise located(err, "take", (input, index)) from None


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """``gather`` with broadcasting: ``input`` and ``indices`` (same number of dims) broadcast
    in every dimension except ``dim``, then the values at ``indices`` along ``dim`` are taken.
    ``dim=None`` reads both flattened."""
    op = "take_along_dim"
    try:
        _index_tensor(indices, op)
        if dim is None:
            return gather(_reshape(input.contiguous(), (input.numel(),)), 0,
                          _reshape(indices.contiguous(), (indices.numel(),)))
        if input.ndim != indices.ndim:
            raise ShapeError(f"input and indices should have the same number of dimensions, "
                             f"got {input.ndim} and {indices.ndim}", op=op,
                             hint="unsqueeze indices to the input's number of dims")
        d = normalize_dim(dim, input.ndim, op)
        sizes = list(input.shape)
        sizes[d] = indices.shape[d]
        shape = list(broadcast_shapes(tuple(sizes), tuple(indices.shape), op=op))
        indices = broadcast_to(indices, tuple(shape))
        shape[d] = input.shape[d]
        return gather(broadcast_to(input, tuple(shape)), d, indices)
    except FwError as err:
        raise located(err, op, (input, indices), dim=dim) from None


def repeat_interleave(input: Tensor, repeats=None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Each element (slice along ``dim``) of ``input`` repeated ``repeats`` times in place:
    ``[1, 2]`` with 2 gives ``[1, 1, 2, 2]``. ``repeats`` is an int or a 1-d integer tensor
    (one count per slice, or one for all); ``dim=None`` flattens first. ``output_size``, when
    given, must be the result's length along ``dim``.

    ``repeat_interleave(counts)`` (an integer tensor alone) repeats ``arange(len(counts))``:
    ``[2, 1]`` gives ``[0, 0, 1]``. Differentiable in ``input`` (it is an index_select)."""
    op = "repeat_interleave"
    try:
        if repeats is None:
            counts = input
            _counts(counts, None, op)
            return _repeat_positions(counts, counts.numel(), output_size, op)
        if dim is None:
            input, d = _reshape(input.contiguous(), (input.numel(),)), 0
        else:
            d = normalize_dim(dim, input.ndim, op) if input.ndim else 0
            if input.ndim == 0:
                input = _reshape(input, (1,))
        size = input.shape[d]
        positions = _repeat_positions(_counts(repeats, size, op, input.device), size,
                                      output_size, op)
        return index_select(input, d, positions)
    except FwError as err:
        raise located(err, op, (input,), repeats=repeats, dim=dim) from None


def _counts(repeats, size, op, device=None) -> Tensor:
    """``repeats`` as a 1-d int64 tensor of ``size`` counts (``size=None``: as given)."""
    if isinstance(repeats, numbers.Integral) and not isinstance(repeats, bool):
        repeats = tensor([int(repeats)], dtype=_dt.int64, device=device)
    _index_tensor(repeats, op)
    if repeats.ndim > 1:
        raise ShapeError(f"repeats must be 0-d or 1-d, got shape {tuple(repeats.shape)}",
                         op=op, hint="pass one count per slice as a 1-d tensor")
    repeats = _reshape(repeats, (-1,))
    if size is not None and repeats.numel() == 1 and size != 1:
        repeats = broadcast_to(repeats, (size,))
    if size is not None and repeats.numel() != size:
        raise ShapeError(f"repeats has {repeats.numel()} counts for a dimension of size {size}",
                         op=op, hint="give one count per slice, or a single count")
    if repeats.numel() and int(repeats.min().item()) < 0:
        raise InvalidArgumentError("repeats can not be negative", op=op,
                                   hint="use counts >= 0")
    return repeats


def _repeat_positions(counts: Tensor, size: int, output_size, op) -> Tensor:
    """``arange(size)`` with position i repeated ``counts[i]`` times (int64)."""
    total = int(counts.sum().item()) if size else 0
    if output_size is not None and output_size != total:
        raise InvalidArgumentError(f"output_size is {output_size} but the repeats add up to "
                                   f"{total}", op=op, hint="pass the sum of repeats, or None")
    if total == 0:
        return arange(0, dtype=_dt.int64, device=counts.device)
    # a 1 at the slot where each run after the first begins (empty runs stack up there), so
    # the running sum of the marks is the position each output slot repeats
    starts = cumsum(counts, 0)[:-1]
    marks = zeros(total + 1, dtype=_dt.int64, device=counts.device)
    marks = scatter_add(marks, 0, starts, ones_like(starts))
    return cumsum(marks[:total], 0)


#: Tensor methods this family provides (bound by fw_core.tensor_methods)
METHODS = {name: globals()[name] for name in __all__}
METHODS["masked_scatter_"] = inplace_method(masked_scatter)
