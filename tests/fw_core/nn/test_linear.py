"""Identity, Linear and Bilinear against PyTorch."""

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_core.nn as nn
from fw_core.errors import ShapeError

from .layer_check import check_layer

rng = np.random.default_rng(0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(5, 4), (4,), (2, 3, 4), (0, 4)])
def test_linear(shape, bias, dtype):
    check_layer(nn.Linear(4, 3, bias=bias), torch.nn.Linear(4, 3, bias=bias),
                [rng.standard_normal(shape)], dtype=dtype)


def test_linear_wrong_features_names_module_expected_and_fix():
    model = nn.Sequential(nn.Linear(4, 3))
    with pytest.raises(ShapeError) as info:
        model(fw.randn(2, 5))
    text = str(info.value)
    assert "in_features=4" in text and "(2, 5)" in text
    assert "in module: 0" in text and "in_features=5" in text


def test_linear_rejects_a_0d_input():
    with pytest.raises(ShapeError, match="in_features=4"):
        nn.Linear(4, 3)(fw.tensor(1.0))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch", [(6,), (2, 3), ()])
def test_bilinear(batch, bias, dtype):
    check_layer(nn.Bilinear(3, 4, 5, bias=bias), torch.nn.Bilinear(3, 4, 5, bias=bias),
                [rng.standard_normal(batch + (3,)), rng.standard_normal(batch + (4,))],
                dtype=dtype)


def test_bilinear_checks_both_inputs():
    layer = nn.Bilinear(3, 4, 5)
    with pytest.raises(ShapeError, match="in2_features=4"):
        layer(fw.randn(2, 3), fw.randn(2, 3))
    with pytest.raises(ShapeError, match="leading dimensions"):
        layer(fw.randn(2, 3), fw.randn(3, 4))


def test_identity_returns_its_input():
    x = fw.randn(3)
    assert nn.Identity(54, unused="x")(x) is x


@pytest.mark.parametrize("ours,theirs", [
    (nn.Linear(4, 3), torch.nn.Linear(4, 3)),
    (nn.Linear(4, 3, bias=False), torch.nn.Linear(4, 3, bias=False)),
    (nn.Bilinear(2, 3, 4), torch.nn.Bilinear(2, 3, 4)), (nn.Identity(), torch.nn.Identity()),
])
def test_repr(ours, theirs):
    assert repr(ours) == repr(theirs)
