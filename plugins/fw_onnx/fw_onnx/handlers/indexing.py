"""ONNX's scatter and gather variants, one-hot, non-zero, compress, top-k's relatives."""

from __future__ import annotations

import numpy as np

import fw_core as fw

from .node import fw_dtype, host


def _positive(indices, size):
    picks = host(indices).astype(np.int64)
    return np.where(picks < 0, picks + size, picks)


def scatter_elements(node, x, indices, updates):
    axis = node.get("axis", 0) % x.ndim
    reduction = node.get("reduction", "none")
    picks = fw.tensor(_positive(indices, x.shape[axis]))
    if reduction == "none":
        return fw.scatter(x, axis, picks, updates)
    modes = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin"}
    return fw.scatter_reduce(x, axis, picks, updates, modes[reduction], include_self=True)


def scatter_nd(node, x, indices, updates):
    if node.get("reduction", "none") != "none":
        raise fw.errors.UnsupportedError("ScatterND with a reduction", op="ScatterND",
                                         hint="scatter without reduction")
    picks = host(indices).astype(np.int64)
    index = tuple(fw.tensor(picks[..., k]) for k in range(picks.shape[-1]))
    out = x.clone()
    out[index] = updates
    return out


def gather_nd(node, x, indices):
    dims = node.get("batch_dims", 0)
    if dims:
        raise fw.errors.UnsupportedError("GatherND with batch_dims", op="GatherND",
                                         hint="use batch_dims=0")
    picks = host(indices).astype(np.int64)
    return x[tuple(fw.tensor(picks[..., k]) for k in range(picks.shape[-1]))]


def one_hot(node, indices, depth, values):
    n = int(host(depth).reshape(-1)[0])
    picks = host(indices).astype(np.int64)
    picks = np.where(picks < 0, picks + n, picks)
    axis = node.get("axis", -1)
    off, on = values[0], values[1]
    hot = fw.nn.functional.one_hot(fw.tensor(picks), n)
    hot = fw.movedim(hot, -1, axis) if axis != -1 else hot
    return fw.where(hot.to(fw.bool), on, off)


def non_zero(node, x):
    return fw.tensor(np.stack(np.nonzero(host(x))).astype(np.int64))


def compress(node, x, condition):
    keep = np.flatnonzero(host(condition))
    axis = node.get("axis")
    if axis is None:
        return x.reshape(-1)[fw.tensor(keep)]
    axis %= x.ndim
    return x[(slice(None),) * axis + (fw.tensor(keep),)]


def hardmax(node, x):
    axis = node.get("axis", -1) % x.ndim
    picks = fw.argmax(x, dim=axis, keepdim=True)
    return fw.zeros_like(x).scatter(axis, picks, 1.0)


def eye_like(node, x):
    dtype = node.get("dtype")
    target = fw_dtype(dtype) if dtype is not None else x.dtype
    rows, cols = x.shape
    return fw.tensor(np.eye(rows, cols, node.get("k", 0))).to(target)


HANDLERS = {"ScatterElements": scatter_elements, "ScatterND": scatter_nd, "GatherND": gather_nd,
            "OneHot": one_hot, "NonZero": non_zero, "Compress": compress, "Hardmax": hardmax,
            "EyeLike": eye_like}
