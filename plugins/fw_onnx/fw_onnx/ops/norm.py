"""Normalisations, softmax and attention."""

from __future__ import annotations

import numpy as np

from ..graph import GraphBuilder
from .call import Call, axes, scalar_tensor


def layer_norm(g: GraphBuilder, c: Call) -> None:
    shape = list(c.attrs["normalized_shape"])
    weight, bias = (c.inputs + [None, None])[1:3]
    if weight is None:
        weight = g.const(np.ones(shape, c.dtype()), "ln_scale")
    g.add("LayerNormalization", [c.inputs[0], weight, bias], [c.out], axis=-len(shape),
          epsilon=float(c.attrs["eps"]))


def batch_norm(g: GraphBuilder, c: Call) -> None:
    """Batch norm with its running statistics (what an exported, eval-mode run uses)."""
    if c.attrs.get("training"):
        raise c.refuse("batch norm with the batch's statistics", "export in eval mode")
    x, mean, var, weight, bias = (c.inputs + [None] * 5)[:5]
    if mean is None or var is None:
        raise c.refuse("batch norm without running statistics",
                       "build BatchNorm with track_running_stats=True")
    channels = c.values[1]["shape"][0]
    weight = weight or g.const(np.ones(channels, c.dtype()), "bn_scale")
    bias = bias or g.const(np.zeros(channels, c.dtype()), "bn_bias")
    g.add("BatchNormalization", [x, weight, bias, mean, var], [c.out],
          epsilon=float(c.attrs["eps"]))


def rms_norm(g: GraphBuilder, c: Call) -> None:
    """x / sqrt(mean(x^2) + eps) * weight over the last len(normalized_shape) dimensions."""
    rank, count = c.rank(), len(c.attrs["normalized_shape"])
    eps = c.attrs.get("eps")
    eps = float(np.finfo(c.dtype()).eps) if eps is None else eps
    x = c.inputs[0]
    reduce_axes = g.const(np.arange(rank - count, rank, dtype=np.int64), "axes")
    mean = g.one("ReduceMean", [g.one("Mul", [x, x]), reduce_axes], keepdims=1)
    root = g.one("Sqrt", [g.one("Add", [mean, g.const(np.array(eps, c.dtype()), "eps")])])
    out = g.one("Div", [x, root])
    weight = c.inputs[1] if len(c.inputs) > 1 else None
    g.add("Mul" if weight else "Identity", [out, weight] if weight else [out], [c.out])


def group_norm(g: GraphBuilder, c: Call) -> None:
    """Each group of channels normalised over its channels and positions, then scaled and
    shifted per channel."""
    groups, eps = c.attrs["num_groups"], float(c.attrs["eps"])
    x = c.inputs[0]
    weight, bias = (c.inputs + [None, None])[1:3]
    grouped = g.one("Reshape", [x, g.const(np.array([0, groups, -1], np.int64), "shape")])
    last = g.const(np.array([2], np.int64), "axes")
    mean = g.one("ReduceMean", [grouped, last], keepdims=1)
    centred = g.one("Sub", [grouped, mean])
    var = g.one("ReduceMean", [g.one("Mul", [centred, centred]), last], keepdims=1)
    root = g.one("Sqrt", [g.one("Add", [var, g.const(np.array(eps, c.dtype()), "eps")])])
    out = g.one("Reshape", [g.one("Div", [centred, root]), g.one("Shape", [x])])
    per_channel = g.const(np.array([-1] + [1] * (c.rank() - 2), np.int64), "shape")
    for param, op in ((weight, "Mul"), (bias, "Add")):
        if param is not None:
            out = g.one(op, [out, g.one("Reshape", [param, per_channel])])
    g.add("Identity", [out], [c.out])


def _softmax(onnx_op: str, safe: bool = False):
    def convert(g: GraphBuilder, c: Call) -> None:
        axis = axes(c.attrs["dim"], c.rank())[0]
        out = g.one(onnx_op, [c.inputs[0]], axis=axis)
        g.add("Identity", [_nan_to_zero(g, out, c.dtype()) if safe else out], [c.out])

    return convert


def _nan_to_zero(g: GraphBuilder, x: str, dtype) -> str:
    """``x`` with NaN (a softmax over all -inf) replaced by 0, as fw's safe softmax gives."""
    return g.one("Where", [g.one("IsNaN", [x]), g.const(np.array(0, dtype), "zero"), x])


def attention(g: GraphBuilder, c: Call) -> None:
    """softmax(q k^T * scale + mask) v, the mask boolean (True attends) or added; with a mask,
    rows that attend nowhere give 0, as fw's kernel does."""
    a = c.attrs
    if a.get("dropout_p", 0):
        raise c.refuse("dropout inside attention", "export in eval mode (dropout_p=0)")
    q, k, v = c.inputs[:3]
    dtype = c.dtype()
    rank = c.rank(1)
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    scaled = g.one("Mul", [q, g.const(np.array(a["scale"], dtype), "scale")])
    scores = g.one("MatMul", [scaled, g.one("Transpose", [k], perm=perm)])
    mask, is_bool = (c.inputs[3], c.dtype(3) == np.bool_) if a.get("has_mask") else (None, False)
    if a.get("is_causal"):
        size = g.one("Concat", [g.one("Shape", [q], start=-2, end=-1),
                                g.one("Shape", [k], start=-2, end=-1)], axis=0)
        ones = g.one("ConstantOfShape", [size], value=scalar_tensor(True, np.bool_))
        mask, is_bool = g.one("Trilu", [ones], upper=0), True
    if mask is not None and is_bool:
        scores = g.one("Where", [mask, scores, g.const(np.array(-np.inf, dtype), "ninf")])
    elif mask is not None:
        scores = g.one("Add", [scores, mask])
    weights = g.one("Softmax", [scores], axis=-1)
    if mask is not None:
        weights = _nan_to_zero(g, weights, dtype)
    g.add("MatMul", [weights, v], [c.out])


CONVERTERS = {"layer_norm": layer_norm, "batch_norm": batch_norm, "rms_norm": rms_norm,
              "group_norm": group_norm, "softmax": _softmax("Softmax"),
              "log_softmax": _softmax("LogSoftmax"), "safe_softmax": _softmax("Softmax", True),
              "scaled_dot_product_attention": attention}
