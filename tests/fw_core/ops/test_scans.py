"""cumprod's gradient where the input holds zeros, and logcumsumexp's where values are large or
-inf: against torch and against central differences (inputs the drawn conformance cases
cannot make: exact zeros that still require grad)."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import DTypeError

torch = pytest.importorskip("torch")

WITH_ZEROS = np.array([[2.0, 0.0, 3.0, 0.0, 4.0],
                       [0.0, 1.5, -2.0, 1.0, 0.5],
                       [1.0, -0.5, 2.0, 3.0, 0.0],
                       [0.0, 0.0, 0.0, 1.0, 2.0]])


def _grads(fn_fw, fn_torch, values, cotangent):
    ours = fw.tensor(values, requires_grad=True)
    theirs = torch.tensor(values, requires_grad=True)
    fn_fw(ours).backward(fw.tensor(cotangent))
    fn_torch(theirs).backward(torch.tensor(cotangent))
    return ours.grad.numpy(), theirs.grad.numpy()


@pytest.mark.parametrize("dim", [0, 1])
def test_cumprod_gradient_at_zeros_matches_torch(dim):
    cotangent = np.random.default_rng(0).standard_normal(WITH_ZEROS.shape)
    got, expected = _grads(lambda x: fw.cumprod(x, dim), lambda x: torch.cumprod(x, dim),
                           WITH_ZEROS, cotangent)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_cumprod_gradient_at_zeros_is_the_derivative():
    x = fw.tensor(WITH_ZEROS, requires_grad=True)
    assert fw.autograd.gradcheck(lambda t: fw.cumprod(t, 1), [x])


def test_cumprod_second_derivative_at_zeros_matches_torch():
    ours = fw.tensor(WITH_ZEROS, requires_grad=True)
    theirs = torch.tensor(WITH_ZEROS, requires_grad=True)
    (g_ours,) = fw.autograd.grad(fw.cumprod(ours, 1).sum(), [ours], create_graph=True)
    (g_theirs,) = torch.autograd.grad(torch.cumprod(theirs, 1).sum(), [theirs],
                                      create_graph=True)
    (gg_ours,) = fw.autograd.grad((g_ours * g_ours).sum(), [ours])
    (gg_theirs,) = torch.autograd.grad((g_theirs * g_theirs).sum(), [theirs])
    np.testing.assert_allclose(gg_ours.numpy(), gg_theirs.numpy(), rtol=1e-12, atol=1e-12)


def test_logcumsumexp_is_exact_where_exp_overflows():
    got, expected = _grads(lambda x: fw.logcumsumexp(x, 0), lambda x: torch.logcumsumexp(x, 0),
                           np.array([0.0, 100.0, 1000.0, -1000.0]), np.ones(4))
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    values = fw.logcumsumexp(fw.tensor([0.0, 100.0], dtype=fw.float32), 0)
    np.testing.assert_array_equal(values.numpy(), np.array([0.0, 100.0], np.float32))


def test_logcumsumexp_gradient_at_minus_infinity_is_nan_as_in_torch():
    values = np.array([-np.inf, 1.0, 2.0])
    got, expected = _grads(lambda x: fw.logcumsumexp(x, 0), lambda x: torch.logcumsumexp(x, 0),
                           values, np.ones(3))
    np.testing.assert_allclose(got, expected, equal_nan=True)


def test_logcumsumexp_second_derivative_is_finite_for_one_signed_cotangents():
    x = fw.tensor(np.random.default_rng(1).standard_normal((3, 5)), requires_grad=True)
    assert fw.autograd.gradgradcheck(lambda t: fw.logcumsumexp(t, 1) * 2.0, [x])
    (g,) = fw.autograd.grad(fw.logcumsumexp(x, 1).sum(), [x], create_graph=True)
    (gg,) = fw.autograd.grad(g.sum(), [x])
    assert np.isfinite(gg.numpy()).all()


def test_logcumsumexp_refuses_integers_and_a_bad_dim():
    with pytest.raises(DTypeError):
        fw.logcumsumexp(fw.tensor([1, 2, 3]), 0)
    with pytest.raises(IndexError):
        fw.cumprod(fw.ones(3), 1)
