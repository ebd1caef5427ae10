"""Max pooling's indices and gradient as Numba loops: one pass instead of a few per tap.

The generic kernels (fw_cpu/kernels/pooling.py) find the indices with a compare, an ``isnan``
and a ``where`` per kernel tap, and scatter the gradient with a ``bincount``: several
milliseconds per step for a CNN's first pool (64x16x28x28). These loops visit each window's
taps inside the input once and reproduce the generic kernels exactly:

- the index is the first maximum in row-major tap order, a later NaN replacing it; a window
  whose maximum is -inf (or that lies in the padding) points at its first tap inside the input;
- the gradient sums into a float64 plane in the order of the indices, then rounds to g's dtype,
  as ``bincount`` does; out-of-range indices go to the generic kernel (it says what is wrong).

``max_pool2d`` itself keeps the generic kernel: its NumPy passes (rows, then columns) are
vectorised and beat a scalar loop over windows. float32/float64 inputs of at least
``MIN_ELEMENTS`` take the loops; other dtypes and small inputs keep the generic kernels, where
a first compile would not pay.
"""

from __future__ import annotations

import math
from functools import lru_cache, partial

import numpy as np

from fw_core.records import KernelSpec

from .kernels import pooling
from .kernels.pooling import _pool_lengths

#: inputs (or gradients) with fewer elements use the generic kernel
MIN_ELEMENTS = 1 << 12
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_compiled = {}


@lru_cache(maxsize=256)
def _taps(size, out, k, s, p, d) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """Per output position along one dimension: the first tap at or after the input's start
    (even if past its end, as the generic kernel's fallback index) and the end of the taps
    inside the input; and the range of positions whose taps all lie inside."""
    start = np.arange(out, dtype=np.int64) * s - p
    first = -(-np.maximum(-start, 0) // d)
    end = np.maximum(np.minimum(k, -(-(size - start) // d)), first)
    inside = np.flatnonzero((first == 0) & (end == k))
    return first, end, (int(inside[0]), int(inside[-1]) + 1) if inside.size else (0, 0)


def _frame(x, kernel_size, stride, padding, dilation, ceil_mode):
    """The kernel's arguments after the input and the output (the output size first), or
    None where the generic kernel must decide. The taps' flat offsets are a tuple so that
    Numba compiles their loop for the kernel size, unrolled."""
    if x.dtype not in _FLOATS or x.ndim not in (3, 4) or x.size < MIN_ELEMENTS:
        return None
    out = _pool_lengths(x.shape[-2:], kernel_size, stride, padding, dilation, ceil_mode)
    if min(out) < 1:
        return None
    (row_first, row_end, _), (col_first, col_end, inside) = (
        _taps(size, o, k, s, p, d) for size, o, k, s, p, d in zip(
            x.shape[-2:], out, kernel_size, stride, padding, dilation))
    (kh, kw), (dh, dw), width = kernel_size, dilation, x.shape[-1]
    offsets = tuple(i * dh * width + j * dw for i in range(kh) for j in range(kw))
    return out, (row_first, row_end, col_first, col_end, inside, kernel_size[0],
                 tuple(stride), tuple(padding), tuple(dilation), offsets,
                 x.dtype.type(-np.inf))


def _planes(x):
    return np.ascontiguousarray(x).reshape((-1,) + x.shape[-2:])


def indices_take(x, *, kernel_size, stride, padding, dilation, ceil_mode):
    """The Numba loop that finds these max_pool2d indices, bound to the frame it planned, or
    None where the generic kernel must."""
    frame = _frame(x, kernel_size, stride, padding, dilation, ceil_mode)
    return None if frame is None else partial(_indices_in, frame)


def max_pool2d_indices(x, *, kernel_size, stride, padding, dilation, ceil_mode):
    """The index of each window's maximum, in one pass over the taps inside the input."""
    return _indices_in(_frame(x, kernel_size, stride, padding, dilation, ceil_mode), x)


def _indices_in(frame, x, **attrs):
    """Run the argmax loop over ``x`` with the output size and arguments ``frame`` planned."""
    out, args = frame
    planes = _planes(x)
    result = np.empty((planes.shape[0],) + out, dtype=np.int64)
    _kernel("argmax")(planes, result, *args)
    return result.reshape(x.shape[:-2] + out)


def backward_takes(g, indices, *, input_size) -> bool:
    """Whether the Numba loop scatters this max_pool2d gradient (else the generic kernel does)."""
    return (g.dtype in _FLOATS and g.ndim >= 2 and g.size >= MIN_ELEMENTS
            and indices.dtype == np.int64 and indices.shape == g.shape)


def max_pool2d_backward(g, indices, *, input_size):
    """``g`` summed into the input positions ``indices`` name; an index out of range goes to
    the generic kernel, which says what is wrong."""
    lead, area = g.shape[:-2], math.prod(input_size)
    length = math.prod(g.shape[-2:])
    result = np.empty((math.prod(lead), area), dtype=g.dtype)
    if not _kernel("scatter")(np.ascontiguousarray(g).reshape(-1, length),
                              np.ascontiguousarray(indices).reshape(-1, length), result):
        return pooling.max_pool_backward(np, g, indices, input_size=input_size)
    return result.reshape(lead + tuple(input_size))


#: the kernels this module adds to the cpu device, above the generic ones
KERNELS = [
    KernelSpec(op="max_pool2d_indices", device="cpu", fn=max_pool2d_indices, priority=1,
               guard=indices_take, takes=f"float32/float64 3-d or 4-d inputs of {MIN_ELEMENTS}+ "
               "elements, with a non-empty output"),
    KernelSpec(op="max_pool2d_backward", device="cpu", fn=max_pool2d_backward, priority=1,
               guard=backward_takes, takes=f"float32/float64 gradients of {MIN_ELEMENTS}+ "
               "elements, with int64 indices of their shape"),
]


def _kernel(name):
    return _compiled.get(name) or _compile()[name]


def _compile() -> dict:
    import numba

    jit = numba.njit(cache=True, error_model="numpy", nogil=True)

    @jit
    def scan(v, here, best, index):
        """One tap of the scan: a larger value, or a NaN, takes the index (without a branch:
        one on the data is mispredicted half the time); the maximum keeps a NaN."""
        take = np.int64((v > best) | (v != v))
        return np.maximum(v, best), index + take * (here - index)

    # Each output row: the windows with taps outside the input one tap at a time, checked;
    # then those inside (most of them) over the unrolled flat offsets.
    @jit
    def pool_argmax(x, out, row_first, row_end, col_first, col_end, inside, kh, stride,
                    padding, dilation, offsets, lowest):
        (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
        width = x.shape[2]
        flat = x.reshape(-1)
        for plane in range(x.shape[0]):
            start = plane * x.shape[1] * width
            for oh in range(out.shape[1]):
                top = oh * sh - ph
                i0, i1 = row_first[oh], row_end[oh]
                lo, hi = inside if i0 == 0 and i1 == kh else (0, 0)
                for ow in range(out.shape[2]):
                    if lo <= ow < hi:
                        continue
                    left = ow * sw - pw
                    best = lowest
                    index = (top + i0 * dh) * width + left + col_first[ow] * dw
                    for i in range(i0, i1):
                        for j in range(col_first[ow], col_end[ow]):
                            here = (top + i * dh) * width + left + j * dw
                            best, index = scan(flat[start + here], here, best, index)
                    out[plane, oh, ow] = index
                for ow in range(lo, hi):
                    corner = top * width + ow * sw - pw
                    best = lowest
                    index = corner
                    for t in range(len(offsets)):
                        here = corner + offsets[t]
                        best, index = scan(flat[start + here], here, best, index)
                    out[plane, oh, ow] = index

    @jit
    def pool_scatter(g, indices, out):
        area = out.shape[1]
        total = np.empty(area, dtype=np.float64)
        for plane in range(g.shape[0]):
            total[:] = 0.0
            for k in range(g.shape[1]):
                index = indices[plane, k]
                if index < 0 or index >= area:
                    return False
                total[index] += g[plane, k]
            for a in range(area):
                out[plane, a] = total[a]
        return True

    _compiled.update(argmax=pool_argmax, scatter=pool_scatter)
    return _compiled
