"""The sorting kernels, a stable argsort and the mode's index, written once against the array
namespace ``xp``.

Module-level functions taking ``xp`` first; :func:`kernels` binds them to a namespace.
"""

from __future__ import annotations

from functools import partial


def _stable(xp) -> dict:
    """The keyword arguments that make ``xp.argsort`` stable."""
    # NumPy sorts stably when asked; CuPy's argsort is always stable and takes no kind
    return {"kind": "stable"} if xp.__name__ == "numpy" else {}


def argsort(xp, x, dim, descending):
    """The int64 order that sorts ``x`` along ``dim``, stably in either direction (ties keep
    their original order); NaN sorts last ascending, first descending."""
    if x.ndim == 0:
        return xp.zeros((), dtype=xp.int64)
    stable = _stable(xp)
    if not descending:
        return xp.argsort(x, axis=dim, **stable).astype(xp.int64, copy=False)
    # stable descending: sort the reversed row ascending, reverse that order and map it
    # back (ties keep their original order; NaN, last ascending, comes first)
    reversed_order = xp.argsort(xp.flip(x, dim), axis=dim, **stable)
    return (x.shape[dim] - 1 - xp.flip(reversed_order, dim)).astype(xp.int64, copy=False)


def mode_index(xp, x, dim):
    """Per slice along ``dim``: the last original index of the longest run of equal values
    in the stable sorted order (the first such run: the smallest value)."""
    stable = _stable(xp)
    rows = xp.moveaxis(x, dim, -1)
    lead, n = rows.shape[:-1], rows.shape[-1]
    rows = rows.reshape(-1, n)
    order = xp.argsort(rows, axis=1, **stable)
    ranked = xp.take_along_axis(rows, order, axis=1)
    # a run ends where the next sorted value differs (NaN != NaN: each NaN its own run)
    ends = xp.ones(ranked.shape, dtype=bool)
    ends[:, :-1] = ranked[:, 1:] != ranked[:, :-1]
    starts = xp.ones(ranked.shape, dtype=bool)
    starts[:, 1:] = ends[:, :-1]
    positions = xp.arange(n)
    first = xp.maximum.accumulate(xp.where(starts, positions, 0), axis=1)
    lengths = xp.where(ends, positions - first + 1, 0)
    best = xp.argmax(lengths, axis=1)  # the first longest run: the smallest value
    chosen = xp.take_along_axis(order, best[:, None], axis=1)[:, 0]
    return chosen.astype(xp.int64).reshape(lead)


def kernels(xp, special) -> dict:
    """{op name: kernel} for namespace ``xp``."""
    return {"argsort": partial(argsort, xp), "mode_index": partial(mode_index, xp)}
