"""Creation and conversion kernels.

Module-level functions taking ``xp`` first where they build arrays; :func:`kernels` binds them
to a namespace.
"""

from __future__ import annotations

from functools import partial


def zeros(xp, shape, dtype):
    """An array of zeros of ``shape`` and ``dtype``."""
    return xp.zeros(shape, dtype=dtype)


def ones(xp, shape, dtype):
    """An array of ones of ``shape`` and ``dtype``."""
    return xp.ones(shape, dtype=dtype)


def empty(xp, shape, dtype):
    """An uninitialised array of ``shape`` and ``dtype``."""
    return xp.empty(shape, dtype=dtype)


def full(xp, shape, fill_value, dtype):
    """An array of ``shape`` and ``dtype`` holding ``fill_value`` everywhere."""
    return xp.full(shape, fill_value, dtype=dtype)


def arange(xp, start, end, step, dtype):
    """The values ``start, start + step, ...`` before ``end``, in ``dtype``."""
    return xp.arange(start, end, step, dtype=dtype)


def linspace(xp, start, end, steps, dtype):
    """``steps`` evenly spaced values from ``start`` to ``end``, in PyTorch's values: the first
    half counted up from start, the second down from end, so both ends are exact; in the dtype
    for floats; for integers the ends are truncated to integers first and the steps taken in
    float64, each value then truncated toward zero (``linspace(5, -5, 20)`` has four zeros, as
    in torch)."""
    dtype = xp.dtype(dtype)
    if steps == 1:
        return xp.full((1,), start, dtype=dtype)
    if dtype.kind == "f":
        work, first, last = dtype, dtype.type(start), dtype.type(end)
    else:
        work = xp.dtype(xp.float64)
        first, last = work.type(int(start)), work.type(int(end))
    step = (last - first) / work.type(steps - 1)
    index = xp.arange(steps, dtype=work)
    up = first + step * index
    down = last - step * (work.type(steps - 1) - index)
    return xp.where(index < steps // 2, up, down).astype(dtype)


def eye(xp, n, m, dtype):
    """The ``n`` x ``m`` identity matrix in ``dtype``."""
    return xp.eye(n, m, dtype=dtype)


def cast(x, dtype, source=None):
    """``x`` converted to ``dtype``, always as a new array (``source``, the input's dtype, is
    recorded for the gradient and not needed here)."""
    return x.astype(dtype)


def clone(x):
    """A copy of ``x`` that shares no memory with it."""
    return x.copy()


def kernels(xp, special) -> dict:
    """{op name: kernel} for namespace ``xp``."""
    return {
        "zeros": partial(zeros, xp), "ones": partial(ones, xp), "empty": partial(empty, xp),
        "full": partial(full, xp), "arange": partial(arange, xp),
        "linspace": partial(linspace, xp), "eye": partial(eye, xp), "cast": cast,
        "clone": clone,
    }
