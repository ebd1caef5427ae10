"""ONNX's linear (de)quantization: per tensor, per axis (a 1-d scale along ``axis``) or per
block (each scale covering ``block_size`` consecutive elements along ``axis``)."""

from __future__ import annotations

import numpy as np

import fw_core as fw

from .node import fw_dtype

#: the range each integer type saturates to
_RANGES = {fw.uint8: (0, 255), fw.int8: (-128, 127), fw.int16: (-32768, 32767),
           fw.int32: (-2**31, 2**31 - 1)}


def _spread(node, param, x):
    """``param`` (a scale or zero point) broadcast against ``x``."""
    if param.ndim == 0 or param.numel() == 1 and param.ndim <= 1:
        return param.reshape(())
    axis = node.get("axis", 1) % x.ndim
    block = node.get("block_size", 0)
    if block:
        param = fw.repeat_interleave(param, block, dim=axis)
        param = param.narrow(axis, 0, x.shape[axis])
        return param
    return param.reshape([-1 if a == axis else 1 for a in range(x.ndim)])


def dequantize(node, x, scale, zero_point=None):
    scale_full = _spread(node, scale, x)
    values = x.to(scale.dtype)
    if zero_point is not None:
        values = values - _spread(node, zero_point, x).to(scale.dtype)
    out = values * scale_full
    target = node.get("output_dtype", 0)
    return out.to(fw_dtype(target)) if target else out


def quantize(node, x, scale, zero_point=None):
    target = fw_dtype(node.get("output_dtype", 0)) if node.get("output_dtype", 0) else \
        zero_point.dtype if zero_point is not None else fw.uint8
    if target not in _RANGES:
        raise fw.errors.UnsupportedError(f"quantization to {target}", op="QuantizeLinear",
                                         hint=f"quantize to {sorted(map(str, _RANGES))}")
    q = fw.round(x / _spread(node, scale, x).to(x.dtype))
    if zero_point is not None:
        q = q + _spread(node, zero_point, x).to(q.dtype)
    low, high = _RANGES[target]
    return fw.clamp(q, low, high).to(target)


def _window(kind):
    """Hann, Hamming and Blackman windows of ``size`` samples, periodic by default."""

    def handler(node, size):
        n = int(np.asarray(size.numpy()).reshape(-1)[0])
        length = n if node.get("periodic", 1) else n - 1
        k = np.arange(n) * (2 * np.pi / max(length, 1))
        values = {"hann": 0.5 - 0.5 * np.cos(k),
                  "hamming": 25 / 46 - (21 / 46) * np.cos(k),
                  "blackman": 0.42 - 0.5 * np.cos(k) + 0.08 * np.cos(2 * k)}[kind]
        return fw.tensor(values).to(fw_dtype(node.get("output_datatype", 1)))

    return handler


HANDLERS = {"DequantizeLinear": dequantize, "QuantizeLinear": quantize,
            "HannWindow": _window("hann"), "HammingWindow": _window("hamming"),
            "BlackmanWindow": _window("blackman")}
