"""``conv1d`` and ``conv2d`` (cross-correlation, as PyTorch) with (low, high) padding pairs,
stride, dilation and groups: the input's windows are copied once into im2col columns (a working
array), then one batched matrix product per call computes every group into the output."""

from __future__ import annotations

import math

import numpy as np

from ..kernel_api import Kernel, Writes
from .windows import Windows, out_lengths


def _pairs(padding, n):
    return tuple((p, p) if isinstance(p, int) else tuple(p) for p in padding) \
        if isinstance(padding, (tuple, list)) else ((padding, padding),) * n


def _conv(n):
    def conv(spec):
        """The convolution of one node, planned for its shapes."""
        a = spec.attrs
        x, w = spec.inputs[:2]
        unbatched = len(x.shape) == n + 1
        shape = ((1,) if unbatched else ()) + tuple(x.shape)
        batch, channels = shape[:2]
        groups = a.get("groups", 1)
        out_channels, per_group = w.shape[:2]
        kernel = w.shape[2:]
        stride, dilation = tuple(a["stride"]), tuple(a["dilation"])
        padding = _pairs(a["padding"], n)
        out = out_lengths(shape[2:], kernel, stride, padding, dilation)
        dtype = np.dtype(np.float32) if x.dtype == np.float16 else x.dtype
        windows = Windows(spec, shape, dtype, kernel, stride, padding, dilation, out, 0)
        taps, length = math.prod(kernel), math.prod(out)
        cols = spec.scratch((batch, groups, per_group * taps, length), dtype)
        # (N, C, *out, *kernel) -> (N, G, Cg, *kernel, *out), matching cols' layout
        order = (0, 1, 2) + tuple(range(3 + n, 3 + 2 * n)) + tuple(range(3, 3 + n))
        src = windows.view.reshape((batch, groups, per_group) + windows.view.shape[2:])
        src = src.transpose(order)
        dst = cols.reshape(src.shape)
        grouped = (batch, groups, out_channels // groups, length)
        weights = (groups, out_channels // groups, per_group * taps)
        bias_view = (out_channels,) + (1,) * n
        wide = dtype != spec.out.dtype
        result = spec.scratch(grouped, dtype) if wide else None
        full = (batch, out_channels) + out

        def run(o, x, w, b=None):
            windows.fill(x.reshape(shape))
            np.copyto(dst, src)
            target = result if wide else o.reshape(grouped)
            np.matmul(w.reshape(weights), cols, out=target, dtype=dtype)
            if b is not None:
                flat = target.reshape(full)
                np.add(flat, b.reshape(bias_view), out=flat, casting="unsafe")
            if wide:
                np.copyto(o.reshape(grouped), result, casting="unsafe")
        return Writes(run)
    return conv


KERNELS = [Kernel("conv1d", _conv(1)), Kernel("conv2d", _conv(2))]
