"""Convolution kernels over the trailing spatial dimensions (1, 2 or 3 of them).

Convolutions are im2col + one (broadcast, per-group) matrix product: the input's windows are a
strided view (``sliding_window_view``), copied once into columns; their transposes scatter
columns back with one strided add per kernel tap. No loop runs over the batch, the channels or
the pixels. float16 is computed in float32 and rounded back. Pooling is ``pooling.py``,
resampling ``resample.py``.
"""

from __future__ import annotations

import itertools
import math
from functools import partial

from ._spatial import floating, nonempty, pad_to


# -- sizes and host-side tables (plain NumPy, cached) ---------------------------------------------
def _conv_lengths(sizes, kernel, stride, padding, dilation) -> tuple[int, ...]:
    return tuple((n + lo + hi - d * (k - 1) - 1) // s + 1 for n, k, s, (lo, hi), d in zip(
        sizes, kernel, stride, padding, dilation))


# -- im2col ---------------------------------------------------------------------------------------
def _windows(xp, x, kernel, stride, padding, dilation, out):
    """A strided view (..., *out, *kernel) of the windows of x's last len(kernel) axes."""
    n = len(kernel)
    spans = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    padded = pad_to(xp, x, tuple(lo for lo, _ in padding),
                    tuple((o - 1) * s + span for o, s, span in zip(out, stride, spans)))
    view = xp.lib.stride_tricks.sliding_window_view(padded, spans,
                                                    axis=tuple(range(x.ndim - n, x.ndim)))
    return view[(Ellipsis,) + tuple(slice(None, None, s) for s in stride)
                + tuple(slice(None, None, d) for d in dilation)]


def _columns(xp, x, kernel, stride, padding, dilation, groups, out, group_major):
    """im2col of (N, C, *spatial): (N, G, Cg * K, L), or (G, Cg * K, N * L) if group_major."""
    n = len(kernel)
    batch, channels = x.shape[:2]
    taps, length = math.prod(kernel), math.prod(out)
    per_group = channels // groups
    pointwise = all(k == 1 for k in kernel) and all(s == 1 for s in stride) and \
        not any(lo or hi for lo, hi in padding)
    if pointwise and not group_major:
        return x.reshape(batch, groups, per_group, length)
    view = _windows(xp, x, kernel, stride, padding, dilation, out)
    view = view.reshape((batch, groups, per_group) + view.shape[2:])
    space, kern = tuple(range(3, 3 + n)), tuple(range(3 + n, 3 + 2 * n))
    if group_major:
        order, shape = (1, 2) + kern + (0,) + space, (groups, per_group * taps, batch * length)
    else:
        order, shape = (0, 1, 2) + kern + space, (batch, groups, per_group * taps, length)
    return xp.ascontiguousarray(view.transpose(order)).reshape(shape)


def _unbatch(n, *arrays):
    """Add a batch axis to unbatched (C, *spatial) arrays; say whether one was added."""
    if any(a.ndim != arrays[0].ndim for a in arrays) or arrays[0].ndim not in (n + 1, n + 2):
        raise ValueError(f"inputs must be ({n + 2})-d, or unbatched ({n + 1})-d")
    if arrays[0].ndim == n + 1:
        return True, tuple(a[None] for a in arrays)
    return False, arrays


# -- convolution ----------------------------------------------------------------------------------
def _check_weight(n, weight, bias, out_channels):
    """Check the weight has n spatial axes and the bias (if any) one value per output channel."""
    if weight.ndim != n + 2 or (bias is not None and bias.shape != (out_channels,)):
        raise ValueError("the weight or the bias does not fit")


def conv(xp, n, x, weight, bias=None, *, stride, padding, dilation, groups):
    """n-d grouped convolution (cross-correlation, as PyTorch) of x (N, C, *spatial), or
    unbatched (C, *spatial), with weight (C_out, C / groups, *kernel) and an optional bias
    (C_out,); ``padding`` is (low, high) per axis. One GEMM per group over the im2col columns;
    float16 is computed in float32 and the result has x's dtype."""
    dtype = floating(xp, x, weight, bias)
    single_item, (x,) = _unbatch(n, x)
    out_channels, per_group = weight.shape[:2]
    _check_weight(n, weight, bias, out_channels)
    if x.shape[1] != per_group * groups or out_channels % groups:
        raise ValueError("channels do not match the weight and groups")
    kernel = weight.shape[2:]
    out = nonempty(_conv_lengths(x.shape[2:], kernel, stride, padding, dilation))
    cols = _columns(xp, x.astype(dtype, copy=False), kernel, stride, padding, dilation, groups,
                    out, group_major=False)
    w = weight.astype(dtype, copy=False).reshape(groups, out_channels // groups,
                                                 per_group * math.prod(kernel))
    result = xp.matmul(w, cols).reshape((x.shape[0], out_channels) + out)
    if bias is not None:
        result += bias.astype(dtype, copy=False).reshape((out_channels,) + (1,) * n)
    result = result.astype(x.dtype, copy=False)
    return result[0] if single_item else result


def conv_weight_grad(xp, n, x, grad, *, kernel_size, stride, padding, dilation, groups):
    """The gradient of :func:`conv` with respect to its weight, (C_out, C / groups, *kernel),
    from the input x and the output's gradient ``grad`` (both batched or both unbatched): the
    group-major im2col columns times ``grad``, the batch folded into the contraction."""
    dtype = floating(xp, x, grad)
    _, (x, grad) = _unbatch(n, x, grad)
    batch, channels = x.shape[:2]
    out_channels = grad.shape[1]
    out = nonempty(_conv_lengths(x.shape[2:], kernel_size, stride, padding, dilation))
    if grad.shape != (batch, out_channels) + out or channels % groups or \
            out_channels % groups:
        raise ValueError("grad does not fit the convolution")
    cols = _columns(xp, x.astype(dtype, copy=False), kernel_size, stride, padding, dilation,
                    groups, out, group_major=True)
    per_group, length = out_channels // groups, math.prod(out)
    g = grad.astype(dtype, copy=False).reshape(batch, groups, per_group, length)
    g = xp.ascontiguousarray(g.transpose(1, 2, 0, 3)).reshape(groups, per_group, batch * length)
    result = xp.matmul(g, cols.transpose(0, 2, 1))
    shape = (out_channels, channels // groups) + tuple(kernel_size)
    return result.reshape(shape).astype(x.dtype, copy=False)


def conv_transpose(xp, n, x, weight, bias=None, *, stride, padding, output_padding, dilation,
                   groups):
    """n-d grouped transposed convolution (the adjoint of :func:`conv`, as PyTorch's
    conv_transpose) of x (N, C, *spatial), or unbatched, with weight (C, C_out / groups, *kernel)
    and an optional bias (C_out,): one GEMM into columns, then one strided add per kernel tap
    (col2im), cropped by ``padding`` and extended by ``output_padding``. float16 is computed in
    float32."""
    dtype = floating(xp, x, weight, bias)
    single_item, (x,) = _unbatch(n, x)
    batch, channels = x.shape[:2]
    per_group, kernel = weight.shape[1], weight.shape[2:]
    _check_weight(n, weight, bias, per_group * groups)
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


def kernels(xp, special) -> dict:
    """{op name: kernel} of the 1-, 2- and 3-d convolutions, bound to namespace ``xp``."""
    table = {}
    for n in (1, 2, 3):
        table.update({f"conv{n}d": partial(conv, xp, n),
                      f"conv_transpose{n}d": partial(conv_transpose, xp, n),
                      f"conv{n}d_weight_grad": partial(conv_weight_grad, xp, n)})
    return table
