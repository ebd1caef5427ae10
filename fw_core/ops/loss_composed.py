"""Regression and likelihood losses written as compositions of differentiable fw ops, with
PyTorch's semantics (the margin and embedding losses are in :mod:`fw_core.ops.loss_margin`).

None of these needs a kernel of its own: each is a few elementwise ops and a reduction, so
autograd (and double backward) comes from the ops it is built of. Like PyTorch's functional
forms they accept the deprecated ``size_average`` / ``reduce`` flags where PyTorch does, mapped
onto ``reduction`` by :func:`fw_core.ops.loss.legacy_reduction`.
"""

# ruff: noqa: A002 - PyTorch's argument name ``input``
from __future__ import annotations

__all__ = ["gaussian_nll_loss", "huber_loss", "poisson_nll_loss"]

import math

from ..errors import ArgumentError, FwError, ShapeError
from . import reduction as _reduction
from .creation import full_like
from .elementwise import exp, log, where
from .loss import _check_reduction, _pair_meta, legacy_reduction, smooth_l1_loss
from .meta import argument_error, broadcast_shapes, located, spec_of
from .shape import unsqueeze


def reduce_loss(loss, reduction: str):
    """The per-element ``loss`` reduced as 'mean', 'sum' or 'none' asks (already checked)."""
    if reduction == "mean":
        return _reduction.mean(loss)
    if reduction == "sum":
        return _reduction.sum(loss)
    return loss


def check_broadcast(op: str, *tensors) -> None:
    """Raise the loss's own ShapeError when its elementwise inputs do not broadcast."""
    broadcast_shapes(*(tuple(t.shape) for t in tensors), op=op)


def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0, weight=None):
    """Huber loss: 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta), d = input - target.

    Equal to ``delta * smooth_l1_loss(input, target, beta=delta)``: unlike smooth_l1, the linear
    part has slope delta, so the loss is not rescaled by 1 / beta near 0. ``weight`` (the
    input's shape) multiplies each element before the reduction; 'mean' then averages over
    the elements, as PyTorch does.

    Raises:
        ArgumentError: delta <= 0, or a bad reduction.
        ShapeError: input and target (or weight) shapes differ.
    """
    try:
        _check_reduction("huber_loss", reduction)
        if not delta > 0:
            raise ArgumentError(f"delta must be positive, got {delta}", op="huber_loss",
                                hint="delta is where the loss turns from quadratic to linear")
        _pair_meta("huber_loss")(spec_of(input), spec_of(target), reduction=reduction)
        if weight is None:
            return smooth_l1_loss(input, target, reduction=reduction, beta=float(delta)) * delta
        if tuple(weight.shape) != tuple(input.shape):
            raise ShapeError(f"weight shape {tuple(weight.shape)} differs from the input shape "
                             f"{tuple(input.shape)}", op="huber_loss",
                             hint="give one weight per element")
        loss = smooth_l1_loss(input, target, reduction="none", beta=float(delta)) * delta
        return reduce_loss(loss * weight, reduction)
    except FwError as err:
        raise located(err, "huber_loss", (input, target), reduction=reduction,
                      delta=delta) from None


def poisson_nll_loss(input, target, log_input: bool = True, full: bool = False,
                     size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean"):
    """Negative log-likelihood of ``target`` counts under Poisson(rate), up to a constant.

    ``log_input=True``: input is log(rate), loss exp(input) - target input; otherwise input is
    the rate, loss input - target log(input + eps). ``full=True`` adds Stirling's approximation
    of log(target!), t log t - t + 0.5 log(2 pi t), for targets above 1 (0 elsewhere).
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    try:
        _check_reduction("poisson_nll_loss", reduction)
        check_broadcast("poisson_nll_loss", input, target)
        if log_input:
            loss = exp(input) - target * input
        else:
            loss = input - target * log(input + eps)
        if full:
            above = target > 1
            safe = where(above, target, 2.0)  # keeps log's gradient finite where masked off
            stirling = safe * log(safe) - safe + 0.5 * log(2 * math.pi * safe)
            loss = loss + where(above, stirling, 0.0)
        return reduce_loss(loss, reduction)
    except FwError as err:
        raise located(err, "poisson_nll_loss", (input, target), log_input=log_input,
                      full=full, reduction=reduction) from None


def _gaussian_var(input, var):
    """``var`` shaped to broadcast against ``input`` by PyTorch's rules, or a ShapeError."""
    if not hasattr(var, "shape"):
        return full_like(input, var)  # a float: the same variance everywhere
    in_shape, var_shape = tuple(input.shape), tuple(var.shape)
    if var_shape == in_shape:
        return var
    if var_shape == in_shape[:-1]:  # one variance per sample, shared by its last dimension
        return unsqueeze(var, -1)
    if len(var_shape) == len(in_shape) and sum(
            v for i, v in zip(in_shape, var_shape, strict=True) if i != v) == 1:
        return var  # exactly one dimension of size 1 where the input's differs
    raise ShapeError(f"var is of incorrect size: input {in_shape}, var {var_shape}",
                     op="gaussian_nll_loss",
                     hint="give var the input's shape, the input's shape without its last "
                     "dimension, or the input's shape with one dimension set to 1")


def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean"):
    """Negative log-likelihood of ``target`` under Normal(input, var):
    0.5 (log(max(var, eps)) + (input - target)^2 / max(var, eps)) (+ 0.5 log(2 pi) if full).

    ``var`` is a float, or a tensor of the input's shape, of the input's shape without its last
    dimension (one variance per sample), or of the input's shape with one dimension set to 1.
    As in PyTorch, the clamp to ``eps`` does not block var's gradient: a clamped variance still
    learns.

    Raises:
        ArgumentError: a negative variance, or a bad reduction.
        ShapeError: var's shape fits none of PyTorch's rules.
    """
    try:
        _check_reduction("gaussian_nll_loss", reduction)
        negative = var < 0 if not hasattr(var, "shape") else bool(
            _reduction.any(var < 0).item())
        if negative:
            raise argument_error("gaussian_nll_loss", "var has negative entry/entries",
                                 "a variance is >= 0: pass exp(log_var) or softplus(raw)",
                                 values=(input, target))
        var = _gaussian_var(input, var)
        # eps where var < eps, with var's gradient passing through unchanged (straight through)
        var = where(var < eps, var - var.detach() + eps, var)
        loss = 0.5 * (log(var) + (input - target) ** 2 / var)
        if full:
            loss = loss + 0.5 * math.log(2 * math.pi)
        return reduce_loss(loss, reduction)
    except FwError as err:
        raise located(err, "gaussian_nll_loss", (input, target), full=full,
                      reduction=reduction) from None
