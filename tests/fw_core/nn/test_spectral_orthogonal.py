"""Spectral normalisation and orthogonal parametrizations against PyTorch:
parametrizations.spectral_norm (power-iteration buffers _u/_v, updated in training mode only,
default dim for transposed convolutions), the older spectral_norm / remove_spectral_norm hook
(weight_orig/weight_u/weight_v), parametrizations.orthogonal with the matrix_exp and householder
maps (with and without the trivialization's base), the composed linear algebra behind it, and
the errors PyTorch raises for bad arguments."""

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_core.nn as nn
from fw_core.errors import FwError, UnsupportedError
from fw_core.nn.utils import orthogonal_maps
from fw_core.nn.utils import parametrizations as P

from .layer_check import check_layer, copy_weights

rng = np.random.default_rng(0)
STEPS = ("train", "train", "eval", "train", "eval")  # power iteration runs in train steps only


def _host(t) -> np.ndarray:
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach().numpy())


def _layers(kind: str):
    """The same layer in fw and torch (weights are copied by check_layer)."""
    if kind == "linear":
        return nn.Linear(5, 4), torch.nn.Linear(5, 4), (3, 5)
    if kind == "conv2d":
        return nn.Conv2d(3, 4, 3), torch.nn.Conv2d(3, 4, 3), (2, 3, 6, 6)
    return nn.ConvTranspose2d(3, 4, 3), torch.nn.ConvTranspose2d(3, 4, 3), (2, 3, 5, 5)


# -- parametrizations.spectral_norm ---------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["linear", "conv2d", "conv_transpose2d"])
@pytest.mark.parametrize("iterations", [1, 3])
def test_spectral_norm_parametrization_matches_torch_over_steps(kind, dtype, iterations):
    ours, theirs, shape = _layers(kind)
    P.spectral_norm(ours, n_power_iterations=iterations)
    torch.nn.utils.parametrizations.spectral_norm(theirs, n_power_iterations=iterations)
    x = rng.standard_normal(shape)
    # check_layer compares state-dict keys and shapes (so the default dim), outputs, the _u/_v
    # buffers after every step and the gradients through the parametrized weight
    check_layer(ours, theirs, (x,), modes=STEPS, dtype=dtype)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    np.testing.assert_allclose(_host(ours.weight), _host(theirs.weight),
                               atol=1e-5 if dtype == "float32" else 1e-10)


def test_spectral_norm_default_dim_is_the_output_dimension():
    for kind, dim in [("linear", 0), ("conv2d", 0), ("conv_transpose2d", 1)]:
        ours, _, _ = _layers(kind)
        P.spectral_norm(ours)
        assert ours.parametrizations.weight[0].dim == dim
        u = ours.parametrizations.weight[0]._u
        assert tuple(u.shape) == (ours.parametrizations.weight.original.shape[dim],)


@pytest.mark.parametrize("dim", [1, -1])
def test_spectral_norm_explicit_dim_matches_torch(dim):
    ours, theirs = nn.Conv2d(2, 3, 2).double(), torch.nn.Conv2d(2, 3, 2).double()
    P.spectral_norm(ours, dim=dim)
    torch.nn.utils.parametrizations.spectral_norm(theirs, dim=dim)
    assert ours.parametrizations.weight[0].dim == theirs.parametrizations.weight[0].dim
    check_layer(ours, theirs, (rng.standard_normal((1, 2, 4, 4)),), modes=STEPS,
                dtype="float64")


def test_spectral_norm_registration_estimates_the_top_singular_value():
    weight = np.diag([5.0, 2.0, 1.0]) @ np.linalg.qr(rng.standard_normal((3, 3)))[0]
    layer = nn.Linear(3, 3).double()
    with fw.no_grad():
        layer.weight.copy_(fw.tensor(weight))
    P.spectral_norm(layer)  # 15 power-iteration steps at registration, one more at the check
    sn = layer.parametrizations.weight[0]
    sigma = float(sn._u.numpy() @ weight @ sn._v.numpy())
    assert abs(sigma - 5.0) < 1e-8
    np.testing.assert_allclose(np.linalg.norm(_host(layer.weight), 2), 1.0, atol=1e-8)


def test_spectral_norm_leaves_the_buffers_alone_in_eval_mode():
    layer = P.spectral_norm(nn.Linear(4, 3))
    layer.eval()
    sn = layer.parametrizations.weight[0]
    u, v = sn._u.numpy().copy(), sn._v.numpy().copy()
    layer(fw.tensor(rng.standard_normal((2, 4)).astype(np.float32)))
    np.testing.assert_array_equal(sn._u.numpy(), u)
    np.testing.assert_array_equal(sn._v.numpy(), v)
    layer.train()
    layer(fw.tensor(rng.standard_normal((2, 4)).astype(np.float32)))
    assert not np.array_equal(sn._v.numpy(), v)


def test_spectral_norm_registered_in_eval_mode_stays_in_eval_mode():
    layer = nn.Linear(4, 3).eval()
    P.spectral_norm(layer)
    assert layer.parametrizations.weight[0].training is False


def test_spectral_norm_of_a_vector_normalises_it():
    ours, theirs = nn.Linear(4, 3).double(), torch.nn.Linear(4, 3).double()
    copy_weights(ours, theirs)
    P.spectral_norm(ours, name="bias")
    torch.nn.utils.parametrizations.spectral_norm(theirs, name="bias")
    assert list(ours.state_dict()) == list(theirs.state_dict())  # no _u/_v for a vector
    np.testing.assert_allclose(_host(ours.bias), _host(theirs.bias), atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(_host(ours.bias)), 1.0, atol=1e-12)


def test_spectral_norm_loads_a_torch_checkpoint_after_training_steps():
    theirs = torch.nn.utils.parametrizations.spectral_norm(torch.nn.Linear(5, 4))
    x = torch.randn(2, 5)
    for _ in range(3):
        theirs(x)
    ours = P.spectral_norm(nn.Linear(5, 4))
    copy_weights(ours, theirs)
    ours.eval()
    theirs.eval()
    np.testing.assert_allclose(_host(ours(fw.tensor(x.numpy()))), _host(theirs(x)), atol=1e-5)


def _raises_as_torch(builtin, fw_call, torch_call, match):
    with pytest.raises(builtin):
        torch_call()
    with pytest.raises(builtin, match=match) as info:
        fw_call()
    assert isinstance(info.value, FwError) and info.value.hint


def test_spectral_norm_bad_arguments_raise_as_torch():
    _raises_as_torch(ValueError, lambda: P.spectral_norm(nn.Linear(2, 2), n_power_iterations=0),
                     lambda: torch.nn.utils.parametrizations.spectral_norm(
                         torch.nn.Linear(2, 2), n_power_iterations=0), "positive")
    _raises_as_torch(IndexError, lambda: P.spectral_norm(nn.Linear(2, 2), dim=2),
                     lambda: torch.nn.utils.parametrizations.spectral_norm(
                         torch.nn.Linear(2, 2), dim=2), "out of range")
    _raises_as_torch(ValueError, lambda: P.spectral_norm(nn.Linear(2, 2), name="w"),
                     lambda: torch.nn.utils.parametrizations.spectral_norm(
                         torch.nn.Linear(2, 2), name="w"), "no parameter or buffer")


# -- the older spectral_norm hook -----------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["linear", "conv2d", "conv_transpose2d"])
def test_old_spectral_norm_hook_matches_torch_over_steps(kind, dtype):
    ours, theirs, shape = _layers(kind)
    nn.utils.spectral_norm(ours, n_power_iterations=2)
    torch.nn.utils.spectral_norm(theirs, n_power_iterations=2)
    assert list(ours.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    check_layer(ours, theirs, (rng.standard_normal(shape),), modes=STEPS, dtype=dtype)
    tolerance = 1e-5 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(_host(ours.weight), _host(theirs.weight), atol=tolerance)
    nn.utils.remove_spectral_norm(ours)
    torch.nn.utils.remove_spectral_norm(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias", "weight"]
    assert isinstance(ours.weight, nn.Parameter)
    np.testing.assert_allclose(_host(ours.weight), _host(theirs.weight), atol=tolerance)
    assert not ours._forward_pre_hooks


def test_old_spectral_norm_bad_arguments_raise_as_torch():
    def twice(module, spectral_norm):
        spectral_norm(module)
        spectral_norm(module)

    _raises_as_torch(RuntimeError, lambda: twice(nn.Linear(2, 2), nn.utils.spectral_norm),
                     lambda: twice(torch.nn.Linear(2, 2), torch.nn.utils.spectral_norm),
                     "two spectral_norm hooks")
    _raises_as_torch(ValueError, lambda: nn.utils.remove_spectral_norm(nn.Linear(2, 2)),
                     lambda: torch.nn.utils.remove_spectral_norm(torch.nn.Linear(2, 2)),
                     "not found")
    _raises_as_torch(ValueError, lambda: nn.utils.spectral_norm(nn.Linear(2, 2),
                                                                n_power_iterations=0),
                     lambda: torch.nn.utils.spectral_norm(torch.nn.Linear(2, 2),
                                                          n_power_iterations=0), "positive")
    _raises_as_torch(KeyError, lambda: nn.utils.spectral_norm(nn.Linear(2, 2), name="w"),
                     lambda: torch.nn.utils.spectral_norm(torch.nn.Linear(2, 2), name="w"),
                     "no parameter")
    _raises_as_torch(ValueError, lambda: nn.utils.spectral_norm(nn.Linear(2, 2, bias=False),
                                                                name="bias"),
                     lambda: torch.nn.utils.spectral_norm(torch.nn.Linear(2, 2, bias=False),
                                                          name="bias"), "is None")


# -- parametrizations.orthogonal ------------------------------------------------------------------
_SHAPES = [(4, 4), (6, 3), (3, 6), (2, 5, 3)]


class _Matrices(nn.Module):
    """x @ weight^T for a weight of any batch shape (..., out, in)."""

    def __init__(self, value):
        super().__init__()
        self.weight = nn.Parameter(fw.tensor(value))

    def forward(self, x):
        return x @ self.weight.mT


class _TorchMatrices(torch.nn.Module):
    def __init__(self, value):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.from_numpy(value.copy()))

    def forward(self, x):
        return x @ self.weight.mT


def _matrix_layers(shape, dtype="float64"):
    """The same weight of ``shape`` (a batch of matrices for 3 dimensions) in fw and torch."""
    value = rng.standard_normal(shape).astype(dtype)
    return _Matrices(value), _TorchMatrices(value)


def _assert_orthogonal(q: np.ndarray, atol: float) -> None:
    if q.shape[-2] < q.shape[-1]:
        q = np.swapaxes(q, -1, -2)
    gram = np.swapaxes(q, -1, -2) @ q
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(q.shape[-1]), gram.shape), atol=atol)


@pytest.mark.parametrize("trivialization", [True, False])
@pytest.mark.parametrize("shape", _SHAPES, ids=str)
@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "householder"])
def test_orthogonal_matches_torch(orthogonal_map, shape, trivialization):
    ours, theirs = _matrix_layers(shape)
    P.orthogonal(ours, orthogonal_map=orthogonal_map, use_trivialization=trivialization)
    torch.nn.utils.parametrizations.orthogonal(theirs, orthogonal_map=orthogonal_map,
                                               use_trivialization=trivialization)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    if trivialization:
        assert "parametrizations.weight.0.base" in ours.state_dict()
    if shape[-1] == shape[-2] or not trivialization:  # no random completion: deterministic
        np.testing.assert_allclose(_host(ours.weight), _host(theirs.weight), atol=1e-10)
    _assert_orthogonal(_host(ours.weight), 1e-12)
    # move away from the starting point (off the diagonal, where householder keeps its signs),
    # then compare forward, gradients and steps
    with torch.no_grad():
        original = theirs.parametrizations.weight.original
        off_diagonal = 1.0 - torch.eye(*original.shape[-2:], dtype=original.dtype)
        original.add_(0.3 * torch.randn(original.shape, dtype=original.dtype) * off_diagonal)
    x = rng.standard_normal((2, shape[-1]))
    check_layer(ours, theirs, (x,), modes=("train", "eval"), dtype="float64")
    _assert_orthogonal(_host(ours.weight), 1e-12)


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "householder"])
def test_orthogonal_stays_orthogonal_while_training_as_torch(orthogonal_map):
    ours, theirs = _matrix_layers((5, 3), "float32")
    P.orthogonal(ours, orthogonal_map=orthogonal_map)
    torch.nn.utils.parametrizations.orthogonal(theirs, orthogonal_map=orthogonal_map)
    copy_weights(ours, theirs)  # the base completes the matrix at random: take torch's
    fw_opt = fw.optim.SGD(ours.parameters(), lr=0.2)
    torch_opt = torch.optim.SGD(theirs.parameters(), lr=0.2)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    for _ in range(4):
        fw_opt.zero_grad()
        torch_opt.zero_grad()
        # a loss orthogonal maps do not leave unchanged (a sum of squares would be: ||x W^T||)
        ours(fw.tensor(x)).sum().backward()
        theirs(torch.from_numpy(x)).sum().backward()
        fw_opt.step()
        torch_opt.step()
    np.testing.assert_allclose(_host(ours.weight), _host(theirs.weight), atol=1e-5)
    _assert_orthogonal(_host(ours.weight), 1e-5)
    moved = np.abs(_host(ours.weight) - ours.parametrizations.weight[0].base.numpy()[:, :3])
    assert moved.max() > 1e-2


def test_orthogonal_householder_without_base_where_no_reflection_is_needed():
    ours, theirs = _matrix_layers((4, 3))
    with torch.no_grad():  # the first column is zero below the diagonal: LAPACK's tau = 0
        theirs.weight[1:, 0] = 0.0
    ours.weight = nn.Parameter(fw.tensor(theirs.weight.detach().numpy()))
    P.orthogonal(ours, orthogonal_map="householder", use_trivialization=False)
    torch.nn.utils.parametrizations.orthogonal(theirs, orthogonal_map="householder",
                                               use_trivialization=False)
    np.testing.assert_allclose(ours.parametrizations.weight.original.detach().numpy(),
                               _host(theirs.parametrizations.weight.original), atol=1e-12)
    np.testing.assert_allclose(_host(ours.weight), _host(theirs.weight), atol=1e-12)


@pytest.mark.parametrize("old_hook", [False, True])
def test_spectral_norm_two_forwards_then_one_backward_as_torch(old_hook):
    ours, theirs = nn.Linear(4, 3).double(), torch.nn.Linear(4, 3).double()
    if old_hook:
        nn.utils.spectral_norm(ours)
        torch.nn.utils.spectral_norm(theirs)
    else:
        P.spectral_norm(ours)
        torch.nn.utils.parametrizations.spectral_norm(theirs)
    copy_weights(ours, theirs)
    x = rng.standard_normal((2, 4))
    # the second forward updates u and v in place; the first one's graph must keep its copies
    (ours(fw.tensor(x)) * ours(fw.tensor(x))).sum().backward()
    (theirs(torch.from_numpy(x)) * theirs(torch.from_numpy(x))).sum().backward()
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), atol=1e-10, err_msg=name)


def test_orthogonal_default_map_and_kept_orthogonal_weight():
    square = P.orthogonal(nn.Linear(3, 3))
    assert square.parametrizations.weight[0].orthogonal_map == "matrix_exp"
    tall = P.orthogonal(nn.Linear(2, 4))
    assert tall.parametrizations.weight[0].orthogonal_map == "householder"
    q = np.linalg.qr(rng.standard_normal((4, 4)))[0]
    layer = nn.Linear(4, 4).double()
    with fw.no_grad():
        layer.weight.copy_(fw.tensor(q))
    P.orthogonal(layer)
    # kept as it is (QR would give it back only up to rounding)
    np.testing.assert_array_equal(layer.weight.detach().numpy(), q)


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "householder"])
def test_orthogonal_assignment_matches_torch(orthogonal_map):
    ours, theirs = _matrix_layers((4, 4))
    P.orthogonal(ours, orthogonal_map=orthogonal_map)
    torch.nn.utils.parametrizations.orthogonal(theirs, orthogonal_map=orthogonal_map)
    value = rng.standard_normal((4, 4))
    ours.weight = fw.tensor(value)
    theirs.weight = torch.from_numpy(value)
    np.testing.assert_allclose(_host(ours.weight), _host(theirs.weight), atol=1e-12)
    np.testing.assert_allclose(ours.parametrizations.weight[0].base.numpy(),
                               _host(theirs.parametrizations.weight[0].base), atol=1e-12)


def test_orthogonal_bad_arguments_raise_as_torch():
    orth, torch_orth = P.orthogonal, torch.nn.utils.parametrizations.orthogonal
    _raises_as_torch(ValueError, lambda: orth(nn.Linear(2, 2), orthogonal_map="qr"),
                     lambda: torch_orth(torch.nn.Linear(2, 2), orthogonal_map="qr"),
                     "has to be one of")
    _raises_as_torch(ValueError, lambda: orth(nn.Linear(2, 2), name="bias"),
                     lambda: torch_orth(torch.nn.Linear(2, 2), name="bias"),
                     "matrix or batch of matrices")
    _raises_as_torch(ValueError, lambda: orth(nn.Linear(2, 2), name="w"),
                     lambda: torch_orth(torch.nn.Linear(2, 2), name="w"),
                     "no parameter or buffer")

    def assign(layer, value):
        layer.weight = value

    _raises_as_torch(ValueError, lambda: assign(orth(nn.Linear(2, 2)), fw.zeros(3, 3)),
                     lambda: assign(torch_orth(torch.nn.Linear(2, 2)), torch.zeros(3, 3)),
                     "Expected a matrix or batch of matrices of shape")
    _raises_as_torch(NotImplementedError,
                     lambda: assign(orth(nn.Linear(2, 2), use_trivialization=False),
                                    fw.zeros(2, 2)),
                     lambda: assign(torch_orth(torch.nn.Linear(2, 2), use_trivialization=False),
                                    torch.zeros(2, 2)), "not possible to assign")


def test_orthogonal_cayley_is_refused_with_another_map_suggested():
    with pytest.raises(UnsupportedError, match="cayley") as info:
        P.orthogonal(nn.Linear(3, 3), orthogonal_map="cayley")
    assert isinstance(info.value, NotImplementedError)
    assert "matrix_exp" in info.value.hint and "householder" in info.value.hint


# -- the composed linear algebra ------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5, 3), (4, 4), (2, 6, 2)], ids=str)
def test_geqrf_and_householder_product_match_torch(shape):
    a = rng.standard_normal(shape)
    a[..., 1:, 0] = 0.0  # a column already zero below the diagonal: LAPACK's tau = 0
    ours_a, ours_tau = orthogonal_maps.geqrf(fw.tensor(a))
    theirs_a, theirs_tau = torch.geqrf(torch.from_numpy(a))
    np.testing.assert_allclose(ours_a.numpy(), theirs_a.numpy(), atol=1e-12)
    np.testing.assert_allclose(ours_tau.numpy(), theirs_tau.numpy(), atol=1e-12)
    x = torch.from_numpy(a).requires_grad_()
    tau = torch.from_numpy(rng.uniform(0.5, 1.5, shape[:-1][:-1] + (shape[-1],)))
    tau.requires_grad_()
    xf = fw.tensor(a, requires_grad=True)
    tauf = fw.tensor(tau.detach().numpy(), requires_grad=True)
    ours = orthogonal_maps.householder_product(xf, tauf)
    theirs = torch.linalg.householder_product(x, tau)
    np.testing.assert_allclose(ours.detach().numpy(), _host(theirs), atol=1e-12)
    g = rng.standard_normal(shape)
    (ours * fw.tensor(g)).sum().backward()
    (theirs * torch.from_numpy(g)).sum().backward()
    np.testing.assert_allclose(xf.grad.numpy(), x.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(tauf.grad.numpy(), tau.grad.numpy(), atol=1e-10)


@pytest.mark.parametrize("scale", [0.0, 0.1, 1.0, 30.0])
def test_matrix_exp_matches_torch_with_gradient(scale):
    a = scale * rng.standard_normal((2, 4, 4))
    x = torch.from_numpy(a).requires_grad_()
    xf = fw.tensor(a, requires_grad=True)
    ours, theirs = orthogonal_maps.matrix_exp(xf), torch.matrix_exp(x)
    np.testing.assert_allclose(ours.detach().numpy(), _host(theirs),
                               rtol=1e-10, atol=1e-12 * max(1.0, np.abs(_host(theirs)).max()))
    g = rng.standard_normal(a.shape)
    (ours * fw.tensor(g)).sum().backward()
    (theirs * torch.from_numpy(g)).sum().backward()
    np.testing.assert_allclose(xf.grad.numpy(), x.grad.numpy(), rtol=1e-8,
                               atol=1e-10 * max(1.0, np.abs(x.grad.numpy()).max()))
