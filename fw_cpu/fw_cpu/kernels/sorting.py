"""The sorting kernel: a stable argsort, written once against the array namespace ``xp``."""

from __future__ import annotations


def kernels(xp, special) -> dict:
    # NumPy sorts stably when asked; CuPy's argsort is always stable and takes no kind
    stable = {"kind": "stable"} if xp.__name__ == "numpy" else {}

    def argsort(x, dim, descending):
        if x.ndim == 0:
            return xp.zeros((), dtype=xp.int64)
        if not descending:
            return xp.argsort(x, axis=dim, **stable).astype(xp.int64, copy=False)
        # stable descending: sort the reversed row ascending, reverse that order and map it
        # back (ties keep their original order; NaN, last ascending, comes first)
        reversed_order = xp.argsort(xp.flip(x, dim), axis=dim, **stable)
        return (x.shape[dim] - 1 - xp.flip(reversed_order, dim)).astype(xp.int64, copy=False)

    return {"argsort": argsort}
