"""ONNX's sliding-window ops: convolution, transposed convolution and pooling. ONNX pads
each side on its own (``pads = [begin..., end...]``, or ``auto_pad``); the input is padded
explicitly and the fw op runs unpadded, so every ONNX padding has the same meaning here."""

from __future__ import annotations

import numpy as np

import fw_core as fw

F = fw.nn.functional


def _geometry(node, x, kernel):
    """Strides, dilations and the padding before and after each spatial axis."""
    spatial = x.ndim - 2
    strides = list(node.get("strides", [1] * spatial))
    dilations = list(node.get("dilations", [1] * spatial))
    auto = node.get("auto_pad", "NOTSET")
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for n, k, s, d in zip(x.shape[2:], kernel, strides, dilations):
            total = max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
            first = total // 2 if auto == "SAME_UPPER" else total - total // 2
            begin.append(first)
            end.append(total - first)
    elif auto == "VALID":
        begin = end = [0] * spatial
    else:
        pads = list(node.get("pads", [0] * 2 * spatial))
        begin, end = pads[:spatial], pads[spatial:]
    return strides, dilations, begin, end


def _pad(x, begin, end, value=0.0):
    if not any(begin) and not any(end):
        return x
    return F.pad(x, [w for b, e in reversed(list(zip(begin, end))) for w in (b, e)],
                 value=value)


def conv(node, x, w, b=None):
    strides, dilations, begin, end = _geometry(node, x, w.shape[2:])
    fn = (F.conv1d, F.conv2d, F.conv3d)[x.ndim - 3]
    return fn(_pad(x, begin, end), w, b, stride=strides, dilation=dilations,
              groups=node.get("group", 1))


def conv_transpose(node, x, w, b=None):
    """The full transposed convolution, extended by ``output_padding`` and cropped by the
    pads (or to ``output_shape``), then the bias."""
    spatial = x.ndim - 2
    kernel = w.shape[2:]
    strides = list(node.get("strides", [1] * spatial))
    dilations = list(node.get("dilations", [1] * spatial))
    extra = list(node.get("output_padding", [0] * spatial))
    fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[spatial - 1]
    full = fn(x, w, None, stride=strides, dilation=dilations, groups=node.get("group", 1))
    full = _pad(full, [0] * spatial, extra)
    sizes = [(n - 1) * s + (k - 1) * d + 1 + e
             for n, s, k, d, e in zip(x.shape[2:], strides, kernel, dilations, extra)]
    shape = node.get("output_shape")
    auto = node.get("auto_pad", "NOTSET")
    if shape is not None or auto in ("SAME_UPPER", "SAME_LOWER"):
        shape = list(shape) if shape is not None else [n * s for n, s in zip(x.shape[2:],
                                                                             strides)]
        totals = [size - want for size, want in zip(sizes, shape[-spatial:])]
        upper = auto != "SAME_LOWER"
        begin = [t // 2 if upper else t - t // 2 for t in totals]
        end = [t - first for t, first in zip(totals, begin)]
    else:
        pads = list(node.get("pads", [0] * 2 * spatial))
        begin, end = pads[:spatial], pads[spatial:]
    index = (slice(None), slice(None)) + tuple(slice(a, n - z) for a, n, z in
                                               zip(begin, sizes, end))
    out = full[index]
    return out if b is None else out + b.reshape(1, -1, *([1] * spatial))


def max_pool(node, x):
    kernel = node.get("kernel_shape")
    if len(node.outputs) > 1 and node.outputs[1]:
        raise fw.errors.UnsupportedError("MaxPool's Indices output", op="MaxPool",
                                         hint="use MaxPool's values only")
    strides, dilations, begin, end = _geometry(node, x, kernel)
    fn = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[x.ndim - 3]
    return fn(_pad(x, begin, end, -np.inf), kernel, stride=strides, dilation=dilations,
              ceil_mode=bool(node.get("ceil_mode", 0)))


def _window_sum(node, x, kernel, strides, begin, end):
    """Each window's sum (padding counts 0), from the average over whole windows."""
    fn = (F.avg_pool1d, F.avg_pool2d, F.avg_pool3d)[x.ndim - 3]
    mean = fn(_pad(x, begin, end), kernel, stride=strides,
              ceil_mode=bool(node.get("ceil_mode", 0)), count_include_pad=True)
    return mean * float(np.prod(kernel))


def _no_dilation(node, dilations):
    if any(d != 1 for d in dilations):
        raise fw.errors.UnsupportedError(f"{node.op_type} with dilations", op=node.op_type,
                                         hint="pool without dilations")


def average_pool(node, x):
    """The window's mean; without ``count_include_pad`` the divisor counts only the elements
    that are not padding (a second pooling of a mask of ones)."""
    kernel = node.get("kernel_shape")
    strides, dilations, begin, end = _geometry(node, x, kernel)
    _no_dilation(node, dilations)
    total = _window_sum(node, x, kernel, strides, begin, end)
    if node.get("count_include_pad", 0):
        ones = fw.ones_like(_pad(x, begin, end))
        return total / _window_sum(node, ones, kernel, strides, [0] * len(begin),
                                   [0] * len(begin))
    count = _window_sum(node, fw.ones_like(x), kernel, strides, begin, end)
    return total / count


def lp_pool(node, x):
    kernel = node.get("kernel_shape")
    strides, dilations, begin, end = _geometry(node, x, kernel)
    _no_dilation(node, dilations)
    p = node.get("p", 2)
    return _window_sum(node, fw.abs(x) ** p, kernel, strides, begin, end) ** (1.0 / p)


HANDLERS = {"Conv": conv, "ConvTranspose": conv_transpose, "MaxPool": max_pool,
            "AveragePool": average_pool, "LpPool": lp_pool}
