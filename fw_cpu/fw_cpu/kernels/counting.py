"""Counting kernels (histc, bincount), written once against ``xp``.

Module-level functions taking ``xp`` first; :func:`kernels` binds them to a namespace.
"""

from __future__ import annotations

from functools import partial

from fw_core.dtypes import FLOAT_KINDS


def histc(xp, x, bins, min, max):  # noqa: A002 - the op's attribute names
    """A histogram of ``x`` in ``bins`` equal bins over [min, max], in ``x``'s dtype; values
    outside the range (and NaNs) are not counted."""
    values = x.reshape(-1)
    inside = values[(values >= min) & (values <= max)]  # NaN compares False: dropped
    # the bin PyTorch computes, in float64; max itself falls in the last bin
    position = ((inside.astype(xp.float64) - min) * bins / (max - min)).astype(xp.int64)
    counts = xp.bincount(xp.minimum(position, bins - 1), minlength=bins)
    return counts.astype(x.dtype)


def bincount(xp, x, weights=None, *, length):
    """How often each value in ``[0, length)`` occurs in ``x`` (int64), or the sum of the
    ``weights`` at its occurrences (in the weights' float dtype, float64 for other weights)."""
    if weights is None:
        return xp.bincount(x, minlength=length).astype(xp.int64)
    dtype = weights.dtype if weights.dtype.kind in FLOAT_KINDS else xp.float64
    return xp.bincount(x, weights=weights, minlength=length).astype(dtype)


def kernels(xp, special) -> dict:
    """{op name: kernel} for namespace ``xp``."""
    return {"histc": partial(histc, xp), "bincount": partial(bincount, xp)}
