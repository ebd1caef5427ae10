"""fw.func (grad, grad_and_value, vjp, jacrev, jacfwd, hessian, vmap) against torch.func."""

import numpy as np
import pytest
import torch
import torch.func as tf

import fw_core as fw

X = np.array([0.3, -1.2, 0.7])
Y = np.array([2.0, 1.0, -1.0])


def _t(lib, values):
    return lib.tensor(values, dtype=lib.float64)


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(), rtol=1e-10)


def _scalar(lib):
    return lambda x: (lib.sin(x) * x ** 2).sum()


def _two(lib):
    return lambda x, y: (lib.sin(x) * y, x.sum() * y)


def test_grad_and_nested_grad():
    _close(fw.func.grad(_scalar(fw))(_t(fw, X)), tf.grad(_scalar(torch))(_t(torch, X)))

    def inner(lib, func):
        return lambda x: func.grad(lambda y: (y ** 3).sum())(x).sum()

    _close(fw.func.grad(inner(fw, fw.func))(_t(fw, X)),
           tf.grad(inner(torch, tf))(_t(torch, X)))
    assert not fw.func.grad(_scalar(fw))(_t(fw, X)).requires_grad


def test_grad_argnums_and_has_aux():
    f = lambda lib: (lambda x, y: ((x * y).sum(), x * 2))  # noqa: E731
    ours = fw.func.grad(f(fw), argnums=(0, 1), has_aux=True)(_t(fw, X), _t(fw, Y))
    theirs = tf.grad(f(torch), argnums=(0, 1), has_aux=True)(_t(torch, X), _t(torch, Y))
    for a, b in zip(ours[0], theirs[0]):
        _close(a, b)
    _close(ours[1], theirs[1])
    value = fw.func.grad_and_value(_scalar(fw))(_t(fw, X))[1]
    _close(value, tf.grad_and_value(_scalar(torch))(_t(torch, X))[1])


def test_grad_needs_a_scalar_output():
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor, "
                                           "got tensor with 1 dims"):
        fw.func.grad(lambda x: x)(fw.ones(2))


def test_vjp_matches_torch():
    out, fn = fw.func.vjp(_two(fw), _t(fw, X), _t(fw, Y))
    tout, tfn = tf.vjp(_two(torch), _t(torch, X), _t(torch, Y))
    ones, tones = _t(fw, np.ones(3)), _t(torch, np.ones(3))
    for a, b in zip(fn((ones, ones)), tfn((tones, tones))):
        _close(a, b)
    _close(out[0], tout[0])


@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
def test_jacobians_match_torch(name):
    ours = getattr(fw.func, name)(_two(fw), argnums=(0, 1))(_t(fw, X), _t(fw, Y))
    theirs = getattr(tf, name)(_two(torch), argnums=(0, 1))(_t(torch, X), _t(torch, Y))
    for i in range(2):
        for j in range(2):
            assert tuple(ours[i][j].shape) == tuple(theirs[i][j].shape)
            _close(ours[i][j], theirs[i][j])


def test_hessian_matches_torch():
    _close(fw.func.hessian(_scalar(fw))(_t(fw, X)), tf.hessian(_scalar(torch))(_t(torch, X)))


def test_vmap_in_dims_out_dims_match_torch():
    m, w = np.arange(24.0).reshape(2, 3, 4), np.arange(4.0)

    def f(a, b):
        return a @ b, a.sum()

    ours = fw.func.vmap(f, in_dims=(1, None), out_dims=(1, 0))(_t(fw, m), _t(fw, w))
    theirs = tf.vmap(f, in_dims=(1, None), out_dims=(1, 0))(_t(torch, m), _t(torch, w))
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        _close(a, b)


def test_vmap_is_differentiable_and_nests_with_grad():
    x = _t(fw, np.arange(6.0).reshape(2, 3))
    per_row = fw.func.vmap(fw.func.grad(lambda r: (r ** 2).sum()))(x)
    np.testing.assert_allclose(per_row.numpy(), 2 * x.numpy())
    w = fw.tensor([1.0, 2.0, 3.0], requires_grad=True)
    fw.func.vmap(lambda r: (r * w).sum())(fw.ones(4, 3)).sum().backward()
    assert w.grad.tolist() == [4.0, 4.0, 4.0]


def test_vmap_errors_as_torch():
    with pytest.raises(ValueError, match="same size in the mapped dimension, got sizes"):
        fw.func.vmap(lambda a, b: a + b)(fw.ones(2), fw.ones(3))
    with pytest.raises(ValueError, match="must only return Tensors"):
        fw.func.vmap(lambda a: 3)(fw.ones(2))
    with pytest.raises(ValueError, match="at least one input must be a Tensor"):
        fw.func.vmap(lambda a: a, in_dims=(None,))(fw.ones(2))
    with pytest.raises(ValueError, match="randomness"):
        fw.func.vmap(lambda a: a, randomness="sometimes")
