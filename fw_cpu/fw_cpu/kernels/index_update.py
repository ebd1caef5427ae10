"""``scatter_reduce``, written once against ``xp``: an unbuffered ufunc ``at`` per reduction."""

from __future__ import annotations

from .shape import _indexed, _leading, along_axis


def kernels(xp, special) -> dict:
    ufuncs = {"sum": xp.add, "mean": xp.add, "prod": xp.multiply, "amax": xp.maximum,
              "amin": xp.minimum}

    def identity(reduce, dtype):
        """The value that leaves a reduction unchanged (where include_self=False drops x)."""
        if reduce in ("amax", "amin"):
            info = xp.finfo(dtype) if dtype.kind == "f" else xp.iinfo(dtype)
            low, high = (-xp.inf, xp.inf) if dtype.kind == "f" else (info.min, info.max)
            return low if reduce == "amax" else high
        return 1 if reduce == "prod" else 0

    def scatter_reduce(x, index, src, dim, reduce, include_self):
        out = x.copy()
        where = along_axis(xp, index, dim)
        values = src[_leading(index.shape)]
        if not include_self:
            out[where] = identity(reduce, x.dtype)
        ufuncs[reduce].at(out, where, values)
        if reduce != "mean":
            return out
        counts = xp.full(x.shape, 1 if include_self else 0, dtype=xp.int64)
        xp.add.at(counts, where, 1)
        safe = xp.maximum(counts, 1)
        mean = out // safe if x.dtype.kind in "iu" else out / safe
        return xp.where(counts > 0, mean, x).astype(x.dtype, copy=False)

    return {"scatter_reduce": _indexed(scatter_reduce)}
