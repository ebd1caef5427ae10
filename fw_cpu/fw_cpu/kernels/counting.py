"""Counting kernels (histc, bincount), written once against ``xp``."""

from __future__ import annotations


def kernels(xp, special) -> dict:
    def histc(x, bins, min, max):  # noqa: A002 - the op's attribute names
        values = x.reshape(-1)
        inside = values[(values >= min) & (values <= max)]  # NaN compares False: dropped
        # the bin PyTorch computes, in float64; max itself falls in the last bin
        position = ((inside.astype(xp.float64) - min) * bins / (max - min)).astype(xp.int64)
        counts = xp.bincount(xp.minimum(position, bins - 1), minlength=bins)
        return counts.astype(x.dtype)

    def bincount(x, weights=None, *, length):
        if weights is None:
            return xp.bincount(x, minlength=length).astype(xp.int64)
        dtype = weights.dtype if weights.dtype.kind == "f" else xp.float64
        return xp.bincount(x, weights=weights, minlength=length).astype(dtype)

    return {"histc": histc, "bincount": bincount}
