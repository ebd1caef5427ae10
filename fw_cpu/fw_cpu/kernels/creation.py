"""Creation and conversion kernels."""

from __future__ import annotations


def kernels(xp, special) -> dict:
    def full(shape, fill_value, dtype):
        return xp.full(shape, fill_value, dtype=dtype)

    def arange(start, end, step, dtype):
        return xp.arange(start, end, step, dtype=dtype)

    def linspace(start, end, steps, dtype):
        return xp.linspace(start, end, steps, dtype=dtype)

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
