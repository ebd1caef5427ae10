"""Margin and embedding losses written as compositions of differentiable fw ops, with PyTorch's
semantics: ranking pairs, +-1 targets, embeddings compared by cosine or distance, and the
multi-class / multi-label hinges.

Each is a few elementwise ops, a gather and a reduction, so autograd (and double backward) comes
from the ops it is built of. Like PyTorch's functional forms they accept the deprecated
``size_average`` / ``reduce`` flags, mapped onto ``reduction`` by
:func:`fw_core.ops.loss.legacy_reduction`.
"""

# ruff: noqa: A002 - PyTorch's argument name ``input``
from __future__ import annotations

__all__ = ["cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss",
           "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
           "soft_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss"]

import numpy as np

from .. import dtypes as _dt
from ..errors import ArgumentError, DTypeError, FwError, IndexOutOfRangeError, ShapeError
from . import reduction as _reduction
from .creation import as_tensor
from .distance import pairwise_distance
from .elementwise import clamp, minimum, softplus, sqrt, where
from .indexing import gather
from .loss import _check_reduction, legacy_reduction
from .loss_composed import check_broadcast, reduce_loss
from .meta import located
from .shape import unsqueeze


def _same_ndim(op: str, **tensors) -> None:
    """PyTorch's check for the pairwise-embedding losses: every tensor has the same ndim."""
    if len({t.ndim for t in tensors.values()}) > 1:
        shapes = ", ".join(f"{name} {tuple(t.shape)}" for name, t in tensors.items())
        raise ShapeError(f"all inputs should have the same number of dimensions, got {shapes}",
                         op=op, hint="reshape them alike (e.g. target.view_as(input1))")


def margin_ranking_loss(input1, input2, target, margin: float = 0.0, size_average=None,
                        reduce=None, reduction: str = "mean"):
    """max(0, -target (input1 - input2) + margin): ``target`` = 1 asks input1 to rank higher
    than input2 by ``margin``, -1 lower. The three must have the same ndim and broadcast."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    try:
        _check_reduction("margin_ranking_loss", reduction)
        _same_ndim("margin_ranking_loss", input1=input1, input2=input2, target=target)
        check_broadcast("margin_ranking_loss", input1, input2, target)
        return reduce_loss(clamp(-target * (input1 - input2) + margin, min=0.0), reduction)
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
        check_broadcast("hinge_embedding_loss", input, target)
        # as PyTorch: a target that is neither 1 nor -1 contributes both terms
        apart = where(target != 1, clamp(margin - input, min=0.0), 0.0)
        return reduce_loss(apart + where(target != -1, input, 0.0), reduction)
    except FwError as err:
        raise located(err, "hinge_embedding_loss", (input, target), margin=margin,
                      reduction=reduction) from None


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """log(1 + exp(-target * input)): a smooth two-class hinge for targets of +-1."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    try:
        _check_reduction("soft_margin_loss", reduction)
        check_broadcast("soft_margin_loss", input, target)
        return reduce_loss(softplus(-target * input), reduction)
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
        check_broadcast("cosine_embedding_loss", input1, input2)
        products = _reduction.sum(input1 * input2, dim=dim)
        square1 = _reduction.sum(input1 * input1, dim=dim) + _COSINE_EPS
        square2 = _reduction.sum(input2 * input2, dim=dim) + _COSINE_EPS
        cos = products / sqrt(square1 * square2)
        loss = where(target == 1, 1.0 - cos, 0.0) + where(target == -1,
                                                          clamp(cos - margin, min=0.0), 0.0)
        return reduce_loss(loss, reduction)
    except FwError as err:
        raise located(err, "cosine_embedding_loss", (input1, input2, target), margin=margin,
                      reduction=reduction) from None


def _triplet(op: str, anchor, positive, negative, distance, margin, swap, reduction):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), checked, for both triplet
    losses (``swap``: the nearer of d(anchor, negative) and d(positive, negative))."""
    _check_reduction(op, reduction)
    if not margin > 0:
        raise ArgumentError(f"margin must be greater than 0, got {margin}", op=op,
                            hint="the margin is how much farther the negative must be")
    _same_ndim(op, anchor=anchor, positive=positive, negative=negative)
    check_broadcast(op, anchor, positive, negative)
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, distance(positive, negative))
    return reduce_loss(clamp(d_pos - d_neg + margin, min=0.0), reduction)


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
        return _triplet("triplet_margin_loss", anchor, positive, negative,
                        lambda a, b: pairwise_distance(a, b, p, eps), margin, swap, reduction)
    except FwError as err:
        raise located(err, "triplet_margin_loss", (anchor, positive, negative), margin=margin,
                      p=p, reduction=reduction) from None


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean"):
    """:func:`triplet_margin_loss` with any ``distance_function(x1, x2) -> distances``
    (default: the Euclidean pairwise distance), e.g. ``1 - cosine similarity``."""
    try:
        return _triplet("triplet_margin_with_distance_loss", anchor, positive, negative,
                        distance_function or pairwise_distance, margin, swap, reduction)
    except FwError as err:
        raise located(err, "triplet_margin_with_distance_loss", (anchor, positive, negative),
                      margin=margin, reduction=reduction) from None


def _class_scores(op: str, input, target):
    """(scores as (N, C), targets as (N, ...), whether unbatched) for the multi-class hinges."""
    if input.ndim not in (1, 2):
        raise ShapeError(f"expects (N, C) or (C,) scores, got shape {tuple(input.shape)}",
                         op=op, hint="flatten the extra dimensions into the batch")
    if target.dtype.category != _dt.INTEGER:
        raise DTypeError(f"targets must be class indices (integers), got {target.dtype.name}",
                         op=op, hint="convert with target.long()")
    unbatched = input.ndim == 1
    if unbatched:
        return unsqueeze(input, 0), unsqueeze(target, 0), True
    return input, target, False


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction: str = "mean"):
    """One-vs-all logistic loss per class, averaged over the C classes of each sample:
    mean_c(t log(1 + e^-x) + (1 - t) log(1 + e^x)) (times ``weight`` per class).

    Shapes: input and target (N, C) (target in [0, 1]); output (N,) for 'none'.
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    try:
        _check_reduction("multilabel_soft_margin_loss", reduction)
        check_broadcast("multilabel_soft_margin_loss", input, target)
        loss = target * softplus(-input) + (1.0 - target) * softplus(input)
        if weight is not None:
            loss = loss * weight
        per_sample = _reduction.mean(loss, dim=input.ndim - 1)
        return reduce_loss(per_sample, reduction)
    except FwError as err:
        raise located(err, "multilabel_soft_margin_loss", (input, target),
                      reduction=reduction) from None


def multi_margin_loss(input, target, p: int = 1, margin: float = 1.0, weight=None,
                      size_average=None, reduce=None, reduction: str = "mean"):
    """Multi-class hinge: sum over classes i != y of max(0, margin - x[y] + x[i])^p, divided by
    C (times ``weight[y]``), per sample.

    Shapes: input (N, C) or (C,); target (N,) or () class indices; weight (C,).

    Raises:
        ArgumentError: p other than 1 or 2. IndexOutOfRangeError: a target outside [0, C).
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    try:
        _check_reduction("multi_margin_loss", reduction)
        if p not in (1, 2):
            raise ArgumentError(f"only p == 1 and p == 2 are supported, got p={p}",
                                op="multi_margin_loss", hint="p=1 is the hinge, p=2 squared")
        scores, labels, unbatched = _class_scores("multi_margin_loss", input, target)
        batch, classes = scores.shape
        host = labels.numpy().reshape(-1)
        if host.shape != (batch,):
            raise ShapeError(f"expects one target per sample ({batch}), got shape "
                             f"{tuple(target.shape)}", op="multi_margin_loss",
                             hint="pass (N,) class indices")
        if host.size and (host.min() < 0 or host.max() >= classes):
            raise IndexOutOfRangeError(f"target labels must be in [0, {classes}), got values "
                                       f"in [{host.min()}, {host.max()}]",
                                       op="multi_margin_loss", hint="labels start at 0")
        index = as_tensor(host[:, None], device=scores.device)
        hinge = clamp(margin - gather(scores, 1, index) + scores, min=0.0)
        if p == 2:
            hinge = hinge * hinge
        others = as_tensor(np.arange(classes) != host[:, None], device=scores.device)
        if weight is not None:
            hinge = hinge * unsqueeze(weight[labels], 1)
        loss = _reduction.sum(where(others, hinge, 0.0), dim=1) / classes
        return reduce_loss(loss[0] if unbatched else loss, reduction)
    except FwError as err:
        raise located(err, "multi_margin_loss", (input, target), p=p, margin=margin,
                      reduction=reduction) from None


def multilabel_margin_loss(input, target, size_average=None, reduce=None,
                           reduction: str = "mean"):
    """Multi-label hinge: for each target class j and each non-target class i,
    max(0, 1 - (x[j] - x[i])), summed and divided by C, per sample.

    ``target`` has the input's shape and lists each sample's classes first, ended by -1
    (``[3, 0, -1, 1]`` means classes 3 and 0).

    Raises:
        IndexOutOfRangeError: a listed class outside [0, C).
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    try:
        _check_reduction("multilabel_margin_loss", reduction)
        scores, labels, unbatched = _class_scores("multilabel_margin_loss", input, target)
        if tuple(labels.shape) != tuple(scores.shape):
            raise ShapeError(f"target shape {tuple(target.shape)} differs from the input "
                             f"shape {tuple(input.shape)}", op="multilabel_margin_loss",
                             hint="pad each sample's class list with -1 to C entries")
        classes = scores.shape[1]
        host = labels.numpy()
        listed = np.cumprod(host != -1, axis=1).astype(bool)  # the entries before the first -1
        if (host[listed] < 0).any() or (host[listed] >= classes).any():
            raise IndexOutOfRangeError(f"listed classes must be in [0, {classes}) and the list "
                                       "ended by -1", op="multilabel_margin_loss",
                                       hint="labels start at 0; -1 ends a sample's list")
        safe = np.where(listed, host, 0)
        is_target = np.zeros(host.shape, bool)
        rows, slots = np.nonzero(listed)
        is_target[rows, host[rows, slots]] = True
        picked = gather(scores, 1, as_tensor(safe, device=scores.device))  # (N, C): x[j]
        hinge = clamp(1.0 - unsqueeze(picked, 2) + unsqueeze(scores, 1), min=0.0)
        pairs = as_tensor(listed[:, :, None] & ~is_target[:, None, :], device=scores.device)
        loss = _reduction.sum(where(pairs, hinge, 0.0), dim=(1, 2)) / classes
        return reduce_loss(loss[0] if unbatched else loss, reduction)
    except FwError as err:
        raise located(err, "multilabel_margin_loss", (input, target),
                      reduction=reduction) from None
