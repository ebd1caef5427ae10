"""Normalisations: ``layer_norm`` and ``rms_norm`` over the trailing ``normalized_shape``,
``group_norm`` over groups of channels, ``batch_norm`` in eval mode (the running statistics).
The optional weight and bias arrive as the inputs their ``has_*`` flags say are present; the
statistics are computed per row in small working arrays, the result in the output's buffer
(half precision in a float32 working array)."""

from __future__ import annotations

import math

import numpy as np

from ..errors import EdgeError
from ..kernel_api import Kernel, Writes


def _present(tensors, flags):
    """The optional inputs by flag: the present ones in order, None where a flag is off."""
    it = iter(tensors)
    return [next(it) if flag else None for flag in flags]


def _standardizer(spec, rows: int, width: int, eps: float, center: bool):
    """``fn(work, x)``: ``x`` (``rows`` x ``width`` elements) into the 2-d ``work`` with each
    row centred (if ``center``) and scaled to unit mean square plus ``eps``.

    Four passes over the rows (two without centring): their means as one matrix-vector
    product against a column of ``1 / width``, the centring into ``work``, the sums of squares
    as row dot products (``np.vecdot``), the scaling by each row's reciprocal root into
    ``work``; the arithmetic between is on ``rows`` numbers."""
    dtype = np.dtype(np.float32) if spec.out.dtype == np.float16 else spec.out.dtype
    mean, scale = spec.scratch((rows, 1), dtype), spec.scratch((rows, 1), dtype)
    inv = dtype.type(1.0 / width if width else np.nan)
    averaging = np.full((width, 1), inv, dtype)
    eps = dtype.type(eps)
    cast = spec.inputs[0].dtype != dtype  # half precision: into the float32 work array first

    def run(work, x):
        x = x.reshape(rows, width)
        if cast:
            np.copyto(work, x, casting="unsafe")
            x = work
        if center:
            np.matmul(x, averaging, out=mean)
            np.subtract(x, mean, out=work)
            x = work
        np.vecdot(x, x, out=scale[:, 0])  # half einsum's cost at BERT's rows
        np.multiply(scale, inv, out=scale)
        np.add(scale, eps, out=scale)
        np.sqrt(scale, out=scale)
        np.true_divide(1, scale, out=scale)
        np.multiply(x, scale, out=work)
    return run, dtype


def _normalization(spec, rows, width, center, weight, bias, affine_shape):
    """The Writes step: standardise rows, then the weight and bias viewed as
    ``affine_shape``."""
    out = spec.out
    standardize, dtype = _standardizer(spec, rows, width, spec.attrs["eps"], center)
    wide = dtype != out.dtype
    work = spec.scratch((rows, width), dtype) if wide else None
    n_extra = (weight is not None) + (bias is not None)
    shape = out.shape
    multiply, add = np.multiply, np.add

    def run(o, x, *tensors):
        rows_out = work if wide else o.reshape(rows, width)
        standardize(rows_out, x)
        target = rows_out.reshape(shape)
        if weight is not None:
            multiply(target, tensors[0].reshape(affine_shape), out=target)
        if bias is not None:
            add(target, tensors[n_extra - 1].reshape(affine_shape), out=target)
        if wide:
            np.copyto(o, target, casting="unsafe")
    return Writes(run)


def layer_norm(spec, center=True):
    """``x`` standardised over its trailing ``normalized_shape`` axes, then scaled and
    shifted."""
    a = spec.attrs
    k = len(a["normalized_shape"])
    shape = spec.out.shape
    if tuple(shape[len(shape) - k:]) != tuple(a["normalized_shape"]):
        raise EdgeError(f"{spec.where}: normalized_shape {a['normalized_shape']} does not "
                        f"end the input's shape {shape}; export the model again")
    width = math.prod(shape[len(shape) - k:])
    weight, bias = _present(spec.inputs[1:], (a.get("has_weight"), a.get("has_bias")))
    return _normalization(spec, math.prod(shape[:len(shape) - k]), width, center, weight,
                          bias, (-1,))


def rms_norm(spec):
    """``x`` over its root mean square on the trailing axes (not centred), then scaled."""
    return layer_norm(spec, center=False)


def group_norm(spec):
    """``x`` (N, C, *) standardised per sample over each of ``num_groups`` channel groups,
    then scaled and shifted per channel."""
    a, shape = spec.attrs, spec.out.shape
    groups = a["num_groups"]
    weight, bias = _present(spec.inputs[1:], (a.get("has_weight"), a.get("has_bias")))
    return _normalization(spec, shape[0] * groups, math.prod(shape[1:]) // groups, True,
                          weight, bias, (1, shape[1]) + (1,) * (len(shape) - 2))


def batch_norm(spec):
    """Eval-mode batch norm of ``x`` (N, C, *): ``(x - mean) / sqrt(var + eps) * w + b`` per
    channel from the running statistics, folded into one scale and shift per call."""
    a = spec.attrs
    if a.get("training") or not a.get("has_running"):
        raise EdgeError(f"{spec.where} normalises by batch statistics (training mode): a "
                        "program runs inference; export the model after model.eval()")
    mean, var, weight, bias = _present(spec.inputs[1:], (True, True, a.get("has_weight"),
                                                         a.get("has_bias")))
    channels, out = spec.out.shape[1], spec.out
    view = (channels,) + (1,) * (len(out.shape) - 2)
    dtype = np.dtype(np.float32) if out.dtype == np.float16 else out.dtype
    scale, shift = spec.scratch((channels,), dtype), spec.scratch((channels,), dtype)
    eps = dtype.type(a["eps"])

    def run(o, x, m, v, *affine):
        np.add(v, eps, out=scale)
        np.sqrt(scale, out=scale)
        np.true_divide(1, scale, out=scale)
        if weight is not None:
            np.multiply(scale, affine[0], out=scale)
        np.multiply(m, scale, out=shift)
        np.negative(shift, out=shift)
        if bias is not None:
            np.add(shift, affine[-1], out=shift)
        np.multiply(x, scale.reshape(view), out=o, casting="unsafe")
        np.add(o, shift.reshape(view), out=o, casting="unsafe")
    return Writes(run)


KERNELS = [Kernel("layer_norm", layer_norm), Kernel("rms_norm", rms_norm),
           Kernel("group_norm", group_norm), Kernel("batch_norm", batch_norm)]
