"""Conv1d, Conv2d and ConvTranspose2d against PyTorch, option by option."""

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_core.nn as nn
from fw_core.errors import ShapeError

from .layer_check import check_layer

rng = np.random.default_rng(0)
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")

CONV2D = [
    {}, {"stride": 2}, {"padding": 1}, {"padding": (2, 0)}, {"dilation": 2},
    {"groups": 2}, {"bias": False}, {"padding": "same"}, {"padding": "valid"},
    {"padding": "same", "kernel_size": 4}, {"padding": "same", "dilation": 2},
    {"padding": 1, "padding_mode": "reflect"}, {"padding": 2, "padding_mode": "replicate"},
    {"padding": (1, 2), "padding_mode": "circular"},
    {"padding": "same", "kernel_size": (2, 3), "padding_mode": "reflect"},
    {"kernel_size": (3, 1), "stride": (1, 2)},
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", CONV2D, ids=str)
def test_conv2d(options, dtype):
    options = {"kernel_size": 3, **options}
    check_layer(nn.Conv2d(4, 6, **options), torch.nn.Conv2d(4, 6, **options),
                [rng.standard_normal((2, 4, 7, 8))], dtype=dtype)


def test_conv2d_unbatched_input():
    check_layer(nn.Conv2d(4, 6, 3), torch.nn.Conv2d(4, 6, 3),
                [rng.standard_normal((4, 7, 8))], dtype="float64")


CONV1D = [{}, {"stride": 2, "padding": 1}, {"dilation": 2, "groups": 2}, {"padding": "same"},
          {"padding": 2, "padding_mode": "circular"}, {"bias": False}]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", CONV1D, ids=str)
def test_conv1d(options, dtype):
    check_layer(nn.Conv1d(4, 6, 3, **options), torch.nn.Conv1d(4, 6, 3, **options),
                [rng.standard_normal((3, 4, 11))], dtype=dtype)


TRANSPOSED = [{}, {"stride": 2}, {"stride": 2, "padding": 1, "output_padding": 1},
              {"dilation": 2}, {"groups": 2}, {"bias": False}, {"stride": (2, 1)}]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", TRANSPOSED, ids=str)
def test_conv_transpose2d(options, dtype):
    check_layer(nn.ConvTranspose2d(4, 6, 3, **options),
                torch.nn.ConvTranspose2d(4, 6, 3, **options),
                [rng.standard_normal((2, 4, 5, 6))], dtype=dtype)


def test_conv_transpose2d_output_size_picks_output_padding():
    ours, theirs = nn.ConvTranspose2d(4, 6, 3, stride=2), torch.nn.ConvTranspose2d(4, 6, 3,
                                                                                stride=2)
    check_layer(ours, theirs, [rng.standard_normal((2, 4, 5, 6))],
                {"output_size": (12, 13)}, dtype="float64")
    with pytest.raises(ShapeError, match="not reachable"):
        ours(fw.randn(2, 4, 5, 6, dtype=fw.float64), output_size=(20, 20))


def test_conv_errors_name_the_channels_and_module():
    model = nn.Sequential(nn.Conv2d(3, 8, 3))
    with pytest.raises(ShapeError) as info:
        model(fw.randn(1, 4, 8, 8))
    text = str(info.value)
    assert "in_channels=3" in text and "(1, 4, 8, 8)" in text and "in module: 0" in text
    with pytest.raises(ShapeError, match="4-d batch"):
        model(fw.randn(8, 8))


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2d(3, 8, 3, groups=2)
    with pytest.raises(ValueError, match="padding_mode"):
        nn.Conv2d(3, 8, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="strided"):
        nn.Conv2d(3, 8, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="zeros"):
        nn.ConvTranspose2d(3, 8, 3, padding_mode="reflect")


@pytest.mark.parametrize("cls,args,kwargs", [
    ("Conv2d", (3, 8, 3), {}), ("Conv2d", (4, 8, (3, 5)), {"stride": 2, "padding": 1,
                                                             "groups": 2, "bias": False}),
    ("Conv2d", (3, 8, 3), {"padding": "same", "dilation": 2, "padding_mode": "reflect"}),
    ("Conv1d", (3, 8, 3), {"padding": 1}),
    ("ConvTranspose2d", (3, 8, 3), {"stride": 2, "output_padding": 1}),
])
def test_repr(cls, args, kwargs):
    assert repr(getattr(nn, cls)(*args, **kwargs)) == repr(getattr(torch.nn, cls)(*args,
                                                                                 **kwargs))


@pytest.mark.parametrize("make", [
    lambda: nn.Conv2d(1, 1, 0), lambda: nn.Conv2d(1, 1, -2), lambda: nn.Conv2d(1, 1, (3, 0)),
    lambda: nn.Conv1d(1, 1, 0), lambda: nn.ConvTranspose2d(1, 1, 0)], ids=[
    "Conv2d(1, 1, 0)", "Conv2d(1, 1, -2)", "Conv2d(1, 1, (3, 0))", "Conv1d(1, 1, 0)",
    "ConvTranspose2d(1, 1, 0)"])
def test_kernel_size_below_one_is_refused_when_built(make):
    # Conv2d(1, 1, 0) used to build, and return a (1, 1, 6, 6) zero tensor for a 5 x 5 input
    with pytest.raises(ShapeError, match=r"kernel_size must be >= 1") as info:
        make()
    text = str(info.value)
    assert text.split(":")[0] in ("Conv2d", "Conv1d", "ConvTranspose2d")
    assert "\n  inputs:" in text and "kernel_size=" in text and "\n  fix:" in text


@pytest.mark.parametrize("kwargs,match", [
    ({"stride": 0}, "stride must be >= 1"), ({"dilation": 0}, "dilation must be >= 1"),
    ({"padding": -1}, "padding must be >= 0"), ({"kernel_size": 2.5}, "kernel_size must be an int"),
    ({"in_channels": 0}, "in_channels must be >= 1")])
def test_other_bad_geometry_is_refused_when_built(kwargs, match):
    arguments = {"in_channels": 1, "out_channels": 1, "kernel_size": 3, **kwargs}
    with pytest.raises(ValueError, match=match):  # ShapeError or ArgumentError: both ValueErrors
        nn.Conv2d(**arguments)
    with pytest.raises(ShapeError, match="output_padding"):
        nn.ConvTranspose2d(1, 1, 3, stride=2, output_padding=2)


def test_functional_conv_refuses_an_empty_kernel():
    with pytest.raises(ShapeError, match="non-empty"):
        fw.conv2d(fw.randn(1, 1, 5, 5), fw.randn(1, 1, 0, 0))
