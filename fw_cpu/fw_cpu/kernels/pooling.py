"""Pooling kernels over the trailing n spatial axes (n = len(kernel_size) or of output_size).

Max and average pools loop over kernel taps one axis at a time (separably); the max pool's
indices scan every tap of the window in row-major order (the first maximum wins, a later NaN
replaces it, as in PyTorch). Indices are flat into each input plane (d * H * W + h * W + w),
so their gradient is one ``bincount`` scatter, and their values one gather. Adaptive average
pooling is a separable linear map; adaptive max pooling scans each bin's taps, clamped to the
bin (a repeated tap never changes the result). float16 averages are computed in float32.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache, partial

import numpy as np

from fw_core.dtypes import FLOAT_KINDS

from ._spatial import floating, nonempty, on_axis, pad_to, separable, spatial


def _pool_lengths(sizes, kernel, stride, padding, dilation, ceil_mode) -> tuple[int, ...]:
    out = []
    for n, k, s, p, d in zip(sizes, kernel, stride, padding, dilation):
        length = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (length - 1) * s >= n + p:
            length -= 1
        out.append(length)
    return tuple(out)


@lru_cache(maxsize=256)
def _avg_divisor(size, k, s, p, out, count_include_pad) -> np.ndarray:
    """PyTorch's per-window divisor along one dimension (the n-d one is an outer product)."""
    start = np.arange(out) * s - p
    end = np.minimum(start + k, size + p)
    if count_include_pad:
        return (end - start).astype(np.float64)
    return (np.minimum(end, size) - np.maximum(start, 0)).astype(np.float64)


@lru_cache(maxsize=256)
def _bins(size, out) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's adaptive bins along one axis: [floor(i size / out), ceil((i + 1) size / out))."""
    i = np.arange(out)
    return i * size // out, -(-(i + 1) * size // out)


@lru_cache(maxsize=256)
def _adaptive_matrix(size, out) -> np.ndarray:
    """(out, size): row i averages bin i."""
    matrix = np.zeros((out, size))
    for i, (start, end) in enumerate(zip(*_bins(size, out))):
        matrix[i, start:end] = 1.0 / (end - start)
    return matrix


def _outer(vectors) -> np.ndarray:
    result = np.ones(())
    for v in vectors:
        result = np.multiply.outer(result, v)
    return result


def _grid(xp, vectors):
    """The n 1-d int64 vectors, each shaped to broadcast along its own of n axes."""
    n = len(vectors)
    return [xp.asarray(v, dtype=xp.int64).reshape((1,) * i + (-1,) + (1,) * (n - 1 - i))
            for i, v in enumerate(vectors)]


def _adaptive_input(x, output_size) -> tuple[int, tuple]:
    """(n, the n spatial sizes) of an adaptive pool's input, checked non-empty, as is the
    requested output size."""
    n = len(output_size)
    spatial(x, n)
    sizes = x.shape[-n:]
    if 0 in sizes:
        raise ValueError("the input plane must be non-empty")
    nonempty(output_size)
    return n, sizes


def _lowest(xp, dtype):
    """The fill no value of ``dtype`` is below: -inf, or the integer type's minimum."""
    return -xp.inf if dtype.kind in FLOAT_KINDS else xp.iinfo(dtype).min


def _numeric(x):
    """Check x is of a real numeric dtype (the max pools take integers too)."""
    if x.dtype.kind not in FLOAT_KINDS + "iu":
        raise TypeError("numeric input expected")


def _frame(xp, x, kernel_size, stride, padding, dilation, ceil_mode, fill):
    """The padded input (to the extent the windows reach), the output size and the taps'
    strided slices along each dimension."""
    n = len(kernel_size)
    spatial(x, n)
    out = nonempty(_pool_lengths(x.shape[-n:], kernel_size, stride, padding, dilation,
                                 ceil_mode))
    reach = tuple((o - 1) * s + d * (k - 1) + 1 for o, s, k, d in zip(
        out, stride, kernel_size, dilation))
    padded = pad_to(xp, x, padding, reach, fill)
    taps = [[slice(t * d, t * d + (o - 1) * s + 1, s) for t in range(k)]
            for k, d, o, s in zip(kernel_size, dilation, out, stride)]
    return padded, out, taps


def _reduce_taps(padded, taps, combine):
    """Combine the taps of each axis in turn (a separable max or sum)."""
    n, result = len(taps), padded
    for axis, slices in enumerate(taps):
        acc = result[on_axis(n, axis, slices[0])].copy()
        for s in slices[1:]:
            combine(acc, result[on_axis(n, axis, s)], out=acc)
        result = acc
    return result


def _flat_positions(vectors, sizes):
    """Flat index into a plane of ``sizes`` of the broadcast per-axis positions."""
    index, stride = 0, 1
    for v, size in zip(reversed(vectors), reversed(sizes)):
        index = index + v * stride
        stride *= size
    return index


def _scan_max(xp, values_and_positions, shape, dtype):
    """(best value, its flat index) over a sequence of (values, positions): the first
    maximum, a later NaN replacing it."""
    best = index = None
    for value, here in values_and_positions:
        if best is None:
            best, index = value.copy(), xp.broadcast_to(here, shape)
            continue
        take = value > best
        if dtype.kind in FLOAT_KINDS:
            take |= xp.isnan(value)
        index = xp.where(take, here, index)
        xp.maximum(best, value, out=best)
    return best, index


def _planes_of(a, n):
    """``a`` as (planes, elements of a plane of its last n axes)."""
    return a.reshape(math.prod(a.shape[:-n]), math.prod(a.shape[-n:]))


# -- max pooling ----------------------------------------------------------------------------------
def max_pool(xp, x, *, kernel_size, stride, padding, dilation, ceil_mode):
    """The maximum of each window over x's last len(kernel_size) axes (any numeric dtype;
    padding never wins: it is the dtype's lowest value)."""
    _numeric(x)
    padded, _, taps = _frame(xp, x, kernel_size, stride, padding, dilation, ceil_mode,
                             _lowest(xp, x.dtype))
    return _reduce_taps(padded, taps, xp.maximum)


def _window_taps(padded, taps, starts, kernel_size, dilation, sizes):
    """(values, flat positions) of each tap of the windows, in row-major tap order."""
    for tap in itertools.product(*(range(k) for k in kernel_size)):
        value = padded[(Ellipsis,) + tuple(taps[a][t] for a, t in enumerate(tap))]
        yield value, _flat_positions([s + t * d for s, t, d in zip(starts, tap, dilation)],
                                     sizes)


def max_pool_indices(xp, x, *, kernel_size, stride, padding, dilation, ceil_mode):
    """int64 flat index (into each input plane) of each window's maximum: the first one in
    row-major tap order, a later NaN replacing it, as PyTorch."""
    _numeric(x)
    n, fill = len(kernel_size), _lowest(xp, x.dtype)
    padded, out, taps = _frame(xp, x, kernel_size, stride, padding, dilation, ceil_mode, fill)
    sizes = x.shape[-n:]
    starts = _grid(xp, [np.arange(o) * s - p for o, s, p in zip(out, stride, padding)])
    shape = padded[(Ellipsis,) + tuple(t[0] for t in taps)].shape
    best, index = _scan_max(xp, _window_taps(padded, taps, starts, kernel_size, dilation, sizes),
                            shape, x.dtype)
    # a window that is all `fill` points at its first element inside the input, as PyTorch
    first = _flat_positions([s + -(-xp.maximum(-s, 0) // d) * d
                             for s, d in zip(starts, dilation)], sizes)
    return xp.where(best == fill, first, index)


def max_pool_backward(xp, g, indices, *, input_size):
    """The max pools' gradient: g summed into the input planes at ``indices`` (one
    ``bincount``); the result has g's dtype."""
    n = len(input_size)
    planes, area = math.prod(g.shape[:-n]), math.prod(input_size)
    flat = _planes_of(indices, n) + (xp.arange(planes) * area)[:, None]
    total = xp.bincount(flat.reshape(-1), weights=g.reshape(-1), minlength=planes * area)
    return total.astype(g.dtype, copy=False).reshape(g.shape[:-n] + tuple(input_size))


def max_pool_select(xp, n, x, indices):
    """x's values at ``indices`` (flat into each plane of x's last n axes), shaped as
    ``indices``."""
    picked = xp.take_along_axis(_planes_of(x, n), _planes_of(indices, n), axis=1)
    return picked.reshape(indices.shape)


def max_unpool(xp, x, indices, *, output_size):
    """Zero planes of ``output_size`` with x's values put at ``indices`` (flat into each plane);
    an index outside the plane is an IndexError."""
    n = len(output_size)
    if indices.shape != x.shape:
        raise ValueError("indices must have the shape of the values")
    area = math.prod(output_size)
    flat, where = _planes_of(x, n), _planes_of(indices, n)
    if where.size and (int(where.min()) < 0 or int(where.max()) >= area):
        raise IndexError(f"an index is outside the output plane of {area} elements")
    result = xp.zeros((flat.shape[0], area), dtype=x.dtype)
    # an assignment, not a sum: duplicate indices keep one value (the last), as PyTorch
    result[xp.arange(flat.shape[0])[:, None], where] = flat
    return result.reshape(x.shape[:-n] + tuple(output_size))


# -- average pooling ------------------------------------------------------------------------------
def _divisor(xp, sizes, out, kernel_size, stride, padding, count_include_pad, divisor_override):
    """What each window's sum is divided by: ``divisor_override``, or PyTorch's per-window
    count (an outer product of the per-axis ones)."""
    if divisor_override is not None:
        return divisor_override
    return xp.asarray(_outer([_avg_divisor(n, k, s, p, o, count_include_pad)
                              for n, k, s, p, o in zip(sizes, kernel_size, stride, padding,
                                                       out)]))


def avg_pool(xp, x, *, kernel_size, stride, padding, ceil_mode, count_include_pad,
             divisor_override):
    """The average of each window over x's last len(kernel_size) axes (floating x; float16 is
    summed in float32)."""
    dtype = floating(xp, x)
    n = len(kernel_size)
    padded, out, taps = _frame(xp, x.astype(dtype, copy=False), kernel_size, stride, padding,
                               (1,) * n, ceil_mode, 0)
    total = _reduce_taps(padded, taps, xp.add)
    total /= _divisor(xp, x.shape[-n:], out, kernel_size, stride, padding, count_include_pad,
                      divisor_override)
    return total.astype(x.dtype, copy=False)


def avg_pool_backward(xp, g, *, input_size, kernel_size, stride, padding, ceil_mode,
                      count_include_pad, divisor_override):
    """The average pools' gradient: g divided as the forward divides, spread over each
    window's taps one axis at a time, then cropped to ``input_size``."""
    dtype = floating(xp, g)
    n = len(kernel_size)
    out = _pool_lengths(input_size, kernel_size, stride, padding, (1,) * n, ceil_mode)
    if g.shape[-n:] != out:
        raise ValueError("gradient does not fit the pooling")
    result = g.astype(dtype)
    result /= _divisor(xp, input_size, out, kernel_size, stride, padding, count_include_pad,
                       divisor_override)
    for axis, (k, s, p, o, size) in enumerate(zip(kernel_size, stride, padding, out,
                                                  input_size)):
        shape = list(result.shape)
        shape[result.ndim - n + axis] = max((o - 1) * s + k, p + size)
        spread = xp.zeros(tuple(shape), dtype=dtype)
        for j in range(k):
            spread[on_axis(n, axis, slice(j, j + (o - 1) * s + 1, s))] += result
        result = spread[on_axis(n, axis, slice(p, p + size))]
    return xp.ascontiguousarray(result).astype(g.dtype, copy=False)


# -- adaptive pooling -----------------------------------------------------------------------------
def adaptive_avg_pool(xp, x, *, output_size):
    """The average over each of PyTorch's adaptive bins: a block mean where the bins tile the
    input evenly, else a separable linear map."""
    floating(xp, x)
    n, sizes = _adaptive_input(x, output_size)
    if all(size % o == 0 for size, o in zip(sizes, output_size)):
        blocks = x.reshape(x.shape[:-n] + tuple(v for o, size in zip(output_size, sizes)
                                                for v in (o, size // o)))
        axes = tuple(range(x.ndim - n + 1, x.ndim + n, 2))
        return blocks.mean(axis=axes).astype(x.dtype, copy=False)
    return separable(xp, x, [_adaptive_matrix(size, o) for size, o in zip(sizes, output_size)])


def adaptive_avg_pool_backward(xp, g, *, input_size, output_size):
    """The adaptive average pools' gradient: the transposed separable map."""
    if g.shape[-len(output_size):] != tuple(output_size):
        raise ValueError("gradient does not fit the pooling")
    return separable(xp, g, [_adaptive_matrix(size, o).T for size, o in zip(input_size,
                                                                             output_size)])


def _bin_taps(xp, flat, bins, widths, sizes, output_size, shape):
    """(values, flat positions) of each tap of the adaptive bins, clamped to the bin."""
    for tap in itertools.product(*(range(w) for w in widths)):
        here = _flat_positions(_grid(xp, [np.minimum(start + t, end - 1) for (start, end), t
                                          in zip(bins, tap)]), sizes)
        here = xp.broadcast_to(here, tuple(output_size))
        yield flat[:, here.reshape(-1)].reshape(shape), here


def adaptive_max_pool_indices(xp, x, *, output_size):
    """int64 flat index (into each input plane) of each adaptive bin's maximum, chosen as in
    :func:`max_pool_indices`."""
    _numeric(x)
    n, sizes = _adaptive_input(x, output_size)
    bins = [_bins(size, o) for size, o in zip(sizes, output_size)]
    widths = [int((end - start).max()) for start, end in bins]
    flat = _planes_of(x, n)
    shape = (flat.shape[0],) + tuple(output_size)
    _, index = _scan_max(xp, _bin_taps(xp, flat, bins, widths, sizes, output_size, shape),
                         shape, x.dtype)
    return xp.ascontiguousarray(index).reshape(x.shape[:-n] + tuple(output_size))


def kernels(xp, special) -> dict:
    """{op name: kernel} of the 1-, 2- and 3-d poolings, bound to namespace ``xp``."""
    table = {}
    for n in (1, 2, 3):
        table.update({
            f"max_pool{n}d": partial(max_pool, xp),
            f"max_pool{n}d_indices": partial(max_pool_indices, xp),
            f"max_pool{n}d_backward": partial(max_pool_backward, xp),
            f"max_pool{n}d_select": partial(max_pool_select, xp, n),
            f"max_unpool{n}d": partial(max_unpool, xp),
            f"avg_pool{n}d": partial(avg_pool, xp),
            f"avg_pool{n}d_backward": partial(avg_pool_backward, xp),
            f"adaptive_avg_pool{n}d": partial(adaptive_avg_pool, xp),
            f"adaptive_avg_pool{n}d_backward": partial(adaptive_avg_pool_backward, xp),
            f"adaptive_max_pool{n}d_indices": partial(adaptive_max_pool_indices, xp),
        })
    return table
