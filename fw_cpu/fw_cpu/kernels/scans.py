"""Scan kernels (cummax/cummin indices, cumprod, logcumsumexp), written once against ``xp``."""

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

    def accumulator(dtype):
        """The running value's dtype, wider than the input's as in PyTorch's CPU scans (its
        acc_type): float16 runs in float32, float32 in float64; each output is rounded once."""
        return {"float16": xp.float32, "float32": xp.float64}.get(dtype.name)

    def cumprod(x, dim):
        if x.dtype.kind not in "f":
            x = x.astype(xp.int64)
        if x.ndim == 0:
            return x.copy()
        return xp.cumprod(x, axis=dim, dtype=accumulator(x.dtype)).astype(x.dtype, copy=False)

    def logcumsumexp(x, dim, reverse):
        if x.ndim == 0:
            return x.copy()
        wide = x.astype(accumulator(x.dtype) or x.dtype, copy=False)
        if reverse:
            wide = xp.flip(wide, dim)
        # logaddexp pairs the running value with each element without forming exp(x): no
        # overflow for large x and no underflow for elements far below the running value
        out = xp.logaddexp.accumulate(wide, axis=dim)
        if reverse:
            out = xp.flip(out, dim)
        return xp.ascontiguousarray(out, dtype=x.dtype)

    return {"cummax_index": index_scan(xp.maximum.accumulate),
            "cummin_index": index_scan(xp.minimum.accumulate), "cumprod": cumprod,
            "logcumsumexp": logcumsumexp}
