"""Sliding-window kernels (``unfold`` and its gradient), written once against ``xp``: the
windows are one ``take`` of a (windows, size) position table, the gradient one unbuffered add
of the same table."""

from __future__ import annotations

from .shape import add_at


def kernels(xp, special) -> dict:
    accumulate = add_at(xp)

    def positions(length, size, step):
        count = (length - size) // step + 1
        return (xp.arange(count)[:, None] * step + xp.arange(size)[None, :]).astype(xp.int64)

    def unfold(x, dim, size, step):
        if x.ndim == 0:
            return unfold(x.reshape(1), 0, size, step).reshape(size)
        windows = xp.take(x, positions(x.shape[dim], size, step), axis=dim)
        return xp.ascontiguousarray(xp.moveaxis(windows, dim + 1, -1))

    def unfold_backward(g, shape, dim, size, step):
        if len(shape) == 0:
            return unfold_backward(g.reshape(1, size), (1,), 0, size, step).reshape(())
        out = xp.zeros(shape, dtype=g.dtype)
        table = positions(shape[dim], size, step)
        accumulate(out, (slice(None),) * dim + (table,), xp.moveaxis(g, -1, dim + 1))
        return out

    return {"unfold": unfold, "unfold_backward": unfold_backward}
