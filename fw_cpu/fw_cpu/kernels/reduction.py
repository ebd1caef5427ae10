"""Reduction kernels, written once against ``xp``.

``dim`` arrives normalised by fw_core (None for every axis, a sorted tuple of axes, or one int
for the single-axis ops), so it goes straight to NumPy's ``axis``. As PyTorch does, float16 is
accumulated in float32, and integers and bools that sum or multiply are accumulated in int64.
Every kernel returns an array (never a NumPy scalar) of the dtype its op's meta rule promises.
"""

from __future__ import annotations

import math


def kernels(xp, special) -> dict:
    half, int64, uint8 = xp.float16, xp.int64, xp.uint8
    plans: dict = {}

    def plan(dtype):
        """(dtype to accumulate in, dtype to cast the result to) for sums and products; None
        where NumPy's own choice is already right (cached per dtype: this is the hot path)."""
        found = plans.get(dtype)
        if found is None:
            if dtype.kind != "f":
                found = (int64, None)
            else:
                found = (xp.float32, half) if dtype == half else (None, None)
            plans[dtype] = found
        return found

    def array(out, dtype=None):
        return xp.asarray(out) if dtype is None else xp.asarray(out, dtype=dtype)

    def widen(x):
        """x itself, or in float32 if it is float16 (for kernels that square or exponentiate)."""
        return x.astype(xp.float32) if x.dtype == half else x

    def count(x, dim):
        return x.size if dim is None else math.prod(x.shape[a] for a in dim)

    # the ufunc's own reduce skips ndarray.sum's Python wrapper (about half of a tiny sum)
    add_reduce = getattr(xp.add, "reduce", None)

    def sum_(x, dim, keepdim):
        acc, result = plan(x.dtype)
        if add_reduce is not None:
            return array(add_reduce(x, axis=dim, dtype=acc, keepdims=keepdim), result)
        return array(x.sum(axis=dim, keepdims=keepdim, dtype=acc), result)

    def prod(x, dim, keepdim):
        acc, result = plan(x.dtype)
        return array(x.prod(axis=dim, keepdims=keepdim, dtype=acc), result)

    def mean(x, dim, keepdim):
        # a sum divided by the count: NaN over zero elements, without NumPy's empty-slice warning
        acc, result = plan(x.dtype)
        return array(x.sum(axis=dim, keepdims=keepdim, dtype=acc) / count(x, dim), result)

    def var(x, dim, keepdim, correction):
        wide = widen(x)
        n = count(x, dim)
        centred = wide - wide.sum(axis=dim, keepdims=True) / n
        squares = (centred * centred).sum(axis=dim, keepdims=keepdim)
        return xp.asarray(squares / max(n - correction, 0), dtype=x.dtype)

    def std(x, dim, keepdim, correction):
        return xp.asarray(xp.sqrt(var(x, dim, keepdim, correction)))

    def amax(x, dim, keepdim):
        return xp.asarray(x.max(axis=dim, keepdims=keepdim))

    def amin(x, dim, keepdim):
        return xp.asarray(x.min(axis=dim, keepdims=keepdim))

    def argmax(x, dim, keepdim):
        return xp.asarray(x.argmax(axis=dim, keepdims=keepdim), dtype=int64)

    def argmin(x, dim, keepdim):
        return xp.asarray(x.argmin(axis=dim, keepdims=keepdim), dtype=int64)

    def all_(x, dim, keepdim):
        return xp.asarray(x.all(axis=dim, keepdims=keepdim),
                          dtype=uint8 if x.dtype == uint8 else bool)

    def any_(x, dim, keepdim):
        return xp.asarray(x.any(axis=dim, keepdims=keepdim),
                          dtype=uint8 if x.dtype == uint8 else bool)

    def logsumexp(x, dim, keepdim):
        wide = widen(x)
        if x.size == 0:  # no maximum to subtract; the sum over no elements is 0, its log -inf
            return xp.asarray(xp.log(xp.exp(wide).sum(axis=dim, keepdims=keepdim)),
                              dtype=x.dtype)
        peak = wide.max(axis=dim, keepdims=True)
        peak = xp.where(xp.isfinite(peak), peak, 0)  # all -inf (or an inf): nothing to shift
        total = xp.exp(wide - peak).sum(axis=dim, keepdims=keepdim)
        return xp.asarray(xp.log(total) + peak.reshape(total.shape), dtype=x.dtype)

    def norm(x, p, dim, keepdim):
        wide = widen(x)
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

    def cumsum(x, dim, reverse):
        acc, result = plan(x.dtype)
        if dim is None:  # a 0-d tensor is its own running sum
            return x.astype(result or acc or x.dtype)
        if not reverse:
            return array(xp.cumsum(x, axis=dim, dtype=acc), result)
        out = xp.cumsum(xp.flip(x, dim), axis=dim, dtype=acc)
        return xp.ascontiguousarray(xp.flip(out, dim), dtype=result)

    def unreduce(x, shape, dim):
        return xp.broadcast_to(xp.expand_dims(x, dim), shape)

    return {
        "sum": sum_, "prod": prod, "mean": mean, "var": var, "std": std,
        "amax": amax, "amin": amin, "max": amax, "min": amin,  # max/min differ in the VJP only
        "argmax": argmax, "argmin": argmin, "all": all_, "any": any_,
        "logsumexp": logsumexp, "norm": norm, "cumsum": cumsum, "unreduce": unreduce,
    }
