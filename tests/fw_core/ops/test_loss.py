"""Behaviour of the losses beyond the conformance cases: error texts, PyTorch's edge-case
semantics (everything ignored, saturated probabilities), and second derivatives."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import DTypeError, FwError, ShapeError, UnsupportedError
from fw_core.records import Structure

torch = pytest.importorskip("torch")
F = torch.nn.functional

LOSSES = ("cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss",
          "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div")


def _pair(array, requires_grad=False):
    array = np.asarray(array)
    if array.dtype.kind == "f":
        array = array.astype(np.float64)
    return (fw.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def _close(ours, theirs, atol=1e-10):
    np.testing.assert_allclose(np.asarray(ours.detach().__array__()),
                               theirs.detach().numpy(), atol=atol, rtol=1e-7)


@pytest.mark.parametrize("name", LOSSES)
def test_every_loss_is_a_reduction_with_a_teaching_anchor(name):
    op = fw.ops.get(name)
    assert op.family == "loss" and op.structure is Structure.REDUCTION
    assert len(op.anchor.says.split()) >= 8


def test_anchors_name_the_probability_pitfalls():
    assert "logits" in fw.ops.get("cross_entropy").anchor.says
    bce = fw.ops.get("binary_cross_entropy").anchor
    assert bce.kind == "pole" and "binary_cross_entropy_with_logits" in bce.says
    region = bce.region(fw.tensor([0.0, 0.5, 1.0]), fw.tensor([1.0, 1.0, 0.0]))
    np.testing.assert_array_equal(region.numpy(), [True, False, True])


# -- error texts ----------------------------------------------------------------------------------
@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_label_out_of_range_names_label_class_count_and_fix(loss):
    scores = fw.randn(4, 5)
    with pytest.raises(FwError) as info:
        getattr(fw, loss)(scores, fw.tensor([0, 4, 7, 1]))
    text = str(info.value)
    assert f"{loss}: target label 7 is out of range" in text
    assert "5 classes" in text and "[0, 4]" in text and "ignore_index=-100" in text
    assert "one output per class" in text and "float32[4, 5]" in text


def test_negative_labels_other_than_ignore_index_are_errors():
    with pytest.raises(FwError, match="target label -1 is out of range"):
        fw.cross_entropy(fw.randn(3, 4), fw.tensor([0, -1, -100]))
    with pytest.raises(FwError, match="target label -100 is out of range"):
        fw.cross_entropy(fw.randn(3, 4), fw.tensor([0, -100, 1]), ignore_index=1)


def test_spatial_label_out_of_range_is_found():
    with pytest.raises(FwError, match="target label 3 is out of range"):
        fw.cross_entropy(fw.randn(2, 3, 4), fw.tensor([[0, 1, 2, 2], [1, 3, 0, 0]]))


@pytest.mark.parametrize("loss", ["mse_loss", "l1_loss", "smooth_l1_loss", "kl_div",
                                  "binary_cross_entropy", "binary_cross_entropy_with_logits"])
def test_pointwise_shape_mismatch_names_both_shapes(loss):
    with pytest.raises(ShapeError) as info:
        getattr(fw, loss)(fw.rand(4, 1), fw.rand(4))
    assert "input shape (4, 1) and target shape (4,) differ" in str(info.value)


def test_cross_entropy_target_shape_errors():
    with pytest.raises(ShapeError, match=r"needs class indices of shape \(4,\), got target "
                                         r"shape \(4, 1\)"):
        fw.cross_entropy(fw.randn(4, 5), fw.tensor([[1], [2], [3], [0]]))
    with pytest.raises(ShapeError, match=r"input \(4, 5\), target \(4, 4\)"):
        fw.cross_entropy(fw.randn(4, 5), fw.rand(4, 4))
    with pytest.raises(ShapeError, match=r"weight has shape \(3,\), expected \(5,\)"):
        fw.cross_entropy(fw.randn(4, 5), fw.tensor([1, 2, 3, 0]), weight=fw.ones(3))


def test_dtype_errors():
    with pytest.raises(DTypeError, match="class-index targets must be integers, got bool"):
        fw.cross_entropy(fw.randn(2, 3), fw.tensor([True, False]))
    with pytest.raises(DTypeError, match="mse_loss"):
        fw.mse_loss(fw.tensor([1, 2]), fw.tensor([1, 2]))


def test_bad_arguments():
    with pytest.raises(FwError, match="reduction='avg' is not supported"):
        fw.mse_loss(fw.rand(2), fw.rand(2), reduction="avg")
    with pytest.raises(FwError, match="'batchmean'"):
        fw.kl_div(fw.rand(2), fw.rand(2), reduction="avg")
    with pytest.raises(FwError, match="label_smoothing must be in"):
        fw.cross_entropy(fw.randn(2, 3), fw.tensor([0, 1]), label_smoothing=1.5)
    with pytest.raises(FwError, match="beta must be >= 0"):
        fw.smooth_l1_loss(fw.rand(2), fw.rand(2), beta=-1.0)


def test_class_weights_are_constants_like_torch():
    weight = fw.ones(3, requires_grad=True)
    with pytest.raises(UnsupportedError, match=r"weight.detach\(\)"):
        fw.cross_entropy(fw.randn(2, 3), fw.tensor([0, 1]), weight=weight)
    with fw.no_grad():
        fw.cross_entropy(fw.randn(2, 3), fw.tensor([0, 1]), weight=weight)


def test_binary_cross_entropy_rejects_values_outside_0_1():
    with pytest.raises(FwError, match=r"between 0 and 1, got values in \[-0.5, 0.5\]"):
        fw.binary_cross_entropy(fw.tensor([-0.5, 0.5]), fw.tensor([0.0, 1.0]))


# -- PyTorch's edge-case semantics ----------------------------------------------------------------
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("with_weight", [False, True])
def test_everything_ignored_gives_nan_mean_and_zero_gradients_like_torch(smoothing,
                                                                         with_weight):
    x, tx = _pair(np.random.default_rng(0).normal(size=(3, 4)), requires_grad=True)
    target, t_target = _pair(np.full(3, -100))
    weight, t_weight = _pair([1.0, 2.0, 0.5, 1.0]) if with_weight else (None, None)
    ours = fw.cross_entropy(x, target, weight, label_smoothing=smoothing)
    theirs = F.cross_entropy(tx, t_target, t_weight, label_smoothing=smoothing)
    assert np.isnan(ours.item()) and np.isnan(theirs.item())
    ours.backward()
    theirs.backward()
    _close(x.grad, tx.grad)
    assert (x.grad.numpy() == 0).all()
    assert fw.cross_entropy(x, target, reduction="sum").item() == 0.0


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weight_ignore_index_and_smoothing_together_match_torch(reduction):
    rng = np.random.default_rng(1)
    x, tx = _pair(rng.normal(size=(6, 4, 3)), requires_grad=True)
    target, t_target = _pair(np.array([[0, 1, 3], [3, 3, 1], [2, -100, 0], [1, 1, 1],
                                       [-100, -100, 2], [0, 2, 3]]))
    weight, t_weight = _pair([0.2, 1.0, 3.0, 0.7])
    ours = fw.cross_entropy(x, target, weight, reduction=reduction, label_smoothing=0.15)
    theirs = F.cross_entropy(tx, t_target, t_weight, reduction=reduction, label_smoothing=0.15)
    _close(ours, theirs)
    cotangent = rng.normal(size=tuple(ours.shape))
    ours.backward(fw.tensor(cotangent))
    theirs.backward(torch.tensor(cotangent))
    _close(x.grad, tx.grad)


def test_binary_cross_entropy_clamps_log_at_minus_100_like_torch():
    p, tp = _pair([0.0, 1.0, 1e-50, 0.5])
    t, tt = _pair([1.0, 0.0, 1.0, 1.0])
    ours = fw.binary_cross_entropy(p, t, reduction="none")
    _close(ours, F.binary_cross_entropy(tp, tt, reduction="none"))
    np.testing.assert_allclose(ours.numpy()[:2], 100.0)


def test_binary_cross_entropy_with_logits_is_stable_at_extreme_logits():
    x, tx = _pair([-1000.0, 1000.0, 30.0, -30.0], requires_grad=True)
    t, tt = _pair([1.0, 0.0, 1.0, 0.0])
    pos_weight, t_pos_weight = _pair([2.0])
    ours = fw.binary_cross_entropy_with_logits(x, t, pos_weight=pos_weight, reduction="sum")
    theirs = F.binary_cross_entropy_with_logits(tx, tt, pos_weight=t_pos_weight,
                                                reduction="sum")
    _close(ours, theirs, atol=1e-9)
    ours.backward()
    theirs.backward()
    assert np.isfinite(x.grad.numpy()).all()
    _close(x.grad, tx.grad)


def test_kl_div_batchmean_is_sum_over_batch_size():
    x = fw.log_softmax(fw.randn(4, 5, dtype=fw.float64), 1)
    t = fw.softmax(fw.randn(4, 5, dtype=fw.float64), 1)
    np.testing.assert_allclose(fw.kl_div(x, t, reduction="batchmean").item(),
                               fw.kl_div(x, t, reduction="sum").item() / 4)


# -- second derivatives ---------------------------------------------------------------------------
_FW_TARGET, _TORCH_TARGET = _pair(np.linspace(0.1, 0.9, 12).reshape(3, 4))


def _hessian_vector_product(loss_fn, x, v):
    (g,) = fw.autograd.grad(loss_fn(x), x, create_graph=True)
    (hv,) = fw.autograd.grad((g * v).sum(), x)
    return hv


def _torch_hessian_vector_product(loss_fn, x, v):
    (g,) = torch.autograd.grad(loss_fn(x), x, create_graph=True)
    (hv,) = torch.autograd.grad((g * v).sum(), x)
    return hv


@pytest.mark.parametrize("name, fw_fn, torch_fn", [
    ("cross_entropy", lambda x: fw.cross_entropy(x, fw.tensor([0, 3, -100]),
                                                 label_smoothing=0.1),
     lambda x: F.cross_entropy(x, torch.tensor([0, 3, -100]), label_smoothing=0.1)),
    ("bce_with_logits", lambda x: fw.binary_cross_entropy_with_logits(x, _FW_TARGET),
     lambda x: F.binary_cross_entropy_with_logits(x, _TORCH_TARGET)),
    ("smooth_l1", lambda x: fw.smooth_l1_loss(x, _FW_TARGET, beta=2.0),
     lambda x: F.smooth_l1_loss(x, _TORCH_TARGET, beta=2.0)),
    ("binary_cross_entropy", lambda x: fw.binary_cross_entropy(fw.sigmoid(x), _FW_TARGET),
     lambda x: F.binary_cross_entropy(torch.sigmoid(x), _TORCH_TARGET)),
])
def test_hessian_vector_products_match_torch(name, fw_fn, torch_fn):
    rng = np.random.default_rng(2)
    x, tx = _pair(rng.normal(size=(3, 4)), requires_grad=True)
    v, tv = _pair(rng.normal(size=(3, 4)))
    _close(_hessian_vector_product(fw_fn, x, v), _torch_hessian_vector_product(torch_fn, tx, tv))
