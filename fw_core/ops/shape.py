"""Shape ops: the same elements, moved or viewed (reshape, transpose, expand, cat, split ...).

Every op here is linear. All but the accumulating ones (``scatter_add`` and the backward ops
``index_backward`` and ``pad_backward``) are injective: each output element is one input
element. Their VJPs move the gradient back with other fw ops, so double backward works.

Views: reshape/view, permute/transpose, expand, squeeze/unsqueeze and basic slicing return
tensors that share storage *and* the version counter with their input (as in PyTorch), so an
in-place write through a view is seen by autograd's saved-tensor checks.

Indexing (``x[index]``, gather/scatter, index_select, masked_fill) lives in
:mod:`fw_core.ops.indexing`; the copies into a new arrangement (pad, flip, roll, tril/triu,
one_hot) in :mod:`fw_core.ops.rearrange`.
"""

from __future__ import annotations

__all__ = ["broadcast_to", "cat", "chunk", "concatenate", "contiguous", "expand", "flatten",
           "movedim", "narrow", "permute", "repeat", "reshape", "select", "split", "squeeze",
           "stack", "swapaxes", "tile", "transpose", "unbind", "unflatten", "unsqueeze", "view"]

import math
import numbers
import operator

import numpy as np

from .. import dtypes as _dt
from ..errors import DTypeError, FwError, IndexOutOfRangeError, ShapeError
from ..records import TensorSpec
from ..tensor import Tensor
from ._shape_support import (
    _ints,
    _op,
    _reshape,
    _reshape_meta,
    _share,
)
from .broadcast import broadcast_to, sum_to
from .creation import clone
from .dispatch import apply
from .indexing import _basic, getitem
from .meta import given, located, normalize_dim, promote, spec_of
from .reinterpret import view_dtype


# -- reshape and friends --------------------------------------------------------------------------
def _permute_meta(x, dims):
    if sorted(dims) != list(range(len(x.shape))):
        raise ShapeError(f"dims {tuple(dims)} is not a permutation of the {len(x.shape)} "
                         f"dimensions of shape {tuple(x.shape)}", op="permute",
                         hint="list every dimension exactly once")
    return TensorSpec(tuple(x.shape[d] for d in dims), x.dtype)


PERMUTE = _op("permute", "Dimensions reordered: output dimension i is input dimension dims[i].",
              "permute(x: Tensor, dims: tuple[int, ...]) -> Tensor", _permute_meta,
              lambda ctx, g: (_permute(g, tuple(np.argsort(ctx.attrs["dims"]).tolist())),))


def _resolve_shape(shape: tuple[int, ...], old: tuple[int, ...], op: str = "reshape"
                   ) -> tuple[int, ...]:
    """``shape`` with its -1 filled in so it holds the elements of ``old``, or a ShapeError
    naming ``op`` (reshape, view, unflatten)."""
    numel = math.prod(old)
    if -1 not in shape and math.prod(shape) == numel and min(shape, default=0) >= 0:
        return shape
    if shape.count(-1) > 1 or min(shape) < -1:
        raise ShapeError(f"invalid shape {shape}: sizes must be >= 0 and at most one may be -1",
                         op=op, hint="write the one unknown size as -1")
    if -1 not in shape:
        try:
            _reshape_meta(TensorSpec(old, None), shape)
        except ShapeError as err:
            err.op = op
            raise
    known = math.prod(s for s in shape if s != -1)
    if known == 0:
        raise ShapeError(f"cannot reshape a tensor of shape {old} into {shape}: the -1 is "
                         "ambiguous next to a size-0 dimension", op=op,
                         hint="give every size explicitly")
    if numel % known:
        raise ShapeError(f"cannot reshape a tensor of shape {old} ({numel} elements) into shape "
                         f"{shape}: {numel} is not a multiple of {known}", op=op,
                         hint="the number of elements must stay the same")
    return tuple(numel // known if s == -1 else s for s in shape)


def reshape(x: Tensor, *shape) -> Tensor:
    """``x`` with a new shape and the same elements (row-major); one size may be -1.

    A view sharing storage when the layout allows, else a copy (use :func:`view` to insist on
    a view). ``fw.reshape(x, (2, -1))`` or ``x.reshape(2, -1)``. Raises ShapeError when the
    number of elements differs.
    """
    try:
        return _reshape(x, _resolve_shape(_ints(shape, "a shape", "reshape"), x._data.shape))
    except FwError as err:
        raise located(err, "reshape", (x,), shape=given(shape)) from None


def view(x: Tensor, *shape) -> Tensor:
    """Like :func:`reshape`, but always a view of ``x``'s storage; raises ShapeError when the
    layout needs a copy (a transposed tensor flattened, say): use reshape or contiguous().
    ``x.view(dtype)`` reads the same bytes as another dtype (see :mod:`.reinterpret`)."""
    try:
        if len(shape) == 1 and isinstance(shape[0], _dt.DType):
            return view_dtype(x, shape[0])
        data = x._data
        out = _reshape(x, _resolve_shape(_ints(shape, "a shape", "view"), data.shape, "view"))
        if data.size and not x._device.xp.may_share_memory(data, out._data):
            raise ShapeError(f"a tensor of shape {tuple(x.shape)} with strides {data.strides} "
                             f"cannot be viewed as {tuple(out.shape)} without a copy", op="view",
                             hint="use x.reshape(...) (copies when needed) or "
                             "x.contiguous().view(...)")
        return out
    except FwError as err:
        raise located(err, "view", (x,), shape=given(shape)) from None


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions ``start_dim`` .. ``end_dim`` into one (a 0-d tensor becomes 1-d)."""
    try:
        shape = x._data.shape
        start = normalize_dim(start_dim, len(shape), "flatten")
        end = normalize_dim(end_dim, len(shape), "flatten")
        if start > end:
            raise ShapeError(f"start_dim {start_dim} comes after end_dim {end_dim}", op="flatten",
                             hint="pass start_dim <= end_dim")
        merged = math.prod(shape[start:end + 1])
        return _reshape(x, shape[:start] + (merged,) + shape[end + 1:])
    except FwError as err:
        raise located(err, "flatten", (x,), start_dim=start_dim, end_dim=end_dim) from None


def unflatten(x: Tensor, dim: int, sizes) -> Tensor:
    """Split dimension ``dim`` into ``sizes`` (one may be -1); their product must match."""
    try:
        shape = x._data.shape
        d, size = _dim(x, dim, "unflatten")
        sizes = _ints((sizes,), "sizes", "unflatten")
        if not sizes:
            raise ShapeError("sizes must not be empty", op="unflatten", hint="e.g. (2, -1)")
        sizes = _resolve_shape(sizes, (size,), "unflatten")
        return _reshape(x, shape[:d] + sizes + shape[d + 1:])
    except FwError as err:
        raise located(err, "unflatten", (x,), dim=dim, sizes=sizes) from None


def squeeze(x: Tensor, dim=None) -> Tensor:
    """Remove size-1 dimensions: all of them, or those of ``dim`` (an int or tuple) that are 1."""
    try:
        shape = x._data.shape
        if dim is None:
            dims = range(len(shape))
        else:
            dims = {normalize_dim(d, len(shape), "squeeze") for d in (
                (dim,) if isinstance(dim, numbers.Integral) else dim)}
        return _reshape(x, tuple(s for i, s in enumerate(shape) if s != 1 or i not in dims))
    except FwError as err:
        raise located(err, "squeeze", (x,), dim=dim) from None


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    """Insert a size-1 dimension at ``dim`` (in ``[-x.ndim - 1, x.ndim]``)."""
    try:
        shape = x._data.shape
        d = normalize_dim(dim, len(shape) + 1, "unsqueeze")
        return _reshape(x, shape[:d] + (1,) + shape[d:])
    except FwError as err:
        raise located(err, "unsqueeze", (x,), dim=dim) from None


def _permute(x: Tensor, dims: tuple[int, ...]) -> Tensor:
    return _share(x, apply(PERMUTE, (x,), {"dims": dims}))


def permute(x: Tensor, *dims) -> Tensor:
    """A view with dimensions reordered: output dimension i is input dimension ``dims[i]``."""
    try:
        ndim = x._data.ndim
        dims = tuple(normalize_dim(d, ndim, "permute") for d in _ints(dims, "dims", "permute"))
        return _permute(x, dims)
    except FwError as err:
        raise located(err, "permute", (x,), dims=given(dims)) from None


def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """A view with dimensions ``dim0`` and ``dim1`` swapped."""
    try:
        ndim = x._data.ndim
        perm = list(range(ndim))
        a, b = normalize_dim(dim0, ndim, "transpose"), normalize_dim(dim1, ndim, "transpose")
        if ndim:
            perm[a], perm[b] = perm[b], perm[a]
        return _permute(x, tuple(perm))
    except FwError as err:
        raise located(err, "transpose", (x,), dim0=dim0, dim1=dim1) from None


swapaxes = transpose


def movedim(x: Tensor, source, destination) -> Tensor:
    """A view with dimension(s) ``source`` moved to position(s) ``destination``."""
    try:
        ndim = x._data.ndim
        src = [normalize_dim(d, ndim, "movedim") for d in _ints((source,), "source", "movedim")]
        dst = [normalize_dim(d, ndim, "movedim") for d in _ints((destination,), "dest", "movedim")]
        if len(src) != len(dst) or len(set(src)) != len(src) or len(set(dst)) != len(dst):
            raise ShapeError(f"source {source} and destination {destination} must be distinct "
                             "dimensions of equal count", op="movedim",
                             hint="e.g. movedim(x, 0, -1)")
        rest = iter(d for d in range(ndim) if d not in src)
        where = dict(zip(dst, src))
        return _permute(x, tuple(where[i] if i in where else next(rest) for i in range(ndim)))
    except FwError as err:
        raise located(err, "movedim", (x,), source=source, destination=destination) from None


def _matrix_transpose(x: Tensor) -> Tensor:
    if x._data.ndim < 2:
        raise ShapeError(f"mT needs at least 2 dimensions, got shape {tuple(x.shape)}",
                         op="permute", hint="use .T (or unsqueeze first)")
    return transpose(x, -2, -1)


def _t(x: Tensor) -> Tensor:
    if x._data.ndim > 2:
        raise ShapeError(f"t() expects at most 2 dimensions, got shape {tuple(x.shape)}",
                         op="permute", hint="use transpose(x, d0, d1) or .mT")
    return _permute(x, tuple(range(x._data.ndim))[::-1])


def expand(x: Tensor, *sizes) -> Tensor:
    """A view with size-1 dimensions repeated to ``sizes`` (-1 keeps a size); new dimensions
    may be added in front. No copy is made."""
    try:
        sizes = _ints(sizes, "sizes", "expand")
        shape = x._data.shape
        lead = len(sizes) - len(shape)
        if lead < 0:
            raise ShapeError(f"expand got {len(sizes)} sizes for a {len(shape)}-d tensor of shape "
                             f"{tuple(shape)}", op="expand", hint="give a size per dimension")
        target = list(sizes)
        for i, size in enumerate(sizes):
            if i < lead:
                if size < 0:
                    raise ShapeError(f"size {size} is not allowed for the new leading "
                                     f"dimension {i}", op="expand",
                                     hint="new dimensions need an explicit size >= 0")
                continue
            have = shape[i - lead]
            if size == -1:
                target[i] = have
            elif size != have and have != 1:
                raise ShapeError(f"cannot expand dimension {i} of shape {tuple(shape)} from {have} "
                                 f"to {size}: only size-1 dimensions can be expanded", op="expand",
                                 hint="use repeat() to copy a dimension of any size")
        out = broadcast_to(x, tuple(target))
        return out if out is x else _share(x, out)
    except FwError as err:
        raise located(err, "expand", (x,), sizes=given(sizes)) from None


def contiguous(x: Tensor) -> Tensor:
    """``x`` itself when its storage is row-major contiguous, else a contiguous copy."""
    return x if x._data.flags.c_contiguous else clone(x)


# -- repeat, cat, stack, split --------------------------------------------------------------------
def _repeat_meta(x, repeats):
    lead = len(repeats) - len(x.shape)
    if lead < 0 or min(repeats, default=0) < 0:
        raise ShapeError(f"repeats {tuple(repeats)} must be >= 0, one per dimension of shape "
                         f"{tuple(x.shape)} (or more)", op="repeat",
                         hint="x.repeat(2, 1) repeats a 2-d tensor along dimension 0")
    padded = (1,) * lead + tuple(x.shape)
    return TensorSpec(tuple(s * r for s, r in zip(padded, repeats)), x.dtype)


def _repeat_vjp(ctx, g):
    repeats, shape = ctx.attrs["repeats"], ctx.input_shapes[0]
    padded = (1,) * (len(repeats) - len(shape)) + shape
    pairs = tuple(v for r, s in zip(repeats, padded) for v in (r, s))
    ones = tuple(v for s in padded for v in (1, s))
    return (_reshape(sum_to(_reshape(g, pairs), ones), shape),)


REPEAT = _op("repeat", "The tensor tiled ``repeats[i]`` times along dimension i (missing leading "
             "dimensions count as size 1).",
             "repeat(x: Tensor, repeats: tuple[int, ...]) -> Tensor", _repeat_meta, _repeat_vjp)


def repeat(x: Tensor, *repeats) -> Tensor:
    """Tile ``x`` ``repeats[i]`` times along dimension i (PyTorch's ``Tensor.repeat``: at least
    one count per dimension; extra counts add leading dimensions). Copies."""
    try:
        repeats = _ints(repeats, "repeats", "repeat")
        if len(repeats) < x._data.ndim or min(repeats, default=0) < 0:
            _repeat_meta(spec_of(x), repeats)
        return apply(REPEAT, (x,), {"repeats": repeats})
    except FwError as err:
        raise located(err, "repeat", (x,), repeats=given(repeats)) from None


def tile(x: Tensor, *dims) -> Tensor:
    """Like :func:`repeat`, but fewer counts than dimensions repeat the trailing ones."""
    try:
        dims = _ints(dims, "dims", "tile")
        return repeat(x, (1,) * (x._data.ndim - len(dims)) + dims)
    except FwError as err:
        raise located(err, "tile", (x,), dims=given(dims)) from None


def _cat_meta(*xs, dim):
    first = tuple(xs[0].shape)
    d = normalize_dim(dim, len(first), "cat")
    for i, x in enumerate(xs[1:], 1):
        shape = tuple(x.shape)
        if len(shape) != len(first):
            raise ShapeError(f"tensor {i} has {len(shape)} dimensions {shape} but tensor 0 has "
                             f"{len(first)} {first}", op="cat",
                             hint="all tensors need the same number of dimensions")
        for k, (a, b) in enumerate(zip(first, shape)):
            if k != d and a != b:
                raise ShapeError(f"sizes must match except in dimension {d}: tensor {i} has "
                                 f"shape {shape} but tensor 0 has {first} (dimension {k} "
                                 f"differs)", op="cat", hint="reshape them, or concatenate along "
                                 f"dimension {k}")
    shape = list(first)
    shape[d] = sum(x.shape[d] for x in xs)
    return TensorSpec(tuple(shape), promote(*xs))


def _cat_vjp(ctx, g):
    dim, grads, start = ctx.attrs["dim"], [], 0
    for shape, nxt in zip(ctx.input_shapes, ctx.next):
        grads.append(None if nxt is None else narrow(g, dim, start, shape[dim]))
        start += shape[dim]
    return tuple(grads)


CAT = _op("cat", "Tensors joined along an existing dimension.",
          "cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor", _cat_meta, _cat_vjp)


def _stack_meta(*xs, dim):
    first = tuple(xs[0].shape)
    for i, x in enumerate(xs[1:], 1):
        if tuple(x.shape) != first:
            raise ShapeError(f"all tensors must have the same shape: tensor {i} has "
                             f"{tuple(x.shape)} but tensor 0 has {first}", op="stack",
                             hint="stack needs equal shapes; cat joins along an existing dim")
    d = normalize_dim(dim, len(first) + 1, "stack")
    return TensorSpec(first[:d] + (len(xs),) + first[d:], promote(*xs))


STACK = _op("stack", "Tensors of one shape joined along a new dimension.",
            "stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor", _stack_meta,
            lambda ctx, g: tuple(None if nxt is None else select(g, ctx.attrs["dim"], i)
                                 for i, nxt in enumerate(ctx.next)))


def _same_dtype(tensors, op: str) -> tuple:
    tensors = tuple(tensors)
    if not tensors:
        raise ShapeError("expected a non-empty sequence of tensors", op=op,
                         hint="pass a list like [a, b]")
    dtype = None
    mixed = False
    for t in tensors:
        data = getattr(t, "_data", None)
        if data is None:
            raise DTypeError(f"expected tensors, got {type(t).__name__}", op=op,
                             hint="wrap values with fw.tensor(...)")
        mixed = mixed or (dtype is not None and data.dtype != dtype)
        dtype = data.dtype
    if mixed:
        common = promote(*(spec_of(t) for t in tensors))
        tensors = tuple(t.to(common) for t in tensors)
    return tensors


def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along existing dimension ``dim``; other sizes must match (dtypes promote).

    >>> fw.cat([fw.zeros(2, 3), fw.ones(1, 3)]).shape
    (3, 3)
    """
    try:
        tensors = _same_dtype(tensors, "cat")
        ndim = tensors[0]._data.ndim
        if ndim == 0:
            raise ShapeError("0-d tensors cannot be concatenated", op="cat", hint="use fw.stack")
        return apply(CAT, tensors, {"dim": normalize_dim(dim, ndim, "cat")})
    except FwError as err:
        raise located(err, "cat", (tensors,), dim=dim) from None


concatenate = cat


def stack(tensors, dim: int = 0) -> Tensor:
    """Join tensors of one shape along a new dimension ``dim`` (dtypes promote)."""
    try:
        tensors = _same_dtype(tensors, "stack")
        ndim = tensors[0]._data.ndim
        return apply(STACK, tensors, {"dim": normalize_dim(dim, ndim + 1, "stack")})
    except FwError as err:
        raise located(err, "stack", (tensors,), dim=dim) from None


def _dim(x: Tensor, dim: int, op: str) -> tuple[int, int]:
    """(dim normalised, its size) for ops that need at least one dimension."""
    shape = x._data.shape
    if not shape:
        raise ShapeError("needs a tensor with at least one dimension, got a 0-d tensor", op=op,
                         hint="reshape it first, e.g. x.reshape(1)")
    d = normalize_dim(dim, len(shape), op)
    return d, shape[d]


def narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    """A view of ``length`` elements of dimension ``dim`` from ``start`` on."""
    try:
        d, size = _dim(x, dim, "narrow")
        if start < 0:
            start += size
        if not (0 <= start <= size and 0 <= length <= size - start):
            raise ShapeError(f"narrow({start}, {length}) does not fit dimension {d} of size {size}",
                             op="narrow", hint="need 0 <= start and start + length <= size")
        return _basic(x, (slice(None),) * d + (slice(start, start + length), Ellipsis))
    except FwError as err:
        raise located(err, "narrow", (x,), dim=dim, start=start, length=length) from None


def select(x: Tensor, dim: int, index: int) -> Tensor:
    """A view of position ``index`` of dimension ``dim`` (which is removed)."""
    try:
        d, size = _dim(x, dim, "select")
        if not -size <= index < size:
            raise IndexOutOfRangeError(f"index {index} is out of range for dimension {d} of size "
                                       f"{size}", op="select",
                                       hint=f"use an index in [{-size}, {size - 1}]")
        return _basic(x, (slice(None),) * d + (operator.index(index), Ellipsis))
    except FwError as err:
        raise located(err, "select", (x,), dim=dim, index=index) from None


def split(x: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Views of consecutive pieces along ``dim``: of ``split_size`` each (the last may be
    smaller), or of the listed sizes (which must add up to the dimension)."""
    try:
        d, n = _dim(x, dim, "split")
        if isinstance(split_size_or_sections, numbers.Integral):
            size = int(split_size_or_sections)
            if size < 0 or (size == 0 and n):
                raise ShapeError(f"split size {size} must be positive", op="split",
                                 hint="pass a size >= 1 or a list of sizes")
            sizes = [size] * (n // size) + ([n % size] if n % size else []) if n else [0]
        else:
            sizes = list(_ints((split_size_or_sections,), "sizes", "split"))
            if sum(sizes) != n or min(sizes, default=0) < 0:
                raise ShapeError(f"sizes {sizes} must be >= 0 and add up to {n}, the size of "
                                 f"dimension {d}", op="split",
                                 hint="fix the sizes, or pass one int")
        starts = np.cumsum([0] + sizes[:-1]).tolist()
        return tuple(narrow(x, d, s, k) for s, k in zip(starts, sizes))
    except FwError as err:
        raise located(err, "split", (x,), split_size_or_sections=split_size_or_sections,
                      dim=dim) from None


def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple:
    """Split into ``chunks`` near-equal views along ``dim`` (PyTorch rules: pieces of
    ceil(n / chunks), so fewer pieces may come back)."""
    try:
        if chunks <= 0:
            raise ShapeError(f"chunks must be positive, got {chunks}", op="chunk", hint="e.g. 2")
        n = _dim(x, dim, "chunk")[1]
        if n == 0:
            return tuple(narrow(x, dim, 0, 0) for _ in range(chunks))
        return split(x, -(-n // chunks), dim)
    except FwError as err:
        raise located(err, "chunk", (x,), chunks=chunks, dim=dim) from None


def unbind(x: Tensor, dim: int = 0) -> tuple:
    """The views ``select(x, dim, i)`` for every i."""
    try:
        d, n = _dim(x, dim, "unbind")
        return tuple(select(x, d, i) for i in range(n))
    except FwError as err:
        raise located(err, "unbind", (x,), dim=dim) from None


# -- Tensor methods -------------------------------------------------------------------------------
def _reversed_dims(x: Tensor) -> Tensor:
    """``x.T``: x with its dimensions in reverse order."""
    return _permute(x, tuple(range(x._data.ndim))[::-1])


def is_contiguous(x: Tensor) -> bool:
    """Whether x's storage is C-contiguous."""
    return bool(x._data.flags.c_contiguous)


def view_as(x: Tensor, other: Tensor) -> Tensor:
    """``x.view(other.shape)``."""
    return view(x, other.shape)


def reshape_as(x: Tensor, other: Tensor) -> Tensor:
    """``x.reshape(other.shape)``."""
    return reshape(x, other.shape)


def expand_as(x: Tensor, other: Tensor) -> Tensor:
    """``x.expand(other.shape)``."""
    return expand(x, other.shape)


#: Tensor methods this family provides (bound by fw_core.tensor_methods)
METHODS = {name: globals()[name] for name in __all__ if name not in (
    "cat", "concatenate", "stack")}
METHODS.update({
    "__getitem__": getitem, "swapdims": transpose, "t": _t,
    "T": property(_reversed_dims), "mT": property(_matrix_transpose),
    "is_contiguous": is_contiguous, "view_as": view_as, "reshape_as": reshape_as,
    "expand_as": expand_as,
})
