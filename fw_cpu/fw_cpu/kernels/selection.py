"""Selection kernels (``nonzero``), written once against ``xp``.

Module-level functions taking ``xp`` first; :func:`kernels` binds them to a namespace.
"""

from __future__ import annotations

from functools import partial


def nonzero(xp, x, count):
    """The (count, ndim) int64 indices of ``x``'s nonzero elements, in row-major order
    (``count``, their number, is known beforehand and not needed here)."""
    return xp.argwhere(x).astype(xp.int64, copy=False)


def kernels(xp, special) -> dict:
    """{op name: kernel} for namespace ``xp``."""
    return {"nonzero": partial(nonzero, xp)}
