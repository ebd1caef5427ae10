"""``scatter_reduce`` (an unbuffered ufunc ``at`` per reduction) and ``index_write`` (a slice
assignment into the input's own storage), written once against ``xp``.

Module-level functions taking ``xp`` first; :func:`kernels` binds them to a namespace.
"""

from __future__ import annotations

from functools import partial

from fw_core.dtypes import FLOAT_KINDS

from .shape import _indexed, _leading, along_axis


def _ufunc(xp, reduce):
    """The ufunc whose unbuffered ``at`` applies reduction ``reduce`` (``mean`` sums, then
    divides by the counts)."""
    ufuncs = {"sum": xp.add, "mean": xp.add, "prod": xp.multiply, "amax": xp.maximum,
              "amin": xp.minimum}
    return ufuncs[reduce]


def _identity(xp, reduce, dtype):
    """The value that leaves a reduction unchanged (where include_self=False drops x)."""
    if reduce in ("amax", "amin"):
        if dtype.kind in FLOAT_KINDS:
            low, high = -xp.inf, xp.inf
        else:
            info = xp.iinfo(dtype)
            low, high = info.min, info.max
        return low if reduce == "amax" else high
    return 1 if reduce == "prod" else 0


def scatter_reduce(xp, x, index, src, dim, reduce, include_self):
    """A copy of ``x`` with each ``src`` value reduced (``sum``, ``mean``, ``prod``, ``amax``,
    ``amin``) into the position ``index`` names along ``dim``. With ``include_self=False`` a
    position written to reduces only the scattered values, not its own; positions nothing is
    scattered to keep ``x``'s value. An integer mean floors."""
    out = x.copy()
    where = along_axis(xp, index, dim)
    values = src[_leading(index.shape)]
    if not include_self:
        out[where] = _identity(xp, reduce, x.dtype)
    _ufunc(xp, reduce).at(out, where, values)
    if reduce != "mean":
        return out
    counts = xp.full(x.shape, 1 if include_self else 0, dtype=xp.int64)
    xp.add.at(counts, where, 1)
    safe = xp.maximum(counts, 1)
    mean = out // safe if x.dtype.kind in "iu" else out / safe
    return xp.where(counts > 0, mean, x).astype(x.dtype, copy=False)


def index_write(x, index, source, dim):
    """``x`` with slice i of ``source`` written at ``index[i]`` along ``dim``, in place (the
    op's declared effect); returns ``x`` itself."""
    x[(slice(None),) * dim + (index,)] = source
    return x


def kernels(xp, special) -> dict:
    """{op name: kernel} for namespace ``xp``."""
    return {"scatter_reduce": _indexed(partial(scatter_reduce, xp), "scatter_reduce"),
            "index_write": _indexed(index_write, "index_write")}
