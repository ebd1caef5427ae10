"""Resampling kernels (``interpolate``) over the trailing n spatial axes (n = len(size)).

Every mode is separable: one small (out, in) matrix per axis, built on the host with
PyTorch's source-index formulas (in float32, or in float64 for float64 linear/cubic weights).
Nearest modes gather (any dtype); their adjoints, and every linear and cubic map, are matrix
products. float16 is computed in float32; uint8 bilinear in PyTorch's int16 fixed point.
"""

from __future__ import annotations

from functools import lru_cache, partial

import numpy as np

from ._spatial import nonempty, separable, spatial

_CUBIC_A = -0.75  # PyTorch's (and OpenCV's) cubic convolution coefficient


@lru_cache(maxsize=256)
def _nearest_index(size, out, scale, exact) -> np.ndarray:
    """PyTorch's nearest source index, in float32: floor(dst * scale) ('nearest', exact for 1x
    and 2x) or floor((dst + 0.5) * scale) ('nearest-exact'), clamped to the input."""
    step = np.float32(1.0 / scale) if scale else np.float32(size) / np.float32(out)
    if exact:
        source = ((np.arange(out) + 0.5) * np.float64(step)).astype(np.float32)
    elif out == size:
        return np.arange(out)
    elif out == 2 * size:
        return np.arange(out) >> 1
    else:
        source = np.arange(out, dtype=np.float32) * step
    return np.minimum(np.floor(source).astype(np.int64), size - 1)


def _source(size, out, align_corners, scale, real, cubic):
    """PyTorch's real-valued source coordinate of each output position (area_pixel_compute_*):
    linear modes clamp it at 0, cubic does not."""
    dst = np.arange(out, dtype=real)
    if align_corners:
        return dst * (real(size - 1) / real(out - 1) if out > 1 else real(0))
    step = real(1.0 / scale) if scale else real(size) / real(out)
    src = step * (dst + real(0.5)) - real(0.5)
    return src if cubic else np.maximum(src, real(0))


@lru_cache(maxsize=256)
def _linear_matrix(size, out, align_corners, scale, dtype) -> np.ndarray:
    """(out, size): each row weights the two source positions around its sample point."""
    real = np.dtype(dtype).type
    src = _source(size, out, align_corners, scale, real, cubic=False)
    first = np.minimum(np.floor(src).astype(np.int64), size - 1)
    weight = np.clip(src - first, 0, 1).astype(np.float64)
    second = first + (first < size - 1)
    matrix = np.zeros((out, size))
    np.add.at(matrix, (np.arange(out), first), 1 - weight)
    np.add.at(matrix, (np.arange(out), second), weight)
    return matrix


def _cubic_weights(t, a=_CUBIC_A):
    near = lambda x: ((a + 2) * x - (a + 3)) * x * x + 1  # noqa: E731 - |x| <= 1
    far = lambda x: ((a * x - 5 * a) * x + 8 * a) * x - 4 * a  # noqa: E731 - 1 < |x| < 2
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


@lru_cache(maxsize=256)
def _cubic_matrix(size, out, align_corners, scale, dtype) -> np.ndarray:
    """(out, size): each row weights the four source positions around its sample point with
    the cubic convolution kernel; positions outside the input take the nearest edge."""
    real = np.dtype(dtype).type
    src = _source(size, out, align_corners, scale, real, cubic=True)
    first = np.floor(src)
    weights = _cubic_weights(src - first)
    matrix = np.zeros((out, size))
    for k, w in enumerate(weights):
        np.add.at(matrix, (np.arange(out), np.clip(first.astype(np.int64) - 1 + k, 0, size - 1)),
                  w.astype(np.float64))
    return matrix


@lru_cache(maxsize=256)
def _linear_int16(size, out, align_corners, scale) -> tuple[np.ndarray, int]:
    """PyTorch's uint8 bilinear weights (after Pillow-SIMD): each row's triangle-filter
    weights normalised, then scaled by 2^precision (the most that keeps them in int16) and
    rounded; (out, size) int64 weights and the precision."""
    if align_corners:
        step = (size - 1) / (out - 1) if out > 1 else 0.0
    else:
        step = 1.0 / scale if scale else size / out
    delta = 0.5 if align_corners else 0.0
    matrix = np.zeros((out, size))
    for i in range(out):
        center = step * (i + 0.5 - delta)
        first = max(int(center - 1 + 0.5 + delta), 0)
        last = min(int(center + 1 + 0.5 + delta), size)
        taps = np.arange(first, last)
        weights = np.maximum(0.0, 1 - np.abs(taps - center + 0.5 - delta))
        matrix[i, first:last] = weights / weights.sum() if weights.sum() else 0.0
    precision = next((p for p in range(22)
                      if int(0.5 + matrix.max() * (1 << (p + 1))) >= 1 << 15), 22)
    scaled = matrix * (1 << precision)
    return np.trunc(np.where(scaled < 0, scaled - 0.5, scaled + 0.5)).astype(np.int64), precision


def _one_hot(index, size) -> np.ndarray:
    matrix = np.zeros((len(index), size))
    matrix[np.arange(len(index)), index] = 1.0
    return matrix


def _precision(dtype) -> str:
    return "float64" if np.dtype(dtype) == np.float64 else "float32"


_MATRICES = {"linear": _linear_matrix, "cubic": _cubic_matrix}


def _checked(x, size):
    """``size``, checked non-empty, after checking x is (N, C, *spatial) with a non-empty
    spatial size."""
    spatial(x, len(size), ranks=(len(size) + 2,))
    if 0 in x.shape[-len(size):]:
        raise ValueError("the input's spatial size is empty")
    return nonempty(size)


# -- nearest --------------------------------------------------------------------------------------
def _nearest_indices(input_size, size, scales, exact):
    """The per-axis source index vectors of a nearest resampling (host arrays)."""
    return [_nearest_index(n, o, s, exact) for n, o, s in zip(input_size, size, scales)]


def upsample_nearest(xp, exact, x, *, size, scales):
    """x resampled to ``size`` by gathering PyTorch's nearest source positions ('nearest', or
    'nearest-exact' if ``exact``), one axis at a time; any dtype."""
    n = len(_checked(x, size))
    result = x
    for axis, index in enumerate(_nearest_indices(x.shape[-n:], size, scales, exact)):
        result = xp.take(result, xp.asarray(index), axis=x.ndim - n + axis)
    return result


def upsample_nearest_backward(xp, exact, g, *, input_size, size, scales):
    """:func:`upsample_nearest`'s gradient: g summed back onto the sources it was gathered
    from (transposed one-hot matrices)."""
    if g.shape[-len(size):] != tuple(size):
        raise ValueError("gradient does not fit the resampling")
    return separable(xp, g, [_one_hot(i, n).T for i, n in zip(
        _nearest_indices(input_size, size, scales, exact), input_size)])


# -- linear and cubic -----------------------------------------------------------------------------
def _fixed_point(xp, x, size, align_corners, scales):
    """uint8 bilinear as PyTorch computes it: in int16 fixed point, the last axis first,
    each pass rounded and clipped to [0, 255]; an axis whose size stays is not resampled."""
    n = len(size)
    result = x.astype(xp.int64)
    for axis in reversed(range(n)):
        length = x.shape[x.ndim - n + axis]
        if size[axis] == length:
            continue
        weights, precision = _linear_int16(length, size[axis], align_corners, scales[axis])
        moved = xp.moveaxis(result, result.ndim - n + axis, -1)
        moved = (xp.matmul(moved, xp.asarray(weights.T)) + (1 << (precision - 1))) >> precision
        result = xp.moveaxis(xp.clip(moved, 0, 255), -1, result.ndim - n + axis)
    return xp.ascontiguousarray(result).astype(xp.uint8)


def _matrices(kind, input_size, size, align_corners, scales, dtype):
    """The per-axis (out, in) weight matrices of a ``kind`` resampling of ``dtype`` values."""
    return [_MATRICES[kind](n, o, align_corners, s, _precision(dtype))
            for n, o, s in zip(input_size, size, scales)]


def upsample_interpolated(xp, kind, x, *, size, align_corners, scales):
    """x resampled to ``size`` by ``kind`` ('linear' or 'cubic') interpolation along each
    axis: a separable map of floating x, or uint8 bilinear in PyTorch's fixed point."""
    n = len(_checked(x, size))
    if x.dtype == xp.uint8 and kind == "linear":
        return _fixed_point(xp, x, size, align_corners, scales)
    return separable(xp, x, _matrices(kind, x.shape[-n:], size, align_corners, scales, x.dtype))


def upsample_interpolated_backward(xp, kind, g, *, input_size, size, align_corners, scales):
    """:func:`upsample_interpolated`'s gradient: the transposed separable map."""
    if g.shape[-len(size):] != tuple(size):
        raise ValueError("gradient does not fit the resampling")
    return separable(xp, g, [m.T for m in _matrices(kind, input_size, size, align_corners,
                                                    scales, g.dtype)])


def kernels(xp, special) -> dict:
    """{op name: kernel} of the resampling modes and their gradients, bound to namespace
    ``xp``."""
    table = {}
    for n in (1, 2, 3):
        for name, exact in ((f"upsample_nearest{n}d", False),
                            (f"upsample_nearest_exact{n}d", True)):
            table[name] = partial(upsample_nearest, xp, exact)
            table[name + "_backward"] = partial(upsample_nearest_backward, xp, exact)
    for name, kind in (("upsample_linear1d", "linear"), ("upsample_bilinear2d", "linear"),
                       ("upsample_trilinear3d", "linear"), ("upsample_bicubic2d", "cubic")):
        table[name] = partial(upsample_interpolated, xp, kind)
        table[name + "_backward"] = partial(upsample_interpolated_backward, xp, kind)
    return table
