"""Helpers the spatial kernel families (conv, pooling, resample) share, written against ``xp``.

Each takes the array namespace first. Sizes are tuples over the trailing spatial axes.
"""

from __future__ import annotations

from fw_core.dtypes import FLOAT_KINDS

from ._half import compute_dtype


def floating(xp, *arrays):
    """Check the operands share one floating dtype; return the dtype to compute in (float16
    and bfloat16 are computed in float32)."""
    dtype = arrays[0].dtype
    if dtype.kind not in FLOAT_KINDS or any(a is not None and a.dtype != dtype for a in arrays):
        raise TypeError("floating-point operands of one dtype expected")
    return compute_dtype(xp, dtype)


def pad_to(xp, x, before, lengths, fill=0):
    """x with its last len(before) axes padded by ``before`` and padded (or cut) at the end to
    ``lengths``."""
    n = len(before)
    sizes = x.shape[x.ndim - n:]
    if not any(before) and tuple(lengths) == sizes:
        return x
    keep = tuple(max(0, min(size, length - b)) for size, b, length in zip(sizes, before, lengths))
    lead = x.shape[:x.ndim - n]
    buffer = (xp.zeros if fill == 0 else xp.empty)(lead + tuple(lengths), dtype=x.dtype)
    if fill != 0:
        buffer.fill(fill)
    inside = tuple(slice(b, b + k) for b, k in zip(before, keep))
    buffer[(Ellipsis,) + inside] = x[(Ellipsis,) + tuple(slice(0, k) for k in keep)]
    return buffer


def nonempty(out):
    """``out`` (an output size), checked to have no zero-length axis."""
    if min(out, default=1) < 1:
        raise ValueError(f"the output would be empty: {out}")
    return out


def spatial(x, n: int, ranks=None):
    """Check x has n spatial axes after one or two leading ones (or one of ``ranks``)."""
    if x.ndim not in (ranks or (n + 1, n + 2)):
        raise ValueError(f"a {n}-d spatial op needs a {n + 1}-d or {n + 2}-d input")


def on_axis(n: int, axis: int, index) -> tuple:
    """An index applying ``index`` to spatial axis ``axis`` (of ``n`` trailing ones)."""
    return (Ellipsis, index) + (slice(None),) * (n - 1 - axis)


def along(xp, x, matrix, axis: int):
    """``matrix`` (out, size) applied to axis ``axis`` of x (counted from the front)."""
    moved = xp.moveaxis(x, axis, -2)
    return xp.moveaxis(xp.matmul(matrix, moved), -2, axis)


def separable(xp, x, matrices):
    """Each of ``matrices`` ((out_i, size_i), host arrays) applied to spatial axis i of x's
    last len(matrices) axes: the map of every resampling and adaptive average pool."""
    dtype = floating(xp, x)
    n = len(matrices)
    result = x.astype(dtype, copy=False)
    for i, matrix in enumerate(matrices):
        result = along(xp, result, xp.asarray(matrix.astype(dtype, copy=False)),
                       x.ndim - n + i)
    return xp.ascontiguousarray(result).astype(x.dtype, copy=False)
