"""Losses written as compositions of differentiable fw ops, with PyTorch's semantics.

None of these needs a kernel of its own: each is a few elementwise ops and a reduction, so
autograd (and double backward) comes from the ops it is built of. Like PyTorch's functional
forms they accept the deprecated ``size_average`` / ``reduce`` flags where PyTorch does, mapped
onto ``reduction`` by :func:`fw_core.ops.loss.legacy_reduction`.
"""

# ruff: noqa: A002 - PyTorch's argument name ``input``
from __future__ import annotations

__all__ = ["cosine_embedding_loss", "gaussian_nll_loss", "hinge_embedding_loss", "huber_loss",
           "margin_ranking_loss", "poisson_nll_loss", "soft_margin_loss", "triplet_margin_loss"]

import math

from ..errors import ArgumentError, FwError, ShapeError
from . import reduction as _reduction
from .creation import full_like
from .elementwise import clamp, exp, log, minimum, softplus, sqrt, where
from .loss import _check_reduction, _pair_meta, legacy_reduction, smooth_l1_loss
from .meta import argument_error, broadcast_shapes, located, spec_of
from .reduction import norm
from .shape import unsqueeze


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return _reduction.mean(loss)
    if reduction == "sum":
        return _reduction.sum(loss)
    return loss


def _same_ndim(op: str, **tensors) -> None:
    """PyTorch's check for the pairwise-embedding losses: every tensor has the same ndim."""
    if len({t.ndim for t in tensors.values()}) > 1:
        shapes = ", ".join(f"{name} {tuple(t.shape)}" for name, t in tensors.items())
        raise ShapeError(f"all inputs should have the same number of dimensions, got {shapes}",
                         op=op, hint="reshape them alike (e.g. target.view_as(input1))")


def _broadcast(op: str, *tensors) -> None:
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
        return _reduce(loss * weight, reduction)
    except FwError as err:
        raise located(err, "huber_loss", (input, target), reduction=reduction,
                      delta=delta) from None


def margin_ranking_loss(input1, input2, target, margin: float = 0.0, size_average=None,
                        reduce=None, reduction: str = "mean"):
    """max(0, -target (input1 - input2) + margin): ``target`` = 1 asks input1 to rank higher
    than input2 by ``margin``, -1 lower. The three must have the same ndim and broadcast."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    try:
        _check_reduction("margin_ranking_loss", reduction)
        _same_ndim("margin_ranking_loss", input1=input1, input2=input2, target=target)
        _broadcast("margin_ranking_loss", input1, input2, target)
        return _reduce(clamp(-target * (input1 - input2) + margin, min=0.0), reduction)
    except FwError as err:
        raise located(err, "margin_ranking_loss", (input1, input2, target), margin=margin,
                      reduction=reduction) from None


def hinge_embedding_loss(input, target, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean"):
    """``input`` where target is 1, max(0, margin - input) where target is -1 (``input``
    usually a distance: small for similar pairs, beyond ``margin`` for dissimilar ones)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    try:
        _check_reduction("hinge_embedding_loss", reduction)
        _broadcast("hinge_embedding_loss", input, target)
        # as PyTorch: a target that is neither 1 nor -1 contributes both terms
        apart = where(target != 1, clamp(margin - input, min=0.0), 0.0)
        return _reduce(apart + where(target != -1, input, 0.0), reduction)
    except FwError as err:
        raise located(err, "hinge_embedding_loss", (input, target), margin=margin,
                      reduction=reduction) from None


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """log(1 + exp(-target * input)): a smooth two-class hinge for targets of +-1."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    try:
        _check_reduction("soft_margin_loss", reduction)
        _broadcast("soft_margin_loss", input, target)
        return _reduce(softplus(-target * input), reduction)
    except FwError as err:
        raise located(err, "soft_margin_loss", (input, target), reduction=reduction) from None


_COSINE_EPS = 1e-12  # PyTorch's guard on each squared magnitude


def cosine_embedding_loss(input1, input2, target, margin: float = 0.0, size_average=None,
                          reduce=None, reduction: str = "mean"):
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1.

    Shapes: (N, D) inputs with an (N,) target, or (D,) inputs with a 0-d target. The cosine is
    sum(x1 x2) / sqrt((|x1|^2 + 1e-12)(|x2|^2 + 1e-12)), as PyTorch computes it.

    Raises:
        ShapeError: target not 0-d or 1-d, or inputs whose ndim does not fit it.
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    try:
        _check_reduction("cosine_embedding_loss", reduction)
        dim = target.ndim
        if dim > 1 or input1.ndim != dim + 1 or input2.ndim != dim + 1:
            raise ShapeError(f"expects (N, D) inputs with an (N,) target or (D,) inputs with a "
                             f"0-d target, got input1 {tuple(input1.shape)}, input2 "
                             f"{tuple(input2.shape)}, target {tuple(target.shape)}",
                             op="cosine_embedding_loss",
                             hint="one +-1 target per pair of embeddings (multi-target is not "
                             "supported)")
        _broadcast("cosine_embedding_loss", input1, input2)
        products = _reduction.sum(input1 * input2, dim=dim)
        square1 = _reduction.sum(input1 * input1, dim=dim) + _COSINE_EPS
        square2 = _reduction.sum(input2 * input2, dim=dim) + _COSINE_EPS
        cos = products / sqrt(square1 * square2)
        loss = where(target == 1, 1.0 - cos, 0.0) + where(target == -1,
                                                          clamp(cos - margin, min=0.0), 0.0)
        return _reduce(loss, reduction)
    except FwError as err:
        raise located(err, "cosine_embedding_loss", (input1, input2, target), margin=margin,
                      reduction=reduction) from None


def _pairwise_distance(x1, x2, p: float, eps: float):
    """PyTorch's pairwise_distance: the p-norm of ``x1 - x2 + eps`` over the last dimension."""
    return norm(x1 - x2 + eps, p, dim=max(x1.ndim, x2.ndim) - 1)


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm distance over
    the last dimension (``eps`` added to the difference, as PyTorch). ``swap=True`` uses the
    smaller of d(anchor, negative) and d(positive, negative).

    Shapes: (N, D) or (D,) for all three (the same ndim).

    Raises:
        ArgumentError: margin <= 0, or a bad reduction.
        ShapeError: the three differ in ndim or do not broadcast.
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    try:
        _check_reduction("triplet_margin_loss", reduction)
        if not margin > 0:
            raise ArgumentError(f"margin must be greater than 0, got {margin}",
                                op="triplet_margin_loss",
                                hint="the margin is how much farther the negative must be")
        _same_ndim("triplet_margin_loss", anchor=anchor, positive=positive, negative=negative)
        _broadcast("triplet_margin_loss", anchor, positive, negative)
        d_pos = _pairwise_distance(anchor, positive, p, eps)
        d_neg = _pairwise_distance(anchor, negative, p, eps)
        if swap:
            d_neg = minimum(d_neg, _pairwise_distance(positive, negative, p, eps))
        return _reduce(clamp(d_pos - d_neg + margin, min=0.0), reduction)
    except FwError as err:
        raise located(err, "triplet_margin_loss", (anchor, positive, negative), margin=margin,
                      p=p, reduction=reduction) from None


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
        _broadcast("poisson_nll_loss", input, target)
        if log_input:
            loss = exp(input) - target * input
        else:
            loss = input - target * log(input + eps)
        if full:
            above = target > 1
            safe = where(above, target, 2.0)  # keeps log's gradient finite where masked off
            stirling = safe * log(safe) - safe + 0.5 * log(2 * math.pi * safe)
            loss = loss + where(above, stirling, 0.0)
        return _reduce(loss, reduction)
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

    ``var`` is a tensor (see the shape rules in the error below) or a float. As in PyTorch,
    the clamp to ``eps`` does not block var's gradient: a clamped variance still learns.

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
        return _reduce(loss, reduction)
    except FwError as err:
        raise located(err, "gaussian_nll_loss", (input, target), full=full,
                      reduction=reduction) from None
