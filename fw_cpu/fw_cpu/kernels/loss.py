"""Loss kernels: each loss, its reduction included, in one fused pass over the inputs.

Half-precision inputs are computed in float32 and the result rounded once, as PyTorch's CPU
kernels accumulate. A mean over nothing (every target ignored, an empty batch) is 0 / 0 = NaN,
as in PyTorch.
"""

from __future__ import annotations


def kernels(xp, special) -> dict:
    def widen(x):
        return x.astype(xp.float32) if x.dtype == xp.float16 else x

    def reduced(loss, reduction, dtype, count=None):
        if reduction != "none":
            total = loss.sum()
            if reduction != "sum":  # mean, batchmean
                total = total / (loss.size if count is None else count)
            loss = xp.asarray(total)
        return loss.astype(dtype, copy=False)

    def difference(x, target):
        return xp.asarray(widen(x) - widen(target))  # 0-d inputs give a scalar otherwise

    def mse_loss(x, target, reduction):
        diff = difference(x, target)
        return reduced(xp.square(diff, out=diff), reduction, xp.result_type(x, target))

    def l1_loss(x, target, reduction):
        diff = difference(x, target)
        return reduced(xp.abs(diff, out=diff), reduction, xp.result_type(x, target))

    def smooth_l1_loss(x, target, reduction, beta):
        diff = xp.abs(difference(x, target))
        if beta > 0:
            diff = xp.where(diff < beta, 0.5 * diff * diff / beta, diff - 0.5 * beta)
        return reduced(diff, reduction, xp.result_type(x, target))

    def binary_cross_entropy(x, target, weight=None, *, reduction):
        p, t = widen(x), widen(target)
        loss = (t - 1) * xp.maximum(xp.log1p(-p), -100) - t * xp.maximum(xp.log(p), -100)
        if weight is not None:
            loss *= widen(weight)
        return reduced(loss, reduction, xp.result_type(x, target))

    def binary_cross_entropy_with_logits(x, target, *weights, reduction, has_weight,
                                         has_pos_weight):
        it = iter(weights)
        weight = widen(next(it)) if has_weight else None
        pos_weight = widen(next(it)) if has_pos_weight else None
        z, t = widen(x), widen(target)
        soft = xp.logaddexp(0, -z)  # log(1 + e^-z) without overflow
        if pos_weight is not None:
            soft *= (pos_weight - 1) * t + 1
        loss = (1 - t) * z + soft
        if weight is not None:
            loss = loss * weight
        if loss.shape != x.shape:
            raise ValueError(f"weights broadcast the loss to {loss.shape}, not {x.shape}")
        return reduced(loss, reduction, xp.result_type(x, target))

    def kl_div(x, target, reduction, log_target):
        z, t = widen(x), widen(target)
        if log_target:
            loss = xp.exp(t) * (t - z)
        else:
            loss = xp.where(t == 0, 0, t * xp.log(t)) - t * z
        count = (x.shape[0] if x.ndim else 1) if reduction == "batchmean" else None
        return reduced(loss, reduction, xp.result_type(x, target), count)

    def log_softmax(a):
        shifted = a - a.max(axis=1, keepdims=True)
        shifted -= xp.log(xp.exp(shifted).sum(axis=1, keepdims=True))
        return shifted

    def class_view(ndim, classes):
        return (1, classes) + (1,) * (ndim - 2)

    def nll(logp, target, weight, ignore_index):
        """Per-sample -w[t] logp[t] (0 where ignored), the summed counted weights, the mask."""
        valid = target != ignore_index
        safe = xp.where(valid, target, 0)
        if logp.ndim == 2:  # the common (N, C) case: plain fancy indexing, ~3x take_along_axis
            picked = logp[xp.arange(logp.shape[0]), safe]
        else:
            picked = xp.take_along_axis(logp, safe[:, None], axis=1)[:, 0]
        counted = valid.astype(logp.dtype) if weight is None else xp.where(valid, weight[safe], 0)
        return xp.where(valid, -picked * counted, 0), counted.sum(), valid

    def batched(x, target):
        """Scores as (N, C, *) and targets as (N, *): the unbatched (C,) case gets N = 1."""
        return (x[None], target[None]) if x.ndim == 1 else (x, target)

    def unbatched(loss, x, reduction):
        return loss[0] if x.ndim == 1 and reduction == "none" else loss

    def cross_entropy(x, target, weight=None, *, ignore_index, reduction, label_smoothing,
                      probs):
        scores, target = batched(widen(x), target)
        logp = log_softmax(scores)
        classes = scores.shape[1]
        view = class_view(scores.ndim, classes)
        w = None if weight is None else weight.astype(logp.dtype)
        if probs:
            q = target.astype(logp.dtype)
            if label_smoothing:
                q = q * (1 - label_smoothing) + label_smoothing / classes
            if w is not None:
                q = q * w.reshape(view)
            loss = -(logp * q).sum(axis=1)
            return unbatched(reduced(loss, reduction, x.dtype), x, reduction)
        if not classes and target.size:
            raise IndexError("class-index targets for 0 classes")
        loss, total_weight, valid = nll(logp, target, w, ignore_index)
        if label_smoothing:
            smooth = -(logp if w is None else logp * w.reshape(view)).sum(axis=1)
            loss = (1 - label_smoothing) * loss + \
                (label_smoothing / classes) * xp.where(valid, smooth, 0)
        return unbatched(reduced(loss, reduction, x.dtype, total_weight), x, reduction)

    def nll_loss(x, target, weight=None, *, ignore_index, reduction):
        logp, target = batched(widen(x), target)
        w = None if weight is None else weight.astype(logp.dtype)
        loss, total_weight, _ = nll(logp, target, w, ignore_index)
        return unbatched(reduced(loss, reduction, x.dtype, total_weight), x, reduction)

    def class_distribution(target, weight=None, *, num_classes, ignore_index, label_smoothing,
                           dtype):
        t = target[None] if target.ndim == 0 else target
        valid = t != ignore_index
        safe = xp.where(valid, t, 0)
        view = class_view(t.ndim + 1, num_classes)
        q = (safe[:, None] == xp.arange(num_classes).reshape(view)).astype(dtype)
        if label_smoothing:
            q *= 1 - label_smoothing
            q += label_smoothing / num_classes
        if weight is not None:
            q *= weight.astype(dtype).reshape(view)
        q *= valid[:, None]
        return q[0] if target.ndim == 0 else q

    return {
        "mse_loss": mse_loss, "l1_loss": l1_loss, "smooth_l1_loss": smooth_l1_loss,
        "binary_cross_entropy": binary_cross_entropy,
        "binary_cross_entropy_with_logits": binary_cross_entropy_with_logits,
        "kl_div": kl_div, "cross_entropy": cross_entropy, "nll_loss": nll_loss,
        "class_distribution": class_distribution,
    }
