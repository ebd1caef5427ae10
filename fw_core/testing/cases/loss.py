"""Loss cases: every loss, each reduction, weights, ignore_index, label smoothing, edge shapes."""

import warnings

import numpy as np

from fw_core.testing.conformance import OpCase, arg, index, positive, value

_HALF = ("float32", "float64", "float16")
_REDUCTIONS = ("mean", "sum", "none")


# -- NumPy references -----------------------------------------------------------------------------
def _reduce(loss, reduction, count=None):
    if reduction == "none":
        return loss
    total = loss.sum(dtype=np.float64)
    if reduction == "sum":
        return total
    return np.float64(total) / (loss.size if count is None else count)


def _log_softmax(x, dim):
    shifted = x - x.max(axis=dim, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))


def _class_loss(logp, target, weight, ignore_index, reduction, smoothing):
    """Reference NLL (+ label smoothing) over log-probabilities with classes along dim 1."""
    unbatched = logp.ndim == 1
    if unbatched:
        logp, target = logp[None], target[None]
    classes = logp.shape[1]
    w = np.ones(classes) if weight is None else weight.astype(np.float64)
    last = np.moveaxis(logp, 1, -1)  # classes last: (N, d1, ..., C)
    valid = target != ignore_index
    safe = np.where(valid, target, 0)
    picked = np.take_along_axis(last, safe[..., None], axis=-1)[..., 0]
    counted = np.where(valid, w[safe], 0.0)
    loss = np.where(valid, -picked * counted, 0.0)
    if smoothing:
        smooth = np.where(valid, -(last * w).sum(axis=-1), 0.0)
        loss = (1 - smoothing) * loss + smoothing / classes * smooth
    out = _reduce(loss, reduction, counted.sum())
    return out[0] if unbatched and reduction == "none" else out


def _cross_entropy(x, target, weight=None, ignore_index=-100, reduction="mean", smoothing=0.0):
    logp = _log_softmax(x.astype(np.float64), 0 if x.ndim == 1 else 1)
    return _class_loss(logp, target, weight, ignore_index, reduction, smoothing)


def _cross_entropy_probs(x, target, weight=None, reduction="mean", smoothing=0.0):
    dim = 0 if x.ndim == 1 else 1
    classes = x.shape[dim]
    logp = _log_softmax(x.astype(np.float64), dim)
    q = target * (1 - smoothing) + smoothing / classes
    if weight is not None:
        q = q * weight.reshape((-1,) + (1,) * (x.ndim - dim - 1))
    loss = -(logp * q).sum(axis=dim)
    return _reduce(loss, reduction)


def _nll(x, target, weight=None, ignore_index=-100, reduction="mean"):
    return _class_loss(x.astype(np.float64), target, weight, ignore_index, reduction, 0.0)


def _smooth_l1(x, t, reduction="mean", beta=1.0):
    d = np.abs(x.astype(np.float64) - t)
    loss = d if beta == 0 else np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, reduction)


def _bce(x, t, weight=None, reduction="mean"):
    x = x.astype(np.float64)
    loss = -(t * np.maximum(np.log(x), -100) + (1 - t) * np.maximum(np.log(1 - x), -100))
    return _reduce(loss if weight is None else loss * weight, reduction)


def _bce_logits(x, t, weight=None, pos_weight=None, reduction="mean"):
    x = x.astype(np.float64)
    log_sigmoid, log_1m_sigmoid = -np.logaddexp(0, -x), -np.logaddexp(0, x)
    pw = 1.0 if pos_weight is None else pos_weight
    loss = -(pw * t * log_sigmoid + (1 - t) * log_1m_sigmoid)
    return _reduce(loss if weight is None else loss * weight, reduction)


def _kl_div(x, t, reduction="mean", log_target=False):
    x = x.astype(np.float64)
    if log_target:
        loss = np.exp(t) * (t - x)
    else:
        loss = np.where(t > 0, t * np.log(np.where(t > 0, t, 1.0)), 0.0) - t * x
    if reduction == "batchmean":
        return loss.sum() / x.shape[0]
    return _reduce(loss, reduction)


def _class_distribution(target, classes, weight=None, ignore_index=-100, smoothing=0.0):
    valid = target != ignore_index
    onehot = np.moveaxis(np.eye(classes)[np.where(valid, target, 0)], -1, 1)
    w = np.ones(classes) if weight is None else weight
    view = (1, classes) + (1,) * (target.ndim - 1)
    q = ((1 - smoothing) * onehot + smoothing / classes) * w.reshape(view)
    return q * np.expand_dims(valid, 1)


# -- cases ----------------------------------------------------------------------------------------
def _pair_cases(op, reference):
    """Every reduction, a 0-d pair and an empty pair (mean: NaN) for a pointwise loss."""
    def call(reduction="mean"):
        return lambda fw, x, t: getattr(fw, op)(x, t, reduction=reduction)

    def torch_call(reduction="mean"):
        return lambda torch, x, t: getattr(torch.nn.functional, op)(x, t, reduction=reduction)

    cases = [OpCase(op, r, [arg(3, 4), arg(3, 4)], call(r),
                    lambda x, t, _r=r: reference(x, t, reduction=_r), torch=torch_call(r),
                    dtypes=_HALF if r == "mean" else ("float32", "float64"))
             for r in _REDUCTIONS]
    cases.append(OpCase(op, "scalar", [arg(), arg()], call(), reference, torch=torch_call()))
    cases.append(OpCase(op, "empty_mean_nan", [arg(0, 3), arg(0, 3)], call(), reference,
                        torch=torch_call(), grad=False))
    return cases


def _torch_class_loss(name):
    def call(torch, x, target, *weight, **kw):
        if not target.is_floating_point():
            target = target.long()  # PyTorch takes int64 labels only; fw also takes int32
        # PyTorch wants the weight in the input's dtype; fw converts it
        weight = [w.to(x.dtype) for w in weight]
        return getattr(torch.nn.functional, name)(x, target, *weight, **kw)

    return call


_PROBS = (positive(3, 4, low=0.05, high=0.95), arg(3, 4, low=0.0, high=1.0))
_W4 = np.array([0.5, 1.0, 2.0, 0.25])
_W5 = np.array([1.0, 0.5, 2.0, 0.0, 1.5])
_IGNORED = np.array([1, -100, 4, 0, -100, 2])
_SPATIAL_TARGET = np.array([[0, 2, -100, 1], [2, 2, 0, -100]])

_POINTWISE = [
    *_pair_cases("mse_loss", lambda x, t, reduction="mean": _reduce(
        (x.astype(np.float64) - t) ** 2, reduction)),
    *_pair_cases("l1_loss", lambda x, t, reduction="mean": _reduce(
        np.abs(x.astype(np.float64) - t), reduction)),
    *_pair_cases("smooth_l1_loss", _smooth_l1),
    OpCase("smooth_l1_loss", "beta_half", [arg(3, 4), arg(3, 4)],
           lambda fw, x, t: fw.smooth_l1_loss(x, t, beta=0.5),
           lambda x, t: _smooth_l1(x, t, beta=0.5),
           torch=lambda torch, x, t: torch.nn.functional.smooth_l1_loss(x, t, beta=0.5)),
    OpCase("smooth_l1_loss", "beta_zero_is_l1", [arg(3, 4), arg(3, 4)],
           lambda fw, x, t: fw.smooth_l1_loss(x, t, beta=0.0, reduction="sum"),
           lambda x, t: _smooth_l1(x, t, "sum", beta=0.0),
           torch=lambda torch, x, t: torch.nn.functional.smooth_l1_loss(x, t, reduction="sum",
                                                                          beta=0.0)),
    *[OpCase("binary_cross_entropy", r, list(_PROBS),
             lambda fw, x, t, _r=r: fw.binary_cross_entropy(x, t, reduction=_r),
             lambda x, t, _r=r: _bce(x, t, reduction=_r),
             torch=lambda torch, x, t, _r=r: torch.nn.functional.binary_cross_entropy(
                 x, t, reduction=_r), dtypes=_HALF if r == "mean" else ("float32", "float64"))
      for r in _REDUCTIONS],
    OpCase("binary_cross_entropy", "weight", [*_PROBS, value(_W4)],
           lambda fw, x, t, w: fw.binary_cross_entropy(x, t, w), lambda x, t, w: _bce(x, t, w),
           torch=lambda torch, x, t, w: torch.nn.functional.binary_cross_entropy(x, t, w)),
    # PyTorch refuses to differentiate the weight; fw does (no torch reference)
    OpCase("binary_cross_entropy", "weight_grad", [*_PROBS, positive(4)],
           lambda fw, x, t, w: fw.binary_cross_entropy(x, t, w, reduction="sum"),
           lambda x, t, w: _bce(x, t, w, "sum")),
    OpCase("binary_cross_entropy", "saturated_clamped",
           [value(np.array([0.0, 1.0, 0.5, 1e-30])), value(np.array([1.0, 0.0, 1.0, 1.0]))],
           lambda fw, x, t: fw.binary_cross_entropy(x, t, reduction="none"),
           lambda x, t: _bce(x, t, reduction="none"),
           torch=lambda torch, x, t: torch.nn.functional.binary_cross_entropy(
               x, t, reduction="none"), grad=False),
    *[OpCase("binary_cross_entropy_with_logits", r, [arg(3, 4, low=-4, high=4), _PROBS[1]],
             lambda fw, x, t, _r=r: fw.binary_cross_entropy_with_logits(x, t, reduction=_r),
             lambda x, t, _r=r: _bce_logits(x, t, reduction=_r),
             torch=lambda torch, x, t, _r=r: torch.nn.functional.binary_cross_entropy_with_logits(
                 x, t, reduction=_r), dtypes=_HALF if r == "mean" else ("float32", "float64"))
      for r in _REDUCTIONS],
    OpCase("binary_cross_entropy_with_logits", "weight_pos_weight",
           [arg(3, 4, low=-4, high=4), _PROBS[1], value(_W4), value(_W4[::-1] * 2)],
           lambda fw, x, t, w, pw: fw.binary_cross_entropy_with_logits(x, t, w, pos_weight=pw),
           lambda x, t, w, pw: _bce_logits(x, t, w, pw),
           torch=lambda torch, x, t, w, pw: torch.nn.functional.binary_cross_entropy_with_logits(
               x, t, w, pos_weight=pw)),
    OpCase("binary_cross_entropy_with_logits", "extreme_logits",
           [value(np.array([-200.0, 200.0, 0.0, 50.0])), value(np.array([1.0, 0.0, 0.5, 1.0]))],
           lambda fw, x, t: fw.binary_cross_entropy_with_logits(x, t, reduction="none"),
           lambda x, t: _bce_logits(x, t, reduction="none"),
           torch=lambda torch, x, t: torch.nn.functional.binary_cross_entropy_with_logits(
               x, t, reduction="none"), grad=False),
    OpCase("binary_cross_entropy_with_logits", "weight_grads",
           [arg(3, 4), _PROBS[1], positive(3, 1), positive(4)],
           lambda fw, x, t, w, pw: fw.binary_cross_entropy_with_logits(
               x, t, w, reduction="sum", pos_weight=pw),
           lambda x, t, w, pw: _bce_logits(x, t, w, pw, "sum")),
    *[OpCase("kl_div", r, [arg(3, 4), positive(3, 4, low=0.1, high=1.0)],
             lambda fw, x, t, _r=r: fw.kl_div(x, t, reduction=_r),
             lambda x, t, _r=r: _kl_div(x, t, _r),
             torch=lambda torch, x, t, _r=r: _torch_kl_div(torch, x, t, reduction=_r),
             dtypes=_HALF if r == "mean" else ("float32", "float64"))
      for r in (*_REDUCTIONS, "batchmean")],
    OpCase("kl_div", "log_target", [arg(3, 4), arg(3, 4, low=-3.0, high=0.0)],
           lambda fw, x, t: fw.kl_div(x, t, reduction="batchmean", log_target=True),
           lambda x, t: _kl_div(x, t, "batchmean", True),
           torch=lambda torch, x, t: torch.nn.functional.kl_div(x, t, reduction="batchmean",
                                                                log_target=True)),
    OpCase("kl_div", "zero_target", [arg(2, 3), value(np.array([[0.0, 0.5, 0.5], [1.0, 0, 0]]))],
           lambda fw, x, t: fw.kl_div(x, t, reduction="sum"), lambda x, t: _kl_div(x, t, "sum"),
           torch=lambda torch, x, t: torch.nn.functional.kl_div(x, t, reduction="sum")),
]


def _ce_case(name, inputs, reference, dtypes=("float32", "float64"), grad=True, **kw):
    return OpCase("cross_entropy", name, inputs,
                  lambda fw, *xs: fw.cross_entropy(*xs, **kw),
                  lambda *xs: reference(*xs, **{k.replace("label_", ""): v
                                               for k, v in kw.items()}),
                  torch=lambda torch, *xs: _torch_class_loss("cross_entropy")(torch, *xs, **kw),
                  dtypes=dtypes, grad=grad)


def _torch_kl_div(torch, x, t, **kw):
    with warnings.catch_warnings():  # PyTorch warns that 'mean' is not the true KL divergence
        warnings.simplefilter("ignore", UserWarning)
        return torch.nn.functional.kl_div(x, t, **kw)


_CROSS_ENTROPY = [
    _ce_case("indices_mean", [arg(4, 5), index(4, high=5)], _cross_entropy, dtypes=_HALF),
    _ce_case("indices_sum", [arg(4, 5), index(4, high=5)], _cross_entropy, reduction="sum"),
    _ce_case("indices_none", [arg(4, 5), index(4, high=5)], _cross_entropy, reduction="none"),
    _ce_case("weight", [arg(6, 5), index(6, high=5), value(_W5)], _cross_entropy),
    _ce_case("ignore_index", [arg(6, 5), value(_IGNORED)], _cross_entropy),
    _ce_case("custom_ignore_index", [arg(6, 5), value(_IGNORED.clip(0))], _cross_entropy,
             ignore_index=2),
    _ce_case("smoothing", [arg(4, 5), index(4, high=5)], _cross_entropy, label_smoothing=0.1),
    *[_ce_case(f"weight_ignore_smoothing_{r}", [arg(6, 5), value(_IGNORED), value(_W5)],
               _cross_entropy, reduction=r, label_smoothing=0.2) for r in _REDUCTIONS],
    _ce_case("spatial_weight_ignore", [arg(2, 3, 4), value(_SPATIAL_TARGET),
                                       value(_W5[:3])], _cross_entropy),
    _ce_case("spatial_none_smoothing", [arg(2, 3, 4), value(_SPATIAL_TARGET)], _cross_entropy,
             reduction="none", label_smoothing=0.3),
    _ce_case("4d_spatial", [arg(2, 3, 2, 2), index(2, 2, 2, high=3)], _cross_entropy),
    _ce_case("unbatched", [arg(5), value(np.array(3))], _cross_entropy),
    _ce_case("unbatched_none", [arg(5), value(np.array(1))], _cross_entropy, reduction="none"),
    _ce_case("all_ignored_mean_nan", [arg(3, 4), value(np.array([-100] * 3))], _cross_entropy,
             grad=False),
    _ce_case("all_ignored_sum", [arg(3, 4), value(np.array([-100] * 3))], _cross_entropy,
             reduction="sum"),
    _ce_case("empty_batch_mean_nan", [arg(0, 4), value(np.zeros(0, np.int64))], _cross_entropy,
             grad=False),
    _ce_case("int32_target", [arg(3, 4), value(np.array([0, 3, 1], np.int32))],
             _cross_entropy),
    _ce_case("probs", [arg(4, 5), arg(4, 5, low=0.0, high=1.0)], _cross_entropy_probs,
             dtypes=_HALF),
    *[_ce_case(f"probs_weight_smoothing_{r}", [arg(4, 5), arg(4, 5, low=0.0, high=1.0),
                                              value(_W5)],
               _cross_entropy_probs, reduction=r, label_smoothing=0.1) for r in _REDUCTIONS],
    _ce_case("probs_spatial", [arg(2, 3, 4), arg(2, 3, 4, low=0.0, high=1.0)],
             _cross_entropy_probs),
    _ce_case("probs_unbatched", [arg(5), arg(5, low=0.0, high=1.0)], _cross_entropy_probs),
    _ce_case("large_logits", [arg(4, 5, low=-300, high=300), index(4, high=5)], _cross_entropy),
]


def _nll_case(name, inputs, grad=True, **kw):
    return OpCase("nll_loss", name, inputs, lambda fw, *xs: fw.nll_loss(*xs, **kw),
                  lambda *xs: _nll(*xs, **kw),
                  torch=lambda torch, *xs: _torch_class_loss("nll_loss")(torch, *xs, **kw),
                  grad=grad)


_NLL = [
    OpCase("nll_loss", "log_softmax_input", [arg(4, 5), index(4, high=5)],
           lambda fw, x, t: fw.nll_loss(fw.log_softmax(x, 1), t),
           lambda x, t: _nll(_log_softmax(x.astype(np.float64), 1), t),
           torch=lambda torch, x, t: torch.nn.functional.nll_loss(torch.log_softmax(x, 1), t),
           dtypes=_HALF),
    _nll_case("sum", [arg(4, 5), index(4, high=5)], reduction="sum"),
    _nll_case("none", [arg(4, 5), index(4, high=5)], reduction="none"),
    _nll_case("weight_ignore", [arg(6, 5), value(_IGNORED), value(_W5)]),
    _nll_case("spatial_none", [arg(2, 3, 4), value(_SPATIAL_TARGET)], reduction="none"),
    _nll_case("unbatched", [arg(5), value(np.array(4))]),
    _nll_case("all_ignored_mean_nan", [arg(2, 3), value(np.array([-100, -100]))], grad=False),
]


def _distribution_call(classes, smoothing=0.0):
    def call(fw, t, *w):
        op = fw.ops.get("class_distribution")
        return fw.ops.apply(op, (t, *w), {"num_classes": classes, "ignore_index": -100,
                                          "label_smoothing": smoothing,
                                          "dtype": np.dtype("float32")})

    return call


def _torch_distribution(classes, smoothing=0.0):
    """The same distribution from torch's one_hot (torch has no op of its own for it)."""
    def call(torch, t, *w):
        class_dim = 1 if t.ndim else 0
        valid = t != -100
        onehot = torch.nn.functional.one_hot(torch.where(valid, t, 0), classes)
        onehot = onehot.movedim(-1, class_dim).double()
        weight = w[0] if w else torch.ones(classes, dtype=torch.float64)
        view = (classes,) + (1,) * max(t.ndim - 1, 0)
        q = ((1 - smoothing) * onehot + smoothing / classes) * weight.reshape(view)
        return q * valid.unsqueeze(class_dim)

    return call


_CLASS_DISTRIBUTION = [
    OpCase("class_distribution", "ignore", [value(_IGNORED)], _distribution_call(5),
           lambda t: _class_distribution(t, 5), torch=_torch_distribution(5), grad=False),
    OpCase("class_distribution", "weight_smoothing", [value(_IGNORED), value(_W5)],
           _distribution_call(5, 0.1), lambda t, w: _class_distribution(t, 5, w, smoothing=0.1),
           torch=_torch_distribution(5, 0.1), grad=False),
    OpCase("class_distribution", "spatial", [value(_SPATIAL_TARGET)], _distribution_call(3),
           lambda t: _class_distribution(t, 3), torch=_torch_distribution(3), grad=False),
    OpCase("class_distribution", "unbatched", [value(np.array(2))], _distribution_call(4),
           lambda t: np.eye(4)[2], torch=_torch_distribution(4), grad=False),
]

CASES = [*_POINTWISE, *_CROSS_ENTROPY, *_NLL, *_CLASS_DISTRIBUTION]
