"""Reduction ops: combine a tensor's elements along some dimensions (sum, max, var, ...).

Every reduction takes ``dim`` (None: every dimension; an int; or a tuple of ints) and
``keepdim`` as PyTorch does. The public functions normalise ``dim`` once, to None or a sorted
tuple of non-negative axes (an int for the single-dimension ops): that is the ``dim`` attribute
kernels receive as NumPy's ``axis``, and that meta rules and VJPs read. Gradients flow back
through :func:`unreduce`, which re-inserts the reduced dimensions and broadcasts: the reduction
counterpart of ``broadcast_to``.

Dtypes follow PyTorch: ``sum``, ``prod`` and ``cumsum`` of integers and bools give int64;
``mean``, ``var``, ``std`` and ``norm`` need a floating-point input; ``logsumexp`` of integers
gives float32; ``argmax``/``argmin`` give int64 and ``all``/``any`` bool.
"""

from __future__ import annotations

__all__ = ["all", "amax", "amin", "any", "argmax", "argmin", "cumsum", "logsumexp", "max",
           "mean", "min", "norm", "prod", "std", "sum", "var"]

import builtins
import math
from typing import NamedTuple

from .. import dtypes as _dt
from ..errors import ArgumentError, FwError, ShapeError, UnsupportedError
from ..records import Reduction, Structure
from ..tensor import Tensor
from . import anchors
from ._reduction_support import (
    _check,
    _cumsum_meta,
    _dims,
    _float,
    _index,
    _int64_unless_float,
    _meta,
    _norm_meta,
    _one_dim,
    _truth,
    _unreduce_meta,
    numpy_names,
)
from .broadcast import broadcast_to
from .creation import arange, cast
from .dispatch import apply
from .elementwise import abs as _abs
from .elementwise import eq, exp, maximum, minimum, sign, where
from .meta import located
from .registry import define_op


class ValuesIndices(NamedTuple):
    """``(values, indices)``: what ``max(x, dim)`` and ``min(x, dim)`` return, as in PyTorch."""

    values: Tensor
    indices: Tensor


# -- the VJP glue ---------------------------------------------------------------------------------
def unreduce(t, shape, dim, keepdim: bool = False):
    """Broadcast a reduction's result ``t`` back to the reduced tensor's ``shape``.

    ``dim`` is the reduction's normalised ``dim`` attribute (None, an int or a sorted tuple).
    With ``keepdim`` or ``dim=None`` this is ``broadcast_to``; otherwise the reduced dimensions
    are re-inserted first. Every reduction's VJP uses it; its own VJP is ``sum``.
    """
    if keepdim or dim is None:
        return broadcast_to(t, shape)
    return apply(UNREDUCE, (t,), {"shape": tuple(shape),
                                  "dim": (dim,) if dim.__class__ is int else dim})


def _expand(t, ctx):
    """``t``, shaped like the op's output, broadcast back to the shape of its input."""
    return unreduce(t, ctx.input_shapes[0], ctx.attrs["dim"], ctx.attrs["keepdim"])


def _count(shape, dim) -> int:
    """How many input elements a reduction over ``dim`` combines into each output element."""
    if dim is None:
        return math.prod(shape)
    if dim.__class__ is int:
        return shape[dim]
    return math.prod(shape[a] for a in dim)


def _div_or_zero(num, den):
    """``num / den``, 0 where ``den`` is 0 (no NaN here, nor in its derivatives)."""
    zero = eq(den.detach(), 0)
    return where(zero, 0.0, num / where(zero, 1.0, den))


def _tie_split(values, best, g, ctx):
    """``g`` routed to the elements of ``values`` equal to the reduction's result ``best``,
    shared evenly among ties (as PyTorch's amax)."""
    hit = eq(values, _expand(best, ctx))
    count = _reduce(SUM, hit, ctx.attrs["dim"], ctx.attrs["keepdim"])
    return where(hit, _expand(g / count, ctx), 0.0)


def _reduce(op, x, dim, keepdim=False):
    """Apply a reduction whose ``dim`` is already normalised (VJPs, internal callers)."""
    return apply(op, (x,), {"dim": dim, "keepdim": keepdim})


# -- VJPs -----------------------------------------------------------------------------------------
def _sum_vjp(ctx, g):
    return (_expand(g, ctx),)


def _mean_vjp(ctx, g):
    n = _count(ctx.input_shapes[0], ctx.attrs["dim"])
    return (_expand(g / n if n else g, ctx),)


def _prod_vjp(ctx, g):
    # d prod / d x_i is the product of the others: the product of the non-zero elements
    # (`rest`), over x_i unless x_i is 0, times the zeros among the others. Only one or two
    # zeros matter (with more, the gradient and its derivative are 0), and a lone other zero is
    # written as the sum of the zero elements: 0 in value, but with the right derivative, so
    # the gradient stays exact, and exactly differentiable once more, at zeros.
    x = ctx.inputs[0]
    dim, keepdim = ctx.attrs["dim"], ctx.attrs["keepdim"]
    is_zero = eq(x, 0)
    safe = where(is_zero, 1.0, x)
    rest = _expand(_reduce(PROD, safe, dim, keepdim), ctx)
    zeros = _expand(_reduce(SUM, is_zero, dim, keepdim), ctx)
    zero_sum = _expand(_reduce(SUM, where(is_zero, x, 0.0), dim, keepdim), ctx)
    one, two = eq(zeros, 1), eq(zeros, 2)
    at_nonzero = rest / safe * where(eq(zeros, 0), 1.0, where(one, zero_sum, 0.0))
    at_zero = rest * where(one, 1.0, where(two, zero_sum - x, 0.0))
    return (_expand(g, ctx) * where(is_zero, at_zero, at_nonzero),)


def _amax_vjp(ctx, g):
    return (_tie_split(ctx.inputs[0], ctx.out.detach(), g, ctx),)


def _max_vjp(ctx, g):
    # as PyTorch: max(x) shares the gradient among ties, max(x, dim) gives all of it to the
    # index it returned
    x = ctx.inputs[0]
    dim = ctx.attrs["dim"]
    if dim is None:
        return _amax_vjp(ctx, g)
    shape = ctx.input_shapes[0]
    index_op = ARGMAX if ctx.op is MAX else ARGMIN
    index = apply(index_op, (x,), {"dim": dim, "keepdim": True})
    others = tuple(i for i in range(len(shape)) if i != dim)
    positions = unreduce(arange(shape[dim], device=x.device), shape, others)
    return (where(eq(positions, broadcast_to(index, shape)), _expand(g, ctx), 0.0),)


def _var_grad(ctx, g):
    """g times d var / dx = 2 (x - mean) / (n - correction), per reduced group."""
    x = ctx.inputs[0]
    dim, correction = ctx.attrs["dim"], ctx.attrs["correction"]
    dof = builtins.max(_count(ctx.input_shapes[0], dim) - correction, 0)
    centred = x - _reduce(MEAN, x, dim, True)
    return _expand(g, ctx) * centred * (2 / dof if dof else math.inf)


def _std_vjp(ctx, g):
    # std = sqrt(var); at std == 0 the gradient is undefined and 0 is returned, as PyTorch does
    return (_var_grad(ctx, _div_or_zero(g, ctx.out * 2)),)


def _logsumexp_vjp(ctx, g):
    # the gradient of a smooth max is softmax(x)
    return (_expand(g, ctx) * exp(ctx.inputs[0] - _expand(ctx.out, ctx)),)


def _norm_vjp(ctx, g):
    x = ctx.inputs[0]
    p = ctx.attrs["p"]
    if p == 2:
        return (x * _expand(_div_or_zero(g, ctx.out), ctx),)
    if p == 1:
        return (_expand(g, ctx) * sign(x),)
    if p == 0:
        return (_expand(g, ctx) * 0,)
    if builtins.abs(p) == math.inf:
        return (_tie_split(_abs(x.detach()), ctx.out.detach(), g, ctx) * sign(x),)
    # sign(x) |x|^(p-1) / norm^(p-1), with 0 wherever x or the norm is 0 (as PyTorch)
    x_zero = eq(x.detach(), 0)
    scaled = where(x_zero, 0.0, sign(x) * where(x_zero, 1.0, _abs(x)) ** (p - 1))
    return (scaled * _expand(_div_or_zero(g, ctx.out ** (p - 1)), ctx),)


def _cumsum_vjp(ctx, g):
    return (apply(CUMSUM, (g,), {"dim": ctx.attrs["dim"], "reverse": not ctx.attrs["reverse"]}),)


# -- the contracts --------------------------------------------------------------------------------
_DIMS = "dim: int | tuple[int, ...] | None = None, keepdim: bool = False"
_NOT_DIFFERENTIABLE = anchors.flat("an index or a truth value: piecewise constant, so no "
                                   "gradient flows through it")
_EXTREMUM = anchors.kink("only the extreme element gets gradient (ties share it), every other "
                         "element gets exactly 0; a small change can move it to another element")


def _reduction(name, doc, vjp, anchor, *, meta, saves=(), attrs="", dims=_DIMS,
               float_result=False, reduction=None):
    return define_op(
        name, family="reduction", builtin=True, doc=doc,
        signature=f"{name}(x: Tensor, {dims}{attrs}) -> Tensor", meta=meta, vjp=vjp,
        structure=Structure.REDUCTION, anchor=anchor,
        saves=saves, float_result=float_result, reduction=reduction)


def _over_dim(attrs: dict, rank: int) -> list[bool]:
    """Per dimension, whether a reduction with ``dim`` (None: all) sums it."""
    dim = attrs.get("dim")
    axes = range(rank) if dim is None else {a % rank for a in
                                            ((dim,) if isinstance(dim, int) else dim)}
    return [d in axes for d in range(rank)]


def _dim_result(attrs: dict, shape: tuple, summed: list[bool]) -> tuple:
    if attrs.get("keepdim"):
        return tuple(1 if r else s for s, r in zip(shape, summed))
    return tuple(s for s, r in zip(shape, summed) if not r)


_FLOAT_FIX = "convert with .float() first (or pass dtype=fw.float32)"
SUM = _reduction("sum", "Sum of the elements over dim.", _sum_vjp,
                 anchors.smooth("linear: every element gets the output's gradient unchanged"),
                 meta=_meta("sum", _int64_unless_float),
                 reduction=Reduction(mean=False, dims=_over_dim, shape=_dim_result))
MEAN = _reduction("mean", "Arithmetic mean of the elements over dim.", _mean_vjp,
                  anchors.smooth("linear: each element gets 1/n of the gradient, so large "
                                 "reductions give small per-element gradients"),
                  meta=_meta("mean", needs_float=_FLOAT_FIX),
                  reduction=Reduction(mean=True, dims=_over_dim, shape=_dim_result))
PROD = _reduction("prod", "Product of the elements over dim.", _prod_vjp,
                  anchors.flat("the gradient w.r.t. an element is the product of the others: "
                               "it vanishes when another element is 0, and explodes or vanishes "
                               "with the product's magnitude", region=lambda x: x == 0),
                  meta=_meta("prod", _int64_unless_float), saves=("inputs",))
AMAX = _reduction("amax", "Largest element over dim; ties share the gradient equally.", _amax_vjp,
                  _EXTREMUM, meta=_meta("amax", nonempty=True), saves=("inputs", "out"))
AMIN = _reduction("amin", "Smallest element over dim; ties share the gradient equally.",
                  _amax_vjp, _EXTREMUM, meta=_meta("amin", nonempty=True),
                  saves=("inputs", "out"))
_ONE_DIM = "dim: int | None = None, keepdim: bool = False"
MAX = _reduction("max", "Largest element (dim=None; ties share the gradient) or largest along "
                 "one dim (the values of max(x, dim); the gradient goes to the index argmax "
                 "returns).", _max_vjp, _EXTREMUM, meta=_meta("max", nonempty=True),
                 saves=("inputs", "out"), dims=_ONE_DIM)
MIN = _reduction("min", "Smallest element (dim=None; ties share the gradient) or smallest along "
                 "one dim (the values of min(x, dim); the gradient goes to the index argmin "
                 "returns).", _max_vjp, _EXTREMUM, meta=_meta("min", nonempty=True),
                 saves=("inputs", "out"), dims=_ONE_DIM)
ARGMAX = _reduction("argmax", "Index of the largest element along dim (of the flattened tensor "
                    "for dim=None); the first one among ties.", None, _NOT_DIFFERENTIABLE,
                    meta=_meta("argmax", _index, nonempty=True), dims=_ONE_DIM)
ARGMIN = _reduction("argmin", "Index of the smallest element along dim (of the flattened tensor "
                    "for dim=None); the first one among ties.", None, _NOT_DIFFERENTIABLE,
                    meta=_meta("argmin", _index, nonempty=True), dims=_ONE_DIM)
_SPREAD_FIX = "convert with .float() first"
VAR = _reduction("var", "sum((x - mean)^2) / max(0, n - correction) over dim (correction=1: "
                 "the unbiased estimate).", lambda ctx, g: (_var_grad(ctx, g),),
                 anchors.smooth("quadratic: the gradient 2 (x - mean) / (n - correction) grows "
                                "with the spread; it is inf/NaN when n <= correction"),
                 meta=_meta("var", needs_float=_SPREAD_FIX), saves=("inputs",),
                 attrs=", correction: float = 1")
STD = _reduction("std", "sqrt(var(x, dim, correction)).", _std_vjp,
                 anchors.kink("std is a norm of the centred values: its gradient "
                              "(x - mean) / ((n - correction) std) has no limit at a constant "
                              "input (0 is returned there) and its second derivative explodes "
                              "near it; add an epsilon inside the sqrt as normalisations do"),
                 meta=_meta("std", needs_float=_SPREAD_FIX), saves=("inputs", "out"),
                 attrs=", correction: float = 1")
LOGSUMEXP = _reduction("logsumexp", "log(sum(exp(x))) over dim, computed stably (the max is "
                       "subtracted first).", _logsumexp_vjp,
                       anchors.temperature("a smooth max: its gradient is softmax(x), which "
                                           "becomes one-hot (max's kink) when one element leads "
                                           "the others by more than ~10"),
                       meta=_meta("logsumexp", _float), saves=("inputs", "out"),
                       float_result=True)
NORM = _reduction("norm", "The vector p-norm over dim: (sum |x|^p)^(1/p); max |x| for p=inf, "
                  "min |x| for p=-inf, the count of non-zeros for p=0.", _norm_vjp,
                  anchors.kink("corner at 0: the 2-norm's gradient x / ||x|| has no limit at the "
                               "zero vector (0 is returned there, as PyTorch); p=1 has a corner "
                               "wherever an element is 0, p=inf where the maximum changes hands"),
                  meta=_norm_meta, saves=("inputs", "out"), dims="p: float = 2, " + _DIMS)
ALL = _reduction("all", "True where every element over dim is non-zero.", None,
                 _NOT_DIFFERENTIABLE, meta=_meta("all", _truth))
ANY = _reduction("any", "True where some element over dim is non-zero.", None,
                 _NOT_DIFFERENTIABLE, meta=_meta("any", _truth))
CUMSUM = define_op(
    "cumsum", family="reduction", builtin=True,
    doc="Running sums along dim: out[i] = x[0] + ... + x[i] (from the end with reverse=True, "
        "which is its own VJP).",
    signature="cumsum(x: Tensor, dim: int, reverse: bool = False) -> Tensor",
    meta=_cumsum_meta, vjp=_cumsum_vjp, structure=Structure.REDUCTION,
    anchor=anchors.smooth("linear: element i gets the sum of the gradients of outputs i onwards"))
UNREDUCE = define_op(
    "unreduce", family="shape", builtin=True,
    doc="Re-insert the reduced dimensions dim (as size 1) and broadcast to shape: undoes a "
        "reduction's change of shape, for the VJP of every reduction.",
    signature="unreduce(x: Tensor, shape: tuple[int, ...], dim: tuple[int, ...]) -> Tensor",
    meta=_unreduce_meta, vjp=lambda ctx, g: (_reduce(SUM, g, ctx.attrs["dim"]),),
    structure=Structure.INJECTIVE,
    anchor=anchors.smooth("linear: each output is a copy of one input element"))


# -- the public functions -------------------------------------------------------------------------
def sum(x, dim=None, keepdim: bool = False, *, dtype=None, axis=None, keepdims=None) -> Tensor:  # noqa: A001 - PyTorch's name
    """Sum of the elements of ``x`` over ``dim`` (every dimension when None).

    Integers and bools are summed in int64; ``dtype`` converts ``x`` first.
    ``fw.sum(fw.ones(2, 3), dim=1)`` is ``tensor([3., 3.])``.
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(SUM, dim, keepdim, axis, keepdims)
    axes = _dims(x, dim, SUM)
    if dtype is not None:
        x = cast(x, dtype)
    return apply(SUM, (x,), {"dim": axes, "keepdim": bool(keepdim)})


def mean(x, dim=None, keepdim: bool = False, *, dtype=None, axis=None, keepdims=None) -> Tensor:
    """Mean of the elements of ``x`` over ``dim``; NaN over zero elements.

    Raises DTypeError for integer input unless ``dtype`` asks for a floating-point one.
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(MEAN, dim, keepdim, axis, keepdims)
    axes = _dims(x, dim, MEAN)
    if dtype is not None:
        x = cast(x, dtype)
    attrs = {"dim": axes, "keepdim": bool(keepdim)}
    if not _dt.is_float(x._data.dtype):
        _check(MEAN, x, attrs)
    return apply(MEAN, (x,), attrs)


def prod(x, dim=None, keepdim: bool = False, *, dtype=None, axis=None, keepdims=None) -> Tensor:
    """Product of the elements of ``x`` over ``dim``; integers and bools multiply in int64.

    Its gradient is exact when elements are 0 (the product of the others, not out / x).
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(PROD, dim, keepdim, axis, keepdims)
    axes = _dims(x, dim, PROD)
    if dtype is not None:
        x = cast(x, dtype)
    return apply(PROD, (x,), {"dim": axes, "keepdim": bool(keepdim)})


def amax(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None) -> Tensor:
    """Largest elements of ``x`` over ``dim`` (one dim or several); ties share the gradient.

    Raises ShapeError when a reduced dimension is empty.
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(AMAX, dim, keepdim, axis, keepdims)
    return apply(AMAX, (x,), {"dim": _dims(x, dim, AMAX), "keepdim": bool(keepdim)})


def amin(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None) -> Tensor:
    """Smallest elements of ``x`` over ``dim`` (one dim or several); ties share the gradient."""
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(AMIN, dim, keepdim, axis, keepdims)
    return apply(AMIN, (x,), {"dim": _dims(x, dim, AMIN), "keepdim": bool(keepdim)})


def max(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):  # noqa: A001 - PyTorch's name
    """``max(x)``: the largest element (0-d); ``max(x, dim)``: ``(values, indices)`` along
    ``dim``; ``max(x, other)``: the elementwise maximum.

    >>> fw.max(fw.tensor([[1., 5.], [7., 2.]]), dim=1)
    ValuesIndices(values=tensor([5., 7.]), indices=tensor([1, 0]))
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(MAX, dim, keepdim, axis, keepdims)
    if dim is None:
        return apply(MAX, (x,), {"dim": _one_dim(x, None, MAX), "keepdim": bool(keepdim)})
    if isinstance(dim, Tensor):
        return maximum(x, dim)
    return _values_indices(MAX, ARGMAX, x, dim, keepdim)


def min(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):  # noqa: A001 - PyTorch's name
    """``min(x)``: the smallest element (0-d); ``min(x, dim)``: ``(values, indices)`` along
    ``dim``; ``min(x, other)``: the elementwise minimum."""
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(MIN, dim, keepdim, axis, keepdims)
    if dim is None:
        return apply(MIN, (x,), {"dim": _one_dim(x, None, MIN), "keepdim": bool(keepdim)})
    if isinstance(dim, Tensor):
        return minimum(x, dim)
    return _values_indices(MIN, ARGMIN, x, dim, keepdim)


def _values_indices(values_op, index_op, x, dim, keepdim):
    attrs = {"dim": _one_dim(x, dim, values_op), "keepdim": bool(keepdim)}
    return ValuesIndices(apply(values_op, (x,), attrs), apply(index_op, (x,), attrs))


def argmax(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None) -> Tensor:
    """Index (int64) of the largest element along ``dim``, or in the flattened tensor."""
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(ARGMAX, dim, keepdim, axis, keepdims)
    return apply(ARGMAX, (x,), {"dim": _one_dim(x, dim, ARGMAX), "keepdim": bool(keepdim)})


def argmin(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None) -> Tensor:
    """Index (int64) of the smallest element along ``dim``, or in the flattened tensor."""
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(ARGMIN, dim, keepdim, axis, keepdims)
    return apply(ARGMIN, (x,), {"dim": _one_dim(x, dim, ARGMIN), "keepdim": bool(keepdim)})


def _spread(op, x, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # PyTorch's legacy var(x, unbiased)
        dim, unbiased = None, dim
    axes = _dims(x, dim, op)
    if unbiased is not None:
        if correction is not None:
            raise FwError("give either correction or unbiased, not both", op=op.name,
                          hint="unbiased=True is correction=1, unbiased=False is correction=0")
        correction = 1 if unbiased else 0
    attrs = {"dim": axes, "keepdim": bool(keepdim),
             "correction": 1 if correction is None else correction}
    if not _dt.is_float(x._data.dtype):
        _check(op, x, attrs)
    return apply(op, (x,), attrs)


def var(x, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None,
        axis=None, keepdims=None) -> Tensor:
    """Variance over ``dim``: ``sum((x - mean)^2) / (n - correction)``.

    ``correction`` defaults to 1 (Bessel's correction); ``unbiased=False`` is PyTorch's older
    spelling of ``correction=0``. Where n <= correction the result is inf or NaN, as PyTorch.
    Raises DTypeError for integer input.
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(VAR, dim, keepdim, axis, keepdims)
    return _spread(VAR, x, dim, unbiased, keepdim, correction)


def std(x, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None,
        axis=None, keepdims=None) -> Tensor:
    """Standard deviation over ``dim``: ``sqrt(var(x, dim, correction=...))`` (see :func:`var`).

    At a constant input its gradient is undefined; 0 is returned there, as PyTorch does.
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(STD, dim, keepdim, axis, keepdims)
    return _spread(STD, x, dim, unbiased, keepdim, correction)


def logsumexp(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None) -> Tensor:
    """``log(sum(exp(x)))`` over ``dim``, without overflow; its gradient is ``softmax(x)``.

    Integer input gives float32. ``fw.logsumexp(fw.tensor([1000., 1000.]), 0)`` is
    ``1000 + log 2``.
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(LOGSUMEXP, dim, keepdim, axis, keepdims)
    return apply(LOGSUMEXP, (x,), {"dim": _dims(x, dim, LOGSUMEXP), "keepdim": bool(keepdim)})


def norm(x, p=2, dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """The vector p-norm of ``x`` over ``dim`` (all of it when None).

    ``p`` is a number, ``inf``/``-inf`` (max/min of |x|), 0 (count of non-zeros) or ``"fro"``
    (the 2-norm, over at most two dims). ``"nuc"`` is not supported. Raises DTypeError for
    integer input.
    """
    axes = _dims(x, dim, NORM)
    if p is None or isinstance(p, str):
        p = _named_norm(p, dim, x)
    if dtype is not None:
        x = cast(x, dtype)
    attrs = {"p": float(p), "dim": axes, "keepdim": bool(keepdim)}
    if not _dt.is_float(x._data.dtype):
        _check(NORM, x, attrs)
    return apply(NORM, (x,), attrs)


def _named_norm(p, dim, x) -> float:
    if p is None or p == "fro":
        if isinstance(dim, (tuple, list)) and len(dim) > 2:
            raise located(ShapeError(
                f"the Frobenius norm takes at most two dims, got dim={tuple(dim)}", op="norm",
                hint="use p=2 for the 2-norm over more dimensions"), None, (x,))
        return 2.0
    if p == "nuc":
        raise located(UnsupportedError(
            "the nuclear norm (p='nuc') is not supported", op="norm",
            hint="it is the sum of singular values: compute them with an SVD (NumPy: "
            "np.linalg.norm(x.detach().numpy(), 'nuc'))"), None, (x,))
    raise located(ArgumentError(f"unknown norm p={p!r}", op="norm",
                                hint="use a number, inf, -inf or 'fro'"), None, (x,))


def all(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None) -> Tensor:  # noqa: A001 - PyTorch's name
    """True where every element over ``dim`` is non-zero (bool; uint8 stays uint8)."""
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(ALL, dim, keepdim, axis, keepdims)
    return apply(ALL, (x,), {"dim": _dims(x, dim, ALL), "keepdim": bool(keepdim)})


def any(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None) -> Tensor:  # noqa: A001 - PyTorch's name
    """True where some element over ``dim`` is non-zero (bool; uint8 stays uint8)."""
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(ANY, dim, keepdim, axis, keepdims)
    return apply(ANY, (x,), {"dim": _dims(x, dim, ANY), "keepdim": bool(keepdim)})


def cumsum(x, dim: int, *, dtype=None) -> Tensor:
    """Running sums of ``x`` along ``dim``: ``out[..., i] = x[..., 0] + ... + x[..., i]``.

    Integers and bools are summed in int64; ``dtype`` converts ``x`` first.
    """
    axis = _one_dim(x, dim, CUMSUM)
    if axis is None and dim is None:
        raise located(ShapeError("cumsum needs a dim", op="cumsum",
                                 hint="e.g. fw.cumsum(x, dim=0); flatten first for a running "
                                 "sum over every element"), None, (x,))
    if dtype is not None:
        x = cast(x, dtype)
    return apply(CUMSUM, (x,), {"dim": axis, "reverse": False})


#: Tensor methods this family provides (bound by fw_core.tensor_methods)
METHODS = {name: globals()[name] for name in __all__}
