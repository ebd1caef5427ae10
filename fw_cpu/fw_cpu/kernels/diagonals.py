"""Diagonal kernels, written once against ``xp``: a diagonal as a writable view, a diagonal
written into zeros, and the index pairs of a triangle."""

from __future__ import annotations


def kernels(xp, special) -> dict:
    def diagonal(x, offset, dim1, dim2):
        view = xp.diagonal(x, offset, dim1, dim2)
        flags = getattr(view, "flags", None)
        if flags is not None and not flags.writeable and x.flags.writeable:
            # NumPy hands out a read-only view for backward compatibility; PyTorch's
            # diagonal is writable, and the view is a plain strided one
            flags.writeable = True
        return view

    def diag_embed(g, shape, offset, dim1, dim2):
        out = xp.zeros(shape, dtype=g.dtype)
        diagonal(out, offset, dim1, dim2)[...] = g
        return out

    def triangle_indices(select):
        def kernel(row, col, offset, dtype):
            rows, cols = select(row, offset, col)
            return xp.stack([xp.asarray(rows), xp.asarray(cols)]).astype(dtype).reshape(2, -1)

        return kernel

    return {"diagonal": diagonal, "diag_embed": diag_embed,
            "tril_indices": triangle_indices(xp.tril_indices),
            "triu_indices": triangle_indices(xp.triu_indices)}
