"""Convolution, pooling and resampling kernels over the trailing spatial dimensions.

Convolutions are im2col + one (broadcast, per-group) matrix product: the input's windows are a
strided view (``sliding_window_view``), copied once into columns; their transposes scatter
columns back with one strided add per kernel tap. Pools loop over kernel taps (separably, rows
then columns); resamplings and adaptive pooling are separable linear maps, applied as two
small matrix products. No loop runs over the batch, the channels or the pixels. float16 is
computed in float32 and rounded back.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache, partial

import numpy as np


# -- sizes and host-side tables (plain NumPy, cached) ---------------------------------------------
def _conv_lengths(sizes, kernel, stride, padding, dilation) -> tuple[int, ...]:
    return tuple((n + lo + hi - d * (k - 1) - 1) // s + 1 for n, k, s, (lo, hi), d in zip(
        sizes, kernel, stride, padding, dilation))


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
    """PyTorch's per-window divisor along one dimension (the 2-d one is an outer product)."""
    start = np.arange(out) * s - p
    end = np.minimum(start + k, size + p)
    if count_include_pad:
        return (end - start).astype(np.float64)
    return (np.minimum(end, size) - np.maximum(start, 0)).astype(np.float64)


@lru_cache(maxsize=256)
def _adaptive_matrix(size, out) -> np.ndarray:
    """(out, size): row i averages [floor(i size / out), ceil((i + 1) size / out))."""
    matrix = np.zeros((out, size))
    for i in range(out):
        start, end = i * size // out, -(-(i + 1) * size // out)
        matrix[i, start:end] = 1.0 / (end - start)
    return matrix


@lru_cache(maxsize=256)
def _nearest_index(size, out, scale) -> np.ndarray:
    """PyTorch's nearest source index: exact for 1x and 2x, else in float32 arithmetic."""
    if out == size:
        return np.arange(out)
    if out == 2 * size:
        return np.arange(out) >> 1
    step = np.float32(1.0 / scale) if scale else np.float32(size) / np.float32(out)
    return np.minimum(np.floor(np.arange(out, dtype=np.float32) * step).astype(np.int64),
                      size - 1)


@lru_cache(maxsize=256)
def _bilinear_matrix(size, out, align_corners, scale, dtype) -> np.ndarray:
    """(out, size): each row weights the two source pixels around its sample point, with
    PyTorch's source-index formula computed in the input's precision."""
    real = np.dtype(dtype).type
    dst = np.arange(out, dtype=dtype)
    if align_corners:
        step = real(size - 1) / real(out - 1) if out > 1 else real(0)
        src = dst * step
    else:
        step = real(1.0 / scale) if scale else real(size) / real(out)
        src = np.maximum(step * (dst + real(0.5)) - real(0.5), real(0))
    first = np.minimum(np.floor(src).astype(np.int64), size - 1)
    weight = np.clip(src - first, 0, 1).astype(np.float64)
    second = first + (first < size - 1)
    matrix = np.zeros((out, size))
    np.add.at(matrix, (np.arange(out), first), 1 - weight)
    np.add.at(matrix, (np.arange(out), second), weight)
    return matrix


def _one_hot(index, size) -> np.ndarray:
    matrix = np.zeros((len(index), size))
    matrix[np.arange(len(index)), index] = 1.0
    return matrix


def kernels(xp, special) -> dict:
    half, single = xp.dtype(xp.float16), xp.dtype(xp.float32)
    sliding = xp.lib.stride_tricks.sliding_window_view

    def floating(*arrays):
        """Check the operands share one floating dtype; return the dtype to compute in."""
        dtype = arrays[0].dtype
        if dtype.kind != "f" or any(a is not None and a.dtype != dtype for a in arrays):
            raise TypeError("floating-point operands of one dtype expected")
        return single if dtype == half else dtype

    def device(matrix, dtype):
        return xp.asarray(matrix.astype(dtype, copy=False))

    def pad_to(x, before, lengths, fill=0):
        """x with its last len(before) axes padded by ``before`` and padded (or cut) at the end
        to ``lengths``."""
        n = len(before)
        sizes = x.shape[x.ndim - n:]
        if not any(before) and tuple(lengths) == sizes:
            return x
        keep = tuple(max(0, min(size, length - b)) for size, b, length in zip(
            sizes, before, lengths))
        lead = x.shape[:x.ndim - n]
        buffer = (xp.zeros if fill == 0 else xp.empty)(lead + tuple(lengths), dtype=x.dtype)
        if fill != 0:
            buffer.fill(fill)
        inside = tuple(slice(b, b + k) for b, k in zip(before, keep))
        buffer[(Ellipsis,) + inside] = x[(Ellipsis,) + tuple(slice(0, k) for k in keep)]
        return buffer

    def windows(x, kernel, stride, padding, dilation, out):
        """A strided view (..., *out, *kernel) of the windows of x's last len(kernel) axes."""
        n = len(kernel)
        spans = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
        padded = pad_to(x, tuple(lo for lo, _ in padding),
                        tuple((o - 1) * s + span for o, s, span in zip(out, stride, spans)))
        view = sliding(padded, spans, axis=tuple(range(x.ndim - n, x.ndim)))
        return view[(Ellipsis,) + tuple(slice(None, None, s) for s in stride)
                    + tuple(slice(None, None, d) for d in dilation)]

    def columns(x, kernel, stride, padding, dilation, groups, out, group_major):
        """im2col of (N, C, *spatial): (N, G, Cg * K, L), or (G, Cg * K, N * L) if group_major."""
        n = len(kernel)
        batch, channels = x.shape[:2]
        taps, length = math.prod(kernel), math.prod(out)
        per_group = channels // groups
        pointwise = all(k == 1 for k in kernel) and all(s == 1 for s in stride) and \
            not any(lo or hi for lo, hi in padding)
        if pointwise and not group_major:
            return x.reshape(batch, groups, per_group, length)
        view = windows(x, kernel, stride, padding, dilation, out)
        view = view.reshape((batch, groups, per_group) + view.shape[2:])
        space, kern = tuple(range(3, 3 + n)), tuple(range(3 + n, 3 + 2 * n))
        if group_major:
            order, shape = (1, 2) + kern + (0,) + space, (groups, per_group * taps,
                                                           batch * length)
        else:
            order, shape = (0, 1, 2) + kern + space, (batch, groups, per_group * taps, length)
        return xp.ascontiguousarray(view.transpose(order)).reshape(shape)

    def unbatch(n, *arrays):
        """Add a batch axis to unbatched (C, *spatial) arrays; say whether one was added."""
        if any(a.ndim != arrays[0].ndim for a in arrays) or arrays[0].ndim not in (n + 1, n + 2):
            raise ValueError(f"inputs must be ({n + 2})-d, or unbatched ({n + 1})-d")
        if arrays[0].ndim == n + 1:
            return True, tuple(a[None] for a in arrays)
        return False, arrays

    def nonempty(out):
        if min(out, default=1) < 1:
            raise ValueError(f"the output would be empty: {out}")
        return out

    # -- convolution ------------------------------------------------------------------------------
    def check_weight(n, weight, bias, out_channels):
        if weight.ndim != n + 2 or (bias is not None and bias.shape != (out_channels,)):
            raise ValueError("the weight or the bias does not fit")

    def conv(n, x, weight, bias=None, *, stride, padding, dilation, groups):
        dtype = floating(x, weight, bias)
        single_item, (x,) = unbatch(n, x)
        out_channels, per_group = weight.shape[:2]
        check_weight(n, weight, bias, out_channels)
        if x.shape[1] != per_group * groups or out_channels % groups:
            raise ValueError("channels do not match the weight and groups")
        kernel = weight.shape[2:]
        out = nonempty(_conv_lengths(x.shape[2:], kernel, stride, padding, dilation))
        cols = columns(x.astype(dtype, copy=False), kernel, stride, padding, dilation, groups,
                       out, group_major=False)
        w = weight.astype(dtype, copy=False).reshape(groups, out_channels // groups,
                                                     per_group * math.prod(kernel))
        result = xp.matmul(w, cols).reshape((x.shape[0], out_channels) + out)
        if bias is not None:
            result += bias.astype(dtype, copy=False).reshape((out_channels,) + (1,) * n)
        result = result.astype(x.dtype, copy=False)
        return result[0] if single_item else result

    def conv_weight_grad(n, x, grad, *, kernel_size, stride, padding, dilation, groups):
        dtype = floating(x, grad)
        _, (x, grad) = unbatch(n, x, grad)
        batch, channels = x.shape[:2]
        out_channels = grad.shape[1]
        out = nonempty(_conv_lengths(x.shape[2:], kernel_size, stride, padding, dilation))
        if grad.shape != (batch, out_channels) + out or channels % groups or \
                out_channels % groups:
            raise ValueError("grad does not fit the convolution")
        cols = columns(x.astype(dtype, copy=False), kernel_size, stride, padding, dilation,
                       groups, out, group_major=True)
        per_group, length = out_channels // groups, math.prod(out)
        g = grad.astype(dtype, copy=False).reshape(batch, groups, per_group, length)
        g = xp.ascontiguousarray(g.transpose(1, 2, 0, 3)).reshape(groups, per_group,
                                                                  batch * length)
        result = xp.matmul(g, cols.transpose(0, 2, 1))
        shape = (out_channels, channels // groups) + tuple(kernel_size)
        return result.reshape(shape).astype(x.dtype, copy=False)

    def conv_transpose(n, x, weight, bias=None, *, stride, padding, output_padding, dilation,
                       groups):
        dtype = floating(x, weight, bias)
        single_item, (x,) = unbatch(n, x)
        batch, channels = x.shape[:2]
        per_group, kernel = weight.shape[1], weight.shape[2:]
        check_weight(n, weight, bias, per_group * groups)
        if channels != weight.shape[0] or channels % groups:
            raise ValueError("channels do not match the weight and groups")
        sizes = x.shape[2:]
        out = nonempty(tuple(
            (i - 1) * s - lo - hi + d * (k - 1) + 1 + extra for i, k, s, (lo, hi), extra, d
            in zip(sizes, kernel, stride, padding, output_padding, dilation)))
        full = tuple(max((i - 1) * s + d * (k - 1) + 1, lo + o) for i, k, s, (lo, _), d, o
                     in zip(sizes, kernel, stride, padding, dilation, out))
        # cols[g, (c_out, k), (l, n)] = sum over c_in of weight[g, c_in, (c_out, k)] *
        # x[n, g, c_in, l], the batch innermost so that each tap's strided add runs over long rows
        per_in = channels // groups
        w = weight.astype(dtype, copy=False).reshape(groups, per_in, per_group * math.prod(kernel))
        inputs = x.astype(dtype, copy=False).reshape(batch, groups, per_in, math.prod(sizes))
        inputs = xp.ascontiguousarray(inputs.transpose(1, 2, 3, 0)).reshape(
            groups, per_in, math.prod(sizes) * batch)
        cols = xp.matmul(w.transpose(0, 2, 1), inputs)
        cols = cols.reshape((groups, per_group) + tuple(kernel) + sizes + (batch,))
        buffer = xp.zeros((groups, per_group) + full + (batch,), dtype=dtype)
        lead = (slice(None),) * 2
        for tap in itertools.product(*(range(k) for k in kernel)):
            target = tuple(slice(t * d, t * d + (i - 1) * s + 1, s)
                           for t, d, i, s in zip(tap, dilation, sizes, stride))
            buffer[lead + target] += cols[lead + tap]
        crop = buffer[lead + tuple(slice(lo, lo + o) for (lo, _), o in zip(padding, out))]
        result = xp.ascontiguousarray(crop.transpose((n + 2,) + tuple(range(n + 2)))).reshape(
            (batch, groups * per_group) + out)
        if bias is not None:
            result += bias.astype(dtype, copy=False).reshape((groups * per_group,) + (1,) * n)
        result = result.astype(x.dtype, copy=False)
        return result[0] if single_item else result

    # -- pooling ----------------------------------------------------------------------------------
    def pool_frame(x, kernel_size, stride, padding, dilation, ceil_mode, fill):
        """The padded input (to the extent the windows reach), the output size and the taps'
        strided slices along one dimension each."""
        if x.ndim not in (3, 4):
            raise ValueError("pooling needs a 3-d or 4-d input")
        out = nonempty(_pool_lengths(x.shape[-2:], kernel_size, stride, padding, dilation,
                                     ceil_mode))
        reach = tuple((o - 1) * s + d * (k - 1) + 1 for o, s, k, d in zip(
            out, stride, kernel_size, dilation))
        padded = pad_to(x, padding, reach, fill)
        taps = [[slice(t * d, t * d + (o - 1) * s + 1, s) for t in range(k)]
                for k, d, o, s in zip(kernel_size, dilation, out, stride)]
        return padded, out, taps

    def lowest(dtype):
        return -xp.inf if dtype.kind == "f" else xp.iinfo(dtype).min

    def max_pool2d(x, *, kernel_size, stride, padding, dilation, ceil_mode):
        if x.dtype.kind not in "fiu":
            raise TypeError("numeric input expected")
        padded, _, (rows, cols) = pool_frame(x, kernel_size, stride, padding, dilation,
                                             ceil_mode, lowest(x.dtype))
        best = padded[..., rows[0], :].copy()
        for r in rows[1:]:
            xp.maximum(best, padded[..., r, :], out=best)
        result = best[..., cols[0]].copy()
        for c in cols[1:]:
            xp.maximum(result, best[..., c], out=result)
        return result

    def max_pool2d_indices(x, *, kernel_size, stride, padding, dilation, ceil_mode):
        if x.dtype.kind not in "fiu":
            raise TypeError("numeric input expected")
        fill = lowest(x.dtype)
        padded, (out_h, out_w), (rows, cols) = pool_frame(x, kernel_size, stride, padding,
                                                          dilation, ceil_mode, fill)
        width = x.shape[-1]
        top = xp.arange(out_h)[:, None] * stride[0] - padding[0]
        left = xp.arange(out_w)[None, :] * stride[1] - padding[1]
        best = index = None
        for (i, r), (j, c) in itertools.product(enumerate(rows), enumerate(cols)):
            value = padded[..., r, c]
            here = (top + i * dilation[0]) * width + left + j * dilation[1]
            if best is None:
                best, index = value.copy(), xp.broadcast_to(here, value.shape)
                continue
            take = value > best  # later NaNs win, as in PyTorch's scan
            if x.dtype.kind == "f":
                take |= xp.isnan(value)
            index = xp.where(take, here, index)
            xp.maximum(best, value, out=best)
        # a window that is all `fill` points at its first element inside the input, as PyTorch
        (dh, dw) = dilation
        first = (top + -(-xp.maximum(-top, 0) // dh) * dh) * width + \
            left + -(-xp.maximum(-left, 0) // dw) * dw
        return xp.where(best == fill, first, index)

    def max_pool2d_backward(g, indices, *, input_size):
        planes = math.prod(g.shape[:-2])
        area = math.prod(input_size)
        flat = indices.reshape(planes, math.prod(indices.shape[-2:])) + \
            (xp.arange(planes) * area)[:, None]
        total = xp.bincount(flat.reshape(-1), weights=g.reshape(-1), minlength=planes * area)
        return total.astype(g.dtype, copy=False).reshape(g.shape[:-2] + tuple(input_size))

    def max_pool2d_select(x, indices):
        planes = math.prod(x.shape[:-2])
        flat = x.reshape(planes, math.prod(x.shape[-2:]))
        picked = xp.take_along_axis(flat, indices.reshape(planes, math.prod(indices.shape[-2:])),
                                    axis=1)
        return picked.reshape(indices.shape)

    def divisor(x_size, out, kernel_size, stride, padding, count_include_pad, divisor_override):
        if divisor_override is not None:
            return divisor_override
        rows, cols = (_avg_divisor(n, k, s, p, o, count_include_pad) for n, k, s, p, o in zip(
            x_size, kernel_size, stride, padding, out))
        return xp.asarray(np.outer(rows, cols))

    def avg_pool2d(x, *, kernel_size, stride, padding, ceil_mode, count_include_pad,
                   divisor_override):
        dtype = floating(x)
        padded, out, (rows, cols) = pool_frame(x.astype(dtype, copy=False), kernel_size, stride,
                                               padding, (1, 1), ceil_mode, 0)
        partial = padded[..., rows[0], :].copy()
        for r in rows[1:]:
            partial += padded[..., r, :]
        total = partial[..., cols[0]].copy()
        for c in cols[1:]:
            total += partial[..., c]
        total /= divisor(x.shape[-2:], out, kernel_size, stride, padding, count_include_pad,
                         divisor_override)
        return total.astype(x.dtype, copy=False)

    def avg_pool2d_backward(g, *, input_size, kernel_size, stride, padding, ceil_mode,
                            count_include_pad, divisor_override):
        dtype = floating(g)
        out = _pool_lengths(input_size, kernel_size, stride, padding, (1, 1), ceil_mode)
        if g.shape[-2:] != out:
            raise ValueError("gradient does not fit the pooling")
        scaled = g.astype(dtype)
        scaled /= divisor(input_size, out, kernel_size, stride, padding, count_include_pad,
                          divisor_override)
        reach = tuple((o - 1) * s + k for o, s, k in zip(out, stride, kernel_size))
        (rh, rw), (sh, sw), (kh, kw) = reach, stride, kernel_size
        partial = xp.zeros(g.shape[:-1] + (rw,), dtype=dtype)
        for j in range(kw):
            partial[..., j:j + (out[1] - 1) * sw + 1:sw] += scaled
        full = xp.zeros(g.shape[:-2] + (max(rh, padding[0] + input_size[0]),
                                        max(rw, padding[1] + input_size[1])), dtype=dtype)
        for i in range(kh):
            full[..., i:i + (out[0] - 1) * sh + 1:sh, :rw] += partial
        crop = full[..., padding[0]:padding[0] + input_size[0],
                    padding[1]:padding[1] + input_size[1]]
        return xp.ascontiguousarray(crop).astype(g.dtype, copy=False)

    # -- separable linear maps: adaptive pooling and resampling -----------------------------------
    def separable(x, rows, cols):
        """rows @ x @ cols.T over the last two axes (rows: (H_out, H), cols: (W_out, W))."""
        dtype = floating(x)
        lead, (height, width) = x.shape[:-2], x.shape[-2:]
        planes = math.prod(lead)
        step = xp.matmul(x.astype(dtype, copy=False).reshape(planes * height, width),
                         device(cols, dtype).T)
        result = xp.matmul(device(rows, dtype), step.reshape(planes, height, cols.shape[0]))
        return result.reshape(lead + (rows.shape[0], cols.shape[0])).astype(x.dtype, copy=False)

    def resampled(x, ranks, size):
        """Check x's rank and that the input and output planes are not empty."""
        if x.ndim not in ranks or 0 in x.shape[-2:]:
            raise ValueError("the input plane must be non-empty, of a supported rank")
        return nonempty(size)

    def adaptive_avg_pool2d(x, *, output_size):
        floating(x)
        resampled(x, (3, 4), output_size)
        (height, width), (out_h, out_w) = x.shape[-2:], output_size
        if height % out_h == 0 and width % out_w == 0:
            lead = x.shape[:-2]
            blocks = x.reshape(lead + (out_h, height // out_h, out_w, width // out_w))
            return blocks.mean(axis=(-3, -1)).astype(x.dtype, copy=False)
        return separable(x, _adaptive_matrix(height, out_h), _adaptive_matrix(width, out_w))

    def adaptive_avg_pool2d_backward(g, *, input_size, output_size):
        (height, width), (out_h, out_w) = input_size, output_size
        if g.shape[-2:] != tuple(output_size):
            raise ValueError("gradient does not fit the pooling")
        return separable(g, _adaptive_matrix(height, out_h).T, _adaptive_matrix(width, out_w).T)

    def nearest_indices(input_size, size, scales):
        return [_nearest_index(n, o, s) for n, o, s in zip(input_size, size, scales)]

    def upsample_nearest2d(x, *, size, scales):
        resampled(x, (4,), size)
        rows, cols = nearest_indices(x.shape[-2:], size, scales)
        return x[..., xp.asarray(rows)[:, None], xp.asarray(cols)[None, :]]

    def upsample_nearest2d_backward(g, *, input_size, size, scales):
        if g.shape[-2:] != tuple(size):
            raise ValueError("gradient does not fit the resampling")
        rows, cols = nearest_indices(input_size, size, scales)
        return separable(g, _one_hot(rows, input_size[0]).T, _one_hot(cols, input_size[1]).T)

    def bilinear_matrices(input_size, size, align_corners, scales, dtype):
        precision = "float64" if dtype == xp.float64 else "float32"
        return [_bilinear_matrix(n, o, align_corners, s, precision)
                for n, o, s in zip(input_size, size, scales)]

    def upsample_bilinear2d(x, *, size, align_corners, scales):
        resampled(x, (4,), size)
        rows, cols = bilinear_matrices(x.shape[-2:], size, align_corners, scales, x.dtype)
        return separable(x, rows, cols)

    def upsample_bilinear2d_backward(g, *, input_size, size, align_corners, scales):
        if g.shape[-2:] != tuple(size):
            raise ValueError("gradient does not fit the resampling")
        rows, cols = bilinear_matrices(input_size, size, align_corners, scales, g.dtype)
        return separable(g, rows.T, cols.T)

    table = {
        "max_pool2d": max_pool2d, "max_pool2d_indices": max_pool2d_indices,
        "max_pool2d_backward": max_pool2d_backward, "max_pool2d_select": max_pool2d_select,
        "avg_pool2d": avg_pool2d, "avg_pool2d_backward": avg_pool2d_backward,
        "adaptive_avg_pool2d": adaptive_avg_pool2d,
        "adaptive_avg_pool2d_backward": adaptive_avg_pool2d_backward,
        "upsample_nearest2d": upsample_nearest2d,
        "upsample_nearest2d_backward": upsample_nearest2d_backward,
        "upsample_bilinear2d": upsample_bilinear2d,
        "upsample_bilinear2d_backward": upsample_bilinear2d_backward,
    }
    for n in (1, 2):
        table.update({f"conv{n}d": partial(conv, n),
                      f"conv_transpose{n}d": partial(conv_transpose, n),
                      f"conv{n}d_weight_grad": partial(conv_weight_grad, n)})
    return table
