"""cross_entropy and nll_loss: losses over class scores, with PyTorch's semantics.

Targets are class indices (``ignore_index`` skipped, ``weight`` per class) or, for
cross_entropy, class probabilities; ``label_smoothing`` mixes the target with the uniform
distribution. Both build on one op, ``class_distribution`` (the target as a weighted
distribution over classes), so that their VJPs are fw ops.
"""

from __future__ import annotations

__all__ = ["cross_entropy", "nll_loss"]


import numpy as np

from .. import dtypes as _dt
from .._state import state
from ..errors import DTypeError, FwError, ShapeError, UnsupportedError
from ..records import Structure, TensorSpec
from . import anchors, reduction, shape
from .dispatch import apply
from .elementwise import isinf, where
from .loss import _check_reduction, _reduced, legacy_reduction
from .meta import argument_error, located, require_floating
from .nn import check_indices, log_softmax, meta_error, softmax
from .registry import define_op


def _class_dim(ndim: int) -> int:
    return 0 if ndim == 1 else 1


def _class_view(t, ndim):
    """A (C,) tensor shaped to broadcast against (C,), (N, C) or (N, C, d1, ...)."""
    return t if ndim <= 2 else shape.reshape(t, (-1,) + (1,) * (ndim - 2))


def _class_meta(op):
    def meta(x, target, weight=None, *, reduction, probs=False, **_):
        require_floating(x, op)
        if len(x.shape) == 0:
            raise ShapeError("expects input of shape (C,), (N, C) or (N, C, d1, ...), got a 0-d "
                             "tensor", op=op, hint="the class scores go along dimension 1")
        dim = _class_dim(len(x.shape))
        classes = x.shape[dim]
        rest = tuple(x.shape[:dim]) + tuple(x.shape[dim + 1:])
        if probs:
            require_floating(target, op)
            if tuple(target.shape) != tuple(x.shape):
                raise ShapeError(f"class-probability targets must have the input's shape: "
                                 f"input {tuple(x.shape)}, target {tuple(target.shape)}", op=op,
                                 hint="or pass class indices (integers) of shape "
                                 f"{rest}")
        else:
            if target.dtype.category != _dt.INTEGER:
                raise DTypeError(f"class-index targets must be integers, got "
                                 f"{target.dtype.name}", op=op,
                                 hint="convert with target.long(); float targets of the "
                                 "input's shape are read as class probabilities")
            if tuple(target.shape) != rest:
                raise ShapeError(f"an input of shape {tuple(x.shape)} ({classes} classes along "
                                 f"dim {dim}) needs class indices of shape {rest}, got target "
                                 f"shape {tuple(target.shape)}", op=op,
                                 hint="for (N, L, C) scores, move classes to dim 1: "
                                 "input.transpose(1, 2)")
        if weight is not None:
            require_floating(weight, op)
            if tuple(weight.shape) != (classes,):
                raise ShapeError(f"weight has shape {tuple(weight.shape)}, expected "
                                 f"({classes},): one weight per class", op=op,
                                 hint="give one weight per class")
        return _reduced(rest, reduction, x.dtype)

    return meta


def _class_distribution_meta(target, weight=None, *, num_classes, ignore_index,
                             label_smoothing, dtype):
    if target.dtype.category != _dt.INTEGER:
        raise DTypeError(f"expects integer class indices, got {target.dtype.name}",
                         op="class_distribution", hint="convert with .long()")
    shape_ = tuple(target.shape)
    return TensorSpec(shape_[:1] + (num_classes,) + shape_[1:], _dt.from_numpy(np.dtype(dtype)))


CLASS_DISTRIBUTION = define_op(
    "class_distribution", family="loss", builtin=True,
    doc="q[i, c] = (1 - s) w[t_i] [c == t_i] + (s / C) w[c] for samples whose target t_i is "
        "not ignore_index, else 0 (s: label smoothing, w: class weights or 1): the weight a "
        "class-index target puts on each log-probability in cross_entropy and nll_loss.",
    signature="class_distribution(target: Tensor[int, N, *], weight: Tensor[C] | None, "
              "num_classes: int, ignore_index: int, label_smoothing: float, dtype) -> "
              "Tensor[N, C, *]",
    meta=_class_distribution_meta, vjp=None, structure=Structure.OPAQUE,
    anchor=anchors.flat("a constant built from integer labels: nothing to differentiate"))


def _class_distribution(target, weight, classes, attrs, dtype, smoothing):
    inputs = (target,) if weight is None else (target, weight)
    return apply(CLASS_DISTRIBUTION, inputs, {
        "num_classes": classes, "ignore_index": attrs["ignore_index"],
        "label_smoothing": smoothing, "dtype": dtype.numpy})


def _class_cotangent(g, reduction_, denominator, dim):
    """g shaped to broadcast against (N, C, d1, ...) scores (a per-sample g gets a class axis)."""
    if reduction_ == "none":
        return g if g.ndim == 0 else shape.unsqueeze(g, dim)
    if reduction_ == "mean":
        return g / denominator
    return g


def _index_targets(ctx, weight, smoothing):
    """(q, the 'mean' denominator) for class-index targets: sum of the picked class weights."""
    x, target = ctx.inputs[:2]
    classes = x.shape[_class_dim(x.ndim)]
    q = _class_distribution(target, weight, classes, ctx.attrs, x.dtype, smoothing)
    if ctx.attrs["reduction"] != "mean":
        return q, None
    picked = q if smoothing == 0 else _class_distribution(target, weight, classes, ctx.attrs,
                                                          x.dtype, 0.0)
    total = reduction.sum(picked)
    return q, where(total == 0, 1.0, total)  # all ignored: q is 0, so any finite scale gives 0


def _cross_entropy_vjp(ctx, g):
    x, target, *rest = ctx.inputs
    weight = rest[0] if rest else None
    a = ctx.attrs
    dim = _class_dim(x.ndim)
    classes = x.shape[dim]
    smoothing = a["label_smoothing"]
    if a["probs"]:
        q = target if smoothing == 0 else target * (1.0 - smoothing) + smoothing / classes
        if weight is not None:
            q = q * _class_view(weight, x.ndim)
        scale = _class_cotangent(g, a["reduction"], x.numel() // classes if classes else 1, dim)
    else:
        q, denominator = _index_targets(ctx, weight, smoothing)
        scale = _class_cotangent(g, a["reduction"], denominator, dim)
    gx = gt = None
    if ctx.next[0] is not None:
        gx = (softmax(x, dim) * reduction.sum(q, dim=dim, keepdim=True) - q) * scale
    if a["probs"] and ctx.next[1] is not None:
        gt = log_softmax(x, dim) * scale * -(1.0 - smoothing)
        if weight is not None:
            gt = gt * _class_view(weight, x.ndim)
    return (gx, gt, None)[:len(ctx.inputs)]


CROSS_ENTROPY = define_op(
    "cross_entropy", family="loss", builtin=True,
    doc="-sum_c q[c] log_softmax(input)[c] per sample, q being the (smoothed, weighted) target "
        "distribution; class-index targets skip ignore_index, and 'mean' divides by the summed "
        "weights of the counted targets (by the sample count for probability targets).",
    signature="cross_entropy(input: Tensor[N, C, *], target: Tensor[int, N, *] | Tensor[N, C, "
              "*], weight: Tensor[C] | None = None, ignore_index: int = -100, reduction: str = "
              "'mean', label_smoothing: float = 0.0) -> Tensor",
    meta=_class_meta("cross_entropy"), vjp=_cross_entropy_vjp, structure=Structure.REDUCTION,
    anchor=anchors.pole("log of 0 when a logit is -inf (or when probabilities are passed "
                        "instead of logits): use raw logits, not probabilities",
                        region=lambda x, *rest: isinf(x)),
    saves=("inputs",))


def _nll_loss_vjp(ctx, g):
    x = ctx.inputs[0]
    weight = ctx.inputs[2] if len(ctx.inputs) > 2 else None
    if ctx.next[0] is None:
        return (None,) * len(ctx.inputs)
    q, denominator = _index_targets(ctx, weight, 0.0)
    gx = -q * _class_cotangent(g, ctx.attrs["reduction"], denominator, _class_dim(x.ndim))
    return (gx, None, None)[:len(ctx.inputs)]


NLL_LOSS = define_op(
    "nll_loss", family="loss", builtin=True,
    doc="-w[t] input[t] per sample (input: log-probabilities), skipping ignore_index; 'mean' "
        "divides by the summed weights of the counted targets.",
    signature="nll_loss(input: Tensor[N, C, *], target: Tensor[int, N, *], weight: Tensor[C] | "
              "None = None, ignore_index: int = -100, reduction: str = 'mean') -> Tensor",
    meta=_class_meta("nll_loss"), vjp=_nll_loss_vjp, structure=Structure.REDUCTION,
    anchor=anchors.smooth("linear in its input: feed it log_softmax output (log-probabilities)"
                          ", not probabilities, or use cross_entropy on raw logits"),
    saves=("inputs",))


def _class_call(op, x, target, weight, attrs):
    inputs = (x, target) if weight is None else (x, target, weight)
    xd, td = x._data, target._data
    if not _dt.is_float(xd.dtype) or xd.ndim == 0:
        raise meta_error(op, inputs, attrs)
    dim = _class_dim(xd.ndim)
    classes = xd.shape[dim]
    if attrs.get("probs"):
        if td.shape != xd.shape:
            raise meta_error(op, inputs, attrs)
    else:
        if td.dtype.kind not in "iu" or td.shape != xd.shape[:dim] + xd.shape[dim + 1:]:
            raise meta_error(op, inputs, attrs)
        check_indices(op.name, inputs, target, classes, "target label", "classes",
                      f"the input has {classes} class scores along dim {dim}: give the "
                      "model's last layer one output per class, and make labels start at 0",
                      ignore=attrs["ignore_index"])
    if weight is not None:
        if weight.requires_grad and state.grad_enabled:
            raise UnsupportedError("class weights that require grad are not supported: the "
                                   "loss treats them as constants", op=op.name,
                                   hint="pass weight.detach()")
        if weight._data.shape != (classes,):
            raise meta_error(op, inputs, attrs)
    return apply(op, inputs, attrs)


def cross_entropy(input, target, weight=None, size_average=None,  # noqa: A002
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0):
    """Cross-entropy between raw logits and class targets (log_softmax + nll in one kernel).

    Args:
        input: logits of shape (C,), (N, C) or (N, C, d1, ...): classes along dim 1.
        target: class indices (integers) of shape (), (N,) or (N, d1, ...), or class
            probabilities (floats) of the input's shape.
        weight: optional (C,) class weights (constants).
        ignore_index: class-index targets equal to it add nothing and are not counted.
        reduction: 'mean' (over counted targets, weighted), 'sum' or 'none'.
        label_smoothing: s in [0, 1]: the target becomes (1 - s) target + s / C.

    With every target ignored, 'mean' is 0 / 0 = NaN (as PyTorch).

    Raises:
        FwError: a label outside [0, C) that is not ignore_index (naming it and C).
        ShapeError: input and target shapes do not fit.
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    try:
        _check_reduction("cross_entropy", reduction)
        if not 0.0 <= label_smoothing <= 1.0:
            raise argument_error("cross_entropy", f"label_smoothing must be in [0, 1], got "
                                 f"{label_smoothing}", "a typical value is 0.1",
                                 values=(input, target), label_smoothing=label_smoothing)
        attrs = {"ignore_index": int(ignore_index), "reduction": reduction,
                 "label_smoothing": float(label_smoothing),
                 "probs": _dt.is_float(target._data.dtype)}
        return _class_call(CROSS_ENTROPY, input, target, weight, attrs)
    except FwError as err:
        raise located(err, "cross_entropy", (input, target, weight), ignore_index=ignore_index,
                      reduction=reduction, label_smoothing=label_smoothing) from None


def nll_loss(input, target, weight=None, size_average=None,  # noqa: A002
             ignore_index: int = -100, reduce=None, reduction: str = "mean"):
    """Negative log-likelihood of class indices under log-probabilities ``input``.

    Shapes as :func:`cross_entropy` with class-index targets; ``log_softmax`` then ``nll_loss``
    equals ``cross_entropy``.
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    try:
        _check_reduction("nll_loss", reduction)
        attrs = {"ignore_index": int(ignore_index), "reduction": reduction}
        return _class_call(NLL_LOSS, input, target, weight, attrs)
    except FwError as err:
        raise located(err, "nll_loss", (input, target, weight), ignore_index=ignore_index,
                      reduction=reduction) from None
