"""Flatten and Unflatten against PyTorch."""

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_core.nn as nn
from fw_core.errors import ShapeError

from .layer_check import check_layer

x = np.random.default_rng(0).standard_normal((2, 3, 4, 5))


@pytest.mark.parametrize("args", [(), (0,), (1, 2), (-3, -2), (2, 2)], ids=str)
def test_flatten(args):
    check_layer(nn.Flatten(*args), torch.nn.Flatten(*args), [x], dtype="float64")


@pytest.mark.parametrize("dim,sizes", [(1, (3, 1)), (-1, (5, 1)), (2, (2, -1)), (0, (1, 2))])
def test_unflatten(dim, sizes):
    check_layer(nn.Unflatten(dim, sizes), torch.nn.Unflatten(dim, sizes), [x], dtype="float64")


def test_unflatten_wrong_sizes():
    with pytest.raises(ShapeError):
        nn.Unflatten(1, (2, 2))(fw.tensor(x))


def test_repr():
    assert repr(nn.Flatten()) == repr(torch.nn.Flatten())
    assert repr(nn.Unflatten(1, (3, 1))) == repr(torch.nn.Unflatten(1, (3, 1)))
