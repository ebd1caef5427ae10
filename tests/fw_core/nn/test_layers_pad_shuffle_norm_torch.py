"""Padding, pixel shuffle, instance and local response norm layers and fw.atan2 against torch."""

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_core.nn.functional as F
from fw_core.errors import FwError

from .layer_check import check_layer

RNG = np.random.default_rng(0)
SPATIAL = {1: (2, 3, 6), 2: (2, 3, 5, 6), 3: (2, 2, 4, 5, 6)}
PADS = {1: [2, (1, 3), (-1, 2)], 2: [1, (1, 2, 0, 3), (2, -1, 1, -2)],
        3: [1, (1, 0, 2, 1, 0, 2), (-1, 1, 1, -1, 2, 0)]}


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("kind", ["Zero", "Constant", "Reflection", "Replication", "Circular"])
def test_padding_layers_match_torch(kind, dims):
    name = f"{kind}Pad{dims}d"
    x = RNG.standard_normal(SPATIAL[dims])
    for padding in PADS[dims]:
        extra = (1.5,) if kind == "Constant" else ()
        ours, theirs = getattr(fw.nn, name)(padding, *extra), getattr(torch.nn, name)(padding,
                                                                                   *extra)
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == []
        check_layer(ours, theirs, (x,), modes=("train",), dtype="float64")


def test_padding_errors():
    with pytest.raises(FwError):
        fw.nn.ZeroPad2d("a")
    with pytest.raises(FwError):
        fw.nn.CircularPad2d(1)(fw.zeros(3, 3))
    with pytest.raises(FwError):
        fw.nn.ReflectionPad1d(5)(fw.zeros(1, 2, 3))


@pytest.mark.parametrize("shape,r", [((2, 8, 3, 3), 2), ((1, 2, 9, 2, 2), 3), ((18, 2, 3), 3)])
def test_pixel_shuffle_and_unshuffle_match_torch(shape, r):
    x = RNG.standard_normal(shape)
    ours, theirs = fw.nn.PixelShuffle(r), torch.nn.PixelShuffle(r)
    assert repr(ours) == repr(theirs)
    check_layer(ours, theirs, (x,), modes=("train",), dtype="float64")
    y = np.asarray(torch.nn.functional.pixel_shuffle(torch.from_numpy(x), r))
    ours, theirs = fw.nn.PixelUnshuffle(r), torch.nn.PixelUnshuffle(r)
    assert repr(ours) == repr(theirs)
    check_layer(ours, theirs, (y,), modes=("train",), dtype="float64")
    back = F.pixel_unshuffle(F.pixel_shuffle(fw.tensor(x), r), r)
    np.testing.assert_array_equal(back.numpy(), x)


def test_pixel_shuffle_errors():
    with pytest.raises(FwError):
        F.pixel_shuffle(fw.zeros(1, 3, 2, 2), 2)
    with pytest.raises(FwError):
        F.pixel_unshuffle(fw.zeros(1, 3, 3, 2), 2)
    with pytest.raises(FwError):
        fw.nn.PixelShuffle(0)


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("affine,track", [(False, False), (True, False), (False, True),
                                          (True, True)])
def test_instance_norm_matches_torch(dims, affine, track):
    name = f"InstanceNorm{dims}d"
    c = SPATIAL[dims][1]
    ours = getattr(fw.nn, name)(c, affine=affine, track_running_stats=track, momentum=0.3)
    theirs = getattr(torch.nn, name)(c, affine=affine, track_running_stats=track, momentum=0.3)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    if affine:
        with torch.no_grad():
            theirs.weight.uniform_(0.5, 1.5)
            theirs.bias.uniform_(-0.5, 0.5)
    for step in range(3):  # the running statistics accumulate over steps
        x = RNG.standard_normal(SPATIAL[dims]) * (step + 1) + step
        check_layer(ours, theirs, (x,), modes=("train", "eval"), dtype="float64",
                    load=step == 0)
    unbatched = RNG.standard_normal(SPATIAL[dims][1:])
    check_layer(ours, theirs, (unbatched,), modes=("train", "eval"), dtype="float64",
                load=False)


def test_instance_norm_momentum_none_and_functional():
    ours = fw.nn.InstanceNorm2d(3, momentum=None, track_running_stats=True)
    theirs = torch.nn.InstanceNorm2d(3, momentum=None, track_running_stats=True)
    for _ in range(2):
        check_layer(ours, theirs, (RNG.standard_normal((2, 3, 4, 4)),), modes=("train",),
                    dtype="float64", load=False)
    x = RNG.standard_normal((2, 3, 4, 4))
    w, b = RNG.standard_normal(3), RNG.standard_normal(3)
    got = F.instance_norm(fw.tensor(x), weight=fw.tensor(w), bias=fw.tensor(b), eps=1e-3)
    want = torch.nn.functional.instance_norm(torch.from_numpy(x), weight=torch.from_numpy(w),
                                             bias=torch.from_numpy(b), eps=1e-3)
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-10)


def test_instance_norm_errors():
    with pytest.raises(FwError):
        fw.nn.InstanceNorm2d(3)(fw.zeros(2, 3))
    with pytest.raises(FwError):
        fw.nn.InstanceNorm1d(4, affine=True)(fw.zeros(2, 3, 5))
    with pytest.raises(FwError):
        F.instance_norm(fw.zeros(2, 3, 1))
    with pytest.raises(FwError):
        F.instance_norm(fw.zeros(2, 3, 4), use_input_stats=False)


@pytest.mark.parametrize("shape", [(2, 5, 4), (2, 6, 3, 4), (1, 4, 2, 3, 2)])
@pytest.mark.parametrize("size", [1, 2, 3])
def test_local_response_norm_matches_torch(shape, size):
    ours = fw.nn.LocalResponseNorm(size, alpha=0.5, beta=0.6, k=2.0)
    theirs = torch.nn.LocalResponseNorm(size, alpha=0.5, beta=0.6, k=2.0)
    assert repr(ours) == repr(theirs)
    check_layer(ours, theirs, (RNG.standard_normal(shape),), modes=("train",), dtype="float64")
    with pytest.raises(FwError):
        F.local_response_norm(fw.zeros(2, 3), 2)


def test_atan2_values_and_gradients_match_torch():
    y, x = RNG.standard_normal((3, 4)), RNG.standard_normal((4,))
    fy, fx = fw.tensor(y, requires_grad=True), fw.tensor(x, requires_grad=True)
    ty, tx = torch.tensor(y, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, ref = fw.atan2(fy, fx), torch.atan2(ty, tx)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=1e-12)
    g = RNG.standard_normal((3, 4))
    out.backward(fw.tensor(g))
    ref.backward(torch.from_numpy(g))
    np.testing.assert_allclose(fy.grad.numpy(), ty.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(fy.atan2(fx).detach().numpy(), fw.arctan2(fy, fx).detach().numpy())
    np.testing.assert_allclose(fy.arctan2(fx).detach().numpy(), ref.detach().numpy(), atol=1e-12)
