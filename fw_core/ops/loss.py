"""Losses: each a fused forward kernel with PyTorch's semantics, and a VJP in fw ops.

All take ``reduction='mean' | 'sum' | 'none'`` (kl_div also 'batchmean'). Their Jacobian
structure is REDUCTION: the loss combines every element. Pointwise losses insist that input and
target have the same shape: a silently broadcast (N, 1) against (N,) is the classic bug these
errors exist to catch. The losses over class scores (cross_entropy, nll_loss) are
:mod:`fw_core.ops.cross_entropy`.
"""

from __future__ import annotations

__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "l1_loss",
           "mse_loss", "smooth_l1_loss"]

import warnings

from .. import dtypes as _dt
from ..errors import ArgumentError, FwError, ShapeError
from ..records import Structure, TensorSpec
from . import anchors, reduction
from .broadcast import sum_to
from .dispatch import apply
from .elementwise import clamp, exp, log, logical_or, sigmoid, sign, softplus, where
from .meta import argument_error, broadcast_shapes, located, promote, require_floating, spec_of
from .nn import meta_error
from .registry import define_op

_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(op: str, value: str, allowed=_REDUCTIONS) -> None:
    if value not in allowed:
        raise ArgumentError(f"reduction={value!r} is not supported", op=op,
                            hint=f"use one of {', '.join(map(repr, allowed))}")


def legacy_reduction(size_average, reduce, reduction: str) -> str:
    """``reduction`` as PyTorch derives it from the deprecated ``size_average``/``reduce`` flags.

    Either flag left at None counts as True; both True gives 'mean', ``reduce`` alone 'sum',
    ``reduce=False`` 'none'. Passing either warns, as PyTorch does, naming the replacement.
    """
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    derived = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{derived}' instead.", UserWarning, stacklevel=3)
    return derived


def _validated(op, inputs, attrs) -> None:
    """Run the meta rule up front (for inputs a kernel would broadcast instead of rejecting)."""
    try:
        op.meta(*(spec_of(t) for t in inputs), **attrs)
    except FwError:
        raise meta_error(op, inputs, attrs) from None


def _reduced(spec_shape, reduction_, dtype) -> TensorSpec:
    return TensorSpec(tuple(spec_shape) if reduction_ == "none" else (), dtype)


def _cotangent(g, reduction_, count):
    """The gradient reaching each per-element loss: g for 'sum'/'none', g / count for means."""
    if reduction_ in ("mean", "batchmean"):
        return g / count
    return g


# -- pointwise losses -----------------------------------------------------------------------------
def _pair_meta(op):
    def meta(x, target, *weights, reduction, **_):
        require_floating(x, op)
        require_floating(target, op)
        if tuple(x.shape) != tuple(target.shape):
            raise ShapeError(f"input shape {tuple(x.shape)} and target shape "
                             f"{tuple(target.shape)} differ", op=op,
                             hint="the loss compares element by element: reshape one to the "
                             "other (target.view_as(input)); broadcasting here is almost "
                             "always a bug")
        for w in weights:
            require_floating(w, op)
            if broadcast_shapes(tuple(w.shape), tuple(x.shape), op=op) != tuple(x.shape):
                raise ShapeError(f"a weight of shape {tuple(w.shape)} does not broadcast to the "
                                 f"input shape {tuple(x.shape)}", op=op,
                                 hint="give the weight the input's shape or a broadcastable one")
        return _reduced(x.shape, reduction, promote(x, target))

    return meta


def _pair_op(name, doc, vjp, anchor, attrs=""):
    return define_op(
        name, family="loss", builtin=True, doc=doc,
        signature=f"{name}(input: Tensor, target: Tensor{attrs}, reduction: str = 'mean') -> "
                  "Tensor",
        meta=_pair_meta(name), vjp=vjp, structure=Structure.REDUCTION, anchor=anchor,
        saves=("inputs",))


def _pair_call(op, x, target, attrs, *weights):
    _check_reduction(op.name, attrs["reduction"])
    xd, td = x._data, target._data
    if xd.shape != td.shape or not _dt.is_float(xd.dtype) or not _dt.is_float(td.dtype):
        raise meta_error(op, (x, target, *weights), attrs)
    if weights:
        _validated(op, (x, target, *weights), attrs)
    return apply(op, (x, target, *weights), attrs)


def _mse_vjp(ctx, g):
    x, target = ctx.inputs
    gx = _cotangent(g, ctx.attrs["reduction"], x.numel()) * (x - target) * 2.0
    return gx, -gx


def _l1_vjp(ctx, g):
    x, target = ctx.inputs
    gx = _cotangent(g, ctx.attrs["reduction"], x.numel()) * sign(x - target)
    return gx, -gx


def _smooth_l1_vjp(ctx, g):
    x, target = ctx.inputs
    beta = ctx.attrs["beta"]
    diff = x - target
    slope = sign(diff) if beta == 0 else where(abs(diff) < beta, diff / beta, sign(diff))
    gx = _cotangent(g, ctx.attrs["reduction"], x.numel()) * slope
    return gx, -gx


MSE_LOSS = _pair_op("mse_loss", "(input - target)^2, reduced.", _mse_vjp,
                    anchors.smooth("quadratic: the gradient grows with the error, so outliers "
                                   "dominate (smooth_l1_loss bounds it)"))
L1_LOSS = _pair_op("l1_loss", "|input - target|, reduced.", _l1_vjp,
                   anchors.kink("corner at input == target: the gradient is +-1 everywhere and "
                                "jumps at 0, so it never shrinks near the optimum",
                                region=lambda x, t: x == t))
SMOOTH_L1_LOSS = _pair_op(
    "smooth_l1_loss", "0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - "
    "target), reduced; beta = 0 is l1_loss.", _smooth_l1_vjp,
    anchors.smooth("quadratic within beta of the target, linear (gradient +-1) beyond: large "
                   "errors get a bounded gradient"), attrs=", beta: float = 1.0")


def _weighted_pair(op, x, target, weight, how: str):
    """PyTorch's weighted mse/l1: each element's loss times ``weight`` (the input's shape);
    'mean' divides the weighted sum by the sum of the weights."""
    _check_reduction(op.name, how)
    if tuple(weight.shape) != tuple(x.shape):
        raise ShapeError(f"weight shape {tuple(weight.shape)} differs from the input shape "
                         f"{tuple(x.shape)}", op=op.name, hint="give one weight per element")
    loss = _pair_call(op, x, target, {"reduction": "none"}) * weight
    if how == "mean":
        return reduction.sum(loss) / reduction.sum(weight)
    return reduction.sum(loss) if how == "sum" else loss


def mse_loss(input, target, size_average=None, reduce=None,  # noqa: A002 - PyTorch's names
             reduction: str = "mean", weight=None):
    """Mean squared error: ``((input - target) ** 2).mean()`` (or summed, or per element).

    ``weight`` (the input's shape) weighs each element; 'mean' is then the weighted mean.

    Raises:
        ShapeError: input and target shapes differ (no broadcasting).
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    try:
        if weight is not None:
            return _weighted_pair(MSE_LOSS, input, target, weight, reduction)
        return _pair_call(MSE_LOSS, input, target, {"reduction": reduction})
    except FwError as err:
        raise located(err, "mse_loss", (input, target), reduction=reduction) from None


def l1_loss(input, target, size_average=None, reduce=None,  # noqa: A002
            reduction: str = "mean", weight=None):
    """Mean absolute error: ``(input - target).abs().mean()``; ``weight`` as in mse_loss."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    try:
        if weight is not None:
            return _weighted_pair(L1_LOSS, input, target, weight, reduction)
        return _pair_call(L1_LOSS, input, target, {"reduction": reduction})
    except FwError as err:
        raise located(err, "l1_loss", (input, target), reduction=reduction) from None


def smooth_l1_loss(input, target, size_average=None, reduce=None,  # noqa: A002
                   reduction: str = "mean", beta: float = 1.0):
    """Huber-like loss: quadratic for ``|input - target| < beta``, linear beyond."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    try:
        if beta < 0:
            raise argument_error("smooth_l1_loss", f"beta must be >= 0, got {beta}",
                                 "pass beta >= 0 (beta = 0 is l1_loss)", values=(input, target),
                                 beta=beta)
        return _pair_call(SMOOTH_L1_LOSS, input, target, {"reduction": reduction,
                                                           "beta": float(beta)})
    except FwError as err:
        raise located(err, "smooth_l1_loss", (input, target), reduction=reduction,
                      beta=beta) from None


# -- binary cross-entropy -------------------------------------------------------------------------
def _clamped_log(x):
    return clamp(log(x), min=-100.0)


def _bce_vjp(ctx, g):
    x, target, *weight = ctx.inputs
    cot = _cotangent(g, ctx.attrs["reduction"], x.numel())
    if weight:
        cot = cot * weight[0]
    gx = gt = gw = None
    if ctx.next[0] is not None:  # PyTorch's formula: (x - t) / max(x (1 - x), 1e-12)
        gx = cot * (x - target) / clamp(x * (1.0 - x), min=1e-12)
    if ctx.next[1] is not None or (weight and ctx.next[2] is not None):
        log_x, log_1mx = _clamped_log(x), _clamped_log(1.0 - x)
        if ctx.next[1] is not None:
            gt = cot * (log_1mx - log_x)
        if weight and ctx.next[2] is not None:
            unweighted = (target - 1.0) * log_1mx - target * log_x
            gw = sum_to(_cotangent(g, ctx.attrs["reduction"], x.numel()) * unweighted,
                        weight[0].shape)
    return (gx, gt, gw)[:len(ctx.inputs)]


BINARY_CROSS_ENTROPY = _pair_op(
    "binary_cross_entropy", "-w (t log(p) + (1 - t) log(1 - p)) with each log clamped to >= "
    "-100, reduced.", _bce_vjp,
    anchors.pole("log(0) when a predicted probability hits 0 or 1: the loss is capped at 100 "
                 "and the gradient explodes; prefer binary_cross_entropy_with_logits",
                 region=lambda p, t, *w: logical_or(p <= 1e-7, p >= 1 - 1e-7)),
    attrs=", weight: Tensor | None = None")


def binary_cross_entropy(input, target, weight=None, size_average=None,  # noqa: A002
                         reduce=None, reduction: str = "mean"):
    """Binary cross-entropy of probabilities ``input`` in [0, 1] against targets in [0, 1].

    Each log is clamped to >= -100 (as PyTorch), so p = 0 or 1 gives a large finite loss.
    ``weight`` rescales each element (broadcast to the input's shape).

    Raises:
        ShapeError: input and target shapes differ.
        FwError: an input outside [0, 1] (apply sigmoid first, or use the _with_logits form).
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    try:
        data = input._data
        low, high = (float(data.min()), float(data.max())) if data.size and \
            _dt.is_float(data.dtype) else (0.0, 0.0)
        if not 0.0 <= low <= high <= 1.0:  # NaN fails too, as in PyTorch
            raise FwError(f"all elements of input should be between 0 and 1, got values in "
                          f"[{low:.4g}, {high:.4g}]", op="binary_cross_entropy",
                          hint="pass probabilities (apply sigmoid), or pass the logits to "
                          "binary_cross_entropy_with_logits, which is also more stable")
        weights = () if weight is None else (weight,)
        return _pair_call(BINARY_CROSS_ENTROPY, input, target, {"reduction": reduction}, *weights)
    except FwError as err:
        raise located(err, "binary_cross_entropy", (input, target, weight),
                      reduction=reduction) from None


def _bce_logits_vjp(ctx, g):
    x, target, *rest = ctx.inputs
    a = ctx.attrs
    it = iter(rest)
    weight = next(it) if a["has_weight"] else None
    pos_weight = next(it) if a["has_pos_weight"] else None
    cot = _cotangent(g, a["reduction"], x.numel())
    weighted = cot if weight is None else cot * weight
    soft = softplus(-x)  # log(1 + e^-x), stable
    grads = []
    if ctx.next[0] is not None:
        if pos_weight is None:
            grads.append(weighted * (sigmoid(x) - target))
        else:
            log_weight = (pos_weight - 1.0) * target + 1.0
            grads.append(weighted * (log_weight * sigmoid(x) - pos_weight * target))
    else:
        grads.append(None)
    if ctx.next[1] is not None:
        slope = -x if pos_weight is None else (pos_weight - 1.0) * soft - x
        grads.append(weighted * slope)
    else:
        grads.append(None)
    if weight is not None:
        grads.append(None if ctx.next[2] is None else sum_to(cot * _bce_logits_unweighted(
            x, target, pos_weight, soft), weight.shape))
    if pos_weight is not None:
        grads.append(None if ctx.next[len(grads)] is None else sum_to(
            weighted * target * soft, pos_weight.shape))
    return tuple(grads)


def _bce_logits_unweighted(x, target, pos_weight, soft):
    log_weight = 1.0 if pos_weight is None else (pos_weight - 1.0) * target + 1.0
    return (1.0 - target) * x + log_weight * soft


BCE_WITH_LOGITS = _pair_op(
    "binary_cross_entropy_with_logits",
    "w ((1 - t) x + (1 + (pos_weight - 1) t) log(1 + e^-x)) for logits x, computed stably; "
    "reduced.", _bce_logits_vjp,
    anchors.saturation("stable for any logit; a confidently wrong logit still gets a gradient "
                       "of about -+1 per unit (it does not vanish), a confidently right one ~0"),
    attrs=", weight: Tensor | None = None, pos_weight: Tensor | None = None")


def binary_cross_entropy_with_logits(input, target, weight=None,  # noqa: A002
                                     size_average=None, reduce=None, reduction: str = "mean",
                                     pos_weight=None):
    """Binary cross-entropy of ``sigmoid(input)``, computed stably from the logits.

    Args:
        input: logits; target: probabilities in [0, 1] of the same shape.
        weight: rescales each element (broadcast to the input's shape).
        pos_weight: weight of the positive term, broadcast along the last (class) dimension:
            > 1 raises recall, < 1 precision.
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    try:
        attrs = {"reduction": reduction, "has_weight": weight is not None,
                 "has_pos_weight": pos_weight is not None}
        extra = tuple(t for t in (weight, pos_weight) if t is not None)
        return _pair_call(BCE_WITH_LOGITS, input, target, attrs, *extra)
    except FwError as err:
        raise located(err, "binary_cross_entropy_with_logits", (input, target, weight),
                      reduction=reduction, pos_weight=pos_weight) from None


# -- KL divergence --------------------------------------------------------------------------------
def _kl_div_vjp(ctx, g):
    x, target = ctx.inputs
    a = ctx.attrs
    count = (x.shape[0] if x.ndim else 1) if a["reduction"] == "batchmean" else x.numel()
    cot = _cotangent(g, a["reduction"], count)
    gx = gt = None
    if a["log_target"]:
        p = exp(target)
        if ctx.next[0] is not None:
            gx = -cot * p
        if ctx.next[1] is not None:
            gt = cot * p * (target + 1.0 - x)
    else:
        if ctx.next[0] is not None:
            gx = -cot * target
        if ctx.next[1] is not None:
            zero = target == 0  # t log t -> 0 there; keep log's argument away from 0
            gt = where(zero, 0.0, cot * (log(where(zero, 1.0, target)) + 1.0 - x))
    return gx, gt


KL_DIV = define_op(
    "kl_div", family="loss", builtin=True,
    doc="KL(target || exp(input)) elementwise: t (log t - x), or e^t (t - x) with log_target; "
        "0 where t = 0; reduced (batchmean divides the sum by the batch size).",
    signature="kl_div(input: Tensor, target: Tensor, reduction: str = 'mean', log_target: bool "
              "= False) -> Tensor",
    meta=_pair_meta("kl_div"), vjp=_kl_div_vjp, structure=Structure.REDUCTION,
    anchor=anchors.domain("input must be log-probabilities (log_softmax), not probabilities; "
                          "a target of 0 contributes 0, but its gradient w.r.t. the target "
                          "log(t) is -inf"),
    saves=("inputs",))


def kl_div(input, target, size_average=None, reduce=None,  # noqa: A002
           reduction: str = "mean", log_target: bool = False):
    """Kullback-Leibler divergence of ``target`` from the distribution whose logs are ``input``.

    ``reduction='batchmean'`` gives the true KL divergence per sample (sum / batch size);
    'mean' divides by the number of elements, as PyTorch does.
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    try:
        _check_reduction("kl_div", reduction, _REDUCTIONS + ("batchmean",))
        attrs = {"reduction": reduction, "log_target": bool(log_target)}
        xd, td = input._data, target._data
        if xd.shape != td.shape or not _dt.is_float(xd.dtype) or not _dt.is_float(td.dtype):
            raise meta_error(KL_DIV, (input, target), attrs)
        return apply(KL_DIV, (input, target), attrs)
    except FwError as err:
        raise located(err, "kl_div", (input, target), reduction=reduction,
                      log_target=log_target) from None


#: Tensor methods this family provides (bound by fw_core.tensor_methods)
METHODS: dict = {}
