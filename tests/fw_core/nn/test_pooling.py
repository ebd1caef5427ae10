"""MaxPool2d, AvgPool2d and AdaptiveAvgPool2d against PyTorch."""

import numpy as np
import pytest
import torch

import fw_core.nn as nn

from .layer_check import check_layer

rng = np.random.default_rng(0)


def _input(shape):
    # distinct values, so the max of every window is unique (ties route gradients arbitrarily)
    return rng.permutation(np.prod(shape)).reshape(shape) / 10.0


MAX = [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2}, {"kernel_size": 3, "padding": 1},
       {"kernel_size": (2, 3), "stride": (1, 2)}, {"kernel_size": 2, "dilation": 2},
       {"kernel_size": 3, "stride": 2, "ceil_mode": True},
       {"kernel_size": 2, "return_indices": True}]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", MAX, ids=str)
def test_max_pool2d(options, dtype):
    check_layer(nn.MaxPool2d(**options), torch.nn.MaxPool2d(**options),
                [_input((2, 3, 7, 8))], dtype=dtype)


AVG = [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
       {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
       {"kernel_size": 3, "stride": 2, "ceil_mode": True},
       {"kernel_size": 2, "divisor_override": 3},
       {"kernel_size": (3, 2), "stride": (2, 1)}]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", AVG, ids=str)
def test_avg_pool2d(options, dtype):
    check_layer(nn.AvgPool2d(**options), torch.nn.AvgPool2d(**options),
                [rng.standard_normal((2, 3, 7, 8))], dtype=dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size", [1, 3, (2, 5), (None, 3), (7, 8), (4, 6)], ids=str)
def test_adaptive_avg_pool2d(size, dtype):
    check_layer(nn.AdaptiveAvgPool2d(size), torch.nn.AdaptiveAvgPool2d(size),
                [rng.standard_normal((2, 3, 7, 8))], dtype=dtype)


@pytest.mark.parametrize("ours,theirs", [
    (nn.MaxPool2d(2), torch.nn.MaxPool2d(2)), (nn.MaxPool2d(3, 1, 1), torch.nn.MaxPool2d(3, 1, 1)),
    (nn.AvgPool2d(2), torch.nn.AvgPool2d(2)),
    (nn.AdaptiveAvgPool2d((1, 1)), torch.nn.AdaptiveAvgPool2d((1, 1))),
])
def test_repr(ours, theirs):
    assert repr(ours) == repr(theirs)


def test_unbatched_input():
    check_layer(nn.MaxPool2d(2), torch.nn.MaxPool2d(2), [_input((3, 6, 6))], dtype="float64")
