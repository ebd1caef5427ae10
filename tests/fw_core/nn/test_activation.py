"""Activation layers against PyTorch: values, gradients, options and repr."""

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_core.nn as nn

from .layer_check import check_layer

LAYERS = [
    ("ReLU", {}), ("ReLU6", {}), ("LeakyReLU", {}), ("LeakyReLU", {"negative_slope": 0.2}),
    ("ELU", {}), ("ELU", {"alpha": 0.5}), ("GELU", {}), ("GELU", {"approximate": "tanh"}),
    ("SiLU", {}), ("Mish", {}), ("Softplus", {}), ("Softplus", {"beta": 2.0, "threshold": 1.0}),
    ("Hardtanh", {}), ("Hardtanh", {"min_val": -0.5, "max_val": 2.0}), ("Sigmoid", {}),
    ("Tanh", {}), ("Softmax", {"dim": -1}), ("Softmax", {"dim": 0}), ("LogSoftmax", {"dim": 1}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", LAYERS, ids=lambda v: str(v))
def test_matches_torch(name, kwargs, dtype):
    x = np.random.default_rng(0).uniform(-7, 7, (3, 4, 5))
    check_layer(getattr(nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs), [x],
                dtype=dtype)


@pytest.mark.parametrize("shape", [(), (0, 3), (1,)])
@pytest.mark.parametrize("name", ["ReLU", "GELU", "SiLU", "Tanh", "ELU"])
def test_edge_shapes(name, shape):
    x = np.random.default_rng(1).uniform(-3, 3, shape)
    check_layer(getattr(nn, name)(), getattr(torch.nn, name)(), [x], dtype="float64")


def test_inplace_writes_into_an_untracked_input():
    x = fw.tensor([-1.0, 2.0])
    out = nn.ReLU(inplace=True)(x)
    assert out is x
    assert x.tolist() == [0.0, 2.0]


def test_inplace_on_a_recorded_tensor_computes_out_of_place_and_keeps_gradients():
    x = fw.tensor([-1.0, 2.0], requires_grad=True)
    y = x * 3
    out = nn.LeakyReLU(0.1, inplace=True)(y)
    assert out is not y
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.3, 3.0], rtol=1e-6)


def test_softmax_without_dim_warns_and_uses_torch_legacy_choice():
    x = np.random.default_rng(2).standard_normal((2, 3))
    with pytest.warns(UserWarning, match="implicit dimension"):
        ours = nn.Softmax()(fw.tensor(x))
    np.testing.assert_allclose(ours.numpy(), torch.softmax(torch.tensor(x), 1).numpy(),
                               rtol=1e-6)


def test_bad_arguments_raise_at_construction():
    with pytest.raises(ValueError, match="approximate"):
        nn.GELU("fast")
    with pytest.raises(ValueError, match="max_val"):
        nn.Hardtanh(1.0, 0.0)


@pytest.mark.parametrize("layer,torch_layer", [
    (nn.ReLU(), torch.nn.ReLU()), (nn.ReLU(inplace=True), torch.nn.ReLU(inplace=True)),
    (nn.LeakyReLU(0.2), torch.nn.LeakyReLU(0.2)), (nn.ELU(), torch.nn.ELU()),
    (nn.GELU("tanh"), torch.nn.GELU("tanh")), (nn.Softplus(), torch.nn.Softplus()),
    (nn.Hardtanh(), torch.nn.Hardtanh()), (nn.Softmax(dim=1), torch.nn.Softmax(dim=1)),
    (nn.LogSoftmax(dim=-1), torch.nn.LogSoftmax(dim=-1)), (nn.Sigmoid(), torch.nn.Sigmoid()),
])
def test_repr_reads_like_torch(layer, torch_layer):
    assert repr(layer) == repr(torch_layer)
