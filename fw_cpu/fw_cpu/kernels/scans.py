"""Scan kernels (cummax/cummin indices, cumprod, logcumsumexp), written once against ``xp``.

Module-level functions taking ``xp`` first; :func:`kernels` binds them to a namespace.
"""

from __future__ import annotations

from functools import partial

from fw_core.dtypes import FLOAT_KINDS


def _index_scan(xp, accumulate, x, dim):
    """The int64 index of the running value that ``accumulate`` (a ufunc's ``accumulate``)
    keeps along ``dim``: the latest position that reached it."""
    if x.ndim == 0:
        return xp.zeros((), dtype=xp.int64)
    running = accumulate(x, axis=dim)
    shape = [1] * x.ndim
    shape[dim] = x.shape[dim]
    positions = xp.arange(x.shape[dim], dtype=xp.int64).reshape(shape)
    # an element reaches the running value (or is a NaN) exactly where it becomes or
    # ties it; the latest such position is the index, found by a running max
    reached = (x == running) | (xp.isnan(x) if x.dtype.kind in "fc" else False)
    return xp.maximum.accumulate(xp.where(reached, positions, 0), axis=dim)


def cummax_index(xp, x, dim):
    """The int64 index of ``cummax``'s running maximum along ``dim`` (the latest of tied
    values; a NaN, once reached, stays the maximum)."""
    return _index_scan(xp, xp.maximum.accumulate, x, dim)


def cummin_index(xp, x, dim):
    """The int64 index of ``cummin``'s running minimum along ``dim`` (the latest of tied
    values; a NaN, once reached, stays the minimum)."""
    return _index_scan(xp, xp.minimum.accumulate, x, dim)


def _accumulator(xp, dtype):
    """The running value's dtype, wider than the input's as in PyTorch's CPU scans (its
    acc_type): float16 and bfloat16 run in float32, float32 in float64; each output is rounded
    once."""
    return {"float16": xp.float32, "bfloat16": xp.float32, "float32": xp.float64}.get(dtype.name)


def cumprod(xp, x, dim):
    """The running product along ``dim``; integers and bools multiply in int64, floats in a
    wider accumulator (see :func:`_accumulator`) rounded back to their dtype."""
    if x.dtype.kind not in FLOAT_KINDS:
        x = x.astype(xp.int64)
    if x.ndim == 0:
        return x.copy()
    return xp.cumprod(x, axis=dim, dtype=_accumulator(xp, x.dtype)).astype(x.dtype, copy=False)


def logcumsumexp(xp, x, dim, reverse):
    """``log(cumsum(exp(x)))`` along ``dim`` (from the end with ``reverse``), without forming
    ``exp(x)``; float16 and float32 run in a wider accumulator."""
    if x.ndim == 0:
        return x.copy()
    wide = x.astype(_accumulator(xp, x.dtype) or x.dtype, copy=False)
    if reverse:
        wide = xp.flip(wide, dim)
    # logaddexp pairs the running value with each element without forming exp(x): no
    # overflow for large x and no underflow for elements far below the running value
    out = xp.logaddexp.accumulate(wide, axis=dim)
    if reverse:
        out = xp.flip(out, dim)
    return xp.ascontiguousarray(out, dtype=x.dtype)


def kernels(xp, special) -> dict:
    """{op name: kernel} for namespace ``xp``."""
    return {"cummax_index": partial(cummax_index, xp),
            "cummin_index": partial(cummin_index, xp), "cumprod": partial(cumprod, xp),
            "logcumsumexp": partial(logcumsumexp, xp)}
