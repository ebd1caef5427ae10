"""The top-level functions fw composes from its ops (fw_core/ops/composed.py), against torch."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import ArgumentError

torch = pytest.importorskip("torch")

SPECIAL = np.array([1.0, 1.0 + 1e-7, np.inf, -np.inf, np.nan, 2.0, -3.0, 0.0])
OTHER = np.array([1.0, 1.0, np.inf, np.inf, np.nan, 2.1, -3.0 - 1e-9, -0.0])


@pytest.mark.parametrize("equal_nan", [False, True])
@pytest.mark.parametrize("rtol, atol", [(1e-5, 1e-8), (0.0, 0.2), (0.1, 0.0)])
def test_isclose_and_allclose_match_torch(rtol, atol, equal_nan):
    ours = fw.isclose(fw.tensor(SPECIAL), fw.tensor(OTHER), rtol, atol, equal_nan)
    theirs = torch.isclose(torch.tensor(SPECIAL), torch.tensor(OTHER), rtol, atol, equal_nan)
    assert ours.tolist() == theirs.tolist()
    for a, b in ((SPECIAL, OTHER), (SPECIAL[:2], OTHER[:2]), (SPECIAL[4:5], OTHER[4:5])):
        assert fw.tensor(a).allclose(fw.tensor(b), rtol, atol, equal_nan) == \
            torch.tensor(a).allclose(torch.tensor(b), rtol, atol, equal_nan)


def test_negative_tolerances_are_refused():
    with pytest.raises(ArgumentError, match="rtol and atol must be at least 0"):
        fw.isclose(fw.ones(2), fw.ones(2), rtol=-1.0)


def test_equal_compares_shapes_and_values():
    x = fw.tensor([1.0, 2.0])
    assert fw.equal(x, fw.tensor([1.0, 2.0])) and x.equal(fw.tensor([1.0, 2.0]))
    assert not fw.equal(x, fw.tensor([1.0, 3.0])) and not fw.equal(x, fw.tensor([[1.0, 2.0]]))


@pytest.mark.parametrize("name", ["isfinite", "isposinf", "isneginf"])
def test_the_finite_tests_match_torch(name):
    assert getattr(fw, name)(fw.tensor(SPECIAL)).tolist() == \
        getattr(torch, name)(torch.tensor(SPECIAL)).tolist()
    assert getattr(fw.tensor([1, 2]), name)().tolist() == \
        getattr(torch.tensor([1, 2]), name)().tolist()


def _pair(fn_name, *extra):
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-3, 3, (3, 4)), rng.uniform(-3, 3, (4,))
    ours = [fw.tensor(v, requires_grad=True) for v in (a, b)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (a, b)]
    out = getattr(fw, fn_name)(*ours, *extra)
    expected = getattr(torch, fn_name)(*theirs, *extra)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    grads = fw.autograd.grad(out.sum(), ours)
    expected_grads = torch.autograd.grad(expected.sum(), theirs)
    for g, e in zip(grads, expected_grads):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-12, atol=1e-14)


def test_logaddexp_matches_torch_and_does_not_overflow():
    _pair("logaddexp")
    big = fw.logaddexp(fw.tensor([1000.0, -1000.0]), fw.tensor([1000.0, -1000.0]))
    np.testing.assert_allclose(big.numpy(), [1000 + np.log(2), -1000 + np.log(2)], rtol=1e-6)


def test_lerp_matches_torch():
    _pair("lerp", 0.3)


@pytest.mark.parametrize("name", ["std_mean", "var_mean"])
@pytest.mark.parametrize("kwargs", [{}, {"dim": 1}, {"dim": 0, "keepdim": True},
                                    {"dim": 1, "correction": 0}, {"axis": 1, "keepdims": True}])
def test_spread_and_mean_together_match_torch(name, kwargs):
    values = np.random.default_rng(3).standard_normal((3, 5))
    ours = getattr(fw, name)(fw.tensor(values), **kwargs)
    theirs = getattr(torch, name)(torch.tensor(values), **kwargs)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("value", [1, 0.5])
def test_addcmul_and_addcdiv_match_torch_with_gradients(name, value):
    rng = np.random.default_rng(3)
    arrays = rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (4,)), rng.uniform(1, 3, (3, 1))
    ours = [fw.tensor(v, requires_grad=True) for v in arrays]
    theirs = [torch.tensor(v, requires_grad=True) for v in arrays]
    out = getattr(fw, name)(*ours, value=value)
    expected = getattr(torch, name)(*theirs, value=value)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    for g, e in zip(fw.autograd.grad(out.sum(), ours), torch.autograd.grad(expected.sum(),
                                                                            theirs)):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-12, atol=1e-14)
    inplace = fw.tensor(arrays[0])
    assert getattr(inplace, name + "_")(fw.tensor(arrays[1]), fw.tensor(arrays[2]),
                                        value=value) is inplace
    np.testing.assert_allclose(inplace.numpy(), expected.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["add", "sub"])
def test_add_and_sub_scale_the_other_operand_by_alpha(name):
    a, b = np.arange(6.0).reshape(2, 3), np.array([1.0, -2.0, 0.5])
    expected = getattr(torch, name)(torch.tensor(a), torch.tensor(b), alpha=3).numpy()
    np.testing.assert_array_equal(getattr(fw, name)(fw.tensor(a), fw.tensor(b), alpha=3).numpy(),
                                  expected)
    x = fw.tensor(a)
    assert getattr(x, name + "_")(fw.tensor(b), alpha=3) is x
    np.testing.assert_array_equal(x.numpy(), expected)
    assert getattr(fw, name)(fw.tensor([1, 2]), 2, alpha=2).tolist() == \
        getattr(torch, name)(torch.tensor([1, 2]), 2, alpha=2).tolist()
