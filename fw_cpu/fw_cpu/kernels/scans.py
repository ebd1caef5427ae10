"""Running-selection kernels (cummax/cummin indices), written once against ``xp``."""

from __future__ import annotations


def kernels(xp, special) -> dict:
    def index_scan(accumulate):
        def kernel(x, dim):
            if x.ndim == 0:
                return xp.zeros((), dtype=xp.int64)
            running = accumulate(x, axis=dim)
            shape = [1] * x.ndim
            shape[dim] = x.shape[dim]
            positions = xp.arange(x.shape[dim], dtype=xp.int64).reshape(shape)
            # an element reaches the running value (or is a NaN) exactly where it becomes or
            # ties it; the latest such position is the index, found by a running max
            reached = (x == running) | (xp.isnan(x) if x.dtype.kind in "fc" else False)
            return xp.maximum.accumulate(xp.where(reached, positions, 0), axis=dim)

        return kernel

    return {"cummax_index": index_scan(xp.maximum.accumulate),
            "cummin_index": index_scan(xp.minimum.accumulate)}
