"""What the reductions share before any kernel runs: reading ``dim``/``keepdim`` (and NumPy's
``axis``/``keepdims``) once at the boundary, and the family's meta rules."""

from __future__ import annotations

import builtins
import math
import operator

from .. import dtypes as _dt
from ..errors import ArgumentError, DTypeError, FwError, ShapeError
from ..records import TensorSpec
from .dispatch import not_a_tensor
from .meta import located, normalize_dim, normalize_dims, spec_of


# -- dims: normalised once, at the boundary -------------------------------------------------------
def _ndim(x, op) -> int:
    try:
        return x._data.ndim
    except AttributeError:
        raise not_a_tensor(op, x) from None


def _dims(x, dim, op):
    """``dim`` as the kernels' axes: None for every dimension, else a sorted tuple of axes."""
    ndim = _ndim(x, op)
    if dim is None:
        return None
    if dim.__class__ is int and 0 <= dim < ndim:
        return (dim,) if ndim > 1 else None
    try:
        dims = tuple(map(operator.index, dim if isinstance(dim, (tuple, list)) else (dim,)))
    except TypeError:
        raise located(ShapeError(f"dim must be an int or a tuple of ints, got {dim!r}",
                                 op=op.name, hint="e.g. dim=1, dim=-1 or dim=(0, 2)"),
                      None, (x,)) from None
    if not dims:  # PyTorch: an empty dim list reduces every dimension
        return None
    try:
        axes = normalize_dims(dims, ndim, op.name)
    except ShapeError as err:
        raise located(err, None, (x,)) from None
    return None if len(axes) >= ndim else axes


def _one_dim(x, dim, op):
    """One ``dim`` as a non-negative axis; None for dim=None and for a 0-d tensor."""
    ndim = _ndim(x, op)
    if dim is None:
        return None
    try:
        dim = operator.index(dim)
    except TypeError:
        raise located(ShapeError(
            f"dim must be a single int, got {dim!r}", op=op.name,
            hint=f"{op.name} works along one dimension; to reduce several use amax/amin, or "
            "flatten them first"), None, (x,)) from None
    try:
        axis = normalize_dim(dim, ndim, op.name)
    except ShapeError as err:
        raise located(err, None, (x,)) from None
    return axis if ndim else None


def numpy_names(op, dim, keepdim, axis, keepdims):
    """``(dim, keepdim)`` from NumPy's spellings ``axis`` / ``keepdims``, which PyTorch accepts
    as aliases wherever it takes ``dim`` / ``keepdim``.

    Raises:
        ArgumentError: a value is given under both names.
    """
    if axis is not None:
        if dim is not None:
            raise ArgumentError(f"dim={dim!r} and its NumPy alias axis={axis!r} were both given",
                                op=op.name, hint="give one of them")
        dim = axis
    if keepdims is not None:
        if keepdim:
            raise ArgumentError("keepdim and its NumPy alias keepdims were both given",
                                op=op.name, hint="give one of them")
        keepdim = keepdims
    return dim, keepdim


def _check(op, x, attrs) -> None:
    """Run ``op``'s meta rule on ``x``, for mistakes the kernel would silently accept."""
    try:
        op.meta(spec_of(x), **attrs)
    except FwError as err:
        raise located(err, None, (x,)) from None


# -- meta rules -----------------------------------------------------------------------------------
def _axes_of(dim, ndim: int, op: str):
    if dim is None:
        return None
    if isinstance(dim, int):
        return (normalize_dim(dim, ndim, op),) if ndim else None
    return normalize_dims(dim, ndim, op)


def _reduced_shape(shape, axes, keepdim: bool) -> tuple[int, ...]:
    if axes is None:
        return (1,) * len(shape) if keepdim else ()
    if keepdim:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def _require_nonempty(shape, axes, op: str) -> None:
    if axes is None and 0 in shape:
        raise ShapeError(f"cannot take the {op} of an empty tensor (shape {tuple(shape)})",
                         op=op, hint="it has no value over no elements: give dim= to reduce "
                         "only non-empty dimensions, or check x.numel() first")
    for a in axes or ():
        if shape[a] == 0:
            raise ShapeError(f"cannot reduce dimension {a}: it has size 0", op=op,
                             hint=f"{op} has no value over no elements: reduce a non-empty "
                             "dimension, or check x.shape first")


def _same(dtype):
    return dtype


def _int64_unless_float(dtype):
    return dtype if dtype.is_floating_point else _dt.int64


def _float(dtype):
    return dtype if dtype.is_floating_point else _dt.default_float


def _index(dtype):
    return _dt.int64


def _truth(dtype):
    return dtype if dtype is _dt.uint8 else _dt.bool_


def _meta(op: str, result=_same, needs_float: str | None = None, nonempty: bool = False):
    """The family's meta rule: check the dims (and dtype), then the reduced shape and dtype.

    result: input DType -> output DType. needs_float: the fix to suggest for an integer input
    (None: integers are fine). nonempty: the op has no value over zero elements (max, argmax).
    """

    def meta(x, dim, keepdim=False, **_):
        axes = _axes_of(dim, len(x.shape), op)
        if needs_float is not None and not x.dtype.is_floating_point:
            raise DTypeError(f"expects a floating-point tensor, got {x.dtype.name}", op=op,
                             hint=needs_float)
        if nonempty:
            _require_nonempty(x.shape, axes, op)
        return TensorSpec(_reduced_shape(x.shape, axes, keepdim), result(x.dtype))

    return meta


_NORM_METAS = {False: _meta("norm", needs_float="convert with .float() first"),
               True: _meta("norm", needs_float="convert with .float() first", nonempty=True)}


def _norm_meta(x, p, dim, keepdim=False):
    # max |x| and min |x| (p = +-inf) have no value over zero elements, like max
    return _NORM_METAS[builtins.abs(p) == math.inf](x, dim, keepdim)


def _cumsum_meta(x, dim, reverse=False):
    _axes_of(dim, len(x.shape), "cumsum")
    return TensorSpec(tuple(x.shape), _int64_unless_float(x.dtype))


def _unreduce_meta(x, shape, dim):
    shape = tuple(shape)
    kept = tuple(s for i, s in enumerate(shape) if i not in dim)
    if builtins.any(not 0 <= a < len(shape) for a in dim) or tuple(x.shape) != kept:
        raise ShapeError(f"cannot re-insert dimensions {tuple(dim)} into shape {tuple(x.shape)} "
                         f"to get shape {shape}", op="unreduce",
                         hint="the input must be the target shape with dimensions `dim` removed")
    return TensorSpec(shape, x.dtype)
