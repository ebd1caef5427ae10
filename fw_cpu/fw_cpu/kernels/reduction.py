"""Reduction kernels, written once against ``xp``.

``dim`` arrives normalised by fw_core (None for every axis, a sorted tuple of axes, or one int
for the single-axis ops), so it goes straight to NumPy's ``axis``. As PyTorch does, float16 and
bfloat16 are accumulated in float32, and integers and bools that sum or multiply are accumulated
in int64. Every kernel returns an array (never a NumPy scalar) of the dtype its op's meta rule
promises.

The kernels are module-level functions taking ``xp`` first; those that sum or multiply also take
``plans``, the per-table cache of :func:`_plan`, and :func:`kernels` binds both.
"""

from __future__ import annotations

import math
from functools import partial

from fw_core.dtypes import FLOAT_KINDS, HALF_NUMPY

from ._half import widen as _widen


def _plan(xp, plans, dtype):
    """(dtype to accumulate in, dtype to cast the result to) for sums and products; None
    where NumPy's own choice is already right (cached per dtype in ``plans``: this is the hot
    path)."""
    found = plans.get(dtype)
    if found is None:
        if dtype.kind not in FLOAT_KINDS:
            found = (xp.int64, None)
        else:
            found = (xp.float32, dtype) if dtype in HALF_NUMPY else (None, None)
        plans[dtype] = found
    return found


def _array(xp, out, dtype=None):
    """``out`` as an array (a NumPy scalar becomes 0-d), cast to ``dtype`` if one is given."""
    return xp.asarray(out) if dtype is None else xp.asarray(out, dtype=dtype)


def _count(x, dim):
    """How many elements of ``x`` each reduction over ``dim`` takes."""
    return x.size if dim is None else math.prod(x.shape[a] for a in dim)


def sum_(xp, plans, add_reduce, x, dim, keepdim):
    """The sum over ``dim``. ``add_reduce`` is ``xp.add.reduce`` where the namespace has it
    (None otherwise): the ufunc's own reduce skips ndarray.sum's Python wrapper (about half of a
    tiny sum)."""
    acc, result = _plan(xp, plans, x.dtype)
    if add_reduce is not None:
        return _array(xp, add_reduce(x, axis=dim, dtype=acc, keepdims=keepdim), result)
    return _array(xp, x.sum(axis=dim, keepdims=keepdim, dtype=acc), result)


def prod(xp, plans, x, dim, keepdim):
    """The product over ``dim``."""
    acc, result = _plan(xp, plans, x.dtype)
    return _array(xp, x.prod(axis=dim, keepdims=keepdim, dtype=acc), result)


def mean(xp, plans, x, dim, keepdim):
    """The mean over ``dim``."""
    # a sum divided by the count: NaN over zero elements, without NumPy's empty-slice warning
    acc, result = _plan(xp, plans, x.dtype)
    return _array(xp, x.sum(axis=dim, keepdims=keepdim, dtype=acc) / _count(x, dim), result)


def var(xp, x, dim, keepdim, correction):
    """The variance over ``dim``, dividing by ``count - correction`` (0 if that is negative)."""
    wide = _widen(xp, x)
    n = _count(x, dim)
    centred = wide - wide.sum(axis=dim, keepdims=True) / n
    squares = (centred * centred).sum(axis=dim, keepdims=keepdim)
    return xp.asarray(squares / max(n - correction, 0), dtype=x.dtype)


def std(xp, x, dim, keepdim, correction):
    """The square root of :func:`var`."""
    return xp.asarray(xp.sqrt(var(xp, x, dim, keepdim, correction)))


def amax(xp, x, dim, keepdim):
    """The maximum over ``dim`` (the ``max`` op's values too)."""
    return xp.asarray(x.max(axis=dim, keepdims=keepdim))


def amin(xp, x, dim, keepdim):
    """The minimum over ``dim`` (the ``min`` op's values too)."""
    return xp.asarray(x.min(axis=dim, keepdims=keepdim))


def argmax(xp, x, dim, keepdim):
    """The int64 position of the (first) maximum over ``dim``."""
    return xp.asarray(x.argmax(axis=dim, keepdims=keepdim), dtype=xp.int64)


def argmin(xp, x, dim, keepdim):
    """The int64 position of the (first) minimum over ``dim``."""
    return xp.asarray(x.argmin(axis=dim, keepdims=keepdim), dtype=xp.int64)


def all_(xp, x, dim, keepdim):
    """Whether every element over ``dim`` is true: bool, or uint8 for a uint8 ``x`` (as
    PyTorch)."""
    uint8 = xp.uint8
    return xp.asarray(x.all(axis=dim, keepdims=keepdim),
                      dtype=uint8 if x.dtype == uint8 else bool)


def any_(xp, x, dim, keepdim):
    """Whether any element over ``dim`` is true: bool, or uint8 for a uint8 ``x`` (as
    PyTorch)."""
    uint8 = xp.uint8
    return xp.asarray(x.any(axis=dim, keepdims=keepdim),
                      dtype=uint8 if x.dtype == uint8 else bool)


def logsumexp(xp, x, dim, keepdim):
    """``log(sum(exp(x)))`` over ``dim``, shifted by the maximum so that exp cannot overflow."""
    wide = _widen(xp, x)
    if x.size == 0:  # no maximum to subtract; the sum over no elements is 0, its log -inf
        return xp.asarray(xp.log(xp.exp(wide).sum(axis=dim, keepdims=keepdim)),
                          dtype=x.dtype)
    peak = wide.max(axis=dim, keepdims=True)
    peak = xp.where(xp.isfinite(peak), peak, 0)  # all -inf (or an inf): nothing to shift
    total = xp.exp(wide - peak).sum(axis=dim, keepdims=keepdim)
    return xp.asarray(xp.log(total) + peak.reshape(total.shape), dtype=x.dtype)


def norm(xp, x, p, dim, keepdim):
    """The vector ``p``-norm over ``dim``: ``p`` = 0 counts the nonzeros, +-inf are the largest
    and smallest magnitude."""
    wide = _widen(xp, x)
    if p == 2:
        out = xp.sqrt((wide * wide).sum(axis=dim, keepdims=keepdim))
    elif p == 1:
        out = xp.abs(wide).sum(axis=dim, keepdims=keepdim)
    elif p == math.inf:
        out = xp.abs(wide).max(axis=dim, keepdims=keepdim)
    elif p == -math.inf:
        out = xp.abs(wide).min(axis=dim, keepdims=keepdim)
    elif p == 0:
        out = (wide != 0).sum(axis=dim, keepdims=keepdim)
    else:
        out = (xp.abs(wide) ** p).sum(axis=dim, keepdims=keepdim) ** (1.0 / p)
    return xp.asarray(out, dtype=x.dtype)


def cumsum(xp, plans, x, dim, reverse):
    """The running sum along ``dim`` (from the end if ``reverse``)."""
    acc, result = _plan(xp, plans, x.dtype)
    if dim is None:  # a 0-d tensor is its own running sum
        return x.astype(result or acc or x.dtype)
    if not reverse:
        return _array(xp, xp.cumsum(x, axis=dim, dtype=acc), result)
    out = xp.cumsum(xp.flip(x, dim), axis=dim, dtype=acc)
    return xp.ascontiguousarray(xp.flip(out, dim), dtype=result)


def unreduce(xp, x, shape, dim):
    """A reduction's result (reduced over ``dim`` without keepdim) broadcast back to ``shape``."""
    return xp.broadcast_to(xp.expand_dims(x, dim), shape)


def kernels(xp, special) -> dict:
    """{op name: kernel} for namespace ``xp``, sharing one accumulation-plan cache."""
    plans: dict = {}
    add_reduce = getattr(xp.add, "reduce", None)
    max_, min_ = partial(amax, xp), partial(amin, xp)
    return {
        "sum": partial(sum_, xp, plans, add_reduce), "prod": partial(prod, xp, plans),
        "mean": partial(mean, xp, plans), "var": partial(var, xp), "std": partial(std, xp),
        "amax": max_, "amin": min_, "max": max_, "min": min_,  # max/min differ in the VJP only
        "argmax": partial(argmax, xp), "argmin": partial(argmin, xp),
        "all": partial(all_, xp), "any": partial(any_, xp),
        "logsumexp": partial(logsumexp, xp), "norm": partial(norm, xp),
        "cumsum": partial(cumsum, xp, plans), "unreduce": partial(unreduce, xp),
    }
