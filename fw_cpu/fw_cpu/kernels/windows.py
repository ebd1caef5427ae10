"""Sliding-window kernels (``unfold`` and its gradient), written once against ``xp``: the
windows are one ``take`` of a (windows, size) position table, the gradient one unbuffered add
of the same table.

Module-level functions taking ``xp`` first; :func:`kernels` binds them to a namespace.
"""

from __future__ import annotations

from functools import partial

from .shape import add_at


def _positions(xp, length, size, step):
    """The (windows, size) int64 table of the positions each window of ``size`` (every
    ``step``) takes from a dimension of ``length``."""
    count = (length - size) // step + 1
    return (xp.arange(count)[:, None] * step + xp.arange(size)[None, :]).astype(xp.int64)


def unfold(xp, x, dim, size, step):
    """Every window of ``size`` along ``dim``, every ``step``: ``dim`` becomes the window count
    and the window's elements a new last dimension (a 0-d ``x`` acts as a 1-element vector)."""
    if x.ndim == 0:
        return unfold(xp, x.reshape(1), 0, size, step).reshape(size)
    windows = xp.take(x, _positions(xp, x.shape[dim], size, step), axis=dim)
    return xp.ascontiguousarray(xp.moveaxis(windows, dim + 1, -1))


def unfold_backward(xp, g, shape, dim, size, step):
    """The gradient of :func:`unfold` for an input of ``shape``: each window's gradient added
    back onto the elements it took (overlapping windows accumulate)."""
    if len(shape) == 0:
        return unfold_backward(xp, g.reshape(1, size), (1,), 0, size, step).reshape(())
    out = xp.zeros(shape, dtype=g.dtype)
    table = _positions(xp, shape[dim], size, step)
    add_at(xp)(out, (slice(None),) * dim + (table,), xp.moveaxis(g, -1, dim + 1))
    return out


def kernels(xp, special) -> dict:
    """{op name: kernel} for namespace ``xp``."""
    return {"unfold": partial(unfold, xp), "unfold_backward": partial(unfold_backward, xp)}
