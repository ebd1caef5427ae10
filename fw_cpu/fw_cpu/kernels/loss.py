"""Loss kernels: each loss, its reduction included, in one fused pass over the inputs.

Half-precision inputs are computed in float32 and the result rounded once, as PyTorch's CPU
kernels accumulate. A mean over nothing (every target ignored, an empty batch) is 0 / 0 = NaN,
as in PyTorch.
"""

from __future__ import annotations

from functools import partial

from ._half import widen as _widen


# -- shared pieces --------------------------------------------------------------------------------
def _reduced(xp, loss, reduction, dtype, count=None):
    """``loss`` reduced ("none", "sum", or "mean"/"batchmean": the sum over ``count``, by
    default the element count) and rounded to ``dtype``; a reduction gives a 0-d array."""
    if reduction != "none":
        total = loss.sum()
        if reduction != "sum":  # mean, batchmean
            total = total / (loss.size if count is None else count)
        loss = xp.asarray(total)
    return loss.astype(dtype, copy=False)


def _difference(xp, x, target):
    """``x - target``, widened, as an array the caller may overwrite."""
    return xp.asarray(_widen(xp, x) - _widen(xp, target))  # 0-d inputs give a scalar otherwise


def _log_softmax(xp, a):
    """log_softmax of ``a`` along dimension 1 (the classes), as a new array."""
    shifted = a - a.max(axis=1, keepdims=True)
    shifted -= xp.log(xp.exp(shifted).sum(axis=1, keepdims=True))
    return shifted


def _class_view(ndim, classes):
    """The shape that broadcasts a (classes,) array along dimension 1 of an ``ndim`` array."""
    return (1, classes) + (1,) * (ndim - 2)


def _nll(xp, logp, target, weight, ignore_index):
    """Per-sample -w[t] logp[t] (0 where ignored), the summed counted weights, the mask."""
    valid = target != ignore_index
    safe = xp.where(valid, target, 0)
    if logp.ndim == 2:  # the common (N, C) case: plain fancy indexing, ~3x take_along_axis
        picked = logp[xp.arange(logp.shape[0]), safe]
    else:
        picked = xp.take_along_axis(logp, safe[:, None], axis=1)[:, 0]
    counted = valid.astype(logp.dtype) if weight is None else xp.where(valid, weight[safe], 0)
    return xp.where(valid, -picked * counted, 0), counted.sum(), valid


def _batched(x, target):
    """Scores as (N, C, *) and targets as (N, *): the unbatched (C,) case gets N = 1."""
    return (x[None], target[None]) if x.ndim == 1 else (x, target)


def _unbatched(loss, x, reduction):
    """``loss`` without the N = 1 that :func:`_batched` gave an unbatched, unreduced ``x``."""
    return loss[0] if x.ndim == 1 and reduction == "none" else loss


# -- regression losses ----------------------------------------------------------------------------
def mse_loss(xp, x, target, reduction):
    """(x - target)^2, reduced, in the inputs' result dtype."""
    diff = _difference(xp, x, target)
    return _reduced(xp, xp.square(diff, out=diff), reduction, xp.result_type(x, target))


def l1_loss(xp, x, target, reduction):
    """|x - target|, reduced, in the inputs' result dtype."""
    diff = _difference(xp, x, target)
    return _reduced(xp, xp.abs(diff, out=diff), reduction, xp.result_type(x, target))


def smooth_l1_loss(xp, x, target, reduction, beta):
    """Huber-like |x - target|: 0.5 d^2 / beta below ``beta``, d - 0.5 beta above (plain L1
    for ``beta <= 0``), reduced, in the inputs' result dtype."""
    diff = xp.abs(_difference(xp, x, target))
    if beta > 0:
        diff = xp.where(diff < beta, 0.5 * diff * diff / beta, diff - 0.5 * beta)
    return _reduced(xp, diff, reduction, xp.result_type(x, target))


# -- binary and distribution losses ---------------------------------------------------------------
def binary_cross_entropy(xp, x, target, weight=None, *, reduction):
    """-(t log p + (1 - t) log(1 - p)) for probabilities ``x``, each log clamped at -100 as in
    PyTorch (so p = 0 or 1 gives a finite loss), optionally weighted, reduced."""
    p, t = _widen(xp, x), _widen(xp, target)
    loss = (t - 1) * xp.maximum(xp.log1p(-p), -100) - t * xp.maximum(xp.log(p), -100)
    if weight is not None:
        loss *= _widen(xp, weight)
    return _reduced(xp, loss, reduction, xp.result_type(x, target))


def binary_cross_entropy_with_logits(xp, x, target, *weights, reduction, has_weight,
                                     has_pos_weight):
    """Binary cross entropy of sigmoid(x), as (1 - t) x + log(1 + e^-x) without overflow.
    ``weights``: those present of weight and pos_weight (which scales the positive term);
    a ValueError if they would broadcast the loss beyond x's shape."""
    it = iter(weights)
    weight = _widen(xp, next(it)) if has_weight else None
    pos_weight = _widen(xp, next(it)) if has_pos_weight else None
    z, t = _widen(xp, x), _widen(xp, target)
    soft = xp.logaddexp(0, -z)  # log(1 + e^-z) without overflow
    if pos_weight is not None:
        soft *= (pos_weight - 1) * t + 1
    loss = (1 - t) * z + soft
    if weight is not None:
        loss = loss * weight
    if loss.shape != x.shape:
        raise ValueError(f"weights broadcast the loss to {loss.shape}, not {x.shape}")
    return _reduced(xp, loss, reduction, xp.result_type(x, target))


def kl_div(xp, x, target, reduction, log_target):
    """KL divergence t (log t - x) for log-probabilities ``x`` (``log_target``: ``target`` is
    log t too); 0 where t = 0. "batchmean" divides the sum by the batch size."""
    z, t = _widen(xp, x), _widen(xp, target)
    if log_target:
        loss = xp.exp(t) * (t - z)
    else:
        loss = xp.where(t == 0, 0, t * xp.log(t)) - t * z
    count = (x.shape[0] if x.ndim else 1) if reduction == "batchmean" else None
    return _reduced(xp, loss, reduction, xp.result_type(x, target), count)


# -- classification losses ------------------------------------------------------------------------
def _soft_cross_entropy(logp, target, w, view, label_smoothing):
    """Per-sample -sum_c q_c logp_c for class probabilities ``target`` (smoothed, weighted)."""
    classes = logp.shape[1]
    q = target.astype(logp.dtype)
    if label_smoothing:
        q = q * (1 - label_smoothing) + label_smoothing / classes
    if w is not None:
        q = q * w.reshape(view)
    return -(logp * q).sum(axis=1)


def cross_entropy(xp, x, target, weight=None, *, ignore_index, reduction, label_smoothing,
                  probs):
    """Cross entropy of scores ``x`` (N, C, *) or (C,) against class indices or, with
    ``probs``, class probabilities: log_softmax over dimension 1, then the weighted,
    smoothed negative log-likelihood. A mean over class indices divides by the summed weights
    of the targets not ignored."""
    scores, target = _batched(_widen(xp, x), target)
    logp = _log_softmax(xp, scores)
    classes = scores.shape[1]
    view = _class_view(scores.ndim, classes)
    w = None if weight is None else weight.astype(logp.dtype)
    if probs:
        loss = _soft_cross_entropy(logp, target, w, view, label_smoothing)
        return _unbatched(_reduced(xp, loss, reduction, x.dtype), x, reduction)
    if not classes and target.size:
        raise IndexError("class-index targets for 0 classes")
    loss, total_weight, valid = _nll(xp, logp, target, w, ignore_index)
    if label_smoothing:
        smooth = -(logp if w is None else logp * w.reshape(view)).sum(axis=1)
        loss = (1 - label_smoothing) * loss + \
            (label_smoothing / classes) * xp.where(valid, smooth, 0)
    return _unbatched(_reduced(xp, loss, reduction, x.dtype, total_weight), x, reduction)


def nll_loss(xp, x, target, weight=None, *, ignore_index, reduction):
    """-w[t] x[t] for log-probabilities ``x`` (N, C, *) or (C,) and class indices ``target``;
    a mean divides by the summed weights of the targets not ignored."""
    logp, target = _batched(_widen(xp, x), target)
    w = None if weight is None else weight.astype(logp.dtype)
    loss, total_weight, _ = _nll(xp, logp, target, w, ignore_index)
    return _unbatched(_reduced(xp, loss, reduction, x.dtype, total_weight), x, reduction)


def class_distribution(xp, target, weight=None, *, num_classes, ignore_index, label_smoothing,
                       dtype):
    """The target distribution cross entropy compares with, per class index in ``target``:
    one-hot along a new dimension 1 (num_classes), smoothed, weighted, 0 where ignored."""
    t = target[None] if target.ndim == 0 else target
    valid = t != ignore_index
    safe = xp.where(valid, t, 0)
    view = _class_view(t.ndim + 1, num_classes)
    q = (safe[:, None] == xp.arange(num_classes).reshape(view)).astype(dtype)
    if label_smoothing:
        q *= 1 - label_smoothing
        q += label_smoothing / num_classes
    if weight is not None:
        q *= weight.astype(dtype).reshape(view)
    q *= valid[:, None]
    return q[0] if target.ndim == 0 else q


def kernels(xp, special) -> dict:
    """The loss kernels for namespace ``xp`` (they need nothing of ``special``)."""
    return {
        "mse_loss": partial(mse_loss, xp), "l1_loss": partial(l1_loss, xp),
        "smooth_l1_loss": partial(smooth_l1_loss, xp),
        "binary_cross_entropy": partial(binary_cross_entropy, xp),
        "binary_cross_entropy_with_logits": partial(binary_cross_entropy_with_logits, xp),
        "kl_div": partial(kl_div, xp), "cross_entropy": partial(cross_entropy, xp),
        "nll_loss": partial(nll_loss, xp),
        "class_distribution": partial(class_distribution, xp),
    }
