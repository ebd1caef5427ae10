"""Smaller ONNX ops: dynamic quantization, determinants, SwiGLU, sequence reversal, centre
crop-or-pad and unique values."""

from __future__ import annotations

import numpy as np

import fw_core as fw

from .node import host, ints


def dynamic_quantize(node, x):
    """uint8 quantization with the scale and zero point that cover x's range and 0."""
    low = fw.minimum(x.amin(), fw.tensor(0.0, dtype=x.dtype))
    high = fw.maximum(x.amax(), fw.tensor(0.0, dtype=x.dtype))
    scale = (high - low) / 255
    zero = fw.clamp(fw.round(-low / scale), 0, 255)
    q = fw.clamp(fw.round(x / scale) + zero, 0, 255)
    return q.to(fw.uint8), scale, zero.to(fw.uint8)


def det(node, x):
    return fw.tensor(np.linalg.det(host(x))).to(x.dtype)


def swiglu(node, a, b):
    return a * fw.sigmoid(a * node.get("alpha", 1.0)) * b


def reverse_sequence(node, x, lengths):
    time, batch = node.get("time_axis", 0), node.get("batch_axis", 1)
    index = np.indices(x.shape)[time].copy()
    n = host(lengths).astype(np.int64)
    shape = [1] * x.ndim
    shape[batch] = -1
    n = n.reshape(shape)
    reversed_index = np.where(index < n, n - 1 - index, index)
    return fw.gather(x, time, fw.tensor(reversed_index))


def center_crop_pad(node, x, target):
    sizes = ints(target)
    axes = node.get("axes") or list(range(x.ndim - len(sizes), x.ndim))
    for axis, want in zip([a % x.ndim for a in axes], sizes):
        have = x.shape[axis]
        if have > want:
            start = (have - want) // 2
            x = x.narrow(axis, start, want)
        elif have < want:
            before = (want - have) // 2
            widths = [0, 0] * (x.ndim - axis - 1) + [before, want - have - before]
            x = fw.nn.functional.pad(x, widths)
    return x


def unique(node, x):
    """Y, indices (first occurrences), inverse indices and counts, sorted or in order of
    first occurrence."""
    values = host(x)
    axis = node.get("axis")
    if axis is None:
        values = values.reshape(-1)
        axis = 0
    y, first, inverse, counts = np.unique(values, return_index=True, return_inverse=True,
                                          return_counts=True, axis=axis)
    if not node.get("sorted", 1):
        order = np.argsort(first)
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        y, first, counts = np.take(y, order, axis=axis), first[order], counts[order]
        inverse = rank[inverse.reshape(-1)]
    return tuple(fw.tensor(np.asarray(a)) if k == 0 else fw.tensor(np.asarray(a, np.int64))
                 for k, a in enumerate((y, first, inverse.reshape(-1), counts)))


HANDLERS = {"DynamicQuantizeLinear": dynamic_quantize, "Det": det, "SwiGLU": swiglu,
            "ReverseSequence": reverse_sequence, "CenterCropPad": center_crop_pad,
            "Unique": unique}
