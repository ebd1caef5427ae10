"""Loss modules and the composed functional losses against PyTorch: values, input gradients,
buffers and state-dict keys (through ``check_layer``), PyTorch's legacy reduction flags, CTC,
double backward, and the errors bad arguments raise."""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import fw_core as fw
import fw_core.nn.functional as F
from fw_core import nn
from fw_core.errors import ArgumentError, FwError, IndexOutOfRangeError, ShapeError

from .layer_check import check_layer, const

REDUCTIONS = ("mean", "sum", "none")
RNG = np.random.default_rng(0)


def _normal(*shape):
    return RNG.standard_normal(shape)


def _uniform(*shape, low=0.05, high=0.95):
    return RNG.uniform(low, high, shape)


def _signs(*shape):
    return const(RNG.choice([-1.0, 1.0], shape))


def _modules(name, **kwargs):
    """fw's and torch's module ``name``, NumPy arguments given to each as its own tensors."""
    ours = {k: fw.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    theirs = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    return getattr(nn, name)(**ours), getattr(torch.nn, name)(**theirs)


_LABELS = np.array([1, 4, 0, 2, 3, 1])
_IGNORED = np.array([1, -100, 4, 0, -100, 2])
_SPATIAL = np.array([[0, 2, -100, 1], [2, 2, 0, -100]])
_W5 = np.array([1.0, 0.5, 2.0, 0.25, 1.5])
_W4 = np.array([0.5, 1.0, 2.0, 0.25])
_MULTILABEL = np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 2, 1, 0]])  # -1 ends each list


def _each_reduction(name, args, variant="", **kwargs):
    """One case per reduction: (id, module name, constructor arguments, call arguments)."""
    return [(f"{name}{variant}-{r}", name, {**kwargs, "reduction": r}, args) for r in REDUCTIONS]


CASES = [
    *_each_reduction("L1Loss", [_normal(3, 4), _normal(3, 4)]),
    *_each_reduction("MSELoss", [_normal(3, 4), _normal(3, 4)]),
    *_each_reduction("SmoothL1Loss", [_normal(3, 4), _normal(3, 4)], beta=0.5),
    ("SmoothL1Loss-beta0", "SmoothL1Loss", {"beta": 0.0}, [_normal(3, 4), _normal(3, 4)]),
    *_each_reduction("HuberLoss", [2 * _normal(3, 4), _normal(3, 4)], delta=0.7),
    ("HuberLoss-default", "HuberLoss", {}, [2 * _normal(5), _normal(5)]),
    ("HuberLoss-delta3", "HuberLoss", {"delta": 3.0}, [3 * _normal(2, 3), _normal(2, 3)]),
    *_each_reduction("BCELoss", [_uniform(3, 4), _uniform(3, 4, low=0.0, high=1.0)]),
    ("BCELoss-weight", "BCELoss", {"weight": _W4}, [_uniform(3, 4), _uniform(3, 4)]),
    *_each_reduction("BCEWithLogitsLoss", [3 * _normal(3, 4), _uniform(3, 4)]),
    ("BCEWithLogitsLoss-pos_weight", "BCEWithLogitsLoss", {"pos_weight": _W4},
     [3 * _normal(3, 4), _uniform(3, 4)]),
    ("BCEWithLogitsLoss-weight-pos_weight-sum", "BCEWithLogitsLoss",
     {"weight": _uniform(3, 1), "pos_weight": _W4[::-1].copy(), "reduction": "sum"},
     [3 * _normal(3, 4), _uniform(3, 4)]),
    *[(f"KLDivLoss-{r}", "KLDivLoss", {"reduction": r}, [_normal(3, 4), _uniform(3, 4)])
      for r in (*REDUCTIONS, "batchmean")],
    ("KLDivLoss-log_target", "KLDivLoss", {"reduction": "batchmean", "log_target": True},
     [_normal(3, 4), -_uniform(3, 4, low=0.1, high=3.0)]),
    *_each_reduction("NLLLoss", [_normal(6, 5), _LABELS]),
    ("NLLLoss-weight-ignore", "NLLLoss", {"weight": _W5}, [_normal(6, 5), _IGNORED]),
    ("NLLLoss-custom-ignore-sum", "NLLLoss", {"ignore_index": 2, "reduction": "sum"},
     [_normal(6, 5), _LABELS]),
    ("NLLLoss-spatial-none", "NLLLoss", {"reduction": "none"}, [_normal(2, 3, 4), _SPATIAL]),
    ("NLLLoss-unbatched", "NLLLoss", {}, [_normal(5), np.array(3)]),
    *_each_reduction("CrossEntropyLoss", [_normal(6, 5), _LABELS]),
    *_each_reduction("CrossEntropyLoss", [_normal(6, 5), _IGNORED],
                     "-weight-ignore-smoothing", weight=_W5, label_smoothing=0.2),
    ("CrossEntropyLoss-spatial-weight", "CrossEntropyLoss", {"weight": _W5[:3]},
     [_normal(2, 3, 4), _SPATIAL]),
    ("CrossEntropyLoss-4d-smoothing", "CrossEntropyLoss", {"label_smoothing": 0.1},
     [_normal(2, 3, 2, 2), RNG.integers(0, 3, (2, 2, 2))]),
    ("CrossEntropyLoss-unbatched", "CrossEntropyLoss", {}, [_normal(5), np.array(1)]),
    *_each_reduction("CrossEntropyLoss", [_normal(4, 5), _uniform(4, 5)], "-probs",
                     weight=_W5, label_smoothing=0.1),
    *_each_reduction("CosineEmbeddingLoss", [_normal(5, 3), _normal(5, 3), _signs(5)],
                     margin=0.2),
    ("CosineEmbeddingLoss-unbatched", "CosineEmbeddingLoss", {},
     [_normal(4), _normal(4), const(np.array(-1.0))]),
    *_each_reduction("MarginRankingLoss", [_normal(6), _normal(6), _signs(6)], margin=0.3),
    ("MarginRankingLoss-broadcast", "MarginRankingLoss", {"margin": 0.1},
     [_normal(3, 1), _normal(1, 4), _signs(3, 4)]),
    *_each_reduction("HingeEmbeddingLoss", [_normal(3, 4), _signs(3, 4)], margin=0.5),
    *_each_reduction("SoftMarginLoss", [_normal(3, 4), _signs(3, 4)]),
    *_each_reduction("TripletMarginLoss", [_normal(5, 3), _normal(5, 3), _normal(5, 3)]),
    ("TripletMarginLoss-p1-swap", "TripletMarginLoss", {"p": 1.0, "swap": True, "margin": 2.0},
     [_normal(5, 3), _normal(5, 3), _normal(5, 3)]),
    ("TripletMarginLoss-p3-eps", "TripletMarginLoss", {"p": 3.0, "eps": 1e-3, "margin": 1.5},
     [_normal(5, 3), _normal(5, 3), _normal(5, 3)]),
    ("TripletMarginLoss-unbatched", "TripletMarginLoss", {"margin": 3.0},
     [_normal(4), _normal(4), _normal(4)]),
    *_each_reduction("MultiMarginLoss", [_normal(6, 5), _LABELS]),
    ("MultiMarginLoss-p2-weight-margin", "MultiMarginLoss",
     {"p": 2, "margin": 0.7, "weight": _W5}, [_normal(6, 5), _LABELS]),
    ("MultiMarginLoss-unbatched", "MultiMarginLoss", {"reduction": "none"},
     [_normal(5), np.array(2)]),
    *_each_reduction("MultiLabelMarginLoss", [_normal(3, 4), _MULTILABEL]),
    ("MultiLabelMarginLoss-unbatched", "MultiLabelMarginLoss", {},
     [_normal(4), np.array([2, -1, 0, 1])]),
    *_each_reduction("MultiLabelSoftMarginLoss", [_normal(3, 4), _uniform(3, 4)]),
    ("MultiLabelSoftMarginLoss-weight", "MultiLabelSoftMarginLoss", {"weight": _W4},
     [_normal(3, 4), const(RNG.integers(0, 2, (3, 4)).astype(float))]),
    *_each_reduction("TripletMarginWithDistanceLoss",
                     [_normal(5, 3), _normal(5, 3), _normal(5, 3)], swap=True, margin=2.0),
    *_each_reduction("PoissonNLLLoss", [_normal(3, 4), _uniform(3, 4, low=0.0, high=4.0)]),
    ("PoissonNLLLoss-rate-full", "PoissonNLLLoss", {"log_input": False, "full": True},
     [_uniform(3, 4, low=0.1, high=3.0), _uniform(3, 4, low=0.0, high=5.0)]),
    ("PoissonNLLLoss-full-broadcast", "PoissonNLLLoss", {"full": True, "reduction": "sum"},
     [_normal(3, 4), _uniform(3, 1, low=0.5, high=6.0)]),
]

GAUSSIAN_CASES = [
    *[(f"same-shape-{r}", {"reduction": r}, (4, 3), (4, 3)) for r in REDUCTIONS],
    ("full", {"full": True}, (4, 3), (4, 3)),
    ("one-dim-fewer", {}, (4, 3), (4,)),
    ("last-dim-one", {"reduction": "sum"}, (4, 3), (4, 1)),
    ("middle-dim-one", {}, (2, 3, 5), (2, 1, 5)),
]


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides:UserWarning")  # torch's kl_div
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("name", "kwargs", "args"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_module_matches_torch(name, kwargs, args, dtype):
    ours, theirs = _modules(name, **kwargs)
    check_layer(ours, theirs, args, modes=("train",), dtype=dtype)


@pytest.mark.parametrize(("case", "kwargs", "shape", "var_shape"),
                         GAUSSIAN_CASES, ids=[c[0] for c in GAUSSIAN_CASES])
def test_gaussian_nll_loss_matches_torch(case, kwargs, shape, var_shape):
    ours, theirs = _modules("GaussianNLLLoss", **kwargs)
    check_layer(ours, theirs, [_normal(*shape), _normal(*shape), _uniform(*var_shape)],
                modes=("train",), dtype="float64")


def test_gaussian_nll_loss_clamped_variance_still_gets_a_gradient():
    var = np.array([1e-9, 0.5, 1e-8, 2.0])  # two entries below eps = 1e-6
    ours, theirs = check_layer(*_modules("GaussianNLLLoss", reduction="sum"),
                               [_normal(4), _normal(4), var], modes=("train",), dtype="float64")
    assert np.isfinite(ours[0].item())


def test_gaussian_nll_loss_takes_a_float_variance():
    x, t = _normal(3, 2), _normal(3, 2)
    ours = F.gaussian_nll_loss(fw.tensor(x), fw.tensor(t), 0.25, full=True)
    theirs = TF.gaussian_nll_loss(torch.tensor(x), torch.tensor(t), 0.25, full=True)
    np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-12)


def test_loss_module_has_torchs_defaults_and_buffers():
    weight = np.array([1.0, 2.0, 3.0])
    for name, kwargs in [("CrossEntropyLoss", {"weight": weight}), ("NLLLoss", {}),
                         ("BCELoss", {"weight": weight}),
                         ("BCEWithLogitsLoss", {"pos_weight": weight})]:
        ours, theirs = _modules(name, **kwargs)
        assert list(ours.state_dict()) == list(theirs.state_dict()), name
        for attr in ("reduction", "ignore_index", "label_smoothing"):
            assert getattr(ours, attr, None) == getattr(theirs, attr, None), (name, attr)
    ce = nn.CrossEntropyLoss(weight=fw.tensor(weight)).to(fw.float64)
    assert ce.weight.dtype == fw.float64 and not ce.weight.requires_grad
    assert list(ce.parameters()) == []


LEGACY_FUNCTIONAL = {
    "mse_loss": [_normal(2, 3), _normal(2, 3)],
    "smooth_l1_loss": [_normal(2, 3), _normal(2, 3)],
    "binary_cross_entropy": [_uniform(2, 3), _uniform(2, 3)],
    "kl_div": [_normal(2, 3), _uniform(2, 3)],
    "cross_entropy": [_normal(4, 3), np.array([0, 2, 1, 1])],
    "nll_loss": [_normal(4, 3), np.array([0, 2, 1, 1])],
    "margin_ranking_loss": [_normal(4), _normal(4), np.array([1.0, -1.0, 1.0, 1.0])],
    "poisson_nll_loss": [_normal(2, 3), _uniform(2, 3)],
}


@pytest.mark.parametrize("size_average", [None, True, False])
@pytest.mark.parametrize("reduce", [None, True, False])
def test_legacy_size_average_and_reduce_map_as_in_torch(size_average, reduce):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = nn.MSELoss(size_average=size_average, reduce=reduce, reduction="none")
    warned = any("size_average and reduce" in str(w.message) for w in caught)
    assert warned == (size_average is not None or reduce is not None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.nn.MSELoss(size_average=size_average, reduce=reduce, reduction="none")
        assert ours.reduction == theirs.reduction
        for name, arrays in LEGACY_FUNCTIONAL.items():
            expected = getattr(TF, name)(*map(torch.tensor, arrays), size_average=size_average,
                                         reduce=reduce)
            got = getattr(F, name)(*map(fw.tensor, arrays), size_average=size_average,
                                   reduce=reduce)
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, err_msg=name)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_weighted_pointwise_losses_match_torch(name, reduction):
    # mse and l1: 'mean' is sum(w e) / sum(w); huber: mean(w e), as PyTorch
    x, t, w = 2 * _normal(3, 4), _normal(3, 4), _uniform(3, 4)
    ours_x, theirs_x = fw.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours = getattr(F, name)(ours_x, fw.tensor(t), reduction=reduction, weight=fw.tensor(w))
    theirs = getattr(TF, name)(theirs_x, torch.tensor(t), reduction=reduction,
                               weight=torch.tensor(w))
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
    ours.sum().backward()
    theirs.sum().backward()
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-12)


def test_functional_losses_take_torchs_positional_order():
    x, t = _normal(4, 3), np.array([0, 2, 1, 1])
    w = np.array([1.0, 2.0, 0.5])
    # cross_entropy(input, target, weight, size_average, ignore_index, reduce, reduction)
    ours = F.cross_entropy(fw.tensor(x), fw.tensor(t), fw.tensor(w), None, 2, None, "sum")
    theirs = TF.cross_entropy(torch.tensor(x), torch.tensor(t), torch.tensor(w), None, 2, None,
                              "sum")
    np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-12)


def test_triplet_margin_with_a_custom_distance_matches_torch():
    arrays = [_normal(5, 3), _normal(5, 3), _normal(5, 3)]
    ours_in = [fw.tensor(a, requires_grad=True) for a in arrays]
    theirs_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    ours = nn.TripletMarginWithDistanceLoss(
        distance_function=lambda a, b: 1.0 - (a * b).sum(-1) / (fw.norm(a, dim=-1)
                                                                 * fw.norm(b, dim=-1)),
        margin=0.5)(*ours_in)
    theirs = torch.nn.TripletMarginWithDistanceLoss(
        distance_function=lambda a, b: 1.0 - TF.cosine_similarity(a, b), margin=0.5)(*theirs_in)
    np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-7)
    ours.backward()
    theirs.backward()
    for a, b in zip(ours_in, theirs_in):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6, atol=1e-9)


# -- CTC ------------------------------------------------------------------------------------------
def _ctc_pair(logits, *args, **kwargs):
    """CTC of log_softmax(logits) in fw and torch: (fw loss, torch loss, fw and torch logits)."""
    ours_x = fw.tensor(logits, requires_grad=True)
    theirs_x = torch.tensor(logits, requires_grad=True)
    converted = [(fw.tensor(a), torch.tensor(a)) if isinstance(a, np.ndarray) else (a, a)
                 for a in args]
    ours = nn.CTCLoss(**kwargs)(F.log_softmax(ours_x, -1), *(o for o, _ in converted))
    theirs = torch.nn.CTCLoss(**kwargs)(theirs_x.log_softmax(-1), *(t for _, t in converted))
    return ours, theirs, ours_x, theirs_x


def _check_ctc(logits, *args, tolerance=1e-10, **kwargs):
    ours, theirs, ours_x, theirs_x = _ctc_pair(logits, *args, **kwargs)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tolerance)
    cotangent = RNG.standard_normal(tuple(theirs.shape))
    fw.autograd.backward([ours], [fw.tensor(cotangent.astype(logits.dtype))])
    theirs.backward(torch.tensor(cotangent.astype(logits.dtype)))
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=tolerance,
                               atol=tolerance)
    return ours


_CTC_TARGETS = np.array([[1, 2, 2, 3], [4, 4, 1, 0], [2, 0, 0, 0], [3, 1, 4, 2]])
_CTC_INPUT_LENGTHS = np.array([9, 8, 5, 9])
_CTC_TARGET_LENGTHS = np.array([4, 3, 1, 4])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_matches_torch(reduction, zero_infinity):
    # repeated labels (2, 2 and 4, 4) need a blank between them; lengths differ per sample
    _check_ctc(_normal(9, 4, 5), _CTC_TARGETS, _CTC_INPUT_LENGTHS, _CTC_TARGET_LENGTHS,
               reduction=reduction, zero_infinity=zero_infinity)


def test_ctc_loss_concatenated_targets_and_length_tuples():
    joined = np.concatenate([row[:n] for row, n in zip(_CTC_TARGETS, _CTC_TARGET_LENGTHS)])
    padded = _check_ctc(_normal(9, 4, 5), _CTC_TARGETS, _CTC_INPUT_LENGTHS, _CTC_TARGET_LENGTHS,
                        reduction="none")
    logits = _normal(9, 4, 5)
    _check_ctc(logits, joined, tuple(_CTC_INPUT_LENGTHS.tolist()),
               tuple(_CTC_TARGET_LENGTHS.tolist()), reduction="none")
    assert padded.shape == (4,)


def test_ctc_loss_blank_not_zero_empty_target_and_float32():
    targets = np.array([[0, 1, 1], [2, 0, 0], [0, 0, 0]])
    _check_ctc(_normal(6, 3, 4), targets, np.array([6, 4, 3]), np.array([3, 2, 0]), blank=3)
    _check_ctc(_normal(6, 3, 4).astype(np.float32), targets, np.array([6, 4, 3]),
               np.array([3, 2, 0]), blank=3, tolerance=1e-5)


def test_ctc_loss_unbatched():
    ours = _check_ctc(_normal(7, 5), np.array([1, 3, 3]), np.array(7), np.array(3),
                     reduction="none")
    assert ours.shape == ()
    _check_ctc(_normal(7, 5), np.array([1, 3, 3]), (6,), (3,), reduction="mean")


def test_ctc_loss_impossible_alignment_is_inf_or_zero_with_zero_infinity():
    # three labels with a repeat need 4 frames; 3 are given
    logits = _normal(3, 1, 4)
    args = (np.array([[1, 1, 2]]), np.array([3]), np.array([3]))
    ours, theirs, ours_x, _ = _ctc_pair(logits, *args, reduction="sum")
    assert np.isinf(ours.item()) and np.isinf(theirs.item())
    ours.backward()
    assert not np.any(ours_x.grad.numpy())  # fw: zero (torch: NaN)
    _check_ctc(logits, *args, reduction="sum", zero_infinity=True)


def test_ctc_loss_gradient_wrt_log_probs_is_the_exact_one():
    # torch returns exp(log_probs) - posterior; fw the true gradient -posterior (frames in use)
    log_probs = np.log(RNG.dirichlet(np.ones(5), (6, 2)))
    lengths = np.array([6, 4])
    ours_lp = fw.tensor(log_probs, requires_grad=True)
    theirs_lp = torch.tensor(log_probs, requires_grad=True)
    targets = np.array([[1, 2], [3, 3]])
    F.ctc_loss(ours_lp, fw.tensor(targets), fw.tensor(lengths), fw.tensor(np.array([2, 2])),
               reduction="sum").backward()
    TF.ctc_loss(theirs_lp, torch.tensor(targets), torch.tensor(lengths),
                torch.tensor(np.array([2, 2])), reduction="sum").backward()
    in_use = (np.arange(6)[:, None] < lengths)[..., None]
    np.testing.assert_allclose(ours_lp.grad.numpy(),
                               theirs_lp.grad.numpy() - np.exp(log_probs) * in_use, atol=1e-12)
    frame_sums = ours_lp.grad.numpy().sum(-1)
    np.testing.assert_allclose(frame_sums, -in_use[..., 0].astype(float), atol=1e-12)


def test_ctc_loss_gradcheck_and_double_backward():
    log_probs = fw.tensor(np.log(RNG.dirichlet(np.ones(4), (5, 2))), requires_grad=True)
    targets, lengths, target_lengths = (fw.tensor(np.array([[1, 2], [3, 3]])),
                                        fw.tensor(np.array([5, 4])), fw.tensor(np.array([2, 2])))

    def loss(lp):
        return F.ctc_loss(lp, targets, lengths, target_lengths)

    assert fw.autograd.gradcheck(loss, [log_probs])
    assert fw.autograd.gradgradcheck(loss, [log_probs])


def test_compiled_losses_read_each_calls_targets():
    # the host-side reads of integer targets must not be frozen into a compiled graph
    def step(logits, labels, log_probs, targets, target_lengths):
        return (F.multi_margin_loss(logits, labels)
                + F.ctc_loss(log_probs, targets, fw.tensor(np.array([6, 5])), target_lengths))

    compiled = fw.compile(step)
    for _ in range(3):
        args = (_t(4, 5), fw.tensor(RNG.integers(0, 5, 4)),
                F.log_softmax(_t(6, 2, 4), -1), fw.tensor(RNG.integers(1, 4, (2, 2))),
                fw.tensor(RNG.integers(1, 3, 2)))
        np.testing.assert_allclose(compiled(*args).item(), step(*args).item(), rtol=1e-12)


# -- double backward of the composed losses ---------------------------------------------------
def _leaf(*shape, low=None):
    data = _normal(*shape) if low is None else _uniform(*shape, low=low, high=2.0)
    return fw.tensor(data, requires_grad=True)


DOUBLE_BACKWARD = {
    "huber_loss": lambda: (lambda x, t: F.huber_loss(x, t, delta=0.5), [_leaf(3, 4),
                                                                         _leaf(3, 4)]),
    "cosine_embedding_loss": lambda: (lambda a, b: F.cosine_embedding_loss(
        a, b, fw.tensor(np.array([1.0, -1.0, 1.0])), margin=-0.5), [_leaf(3, 4), _leaf(3, 4)]),
    "triplet_margin_loss": lambda: (lambda a, p, n: F.triplet_margin_loss(
        a, p, n, margin=5.0, swap=True), [_leaf(3, 4), _leaf(3, 4), _leaf(3, 4)]),
    "poisson_nll_loss": lambda: (lambda x, t: F.poisson_nll_loss(x, t, full=True),
                                 [_leaf(3, 4), _leaf(3, 4, low=1.2)]),
    "gaussian_nll_loss": lambda: (lambda x, t, v: F.gaussian_nll_loss(x, t, v, full=True),
                                  [_leaf(3, 4), _leaf(3, 4), _leaf(3, 4, low=0.2)]),
    "multi_margin_loss": lambda: (lambda x: F.multi_margin_loss(
        x, fw.tensor(np.array([2, 0, 1])), p=2, margin=3.0, weight=fw.tensor(_W4)),
        [_leaf(3, 4)]),
    "multilabel_margin_loss": lambda: (lambda x: F.multilabel_margin_loss(
        x, fw.tensor(_MULTILABEL)), [fw.tensor(_normal(3, 4) * 0.1, requires_grad=True)]),
    "soft_margin_loss": lambda: (lambda x: F.soft_margin_loss(
        x, fw.tensor(np.array([1.0, -1.0, -1.0]))), [_leaf(3)]),
}


@pytest.mark.parametrize("name", sorted(DOUBLE_BACKWARD))
def test_composed_loss_gradcheck_and_double_backward(name):
    fn, inputs = DOUBLE_BACKWARD[name]()
    assert fw.autograd.gradcheck(fn, inputs)
    assert fw.autograd.gradgradcheck(fn, inputs)


# -- errors ---------------------------------------------------------------------------------------
def _t(*shape):
    return fw.tensor(_normal(*shape))


ERRORS = [
    ("bad-reduction-module", lambda: nn.L1Loss(reduction="avg")(_t(3), _t(3)), ArgumentError,
     "l1_loss"),
    ("bad-reduction-composed", lambda: nn.HuberLoss(reduction="avg")(_t(3), _t(3)),
     ArgumentError, "huber_loss"),
    ("bad-reduction-ctc", lambda: F.ctc_loss(_t(4, 1, 3), fw.tensor(np.array([[1]])), [4], [1],
                                             reduction="batchmean"), ArgumentError, "ctc_loss"),
    ("mse-shape-mismatch", lambda: nn.MSELoss()(_t(3, 4), _t(4, 3)), ShapeError, "mse_loss"),
    ("huber-shape-mismatch", lambda: nn.HuberLoss()(_t(3, 4), _t(4, 3)), ShapeError,
     "huber_loss"),
    ("huber-delta", lambda: nn.HuberLoss(delta=0.0)(_t(3), _t(3)), ArgumentError, "huber_loss"),
    ("huber-weight-shape", lambda: F.huber_loss(_t(3, 2), _t(3, 2), weight=_t(2)), ShapeError,
     "huber_loss"),
    ("mse-weight-shape", lambda: F.mse_loss(_t(3, 2), _t(3, 2), weight=_t(2)), ShapeError,
     "mse_loss"),
    ("cross-entropy-label-range", lambda: nn.CrossEntropyLoss()(
        _t(2, 3), fw.tensor(np.array([0, 3]))), FwError, "cross_entropy"),
    ("nll-label-range", lambda: nn.NLLLoss()(_t(2, 3), fw.tensor(np.array([-1, 0]))), FwError,
     "nll_loss"),
    ("cross-entropy-weight-shape", lambda: nn.CrossEntropyLoss(weight=fw.ones(4))(
        _t(2, 3), fw.tensor(np.array([0, 1]))), ShapeError, "cross_entropy"),
    ("cosine-target-ndim", lambda: nn.CosineEmbeddingLoss()(_t(3, 2), _t(3, 2), _t(3, 1)),
     ShapeError, "cosine_embedding_loss"),
    ("cosine-input-ndim", lambda: nn.CosineEmbeddingLoss()(_t(3), _t(3), _t(3)), ShapeError,
     "cosine_embedding_loss"),
    ("margin-ranking-ndim", lambda: nn.MarginRankingLoss()(_t(3, 1), _t(3), _t(3)), ShapeError,
     "margin_ranking_loss"),
    ("margin-ranking-broadcast", lambda: nn.MarginRankingLoss()(_t(3), _t(4), _t(3)),
     ShapeError, "margin_ranking_loss"),
    ("triplet-margin", lambda: nn.TripletMarginLoss(margin=0.0)(_t(2, 3), _t(2, 3), _t(2, 3)),
     ArgumentError, "triplet_margin_loss"),
    ("triplet-ndim", lambda: nn.TripletMarginLoss()(_t(2, 3), _t(3), _t(2, 3)), ShapeError,
     "triplet_margin_loss"),
    ("gaussian-negative-var", lambda: nn.GaussianNLLLoss()(
        _t(3), _t(3), fw.tensor(np.array([1.0, -0.1, 1.0]))), ArgumentError, "gaussian_nll_loss"),
    ("gaussian-var-shape", lambda: nn.GaussianNLLLoss()(_t(4, 3), _t(4, 3), fw.ones(3, 4)),
     ShapeError, "gaussian_nll_loss"),
    ("poisson-broadcast", lambda: nn.PoissonNLLLoss()(_t(3, 4), _t(3, 2)), ShapeError,
     "poisson_nll_loss"),
    ("multi-margin-p", lambda: nn.MultiMarginLoss(p=3)(_t(2, 3), fw.tensor(np.array([0, 1]))),
     ArgumentError, "multi_margin_loss"),
    ("multi-margin-label-range", lambda: nn.MultiMarginLoss()(
        _t(2, 3), fw.tensor(np.array([0, 3]))), IndexOutOfRangeError, "multi_margin_loss"),
    ("multilabel-margin-label-range", lambda: nn.MultiLabelMarginLoss()(
        _t(2, 3), fw.tensor(np.array([[0, 5, -1], [1, -1, 0]]))), IndexOutOfRangeError,
     "multilabel_margin_loss"),
    ("multilabel-margin-shape", lambda: nn.MultiLabelMarginLoss()(
        _t(2, 3), fw.tensor(np.array([0, 1]))), ShapeError, "multilabel_margin_loss"),
    ("triplet-distance-margin", lambda: nn.TripletMarginWithDistanceLoss(margin=-1.0)(
        _t(2, 3), _t(2, 3), _t(2, 3)), ArgumentError, "triplet_margin_with_distance_loss"),
    ("ctc-label-range", lambda: nn.CTCLoss()(_t(5, 1, 3), fw.tensor(np.array([[1, 3]])), [5],
                                             [2]), IndexOutOfRangeError, "ctc_loss"),
    ("ctc-blank-range", lambda: nn.CTCLoss(blank=3)(_t(5, 1, 3), fw.tensor(np.array([[1]])),
                                                    [5], [1]), IndexOutOfRangeError, "ctc_loss"),
    ("ctc-input-length", lambda: nn.CTCLoss()(_t(5, 1, 3), fw.tensor(np.array([[1]])), [6],
                                              [1]), ArgumentError, "ctc_loss"),
    ("ctc-target-length", lambda: nn.CTCLoss()(_t(5, 1, 3), fw.tensor(np.array([[1, 2]])), [5],
                                               [3]), ShapeError, "ctc_loss"),
    ("ctc-negative-target-length", lambda: nn.CTCLoss()(
        _t(5, 1, 3), fw.tensor(np.array([[1, 2]])), [5], [-1]), ArgumentError, "ctc_loss"),
    ("ctc-padded-rows", lambda: nn.CTCLoss()(_t(5, 2, 3), fw.tensor(np.array([[1, 2]])),
                                             [5, 5], [1, 1]), ShapeError, "ctc_loss"),
    ("ctc-lengths-count", lambda: nn.CTCLoss()(_t(5, 2, 3), fw.tensor(np.array([[1], [2]])),
                                               [5], [1, 1]), ShapeError, "ctc_loss"),
    ("ctc-log-probs-ndim", lambda: nn.CTCLoss()(_t(5), fw.tensor(np.array([1])), [5], [1]),
     ShapeError, "ctc_loss"),
    ("ctc-float-lengths", lambda: nn.CTCLoss()(_t(5, 1, 3), fw.tensor(np.array([[1]])),
                                               fw.tensor(np.array([5.0])), [1]), FwError,
     "ctc_loss"),
]


@pytest.mark.parametrize(("case", "call", "error", "op"), ERRORS, ids=[e[0] for e in ERRORS])
def test_bad_arguments_raise_fw_errors_naming_the_loss(case, call, error, op):
    with pytest.raises(error) as caught:
        call()
    assert caught.value.op == op
    assert caught.value.hint
