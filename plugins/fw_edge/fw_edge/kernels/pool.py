"""Pooling over the trailing 1 or 2 axes of (N, C, ...) or (C, ...) inputs: ``max_pool*d``
and ``avg_pool*d`` fold the padded input's windows into the output one kernel tap at a time
(a ufunc per tap over a strided view: NumPy's reduction over the windows' small trailing axes
is 20 to 30 times slower); ``adaptive_avg_pool*d`` is a product with one small averaging
matrix per axis."""

from __future__ import annotations

import numpy as np

from ..kernel_api import Kernel, Writes
from .windows import Windows, out_lengths


def _window(spec, n):
    a = spec.attrs
    kernel = tuple(a["kernel_size"])
    stride = tuple(a.get("stride") or kernel)
    padding = tuple((p, p) for p in a.get("padding", (0,) * n))
    dilation = tuple(a.get("dilation", (1,) * n))
    shape = spec.inputs[0].shape
    out = out_lengths(shape[-n:], kernel, stride, padding, dilation, a.get("ceil_mode", False))
    return kernel, stride, padding, dilation, out


def _max_pool(n):
    def max_pool(spec):
        """The largest element of each (dilated) window; padding never wins."""
        x = spec.inputs[0]
        kernel, stride, padding, dilation, out = _window(spec, n)
        lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        windows = Windows(spec, x.shape, x.dtype, kernel, stride, padding, dilation, out,
                          lowest)
        first, rest = windows.taps[0], windows.taps[1:]

        def run(o, x):
            windows.fill(x)
            np.copyto(o, first)
            for tap in rest:
                np.maximum(o, tap, out=o)
        return Writes(run)
    return max_pool


def _avg_divisor(size, k, s, p, out, count_include_pad) -> np.ndarray:
    """PyTorch's divisor per window along one axis: padding counts unless
    ``count_include_pad`` is off, the overhang of ``ceil_mode`` never does."""
    start = np.arange(out) * s - p
    end = np.minimum(start + k, size + p)
    if count_include_pad:
        return (end - start).astype(np.float64)
    return (np.minimum(end, size) - np.maximum(start, 0)).astype(np.float64)


def _avg_pool(n):
    def avg_pool(spec):
        """The mean of each window, divided as PyTorch divides it."""
        x, a = spec.inputs[0], spec.attrs
        kernel, stride, padding, _, out = _window(spec, n)
        dtype = np.dtype(np.float32) if x.dtype == np.float16 else x.dtype
        windows = Windows(spec, x.shape, dtype, kernel, stride, padding, (1,) * n, out, 0)
        if a.get("divisor_override"):
            divisor = np.full(out, float(a["divisor_override"]))
        else:
            divisor = np.ones(())
            for size, k, s, (p, _), o in zip(x.shape[-n:], kernel, stride, padding, out):
                divisor = np.multiply.outer(divisor, _avg_divisor(
                    size, k, s, p, o, a.get("count_include_pad", True)))
        inverse = (1.0 / divisor).astype(dtype)
        sums = spec.scratch(spec.out.shape, dtype)
        first, rest = windows.taps[0], windows.taps[1:]

        def run(o, x):
            windows.fill(x)
            np.copyto(sums, first)
            for tap in rest:
                np.add(sums, tap, out=sums)
            np.multiply(sums, inverse, out=o, casting="unsafe")
        return Writes(run)
    return avg_pool


def _bins_matrix(size, out, dtype) -> np.ndarray:
    """(out, size): row i averages PyTorch's bin [floor(i size/out), ceil((i+1) size/out))."""
    matrix = np.zeros((out, size))
    for i in range(out):
        start, end = i * size // out, -(-(i + 1) * size // out)
        matrix[i, start:end] = 1.0 / (end - start)
    return matrix.astype(dtype)


def _adaptive_avg_pool(n):
    def adaptive_avg_pool(spec):
        """Each output element the mean of its adaptive bin, one matrix product per axis."""
        x = spec.inputs[0]
        dtype = np.dtype(np.float32) if x.dtype == np.float16 else x.dtype
        sizes, outs = x.shape[-n:], spec.out.shape[-n:]
        across = _bins_matrix(sizes[-1], outs[-1], dtype).T  # (W, Wo)
        if n == 1:
            return Writes(lambda o, x: np.matmul(x, across, out=o, dtype=dtype,
                                                 casting="unsafe"))
        down = _bins_matrix(sizes[0], outs[0], dtype)  # (Ho, H)
        half = spec.scratch(x.shape[:-1] + (outs[-1],), dtype)

        def run(o, x):
            np.matmul(x, across, out=half, dtype=dtype)
            np.matmul(down, half, out=o, dtype=dtype, casting="unsafe")
        return Writes(run)
    return adaptive_avg_pool


KERNELS = [kernel for n in (1, 2) for kernel in (
    Kernel(f"max_pool{n}d", _max_pool(n)), Kernel(f"avg_pool{n}d", _avg_pool(n)),
    Kernel(f"adaptive_avg_pool{n}d", _adaptive_avg_pool(n)))]
