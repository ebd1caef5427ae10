"""Attributions against hand computations on a linear model, IG completeness on a nonlinear
one, internal batching, occlusion, SmoothGrad and GradCAM."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import FwError
from fw_debugger.attribution import explain

W = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]])  # two outputs, three features
B = np.array([0.1, -0.2])
X = np.array([[0.5, 1.5, -2.0], [-1.0, 2.0, 4.0]])


@pytest.fixture(autouse=True)
def _seed():
    fw.manual_seed(0)


@pytest.fixture
def linear():
    model = fw.nn.Linear(3, 2).double()
    with fw.no_grad():
        model.weight.copy_(fw.tensor(W))
        model.bias.copy_(fw.tensor(B))
    return model


def _x():
    return fw.tensor(X)


def test_saliency_is_abs_weight(linear):
    result = explain(linear, _x(), target=1, method="saliency")
    np.testing.assert_allclose(result.values.numpy(), np.abs(np.tile(W[1], (2, 1))))
    assert result.method == "saliency" and result.target == [1, 1] and result.delta is None


def test_input_x_gradient_is_x_times_weight(linear):
    result = explain(linear, _x(), target=[0, 1], method="input_x_gradient")
    np.testing.assert_allclose(result.values.numpy(), X * W[[0, 1]])


@pytest.mark.parametrize("rule", ["gausslegendre", "riemann_trapezoid"])
def test_integrated_gradients_is_exact_for_linear(linear, rule):
    baseline = np.array([0.5, -1.0, 1.0])
    result = explain(linear, _x(), target=0, method="integrated_gradients", baseline=baseline,
                     n_steps=8, integration=rule)
    np.testing.assert_allclose(result.values.numpy(), (X - baseline) * W[0], atol=1e-12)
    np.testing.assert_allclose(result.delta.numpy(), 0.0, atol=1e-12)


def test_occlusion_equals_the_hand_value(linear):
    one = explain(linear, _x(), target=1, method="occlusion", sliding_window_shapes=(1,))
    np.testing.assert_allclose(one.values.numpy(), X * W[1])  # baseline 0: w_i * x_i
    # windows of 2 with stride 1 over 3 features: positions {0,1} and {1,2}
    two = explain(linear, _x(), target=1, method="occlusion", sliding_window_shapes=(2,),
                  baseline=1.0)
    drop = (X - 1.0) * W[1]
    first, second = drop[:, :2].sum(1), drop[:, 1:].sum(1)
    hand = np.stack([first, (first + second) / 2, second], axis=1)
    np.testing.assert_allclose(two.values.numpy(), hand)


def _mlp():
    return fw.nn.Sequential(fw.nn.Linear(4, 16), fw.nn.Tanh(), fw.nn.Linear(16, 3)).double()


def test_integrated_gradients_completeness_on_a_nonlinear_model():
    model, x = _mlp(), fw.randn(3, 4, dtype=fw.float64)
    result = explain(model, x, target=2, method="integrated_gradients", n_steps=64)
    with fw.no_grad():
        expected = (model(x) - model(fw.zeros_like(x))).numpy()[:, 2]
    assert result.values.shape == x.shape
    np.testing.assert_allclose(result.values.numpy().sum(axis=1), expected, atol=1e-6)
    assert np.abs(result.delta.numpy()).max() < 1e-6


def test_integrated_gradients_delta_shrinks_with_more_steps():
    model, x = _mlp(), 3 * fw.randn(2, 4, dtype=fw.float64)
    options = {"integration": "riemann_trapezoid"}
    few = explain(model, x, 0, "integrated_gradients", n_steps=3, **options)
    many = explain(model, x, 0, "integrated_gradients", n_steps=200, **options)
    assert np.abs(many.delta.numpy()).max() < np.abs(few.delta.numpy()).max()
    assert np.abs(many.delta.numpy()).max() < 1e-3


def test_internal_batching_gives_the_same_result():
    model, x = _mlp(), fw.randn(3, 4, dtype=fw.float64)
    whole = explain(model, x, 1, "integrated_gradients", n_steps=20)
    batched = explain(model, x, 1, "integrated_gradients", n_steps=20, internal_batch_size=7)
    np.testing.assert_allclose(batched.values.numpy(), whole.values.numpy(), atol=1e-12)
    np.testing.assert_allclose(batched.delta.numpy(), whole.delta.numpy(), atol=1e-12)
    options = {"sliding_window_shapes": (2,), "baseline": 0.5}
    occluded = explain(model, x, 1, "occlusion", **options)
    chunked = explain(model, x, 1, "occlusion", internal_batch_size=4, **options)
    np.testing.assert_allclose(chunked.values.numpy(), occluded.values.numpy(), atol=1e-12)


def test_smoothgrad_without_noise_is_saliency(linear):
    plain = explain(linear, _x(), 0, "saliency")
    smooth = explain(linear, _x(), 0, "smoothgrad", nt_samples=4, stdevs=0.0,
                     internal_batch_size=3)
    np.testing.assert_allclose(smooth.values.numpy(), plain.values.numpy())
    noisy = explain(_mlp(), fw.randn(2, 4, dtype=fw.float64), 0, "smoothgrad", nt_samples=8)
    assert noisy.values.shape == (2, 4) and (noisy.values.numpy() >= 0).all()


def test_gradcam_shape_and_non_negativity():
    net = fw.nn.Sequential(fw.nn.Conv2d(1, 4, 3, padding=1), fw.nn.ReLU(), fw.nn.MaxPool2d(2),
                           fw.nn.Conv2d(4, 6, 3, padding=1), fw.nn.ReLU(),
                           fw.nn.AdaptiveAvgPool2d(1), fw.nn.Flatten(), fw.nn.Linear(6, 3))
    x = fw.randn(2, 1, 8, 8)
    result = explain(net, x, target=[0, 2], method="gradcam", layer="3")
    assert result.values.shape == (2, 1, 8, 8)
    assert (result.values.numpy() >= 0).all()
    assert result.extras["layer_cam"].shape == (2, 1, 4, 4)
    assert result.extras["weights"].shape == (2, 6)
    same = explain(net, x, target=[0, 2], method="gradcam", layer=net[3])
    np.testing.assert_allclose(same.values.numpy(), result.values.numpy())


def test_errors_say_what_to_do(linear):
    with pytest.raises(FwError, match="unknown attribution method"):
        explain(linear, _x(), 0, method="lime")
    with pytest.raises(FwError, match="takes no option"):
        explain(linear, _x(), 0, method="saliency", n_steps=3)
    with pytest.raises(FwError, match="say which output"):
        explain(linear, _x(), None)
    with pytest.raises(FwError, match=r"\(N, C, H, W\)"):
        explain(linear, _x(), 0, method="gradcam", layer="")
