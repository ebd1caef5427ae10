"""clip_grad_norm_ and clip_grad_value_ agree with torch.nn.utils and change grads in place."""

import math

import numpy as np
import pytest

import fw_core as fw
from fw_core.optim import ArgumentError, NonFiniteError, clip_grad_norm_, clip_grad_value_

torch = pytest.importorskip("torch")

SHAPES = [(4, 3), (5,), (), (2, 0)]


def _pair(dtypes, seed=0, scale=1.0):
    """The same parameters with gradients in fw and torch (the last one has no gradient)."""
    rng = np.random.default_rng(seed)
    grads = [np.asarray(scale * rng.standard_normal(s)).astype(d) for s, d in zip(SHAPES, dtypes)]
    mine, theirs = [], []
    for g in grads:
        p, q = fw.tensor(g, requires_grad=True), torch.tensor(g, requires_grad=True)
        p.grad, q.grad = fw.tensor(g), torch.tensor(g)
        mine.append(p)
        theirs.append(q)
    extra = fw.zeros(3, requires_grad=True)  # no gradient: skipped
    return mine + [extra], theirs + [torch.zeros(3, requires_grad=True)]


def _grads(params):
    return [p.grad.numpy() if isinstance(p, fw.Tensor) else p.grad.detach().numpy()
            for p in params if p.grad is not None]


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5, math.inf, -math.inf, 0.0, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_clip_grad_norm_matches_torch(norm_type, max_norm, dtype):
    mine, theirs = _pair([dtype] * len(SHAPES))
    total = clip_grad_norm_(mine, max_norm, norm_type=norm_type)
    if math.isinf(float(norm_type)):  # torch refuses inf norms of size-0 gradients; fw skips them
        theirs_nonempty = [q for q in theirs if q.numel()]
    else:
        theirs_nonempty = theirs
    expected = torch.nn.utils.clip_grad_norm_(theirs_nonempty, max_norm, norm_type=norm_type,
                                              foreach=False)
    tol = {"rtol": 1e-12} if dtype == np.float64 else {"rtol": 2e-6}
    assert total.shape == () and total.numpy().dtype == expected.numpy().dtype
    np.testing.assert_allclose(total.numpy(), expected.numpy(), **tol)
    for a, b in zip(_grads(mine), _grads(theirs)):
        np.testing.assert_allclose(a, b, **tol, atol=1e-12)


def test_clip_grad_norm_of_mixed_dtypes_is_float64_like_torch():
    mine, theirs = _pair([np.float32, np.float64, np.float32, np.float64])
    total = clip_grad_norm_(mine, 0.1)
    expected = torch.nn.utils.clip_grad_norm_(theirs, 0.1, foreach=False)
    assert total.dtype is fw.float64 and expected.dtype == torch.float64
    np.testing.assert_allclose(total.numpy(), expected.numpy(), rtol=1e-6)
    for a, b in zip(_grads(mine), _grads(theirs)):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=2e-6)


def test_clip_grad_norm_scales_in_place_and_bumps_the_version():
    p = fw.zeros(2, requires_grad=True)
    p.grad = fw.tensor([3.0, 4.0])
    grad, version = p.grad, p.grad._version
    total = clip_grad_norm_(p, 1.0)  # a single tensor works
    assert p.grad is grad and grad._version == version + 1
    assert total.item() == 5.0
    np.testing.assert_allclose(grad.numpy(), [0.6, 0.8], rtol=1e-6)


def test_clip_grad_norm_without_gradients_returns_zero():
    total = clip_grad_norm_([fw.zeros(2, requires_grad=True)], 1.0)
    assert total.item() == 0.0 and total.dtype is fw.float32


def test_nonfinite_norm_raises_on_request_and_otherwise_scales_like_torch():
    mine, theirs = _pair([np.float32] * len(SHAPES))
    mine[0].grad._data[0, 0] = np.inf
    theirs[0].grad[0, 0] = math.inf
    with pytest.raises(NonFiniteError, match="inf") as err:
        clip_grad_norm_(mine, 1.0, error_if_nonfinite=True)
    assert "error_if_nonfinite=False" in str(err.value)
    total = clip_grad_norm_(mine, 1.0)
    expected = torch.nn.utils.clip_grad_norm_(theirs, 1.0, foreach=False)
    assert math.isinf(total.item()) and math.isinf(expected.item())
    np.testing.assert_array_equal(_grads(mine)[1], _grads(theirs)[1])  # all zero, like torch


@pytest.mark.parametrize("clip_value", [0.0, 0.3, 10.0])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_clip_grad_value_matches_torch(clip_value, dtype):
    mine, theirs = _pair([dtype] * len(SHAPES))
    mine[1].grad._data[0] = np.nan
    theirs[1].grad[0] = math.nan
    clip_grad_value_(mine, clip_value)
    torch.nn.utils.clip_grad_value_(theirs, clip_value, foreach=False)
    for a, b in zip(_grads(mine), _grads(theirs)):
        np.testing.assert_array_equal(a, b)


def test_clip_arguments_are_checked():
    p = fw.zeros(2, requires_grad=True)
    p.grad = fw.ones(2)
    with pytest.raises(ArgumentError, match="max_norm must be >= 0"):
        clip_grad_norm_([p], -1.0)
    with pytest.raises(ArgumentError, match="norm_type must be a number"):
        clip_grad_norm_([p], 1.0, norm_type="fro")
    with pytest.raises(ArgumentError, match="clip_value must be >= 0"):
        clip_grad_value_([p], -0.5)
    assert p.grad.tolist() == [1.0, 1.0]
