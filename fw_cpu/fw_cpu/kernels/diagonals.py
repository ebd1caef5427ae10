"""Diagonal kernels, written once against ``xp``: a diagonal as a writable view, a diagonal
written into zeros, and the index pairs of a triangle.

Module-level functions taking ``xp`` first; :func:`kernels` binds them to a namespace.
"""

from __future__ import annotations

from functools import partial


def diagonal(xp, x, offset, dim1, dim2):
    """The diagonal of ``x`` at ``offset`` over dims ``dim1`` and ``dim2``, as a view that is
    writable wherever ``x`` is."""
    view = xp.diagonal(x, offset, dim1, dim2)
    flags = getattr(view, "flags", None)
    if flags is not None and not flags.writeable and x.flags.writeable:
        # NumPy hands out a read-only view for backward compatibility; PyTorch's
        # diagonal is writable, and the view is a plain strided one
        flags.writeable = True
    return view


def diag_embed(xp, g, shape, offset, dim1, dim2):
    """Zeros of ``shape`` with ``g`` written on the diagonal that :func:`diagonal` takes (also
    the gradient of ``diagonal``)."""
    out = xp.zeros(shape, dtype=g.dtype)
    diagonal(xp, out, offset, dim1, dim2)[...] = g
    return out


def _triangle_indices(xp, select, row, col, offset, dtype):
    """The (2, count) ``dtype`` array of the row and column indices ``select``
    (``xp.tril_indices`` or ``xp.triu_indices``) gives for a ``row`` x ``col`` matrix."""
    rows, cols = select(row, offset, col)
    return xp.stack([xp.asarray(rows), xp.asarray(cols)]).astype(dtype).reshape(2, -1)


def tril_indices(xp, row, col, offset, dtype):
    """The (2, count) indices of the lower triangle (on and below diagonal ``offset``) of a
    ``row`` x ``col`` matrix: row indices first, then column indices."""
    return _triangle_indices(xp, xp.tril_indices, row, col, offset, dtype)


def triu_indices(xp, row, col, offset, dtype):
    """The (2, count) indices of the upper triangle (on and above diagonal ``offset``) of a
    ``row`` x ``col`` matrix: row indices first, then column indices."""
    return _triangle_indices(xp, xp.triu_indices, row, col, offset, dtype)


def kernels(xp, special) -> dict:
    """{op name: kernel} for namespace ``xp``."""
    return {"diagonal": partial(diagonal, xp), "diag_embed": partial(diag_embed, xp),
            "tril_indices": partial(tril_indices, xp),
            "triu_indices": partial(triu_indices, xp)}
