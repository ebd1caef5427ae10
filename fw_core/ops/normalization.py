"""Normalisations: batch_norm, layer_norm, group_norm and rms_norm.

Each forward is one fused kernel (``fw_cpu/kernels/nn.py``); each VJP is written with fw ops, so
it runs on every device and can be differentiated again. All are REDUCTION ops: each output
combines every input of its slice (the normalised axes, a channel's batch), so the Jacobian is
block-diagonal with one dense block per slice. batch_norm's kernel also writes the running
statistics it is given (its contract's ``effects``).
"""

from __future__ import annotations

__all__ = ["batch_norm", "group_norm", "layer_norm", "rms_norm"]

import math

import numpy as np

from .. import capture
from .. import dtypes as _dt
from ..errors import (
    FwError,
    ShapeError,
)
from ..records import Structure, TensorSpec
from . import anchors, reduction, shape
from .dispatch import apply
from .elementwise import rsqrt
from .meta import argument_error, located, require_floating
from .nn import meta_error
from .registry import define_op

_NORM_POLE = anchors.pole("zero variance: the eps keeps the gradient finite, but a (nearly) "
                          "constant slice makes the output and its gradient scale like "
                          "1/sqrt(eps)")


def _standardized(x, axes, eps):
    """``(x - mean) / sqrt(var + eps)`` over ``axes`` and the ``1/sqrt(var + eps)``, in fw ops."""
    centered = x - reduction.mean(x, dim=axes, keepdim=True)
    invstd = rsqrt(reduction.mean(centered * centered, dim=axes, keepdim=True) + eps)
    return centered * invstd, invstd


def _standardize_vjp(g_xhat, xhat, invstd, axes):
    """The gradient w.r.t. x of ``xhat = standardize(x)`` over ``axes``, given d/dxhat."""
    return (g_xhat - reduction.mean(g_xhat, dim=axes, keepdim=True)
            - xhat * reduction.mean(g_xhat * xhat, dim=axes, keepdim=True)) * invstd


def _sum_over(x, axes):
    """``x`` summed over ``axes`` (``x`` itself when there are none: sum(dim=()) sums all)."""
    return reduction.sum(x, dim=axes) if axes else x


def _params(tensors, flags):
    """Split the optional trailing inputs of a norm op by its has_* flags (None when absent)."""
    it = iter(tensors)
    return [next(it) if present else None for present in flags]


def _check_param(op, what, spec, expected):
    if spec is None:
        return
    if tuple(spec.shape) != tuple(expected):
        raise ShapeError(f"{what} has shape {tuple(spec.shape)}, expected {tuple(expected)}",
                         op=op, hint=f"give {what} one entry per normalised feature")
    require_floating(spec, op)


def _channel_view(t, ndim):
    """A (C,) tensor shaped to broadcast against an (N, C, *) tensor of ``ndim`` dims."""
    return t if ndim <= 2 else shape.reshape(t, (-1,) + (1,) * (ndim - 2))


def _norm_op(name, doc, signature, meta, vjp, anchor=_NORM_POLE, effects=()):
    """A normalisation's contract: REDUCTION over its normalised slices, VJP from its inputs."""
    return define_op(name, family="nn", builtin=True, doc=doc, signature=signature, meta=meta,
                     vjp=vjp, structure=Structure.REDUCTION, anchor=anchor, saves=("inputs",),
                     effects=effects)


def _batch_norm_meta(x, *tensors, training, momentum, eps, has_running, has_weight, has_bias):
    require_floating(x, "batch_norm")
    if len(x.shape) < 2:
        raise ShapeError(f"expects an (N, C) or (N, C, *) input, got shape {tuple(x.shape)}",
                         op="batch_norm", hint="add a batch dimension: x.unsqueeze(0)")
    channels = x.shape[1]
    running_mean, running_var, weight, bias = _params(
        tensors, (has_running, has_running, has_weight, has_bias))
    for what, spec in (("running_mean", running_mean), ("running_var", running_var),
                       ("weight", weight), ("bias", bias)):
        _check_param("batch_norm", what, spec, (channels,))
    if training and math.prod(x.shape) // max(channels, 1) == 1:
        raise ShapeError(f"expected more than 1 value per channel when training, got input "
                         f"shape {tuple(x.shape)}", op="batch_norm",
                         hint="use a batch of at least 2, or evaluation mode (training=False)")
    return TensorSpec(tuple(x.shape), x.dtype)


def _batch_norm_vjp(ctx, g):
    x, *tensors = ctx.inputs
    a = ctx.attrs
    running_mean, running_var, weight, bias = _params(
        tensors, (a["has_running"], a["has_running"], a["has_weight"], a["has_bias"]))
    axes = (0, *range(2, x.ndim))
    if a["training"]:
        xhat, invstd = _standardized(x, axes, a["eps"])
    else:
        invstd = rsqrt(_channel_view(running_var, x.ndim) + a["eps"])
        xhat = (x - _channel_view(running_mean, x.ndim)) * invstd
    g_xhat = g if weight is None else g * _channel_view(weight, x.ndim)
    gx = None
    if ctx.next[0] is not None:
        gx = (_standardize_vjp(g_xhat, xhat, invstd, axes) if a["training"]
              else g_xhat * invstd)
    grads = [gx] + [None] * (2 if a["has_running"] else 0)
    if weight is not None:
        grads.append(reduction.sum(g * xhat, dim=axes) if ctx.next[len(grads)] is not None
                     else None)
    if bias is not None:
        grads.append(reduction.sum(g, dim=axes) if ctx.next[len(grads)] is not None else None)
    return tuple(grads)


BATCH_NORM = _norm_op(
    "batch_norm",
    "(x - mean) / sqrt(var + eps) * weight + bias per channel (dim 1), with the batch's "
    "statistics when training (the kernel then also updates running_mean/running_var in place, "
    "with the unbiased variance: the op's one declared side effect), else the running "
    "statistics.",
    "batch_norm(x: Tensor[N, C, *], running_mean: Tensor[C] | None, running_var: Tensor[C] | "
    "None, weight: Tensor[C] | None, bias: Tensor[C] | None, training: bool, momentum: float, "
    "eps: float) -> Tensor[N, C, *]",
    _batch_norm_meta, _batch_norm_vjp, effects=(1, 2))  # running_mean, running_var


def batch_norm(x, running_mean=None, running_var=None, weight=None, bias=None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5):
    """Normalise each channel (dim 1) of an (N, C) or (N, C, *) batch, then scale and shift.

    In training mode the batch's mean and (biased) variance normalise ``x`` and, when given,
    ``running_mean``/``running_var`` are updated in place as PyTorch does:
    ``running = (1 - momentum) * running + momentum * batch_stat`` (unbiased variance). The
    update is not recorded for autograd. In evaluation mode the running statistics are used.

    Args:
        x: floating-point input of shape (N, C) or (N, C, *).
        running_mean, running_var: (C,) tensors, both or neither (needed when not training).
        weight, bias: optional (C,) affine parameters.
        training: use batch statistics (and update the running ones).
        momentum: weight of the new batch statistic in the running average.
        eps: added to the variance, keeping 1/sqrt(var + eps) finite.

    Raises:
        ShapeError: wrong parameter shapes, or one value per channel while training.
    """
    try:
        if (running_mean is None) != (running_var is None):
            raise argument_error("batch_norm", "running_mean and running_var must be given "
                                 "together", "pass both running statistics, or neither",
                                 values=(x,),
                                 running_mean=running_mean, running_var=running_var)
        has_running = running_mean is not None
        if not training and not has_running:
            raise argument_error("batch_norm", "running_mean must be defined in evaluation mode",
                                 "pass the running statistics, or training=True to use the batch's",
                                 values=(x,), running_mean=None, training=training)
        if momentum is None:
            raise argument_error("batch_norm", "momentum must be a float",
                                 "pass the averaging factor; nn.BatchNorm computes the cumulative-"
                                 "average factor itself when its momentum is None", values=(x,),
                                 momentum=momentum)
        inputs = (x, *((running_mean, running_var) if has_running else ()),
                  *(t for t in (weight, bias) if t is not None))
        attrs = {"training": bool(training), "momentum": float(momentum), "eps": float(eps),
                 "has_running": has_running, "has_weight": weight is not None,
                 "has_bias": bias is not None}
        data = x._data
        if not _dt.is_float(data.dtype) or data.ndim < 2 or (
                training and data.shape[1] and data.size == data.shape[1]):
            raise meta_error(BATCH_NORM, inputs, attrs)
        if training and has_running:
            from ..tensor_methods import bump_version  # binds every family: import it late

            # before apply: the node then records the updated version, so backward still works
            capture.kernel_writes(running_mean, running_var)  # a replay writes them again
            bump_version(running_mean)
            bump_version(running_var)
        return apply(BATCH_NORM, inputs, attrs)
    except FwError as err:
        raise located(err, "batch_norm", (x, running_mean, running_var, weight, bias),
                      training=training, momentum=momentum, eps=eps) from None


def _trailing(shape_, normalized_shape) -> bool:
    """Whether ``normalized_shape`` (non-empty) is the trailing part of ``shape_``."""
    k = len(normalized_shape)
    return 0 < k <= len(shape_) and tuple(shape_[len(shape_) - k:]) == tuple(normalized_shape)


def _check_trailing(op, x, normalized_shape):
    require_floating(x, op)
    if not _trailing(x.shape, normalized_shape):
        raise ShapeError(f"normalized_shape {tuple(normalized_shape)} does not match the last "
                         f"dimensions of an input of shape {tuple(x.shape)}", op=op,
                         hint="normalized_shape must be non-empty and equal "
                         "x.shape[-len(normalized_shape):]")


def _layer_norm_meta(x, *tensors, normalized_shape, eps, has_weight, has_bias):
    _check_trailing("layer_norm", x, normalized_shape)
    weight, bias = _params(tensors, (has_weight, has_bias))
    _check_param("layer_norm", "weight", weight, normalized_shape)
    _check_param("layer_norm", "bias", bias, normalized_shape)
    return TensorSpec(tuple(x.shape), x.dtype)


def _layer_norm_vjp(ctx, g):
    x, *tensors = ctx.inputs
    a = ctx.attrs
    weight, bias = _params(tensors, (a["has_weight"], a["has_bias"]))
    k = len(a["normalized_shape"])
    axes = tuple(range(x.ndim - k, x.ndim))
    lead = tuple(range(x.ndim - k))
    xhat, invstd = _standardized(x, axes, a["eps"])
    grads = [_standardize_vjp(g if weight is None else g * weight, xhat, invstd, axes)
             if ctx.next[0] is not None else None]
    if weight is not None:
        grads.append(_sum_over(g * xhat, lead) if ctx.next[1] is not None else None)
    if bias is not None:
        grads.append(_sum_over(g, lead) if ctx.next[len(grads)] is not None else None)
    return tuple(grads)


LAYER_NORM = _norm_op(
    "layer_norm",
    "(x - mean) / sqrt(var + eps) * weight + bias, with the mean and biased variance over the "
    "last len(normalized_shape) dimensions of each sample.",
    "layer_norm(x: Tensor[*, *normalized_shape], normalized_shape: tuple[int, ...], weight: "
    "Tensor | None, bias: Tensor | None, eps: float) -> Tensor",
    _layer_norm_meta, _layer_norm_vjp)


def _as_shape(normalized_shape) -> tuple[int, ...]:
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(int(s) for s in normalized_shape)


def layer_norm(x, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    """Normalise each sample over its last ``len(normalized_shape)`` dimensions.

    Args:
        x: floating-point input whose trailing dimensions equal ``normalized_shape``.
        normalized_shape: an int or a tuple (the normalised trailing shape).
        weight, bias: optional tensors of shape ``normalized_shape``.
        eps: added to the (biased) variance.

    Raises:
        ShapeError: ``normalized_shape`` or the parameters do not match ``x``.
    """
    try:
        normalized_shape = _as_shape(normalized_shape)
        inputs = (x, *(t for t in (weight, bias) if t is not None))
        attrs = {"normalized_shape": normalized_shape, "eps": float(eps),
                 "has_weight": weight is not None, "has_bias": bias is not None}
        if not _dt.is_float(x._data.dtype) or not _trailing(x._data.shape, normalized_shape):
            raise meta_error(LAYER_NORM, inputs, attrs)
        return apply(LAYER_NORM, inputs, attrs)
    except FwError as err:
        raise located(err, "layer_norm", (x, weight, bias), normalized_shape=normalized_shape,
                      eps=eps) from None


def _group_norm_meta(x, *tensors, num_groups, eps, has_weight, has_bias):
    require_floating(x, "group_norm")
    if len(x.shape) < 2:
        raise ShapeError(f"expects an (N, C, *) input, got shape {tuple(x.shape)}",
                         op="group_norm", hint="add a batch dimension: x.unsqueeze(0)")
    channels = x.shape[1]
    if num_groups <= 0 or channels % num_groups:
        raise ShapeError(f"{channels} channels cannot be split into {num_groups} groups",
                         op="group_norm",
                         hint="num_groups must be positive and divide the channel count")
    weight, bias = _params(tensors, (has_weight, has_bias))
    _check_param("group_norm", "weight", weight, (channels,))
    _check_param("group_norm", "bias", bias, (channels,))
    return TensorSpec(tuple(x.shape), x.dtype)


def _group_norm_vjp(ctx, g):
    x, *tensors = ctx.inputs
    a = ctx.attrs
    weight, bias = _params(tensors, (a["has_weight"], a["has_bias"]))
    grouped = (x.shape[0], a["num_groups"], -1)
    xhat_g, invstd = _standardized(shape.reshape(x, grouped), (2,), a["eps"])
    xhat = shape.reshape(xhat_g, x.shape)
    channel_axes = (0, *range(2, x.ndim))
    grads = [None]
    if ctx.next[0] is not None:
        g_xhat = g if weight is None else g * _channel_view(weight, x.ndim)
        grads[0] = shape.reshape(
            _standardize_vjp(shape.reshape(g_xhat, grouped), xhat_g, invstd, (2,)), x.shape)
    if weight is not None:
        grads.append(reduction.sum(g * xhat, dim=channel_axes) if ctx.next[1] is not None
                     else None)
    if bias is not None:
        grads.append(reduction.sum(g, dim=channel_axes) if ctx.next[len(grads)] is not None
                     else None)
    return tuple(grads)


GROUP_NORM = _norm_op(
    "group_norm",
    "Split the C channels of each sample into num_groups groups, normalise each group (mean "
    "and biased variance over its channels and positions), then scale and shift per channel.",
    "group_norm(x: Tensor[N, C, *], num_groups: int, weight: Tensor[C] | None, bias: Tensor[C] "
    "| None, eps: float) -> Tensor[N, C, *]",
    _group_norm_meta, _group_norm_vjp)


def group_norm(x, num_groups: int, weight=None, bias=None, eps: float = 1e-5):
    """Group normalisation of an (N, C, *) input (channels split into ``num_groups``).

    Raises:
        ShapeError: ``num_groups`` does not divide C, or the parameters are not (C,).
    """
    try:
        inputs = (x, *(t for t in (weight, bias) if t is not None))
        attrs = {"num_groups": int(num_groups), "eps": float(eps), "has_weight": weight is not None,
                 "has_bias": bias is not None}
        data = x._data
        if not _dt.is_float(data.dtype) or data.ndim < 2 or num_groups <= 0 or \
                data.shape[1] % num_groups:
            raise meta_error(GROUP_NORM, inputs, attrs)
        return apply(GROUP_NORM, inputs, attrs)
    except FwError as err:
        raise located(err, "group_norm", (x, weight, bias), num_groups=num_groups,
                      eps=eps) from None


def _rms_norm_meta(x, *tensors, normalized_shape, eps, has_weight):
    _check_trailing("rms_norm", x, normalized_shape)
    (weight,) = _params(tensors, (has_weight,))
    _check_param("rms_norm", "weight", weight, normalized_shape)
    return TensorSpec(tuple(x.shape), x.dtype)


def _rms_norm_vjp(ctx, g):
    x, *tensors = ctx.inputs
    a = ctx.attrs
    k = len(a["normalized_shape"])
    axes = tuple(range(x.ndim - k, x.ndim))
    r = rsqrt(reduction.mean(x * x, dim=axes, keepdim=True) + a["eps"])
    weight = tensors[0] if a["has_weight"] else None
    gy = g if weight is None else g * weight
    grads = [None]
    if ctx.next[0] is not None:
        # y = x r with r = (mean(x^2) + eps)^-1/2, so dr/dx = -r^3 x / n
        grads[0] = (gy - x * (r * r) * reduction.mean(gy * x, dim=axes, keepdim=True)) * r
    if weight is not None:
        grads.append(_sum_over(g * x * r, tuple(range(x.ndim - k)))
                     if ctx.next[1] is not None else None)
    return tuple(grads)


RMS_NORM = _norm_op(
    "rms_norm",
    "x / sqrt(mean(x^2) + eps) * weight, the mean over the last len(normalized_shape) "
    "dimensions (no centering).",
    "rms_norm(x: Tensor[*, *normalized_shape], normalized_shape: tuple[int, ...], weight: "
    "Tensor | None, eps: float | None) -> Tensor",
    _rms_norm_meta, _rms_norm_vjp,
    anchors.pole("an all-zero slice: the eps keeps 1/sqrt(mean(x^2) + eps) finite, but its "
                 "gradient scales like 1/sqrt(eps)"))


def rms_norm(x, normalized_shape, weight=None, eps: float | None = None):
    """Root-mean-square normalisation over the last ``len(normalized_shape)`` dimensions.

    ``eps=None`` uses the machine epsilon of x's dtype (float32's for half inputs), as PyTorch.
    """
    try:
        normalized_shape = _as_shape(normalized_shape)
        data = x._data
        if eps is None:
            eps = float(np.finfo(np.float32 if data.dtype == np.float16 else data.dtype).eps) \
                if _dt.is_float(data.dtype) else 0.0
        inputs = (x,) if weight is None else (x, weight)
        attrs = {"normalized_shape": normalized_shape, "eps": float(eps),
                 "has_weight": weight is not None}
        if not _dt.is_float(data.dtype) or not _trailing(data.shape, normalized_shape):
            raise meta_error(RMS_NORM, inputs, attrs)
        return apply(RMS_NORM, inputs, attrs)
    except FwError as err:
        raise located(err, "rms_norm", (x, weight), normalized_shape=normalized_shape,
                      eps=eps) from None
