"""Diagonals: ``diagonal`` (read one), ``diag_embed`` (write one into zeros), and what PyTorch
builds on them: ``diag``, ``trace``, ``tril_indices`` and ``triu_indices``.

``diagonal`` and ``diag_embed`` are each other's gradient, so both differentiate twice. As in
PyTorch, ``diagonal`` is a view (writing into it writes into the input), the diagonal running
along a new last dimension; ``diag`` copies.
"""

from __future__ import annotations

__all__ = ["diag", "diag_embed", "diagonal", "trace", "tril_indices", "triu_indices"]

import operator

from .. import dtypes as _dt
from ..errors import FwError, ShapeError
from ..records import TensorSpec
from ..tensor import Tensor
from ._shape_support import _op, _share
from .creation import _created, _creation_op, _resolve
from .dispatch import apply
from .meta import located, normalize_dim


def _diagonal_shape(shape, offset, dim1, dim2) -> tuple[int, ...]:
    rows, cols = shape[dim1], shape[dim2]
    length = max(0, min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols))
    rest = tuple(s for d, s in enumerate(shape) if d not in (dim1, dim2))
    return rest + (length,)


def _dims(ndim: int, dim1, dim2, op: str) -> tuple[int, int]:
    d1, d2 = normalize_dim(dim1, ndim, op), normalize_dim(dim2, ndim, op)
    if d1 == d2:
        raise ShapeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}", op=op,
                         hint="name two different dimensions")
    return d1, d2


def _diagonal_meta(x, offset, dim1, dim2):
    if len(x.shape) < 2:
        raise ShapeError(f"diagonal needs at least 2 dimensions, got shape {tuple(x.shape)}",
                         op="diagonal", hint="use diag_embed to build a matrix from a vector")
    _dims(len(x.shape), dim1, dim2, "diagonal")
    return TensorSpec(_diagonal_shape(tuple(x.shape), offset, dim1, dim2), x.dtype)


def _diag_embed_meta(g, shape, offset, dim1, dim2):
    expected = _diagonal_shape(tuple(shape), offset, dim1, dim2)
    if tuple(g.shape) != expected:
        raise ShapeError(f"values of shape {tuple(g.shape)} for a diagonal of shape {expected}",
                         op="diag_embed", hint="the last dim holds the diagonal's entries")
    return TensorSpec(tuple(shape), g.dtype)


def _attrs(ctx):
    return {k: ctx.attrs[k] for k in ("offset", "dim1", "dim2")}


DIAGONAL = _op(
    "diagonal", "The diagonal ``offset`` of the matrices in dims ``dim1``, ``dim2`` (offset > 0 "
    "above the main diagonal), along a new last dimension.",
    "diagonal(x: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor",
    _diagonal_meta, lambda ctx, g: (apply(DIAG_EMBED, (g,), {
        "shape": tuple(ctx.input_shapes[0]), **_attrs(ctx)}),))
DIAG_EMBED = _op(
    "diag_embed", "Zeros of ``shape`` whose diagonal ``offset`` in dims ``dim1``, ``dim2`` holds "
    "the last dim of g (the gradient of diagonal, and diag_embed itself).",
    "diag_embed(g: Tensor, shape: tuple, offset: int, dim1: int, dim2: int) -> Tensor",
    _diag_embed_meta, lambda ctx, g: (apply(DIAGONAL, (g,), _attrs(ctx)),))


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """A view of the diagonal ``offset`` (> 0: above the main one) of the matrices spanned
    by ``dim1`` and ``dim2``; those dims are removed and the diagonal is the last dim."""
    try:
        ndim = input.ndim
        if ndim < 2:
            _diagonal_meta(input, offset, 0, 1)
        d1, d2 = _dims(ndim, dim1, dim2, "diagonal")
        attrs = {"offset": operator.index(offset), "dim1": d1, "dim2": d2}
        return _share(input, apply(DIAGONAL, (input,), attrs))
    except FwError as err:
        raise located(err, "diagonal", (input,), offset=offset, dim1=dim1, dim2=dim2) from None


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices (in new dims ``dim1``, ``dim2`` of the result) whose diagonal ``offset`` holds
    the last dim of ``input``; zeros elsewhere. ``diag_embed(x).diagonal(0, -2, -1)`` is x."""
    try:
        offset = operator.index(offset)
        if input.ndim == 0:
            raise ShapeError("diag_embed needs at least 1 dimension, got a 0-d tensor",
                             op="diag_embed", hint="reshape it to (1,) first")
        ndim = input.ndim + 1
        d1, d2 = _dims(ndim, dim1, dim2, "diag_embed")
        size = input.shape[-1] + abs(offset)
        rest = iter(input.shape[:-1])
        shape = tuple(size if d in (d1, d2) else next(rest) for d in range(ndim))
        return apply(DIAG_EMBED, (input,), {"shape": shape, "offset": offset, "dim1": d1,
                                            "dim2": d2})
    except FwError as err:
        raise located(err, "diag_embed", (input,), offset=offset, dim1=dim1, dim2=dim2) from None


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A vector's square matrix with it on diagonal ``diagonal``, or a matrix's diagonal
    ``diagonal`` as a vector (a copy)."""
    try:
        if input.ndim == 1:
            return diag_embed(input, diagonal, 0, 1)
        if input.ndim == 2:
            return apply(DIAGONAL, (input,), {"offset": operator.index(diagonal), "dim1": 0,
                                              "dim2": 1}).contiguous()
        raise ShapeError(f"diag supports 1-d or 2-d tensors, got {input.ndim}-d", op="diag",
                         hint="use diagonal(x, offset, dim1, dim2) or diag_embed for batches")
    except FwError as err:
        raise located(err, "diag", (input,), diagonal=diagonal) from None


def trace(input: Tensor) -> Tensor:
    """The sum of a matrix's main diagonal (integers sum in int64, as in PyTorch)."""
    if input.ndim != 2:
        raise located(ShapeError(f"trace expects a matrix, got a {input.ndim}-d tensor",
                                 op="trace", hint="use x.diagonal(0, -2, -1).sum(-1) for a "
                                 "batch"), "trace", (input,))
    return apply(DIAGONAL, (input,), {"offset": 0, "dim1": 0, "dim2": 1}).sum()


def _indices_meta(row, col, offset, dtype):
    return TensorSpec((2, _triangle_count(row, col, offset, upper=False)),
                      _dt.from_numpy(dtype))


def _triangle_count(row: int, col: int, offset: int, upper: bool) -> int:
    """How many (i, j) with i < row, j < col have j - i <= offset (upper: >= offset)."""
    if upper:
        return row * col - _triangle_count(row, col, offset - 1, upper=False)
    return sum(max(0, min(col, i + offset + 1)) for i in range(row))


TRIL_INDICES = _creation_op(
    "tril_indices", "The (row, col) positions of a row x col matrix's lower triangle (on and "
    "below diagonal offset), row by row: a 2 x n tensor.",
    "tril_indices(row, col, offset=0, dtype=int64, device=None)", meta=_indices_meta)
TRIU_INDICES = _creation_op(
    "triu_indices", "The (row, col) positions of a row x col matrix's upper triangle (on and "
    "above diagonal offset), row by row: a 2 x n tensor.",
    "triu_indices(row, col, offset=0, dtype=int64, device=None)",
    meta=lambda row, col, offset, dtype: TensorSpec(
        (2, _triangle_count(row, col, offset, upper=True)), _dt.from_numpy(dtype)))


def _indices(op, row, col, offset, dtype, device) -> Tensor:
    try:
        row, col, offset = (operator.index(v) for v in (row, col, offset))
        if row < 0 or col < 0:
            raise ShapeError(f"row and col must be non-negative, got {row} and {col}",
                             op=op.name, hint="pass the matrix's sizes")
        dtype, device = _resolve(dtype, device, _dt.int64)
        return _created(op, device, {"row": row, "col": col, "offset": offset,
                                     "dtype": dtype.numpy}, False)
    except FwError as err:
        raise located(err, op.name, row=row, col=col, offset=offset) from None


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None) -> Tensor:
    """The positions of the lower triangle of a ``row`` x ``col`` matrix (on and below
    diagonal ``offset``) as a 2 x n int64 tensor: ``x[tuple(tril_indices(3, 3))]``."""
    return _indices(TRIL_INDICES, row, col, offset, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None) -> Tensor:
    """The positions of the upper triangle of a ``row`` x ``col`` matrix (on and above
    diagonal ``offset``) as a 2 x n int64 tensor."""
    return _indices(TRIU_INDICES, row, col, offset, dtype, device)


#: Tensor methods this family provides (bound by fw_core.tensor_methods)
METHODS = {name: globals()[name] for name in ("diag", "diag_embed", "diagonal", "trace")}
