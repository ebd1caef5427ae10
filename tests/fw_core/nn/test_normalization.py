"""BatchNorm1d/2d (running statistics, momentum, eval), LayerNorm, GroupNorm, RMSNorm against
PyTorch."""

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_core.nn as nn
from fw_core.errors import ShapeError

from .layer_check import check_layer

rng = np.random.default_rng(0)


def _batches(shape, n=4):
    return [rng.standard_normal(shape) * (i + 1) + i for i in range(n)]


BN = [{}, {"momentum": 0.3}, {"momentum": None}, {"affine": False}, {"bias": False},
      {"track_running_stats": False}, {"eps": 1e-3}]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", BN, ids=str)
@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (8, 3)), ("BatchNorm1d", (4, 3, 5)),
                                       ("BatchNorm2d", (4, 3, 5, 6))])
def test_batch_norm_running_statistics_over_several_steps(cls, shape, options, dtype):
    ours, theirs = getattr(nn, cls)(3, **options), getattr(torch.nn, cls)(3, **options)
    with torch.no_grad():
        for p in theirs.parameters():
            p.normal_()
    for step, batch in enumerate(_batches(shape)):
        # buffers are compared after every step inside check_layer
        check_layer(ours, theirs, [batch], modes=("train",), dtype=dtype, load=step == 0)
    check_layer(ours, theirs, [rng.standard_normal(shape)], modes=("eval",), dtype=dtype,
                load=False)
    if ours.track_running_stats:
        assert ours.num_batches_tracked.item() == 4


def test_batch_norm_eval_mode_uses_running_statistics():
    layer = nn.BatchNorm1d(2)
    with fw.no_grad():
        layer.running_mean.copy_(fw.tensor([1.0, -1.0]))
        layer.running_var.copy_(fw.tensor([4.0, 0.25]))
    layer.eval()
    out = layer(fw.tensor([[3.0, 0.0]]))
    np.testing.assert_allclose(out.detach().numpy(), [[2 / np.sqrt(4 + 1e-5),
                                                       1 / np.sqrt(0.25 + 1e-5)]], rtol=1e-6)


def test_batch_norm_checks_rank_and_channels():
    with pytest.raises(ShapeError, match="4-d input"):
        nn.BatchNorm2d(3)(fw.randn(2, 3, 4))
    with pytest.raises(ShapeError, match="num_features=3"):
        nn.BatchNorm1d(3)(fw.randn(2, 4))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,options", [
    (5, {}), ((4, 5), {}), (5, {"elementwise_affine": False}), (5, {"bias": False}),
    ((4, 5), {"eps": 1e-2})], ids=str)
def test_layer_norm(shape, options, dtype):
    ours, theirs = nn.LayerNorm(shape, **options), torch.nn.LayerNorm(shape, **options)
    with torch.no_grad():  # non-trivial affine parameters
        for p in theirs.parameters():
            p.normal_()
    check_layer(ours, theirs, [rng.standard_normal((2, 3, 4, 5))], dtype=dtype)


def test_layer_norm_checks_the_trailing_shape():
    with pytest.raises(ShapeError, match=r"normalized_shape=\(4, 5\)"):
        nn.LayerNorm((4, 5))(fw.randn(2, 5, 4))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("groups,options,shape", [
    (2, {}, (3, 6, 5)), (3, {"affine": False}, (2, 6, 4, 4)), (6, {}, (2, 6, 3)),
    (2, {"bias": False}, (2, 6)),
    (1, {"eps": 1e-3}, (2, 6, 3, 2))], ids=str)
def test_group_norm(groups, options, shape, dtype):
    ours, theirs = nn.GroupNorm(groups, 6, **options), torch.nn.GroupNorm(groups, 6, **options)
    with torch.no_grad():
        for p in theirs.parameters():
            p.normal_()
    check_layer(ours, theirs, [rng.standard_normal(shape)], dtype=dtype)


def test_group_norm_needs_divisible_channels():
    with pytest.raises(ShapeError, match="divisible"):
        nn.GroupNorm(4, 6)
    with pytest.raises(ShapeError, match="num_channels=6"):
        nn.GroupNorm(2, 6)(fw.randn(2, 4, 3))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,options", [
    (5, {}), ((4, 5), {"eps": 1e-3}), (5, {"elementwise_affine": False})], ids=str)
def test_rms_norm(shape, options, dtype):
    ours, theirs = nn.RMSNorm(shape, **options), torch.nn.RMSNorm(shape, **options)
    with torch.no_grad():
        for p in theirs.parameters():
            p.normal_()
    check_layer(ours, theirs, [rng.standard_normal((2, 3, 4, 5))], dtype=dtype)


@pytest.mark.parametrize("ours,theirs", [
    (nn.BatchNorm1d(3), torch.nn.BatchNorm1d(3)),
    (nn.BatchNorm2d(3, momentum=None, affine=False), torch.nn.BatchNorm2d(3, momentum=None,
                                                                         affine=False)),
    (nn.LayerNorm((4, 5)), torch.nn.LayerNorm((4, 5))), (nn.GroupNorm(2, 4),
                                                         torch.nn.GroupNorm(2, 4)),
    (nn.RMSNorm(4), torch.nn.RMSNorm(4)),
])
def test_repr(ours, theirs):
    assert repr(ours) == repr(theirs)
