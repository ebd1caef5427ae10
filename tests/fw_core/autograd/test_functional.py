"""fw.autograd.functional against torch.autograd.functional: values, result structure,
create_graph and strict, and PyTorch's errors."""

import numpy as np
import pytest
import torch
import torch.autograd.functional as TF

import fw_core as fw
import fw_core.autograd.functional as F

X = np.array([0.3, -1.2, 0.7])
Y = np.array([[1.5, 2.0], [0.5, -1.0]])


def _pair(lib):
    return (lib.tensor(X, dtype=lib.float64), lib.tensor(Y, dtype=lib.float64))


def _two_out(lib):
    return lambda x, y: (lib.sin(x) * y.sum(), (x ** 2).sum() * y)


def _scalar(lib):
    return lambda x: (lib.sin(x) * x ** 2).sum()


def _close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_jacobian_tuple_in_tuple_out_matches_torch():
    ours, theirs = F.jacobian(_two_out(fw), _pair(fw)), TF.jacobian(_two_out(torch), _pair(torch))
    assert isinstance(ours, tuple) and all(isinstance(r, tuple) for r in ours)
    for i in range(2):
        for j in range(2):
            assert tuple(ours[i][j].shape) == tuple(theirs[i][j].shape)
            _close(ours[i][j], theirs[i][j])


def test_jacobian_single_tensor_and_constant_output():
    x = fw.tensor(X, dtype=fw.float64)
    jac = F.jacobian(lambda t: fw.sin(t) * 2, x)
    assert isinstance(jac, fw.Tensor)
    np.testing.assert_allclose(jac.numpy(), np.diag(2 * np.cos(X)))
    assert F.jacobian(lambda t: fw.ones(2), x).tolist() == [[0.0] * 3] * 2
    with pytest.raises(RuntimeError, match="does not require gradients"):
        F.jacobian(lambda t: fw.ones(2), x, strict=True)


def test_hessian_matches_torch_single_and_tuple():
    x, tx = fw.tensor(X, dtype=fw.float64), torch.tensor(X)
    _close(F.hessian(_scalar(fw), x), TF.hessian(_scalar(torch), tx))
    f = lambda lib: (lambda a, b: (a ** 2 * b[0, 0] + lib.sin(a) * b[1, 1]).sum())  # noqa: E731
    ours, theirs = F.hessian(f(fw), _pair(fw)), TF.hessian(f(torch), _pair(torch))
    for i in range(2):
        for j in range(2):
            _close(ours[i][j], theirs[i][j])


def test_hessian_needs_a_single_element_output():
    with pytest.raises(ValueError, match="single element"):
        F.hessian(lambda t: t * 2, fw.tensor(X))


@pytest.mark.parametrize("name", ["vhp", "hvp"])
def test_hessian_vector_products_match_torch(name):
    v = np.array([1.0, 2.0, -3.0])
    out, prod = getattr(F, name)(_scalar(fw), fw.tensor(X, dtype=fw.float64),
                                 fw.tensor(v, dtype=fw.float64))
    tout, tprod = getattr(TF, name)(_scalar(torch), torch.tensor(X), torch.tensor(v))
    _close(out, tout)
    _close(prod, tprod)
    assert not prod.requires_grad


def test_vjp_and_jvp_match_torch():
    vs = (fw.ones(3, dtype=fw.float64), fw.tensor(Y, dtype=fw.float64))
    tvs = (torch.ones(3, dtype=torch.float64), torch.tensor(Y))
    (o1, o2), (g1, g2) = F.vjp(_two_out(fw), _pair(fw), vs)
    (t1, t2), (h1, h2) = TF.vjp(_two_out(torch), _pair(torch), tvs)
    for a, b in ((o1, t1), (o2, t2), (g1, h1), (g2, h2)):
        _close(a, b)
    outs, prods = F.jvp(_two_out(fw), _pair(fw), _pair(fw))
    touts, tprods = TF.jvp(_two_out(torch), _pair(torch), _pair(torch))
    for a, b in zip(prods, tprods):
        _close(a, b)


def test_create_graph_keeps_results_differentiable():
    x = fw.tensor(X, dtype=fw.float64, requires_grad=True)
    _, g = F.vjp(_scalar(fw), x, create_graph=True)
    assert g.requires_grad
    (second,) = fw.autograd.grad(g.sum(), x)
    tx = torch.tensor(X, requires_grad=True)
    _, tg = TF.vjp(_scalar(torch), tx, create_graph=True)
    (tsecond,) = torch.autograd.grad(tg.sum(), tx)
    _close(second, tsecond)


def test_strict_refuses_an_unused_input_else_zeros():
    f = lambda a, b: a * 2  # noqa: E731
    _, (ga, gb) = F.vjp(f, _pair(fw)[:1] * 2, fw.ones(3, dtype=fw.float64))
    assert gb.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match="independent of input 1"):
        F.vjp(f, _pair(fw)[:1] * 2, fw.ones(3, dtype=fw.float64), strict=True)


def test_v_is_required_unless_single_element_and_shapes_are_checked():
    x = fw.tensor(X, dtype=fw.float64)
    with pytest.raises(RuntimeError, match="v can only be None"):
        F.vjp(lambda t: t * 2, x)
    with pytest.raises(RuntimeError, match=r"Entry 0 in v has invalid size: should be \[3\]"):
        F.vjp(lambda t: t * 2, x, fw.ones(2, dtype=fw.float64))
    with pytest.raises(TypeError, match="index 0 has type int"):
        F.jacobian(lambda t: t, 3)


def test_strategy_options_are_checked_as_torch():
    x = fw.tensor(X)
    with pytest.raises(ValueError, match="forward-mode"):
        F.jacobian(lambda t: t, x, strategy="sideways")
    with pytest.raises(NotImplementedError, match="vectorize=True"):
        F.jacobian(lambda t: t, x, strategy="forward-mode")
    jac = F.jacobian(lambda t: t * 3, x, strategy="forward-mode", vectorize=True)
    np.testing.assert_allclose(jac.numpy(), 3 * np.eye(3))
