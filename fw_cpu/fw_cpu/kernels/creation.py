"""Creation and conversion kernels."""

from __future__ import annotations


def kernels(xp, special) -> dict:
    def full(shape, fill_value, dtype):
        return xp.full(shape, fill_value, dtype=dtype)

    def arange(start, end, step, dtype):
        return xp.arange(start, end, step, dtype=dtype)

    def linspace(start, end, steps, dtype):
        """PyTorch's values: the first half counted up from start, the second down from end,
        so both ends are exact; in the dtype for floats; for integers the ends are truncated
        to integers first and the steps taken in float64, each value then truncated toward
        zero (``linspace(5, -5, 20)`` has four zeros, as in torch)."""
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

    def eye(n, m, dtype):
        return xp.eye(n, m, dtype=dtype)

    def cast(x, dtype, source=None):
        return x.astype(dtype)

    return {
        "zeros": lambda shape, dtype: xp.zeros(shape, dtype=dtype),
        "ones": lambda shape, dtype: xp.ones(shape, dtype=dtype),
        "empty": lambda shape, dtype: xp.empty(shape, dtype=dtype),
        "full": full, "arange": arange, "linspace": linspace, "eye": eye, "cast": cast,
        "clone": lambda x: x.copy(),
    }
