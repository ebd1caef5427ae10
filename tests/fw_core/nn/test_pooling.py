"""MaxPool2d, AvgPool2d and AdaptiveAvgPool2d against PyTorch."""

import numpy as np
import pytest
import torch

import fw_core
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


@pytest.mark.parametrize("make,match", [
    (lambda: nn.MaxPool2d(0), "kernel_size must be >= 1"),
    (lambda: nn.MaxPool2d(-1), "kernel_size must be >= 1"),
    (lambda: nn.MaxPool2d(2, stride=0), "stride must be >= 1"),
    (lambda: nn.MaxPool2d(3, padding=2), "at most half the window"),
    (lambda: nn.MaxPool2d(2, dilation=0), "dilation must be >= 1"),
    (lambda: nn.AvgPool2d(0), "kernel_size must be >= 1"),
    (lambda: nn.AvgPool2d(2, divisor_override=0), "divisor_override must be >= 1"),
    (lambda: nn.AdaptiveAvgPool2d(-1), "output_size must be >= 1"),
    (lambda: nn.AdaptiveAvgPool2d((2, 0)), "output_size must be >= 1")], ids=[
    "MaxPool2d(0)", "MaxPool2d(-1)", "stride 0", "padding 2 of 3", "dilation 0", "AvgPool2d(0)",
    "divisor_override 0", "AdaptiveAvgPool2d(-1)", "AdaptiveAvgPool2d((2, 0))"])
def test_bad_windows_are_refused_when_the_layer_is_built(make, match):
    with pytest.raises(ValueError, match=match) as info:
        make()
    text = str(info.value)
    assert text.split(":")[0] in ("MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d")
    assert "\n  inputs:" in text and "\n  fix:" in text


def test_adaptive_pool_keeps_none_sizes():
    assert nn.AdaptiveAvgPool2d((None, 2))(fw_core.randn(1, 3, 5, 6)).shape == (1, 3, 5, 2)
