"""Hand-written CUDA kernels for the row-wise ops: softmax family, layer/RMS norm, attention.

Why hand-written: fw_cpu's xp-generic softmax on CuPy is five kernels (max, subtract, exp,
sum, scale), each a launch and a full read and write of the array in device memory, and the
generic layer norm and attention are as many again. Here one launch handles a whole row in one
block: the reductions (maximum, sum; mean, centred mean square) read the row while it sits in
L1/L2, and the output is written once. Attention keeps its two products on cuBLAS
(``cupy.matmul``) and does everything between them (scale, causal / boolean / additive mask,
safe softmax, dropout keep-mask) in one in-place pass over the scores.

What falls back to the generic kernel (decided here, on shapes and dtypes, before CuPy is
touched): dtypes other than float16/32/64, 0-d and empty arrays, a ``dim`` out of range, norm
parameters whose shape or dtype differ from the input's rows, attention inputs of mixed dtypes,
an integer mask or a non-bool / misshapen dropout mask. The generic kernels also raise the
errors for malformed calls. The CUDA C lives in :mod:`fw_cuda.rows_source`.

Each ``*_launch(xp, ...)`` returns a :class:`Launch` (arrays prepared with ``xp``) or None for
the generic kernel; :func:`guards` turns them into the guards of the ``cuda`` row kernels.
With ``xp=numpy`` the same launch description feeds the host runner of the tests.
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

import numpy as np

from .raw_module import RawModule
from .rows_source import KERNELS, MAX_BLOCK, SOURCE

#: the most blocks a launch asks for; blocks stride over the rows beyond it
MAX_GRID = 1 << 16

_SUFFIX = {np.dtype(np.float16): "f16", np.dtype(np.float32): "f32",
           np.dtype(np.float64): "f64"}
#: the ops :func:`guards` serves
NAMES = ("softmax", "safe_softmax", "log_softmax", "layer_norm", "rms_norm",
         "scaled_dot_product_attention")
_MODES = {"softmax": 0, "safe_softmax": 1, "log_softmax": 2}
_MASK_KINDS = {"none": 0, "causal": 1, "bool": 2, "additive": 3}


class Launch(NamedTuple):
    """One kernel call: entry point, row geometry, and its arguments in order."""

    kernel: str  #: entry point in :data:`fw_cuda.rows_source.SOURCE`
    rows: int  #: rows (one block each, grid-stride beyond :data:`MAX_GRID`)
    length: int  #: elements per row (sets the block size)
    inputs: tuple  #: input arrays (pointers), before the outputs
    outputs: tuple  #: output arrays; ``outputs[0]`` is the result
    scalars: tuple  #: numpy-typed scalars after the pointers (int64, float64, int32)


def launch_size(rows: int, length: int) -> tuple[int, int]:
    """(grid, block): a block per row up to :data:`MAX_GRID`; the block a power of two from 32
    (a warp) to :data:`~fw_cuda.rows_source.MAX_BLOCK`, no wider than the row needs."""
    block = min(MAX_BLOCK, max(32, 1 << max(length - 1, 0).bit_length()))
    return min(rows, MAX_GRID), block


def _floating(*arrays) -> str | None:
    """The entry-point suffix when every array has one float dtype we compile, else None."""
    dtypes = {np.dtype(a.dtype) for a in arrays}
    return _SUFFIX.get(dtypes.pop()) if len(dtypes) == 1 else None


def softmax_launch(xp, x, dim, mode: str) -> Launch | None:
    """softmax / safe_softmax / log_softmax (``mode``) of ``x`` along ``dim``: ``x`` viewed as
    (outer, n, inner), row (o, i) one block."""
    sfx = _floating(x)
    if sfx is None or x.ndim == 0 or x.size == 0 or not isinstance(dim, (int, np.integer)) or \
            not -x.ndim <= dim < x.ndim:
        return None
    axis = int(dim) % x.ndim
    outer, n, inner = math.prod(x.shape[:axis]), x.shape[axis], math.prod(x.shape[axis + 1:])
    x = xp.ascontiguousarray(x)
    return Launch(f"fw_softmax_{sfx}", outer * inner, n, (x,), (xp.empty_like(x),),
                  (np.int64(outer), np.int64(n), np.int64(inner), np.int32(_MODES[mode])))


def norm_launch(xp, x, weight, bias, normalized_shape, eps, center: bool) -> Launch | None:
    """layer norm (``center``) or RMS norm over the trailing ``normalized_shape`` of ``x``."""
    if isinstance(normalized_shape, (int, np.integer)):
        return None  # not a shape: the generic kernel says so
    shape = tuple(normalized_shape)
    params = [p for p in (weight, bias) if p is not None]
    sfx = _floating(x, *params)
    k = len(shape)
    if sfx is None or x.ndim == 0 or x.size == 0 or k > x.ndim or \
            tuple(x.shape[x.ndim - k:]) != shape or any(tuple(p.shape) != shape for p in params):
        return None
    n = math.prod(shape)
    flags = (np.int32(weight is not None), np.int32(bias is not None))
    x = xp.ascontiguousarray(x)
    weight, bias = (x if p is None else xp.ascontiguousarray(p) for p in (weight, bias))
    return Launch(f"fw_norm_{sfx}", x.size // n, n, (x, weight, bias), (xp.empty_like(x),),
                  (np.int64(x.size // n), np.int64(n), np.float64(eps), np.int32(center),
                   *flags))


def attention_geometry(q_shape, k_shape, mask_shape) -> tuple[tuple, tuple | None] | None:
    """(scores shape, the shape a mask is made contiguous in) for q (..., L, E), k (..., S, E):
    an (L, S) copy when the mask repeats for every head, else the whole scores shape. None when
    the shapes do not fit (the generic kernel raises)."""
    try:
        batch = np.broadcast_shapes(tuple(q_shape[:-2]), tuple(k_shape[:-2]))
        scores = tuple(batch) + (q_shape[-2], k_shape[-2])
        if mask_shape is None:
            return scores, None
        if np.broadcast_shapes(tuple(mask_shape), scores) != scores:
            return None
    except ValueError:
        return None
    shared = all(d == 1 for d in tuple(mask_shape)[:-2])
    return scores, (scores[-2:] if shared else scores)


def attention_launch(xp, q, k, mask, keep, scale, is_causal, dropout_p) -> Launch | None:
    """The attention-weights launch between the two products: computes ``scores = q @ k^T`` (in
    float for half inputs, as on the CPU) with ``xp.matmul``; the kernel turns them into the
    weights in place (``outputs[0]``)."""
    sfx = _floating(q, k)
    if sfx is None or min(q.ndim, k.ndim) < 2 or q.shape[-1] != k.shape[-1]:
        return None
    if mask is not None and not is_causal and mask.dtype.kind not in "bf":
        return None
    geometry = attention_geometry(q.shape, k.shape, None if is_causal or mask is None
                                  else mask.shape)
    if geometry is None or math.prod(geometry[0]) == 0:
        return None
    scores_shape, mask_layout = geometry
    if keep is not None and (keep.dtype != np.bool_ or tuple(keep.shape) != scores_shape):
        return None
    wide = np.float64 if sfx == "f64" else np.float32
    scores = xp.ascontiguousarray(xp.matmul(q.astype(wide, copy=False),
                                            xp.swapaxes(k.astype(wide, copy=False), -1, -2)))
    queries, length = scores_shape[-2:]
    rows = scores.size // length
    flag = xp.empty(1, dtype=np.bool_)  # stands in for an absent bool mask or keep mask
    bool_mask, add_mask, kind, mask_rows = flag, scores, "none", 1
    if is_causal:
        kind = "causal"
    elif mask is not None:
        laid = xp.ascontiguousarray(xp.broadcast_to(mask, mask_layout))
        mask_rows = math.prod(mask_layout[:-1])
        if mask.dtype == np.bool_:
            kind, bool_mask = "bool", laid
        else:
            kind, add_mask = "additive", laid.astype(wide, copy=False)
    drop = 0.0 if dropout_p >= 1.0 else 1.0 / (1.0 - dropout_p)
    keep = flag if keep is None else xp.ascontiguousarray(keep)
    return Launch(f"fw_attention_{'f64' if sfx == 'f64' else 'f32'}", rows, length,
                  (scores, bool_mask, add_mask, keep), (scores,),
                  (np.int64(rows), np.int64(length), np.int64(queries), np.int64(mask_rows),
                   np.float64(scale), np.int32(_MASK_KINDS[kind]),
                   np.int32(dropout_p > 0), np.float64(drop)))


def attention_output(xp, weights, v, dtype):
    """``weights @ v`` (v widened like the scores), rounded to the inputs' dtype."""
    return xp.matmul(weights, v.astype(weights.dtype, copy=False)).astype(dtype, copy=False)


_module = RawModule(SOURCE, KERNELS)


def _run(launch: Launch):
    """``launch`` on the GPU; its result array."""
    _module.launch(launch.kernel, *launch_size(launch.rows, launch.length),
                   (*launch.inputs, *launch.outputs, *launch.scalars))
    return launch.outputs[0]


def guards(xp) -> dict:
    """{row op: its guard}: each plans the call's launch (arrays prepared with ``xp``) and
    returns the function that runs it, or None where the generic kernel must run; the dispatch
    chain then hands the call on. On CuPy they are the ``cuda`` device's guarded row kernels."""
    return {"softmax": partial(_softmax_guard, xp, "softmax"),
            "safe_softmax": partial(_softmax_guard, xp, "safe_softmax"),
            "log_softmax": partial(_softmax_guard, xp, "log_softmax"),
            "layer_norm": partial(_layer_norm_guard, xp), "rms_norm": partial(_rms_norm_guard, xp),
            "scaled_dot_product_attention": partial(_attention_guard, xp)}


def _launched(launch: Launch, *arrays, **attrs):
    """Run a planned launch (the call's arrays are in it already); its first output."""
    return _run(launch)


def _planned(launch: Launch | None):
    return None if launch is None else partial(_launched, launch)


def _softmax_guard(xp, mode, x, dim):
    return _planned(softmax_launch(xp, x, dim, mode))


def _layer_norm_guard(xp, x, *tensors, normalized_shape, eps, has_weight, has_bias):
    if len(tensors) != has_weight + has_bias:
        return None
    it = iter(tensors)
    weight, bias = (next(it) if flag else None for flag in (has_weight, has_bias))
    return _planned(norm_launch(xp, x, weight, bias, normalized_shape, eps, center=True))


def _rms_norm_guard(xp, x, *tensors, normalized_shape, eps, has_weight):
    if len(tensors) != has_weight:
        return None
    weight = tensors[0] if has_weight else None
    return _planned(norm_launch(xp, x, weight, None, normalized_shape, eps, center=False))


def _attention_guard(xp, q, k, v, *extra, scale, is_causal, dropout_p, has_mask):
    if not (q.dtype == k.dtype == v.dtype and v.ndim >= 2 and k.shape[-2:-1] == v.shape[-2:-1]
            and len(extra) == has_mask + (dropout_p > 0)):
        return None
    mask = extra[0] if has_mask else None
    keep = extra[-1] if dropout_p > 0 else None
    launch = attention_launch(xp, q, k, mask, keep, scale, is_causal, dropout_p)
    return None if launch is None else partial(_attended, xp, launch)


def _attended(xp, launch: Launch, q, k, v, *extra, **attrs):
    """Run a planned attention launch: the scores' pass, then the product with ``v``."""
    return attention_output(xp, _run(launch), v, q.dtype)
