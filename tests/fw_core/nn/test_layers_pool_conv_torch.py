"""The 1-d/3-d pools, adaptive max pools, unpools, LP pools, Conv3d, ConvTranspose1d/3d and
the upsampling layers against PyTorch's: forward values, input and weight gradients, state-dict
keys, attributes, repr and argument errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import fw_core as fw
from fw_core.errors import FwError

from .layer_check import check_layer, const

DTYPES = ("float32", "float64")


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# (name, args, kwargs, input shape)
POOLS = [
    ("MaxPool1d", (3,), {}, (2, 3, 11)),
    ("MaxPool1d", (3, 2, 1), {"dilation": 2, "ceil_mode": True}, (2, 3, 12)),
    ("MaxPool1d", (2,), {"return_indices": True}, (3, 9)),
    ("MaxPool3d", (2,), {}, (2, 2, 5, 6, 7)),
    ("MaxPool3d", ((2, 3, 2), (1, 2, 2), (1, 1, 0)), {"return_indices": True}, (1, 2, 5, 6, 7)),
    ("MaxPool3d", (3, 2), {"ceil_mode": True, "dilation": (1, 2, 1)}, (2, 6, 9, 7)),
    ("AvgPool1d", (3,), {}, (2, 3, 10)),
    ("AvgPool1d", (4, 2, 2), {"ceil_mode": True, "count_include_pad": False}, (2, 3, 11)),
    ("AvgPool3d", (2,), {}, (2, 2, 4, 6, 5)),
    ("AvgPool3d", ((3, 2, 2), 2, 1), {"ceil_mode": True, "count_include_pad": False},
     (1, 2, 5, 6, 7)),
    ("AvgPool3d", (2, 1), {"divisor_override": 3}, (2, 4, 4, 4)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 10)),
    ("AdaptiveAvgPool3d", ((2, None, 3),), {}, (2, 2, 5, 4, 7)),
    ("AdaptiveAvgPool3d", (3,), {}, (2, 5, 4, 7)),
    ("AdaptiveMaxPool1d", (4,), {}, (2, 3, 10)),
    ("AdaptiveMaxPool1d", (3,), {"return_indices": True}, (3, 7)),
    ("AdaptiveMaxPool2d", ((3, None),), {"return_indices": True}, (2, 3, 7, 5)),
    ("AdaptiveMaxPool2d", (2,), {}, (3, 7, 5)),
    ("AdaptiveMaxPool3d", ((2, 3, 2),), {"return_indices": True}, (2, 2, 5, 7, 4)),
    ("LPPool1d", (2, 3), {}, (2, 3, 10)),
    ("LPPool1d", (3, 2, 1), {"ceil_mode": True}, (2, 3, 9)),
    ("LPPool2d", (2, (2, 3)), {}, (2, 3, 6, 7)),
    ("LPPool2d", (1.5, 3, 2), {"ceil_mode": True}, (3, 7, 8)),
    ("LPPool3d", (2, 2), {}, (2, 2, 4, 6, 4)),
]


def _pair(name, args=(), kwargs=None):
    """The fw and torch layers called ``name``, built alike; their reprs must agree."""
    kwargs = kwargs or {}
    ours, theirs = getattr(fw.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    return ours, theirs


def _positive_if_lp(name, x):
    # a fractional power of a negative window sum is NaN in both; keep LP pools' inputs positive
    return np.abs(x) + 0.1 if name.startswith("LPPool") else x


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("name", "args", "kwargs", "shape"), POOLS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(POOLS)])
def test_pool_matches_torch(name, args, kwargs, shape, dtype):
    ours, theirs = _pair(name, args, kwargs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == []
    check_layer(ours, theirs, (_positive_if_lp(name, _x(*shape)),), dtype=dtype,
                modes=("train",))


@pytest.mark.parametrize("name", ["MaxPool1d", "MaxPool3d", "AvgPool1d", "AvgPool3d",
                                  "LPPool1d", "LPPool3d", "MaxUnpool1d", "MaxUnpool3d"])
def test_pool_attributes_match_torch(name):
    args = (2, 3) if name.startswith("LPPool") else (3,)
    ours, theirs = getattr(fw.nn, name)(*args), getattr(torch.nn, name)(*args)
    for attribute in ("kernel_size", "stride", "padding", "dilation", "ceil_mode",
                      "return_indices", "count_include_pad", "divisor_override", "norm_type"):
        assert hasattr(ours, attribute) == hasattr(theirs, attribute), attribute
        if hasattr(theirs, attribute):
            assert getattr(ours, attribute) == getattr(theirs, attribute), attribute


# (n, pool arguments, unpool arguments, input shape, output_size)
UNPOOLS = [
    (1, (2,), (2,), (2, 3, 10), None),
    (1, (3, 2, 1), (3, 2, 1), (2, 3, 11), (11,)),
    (2, (2,), (2,), (2, 3, 6, 8), None),
    (2, ((3, 2), (2, 1), (1, 0)), ((3, 2), (2, 1), (1, 0)), (3, 7, 6), (2, 3, 7, 6)),
    (3, (2,), (2,), (2, 2, 4, 6, 4), None),
    (3, (2, 2), (2, 2), (1, 2, 5, 7, 5), (5, 7, 5)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("n", "pool", "unpool", "shape", "output_size"), UNPOOLS)
def test_max_unpool_matches_torch(n, pool, unpool, shape, output_size, dtype):
    source = torch.from_numpy(_x(*shape))
    values, indices = getattr(torch.nn.functional, f"max_pool{n}d")(source, *pool,
                                                                      return_indices=True)
    ours, theirs = _pair(f"MaxUnpool{n}d", unpool)
    check_layer(ours, theirs, (values.numpy(), const(indices.numpy()), output_size),
                dtype=dtype, modes=("train",))


# (name, args, kwargs, input shape)
CONVS = [
    ("Conv3d", (2, 4, 3), {}, (2, 2, 5, 6, 5)),
    ("Conv3d", (4, 6, (2, 3, 1)), {"stride": (2, 1, 2), "padding": (1, 0, 1), "groups": 2,
                                   "dilation": (1, 2, 1)}, (1, 4, 6, 7, 5)),
    ("Conv3d", (2, 3, 3), {"padding": "same", "bias": False}, (2, 4, 5, 4)),
    ("Conv3d", (2, 3, 2), {"padding": 1, "padding_mode": "circular"}, (1, 2, 4, 5, 3)),
    ("Conv3d", (2, 3, 3), {"padding": "valid", "padding_mode": "replicate"}, (1, 2, 4, 5, 3)),
    ("ConvTranspose1d", (3, 4, 3), {}, (2, 3, 7)),
    ("ConvTranspose1d", (4, 6, 3), {"stride": 2, "padding": 1, "output_padding": 1,
                                    "groups": 2, "dilation": 2}, (2, 4, 6)),
    ("ConvTranspose1d", (3, 2, 4), {"bias": False, "stride": 3}, (3, 5)),
    ("ConvTranspose3d", (2, 3, 2), {}, (2, 2, 3, 4, 3)),
    ("ConvTranspose3d", (4, 2, (3, 2, 2)), {"stride": (2, 1, 2), "padding": (1, 0, 1),
                                            "output_padding": (1, 0, 1), "groups": 2},
     (1, 4, 3, 4, 3)),
    ("ConvTranspose3d", (2, 2, 3), {"dilation": 2, "bias": False}, (2, 3, 2, 3)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("name", "args", "kwargs", "shape"), CONVS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CONVS)])
def test_conv_matches_torch(name, args, kwargs, shape, dtype):
    ours, theirs = _pair(name, args, kwargs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    check_layer(ours, theirs, (_x(*shape),), dtype=dtype)


@pytest.mark.parametrize("name", ["Conv3d", "ConvTranspose1d", "ConvTranspose3d"])
def test_conv_attributes_and_initialisation_match_torch(name):
    args = (4, 6, 3)
    ours, theirs = getattr(fw.nn, name)(*args, groups=2), getattr(torch.nn, name)(*args, groups=2)
    for attribute in ("in_channels", "out_channels", "kernel_size", "stride", "padding",
                      "dilation", "output_padding", "groups", "padding_mode", "transposed",
                      "_reversed_padding_repeated_twice"):
        if hasattr(ours, attribute) or attribute != "transposed":
            assert getattr(ours, attribute) == getattr(theirs, attribute), attribute
    fan_in = theirs.weight.shape[1] * int(np.prod(theirs.weight.shape[2:]))
    bound = 1 / np.sqrt(fan_in)
    for p in (ours.weight, ours.bias):
        values = np.asarray(p.detach().__array__())
        assert np.all(np.abs(values) <= bound + 1e-7) and values.std() > bound / 4


def test_conv_transpose_output_size_matches_torch():
    for n in (1, 3):
        theirs = getattr(torch.nn, f"ConvTranspose{n}d")(2, 3, 3, stride=2, padding=1)
        ours = getattr(fw.nn, f"ConvTranspose{n}d")(2, 3, 3, stride=2, padding=1)
        shape = (1, 2) + (4,) * n
        for size in [(8,) * n, (1, 3) + (8,) * n, (7,) * n]:
            check_layer(ours, theirs, (_x(*shape),), {"output_size": size}, modes=("train",))
        with pytest.raises(FwError) as info:
            ours(fw.tensor(_x(*shape).astype("float32")), output_size=(10,) * n)
        assert info.value.hint


# (name, kwargs, input shape)
UPSAMPLES = [
    ("Upsample", {"scale_factor": 2}, (2, 3, 5)),
    ("Upsample", {"size": 7, "mode": "linear"}, (2, 3, 5)),
    ("Upsample", {"scale_factor": 1.5, "mode": "linear", "align_corners": True}, (2, 3, 5)),
    ("Upsample", {"size": (5, 7), "mode": "bilinear"}, (2, 3, 4, 3)),
    ("Upsample", {"scale_factor": (2, 3), "mode": "bicubic", "align_corners": True},
     (1, 2, 3, 4)),
    ("Upsample", {"scale_factor": 2.5, "mode": "nearest-exact"}, (2, 2, 3, 4)),
    ("Upsample", {"size": (3, 2), "mode": "area"}, (2, 2, 7, 5)),
    ("Upsample", {"scale_factor": 2, "mode": "trilinear"}, (1, 2, 2, 3, 2)),
    ("Upsample", {"scale_factor": 1.7, "mode": "bilinear", "recompute_scale_factor": True},
     (1, 2, 3, 4)),
    ("Upsample", {"size": (4, 5, 3)}, (1, 2, 2, 3, 2)),
    ("UpsamplingNearest2d", {"scale_factor": 2}, (2, 3, 4, 3)),
    ("UpsamplingNearest2d", {"size": (5, 4)}, (2, 3, 4, 3)),
    ("UpsamplingBilinear2d", {"scale_factor": 2}, (2, 3, 4, 3)),
    ("UpsamplingBilinear2d", {"size": (7, 5)}, (2, 3, 4, 3)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("name", "kwargs", "shape"), UPSAMPLES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(UPSAMPLES)])
def test_upsample_matches_torch(name, kwargs, shape, dtype):
    ours, theirs = _pair(name, (), kwargs)
    for attribute in ("name", "size", "scale_factor", "mode", "align_corners",
                      "recompute_scale_factor"):
        assert getattr(ours, attribute) == getattr(theirs, attribute), attribute
    check_layer(ours, theirs, (_x(*shape),), dtype=dtype, modes=("train",))


@pytest.mark.parametrize("build", [
    lambda: fw.nn.MaxPool1d(0),
    lambda: fw.nn.MaxPool3d(2, padding=2),
    lambda: fw.nn.MaxPool3d((2, 2)),
    lambda: fw.nn.AvgPool1d(2, stride=0),
    lambda: fw.nn.AvgPool3d(2, divisor_override=0),
    lambda: fw.nn.AdaptiveAvgPool1d(0),
    lambda: fw.nn.AdaptiveMaxPool3d((2, -1, 2)),
    lambda: fw.nn.AdaptiveMaxPool2d("2"),
    lambda: fw.nn.MaxUnpool2d(2, padding=3),
    lambda: fw.nn.LPPool2d(-1, 2),
    lambda: fw.nn.LPPool3d(2, 0),
    lambda: fw.nn.Conv3d(3, 4, 3, groups=2),
    lambda: fw.nn.Conv3d(0, 4, 3),
    lambda: fw.nn.Conv3d(2, 4, 3, stride=2, padding="same"),
    lambda: fw.nn.Conv3d(2, 4, 3, padding_mode="mirror"),
    lambda: fw.nn.ConvTranspose1d(2, 4, 3, padding_mode="reflect"),
    lambda: fw.nn.ConvTranspose3d(2, 4, 3, padding="same"),
    lambda: fw.nn.ConvTranspose1d(2, 4, 3, stride=2, output_padding=2),
    lambda: fw.nn.Upsample(scale_factor=2, mode="cubic"),
    lambda: fw.nn.Upsample(),
    lambda: fw.nn.Upsample(size=4, scale_factor=2),
])
def test_bad_arguments_raise_fw_errors_with_hints(build):
    with pytest.raises(FwError) as info:
        build()
    assert info.value.hint


@pytest.mark.parametrize(("layer", "shape"), [
    (lambda: fw.nn.Conv3d(2, 4, 3), (2, 2, 5, 5)),
    (lambda: fw.nn.Conv3d(2, 4, 3), (1, 3, 5, 5, 5)),
    (lambda: fw.nn.ConvTranspose1d(2, 4, 3), (2, 3, 4, 5)),
    (lambda: fw.nn.ConvTranspose3d(2, 4, 3), (1, 3, 4, 4, 4)),
])
def test_conv_input_errors_name_the_layout(layer, shape):
    with pytest.raises(FwError) as info:
        layer()(fw.zeros(*shape))
    assert info.value.hint


def test_unbatched_conv3d_and_conv_transpose_match_torch():
    check_layer(fw.nn.Conv3d(2, 3, 2), torch.nn.Conv3d(2, 3, 2), (_x(2, 3, 4, 3),))
    check_layer(fw.nn.ConvTranspose1d(2, 3, 2), torch.nn.ConvTranspose1d(2, 3, 2), (_x(2, 5),))
    check_layer(fw.nn.ConvTranspose3d(2, 3, 2), torch.nn.ConvTranspose3d(2, 3, 2),
                (_x(2, 3, 2, 3),))
