"""nn.init: PyTorch's formulas, distributions checked statistically, in-place writes."""

import math

import numpy as np
import pytest
import torch
from scipy.stats import ks_2samp

import fw_core as fw
import fw_core.nn as nn
from fw_core.errors import ShapeError
from fw_core.nn import init

SHAPE = (300, 200, 3)  # fan_in 600, fan_out 900: 180 000 samples


def _both(fn_name, shape=SHAPE, **kwargs):
    ours = nn.Parameter(fw.empty(*shape))
    getattr(init, fn_name)(ours, **kwargs)
    theirs = torch.empty(*shape)
    getattr(torch.nn.init, fn_name)(theirs, **kwargs)
    return ours.detach().numpy().astype(np.float64), theirs.numpy().astype(np.float64)


def _same_distribution(ours, theirs, bound=None):
    """Mean and std agree within sampling error; bounds agree when the support is bounded."""
    n = ours.size
    std = theirs.std()
    assert abs(ours.mean() - theirs.mean()) < 6 * std / math.sqrt(n) + 1e-12
    assert abs(ours.std() - std) < 8 * std / math.sqrt(n) + 1e-12
    if bound is not None:
        assert np.abs(ours).max() <= bound * (1 + 1e-6)
        assert np.abs(ours).max() > 0.99 * bound
    # the whole shape: a two-sample Kolmogorov-Smirnov test (fails by chance once in 1e6 runs)
    assert ks_2samp(ours.ravel(), theirs.ravel()).pvalue > 1e-6


@pytest.mark.parametrize("nonlinearity,param,expected", [
    ("linear", None, 1.0), ("conv2d", None, 1.0), ("sigmoid", None, 1.0),
    ("tanh", None, 5 / 3), ("relu", None, math.sqrt(2)), ("leaky_relu", None, None),
    ("leaky_relu", 0.2, None), ("selu", None, 0.75)])
def test_calculate_gain_matches_torch(nonlinearity, param, expected):
    gain = init.calculate_gain(nonlinearity, param)
    assert gain == pytest.approx(torch.nn.init.calculate_gain(nonlinearity, param), rel=1e-12)
    if expected is not None:
        assert gain == pytest.approx(expected)


def test_calculate_gain_rejects_unknown_nonlinearities():
    with pytest.raises(ValueError, match="unsupported nonlinearity"):
        init.calculate_gain("swish")


@pytest.mark.parametrize("shape", [(5, 3), (8, 4, 3, 3), (2, 6, 7)])
def test_fans_match_torch(shape):
    assert init._calculate_fan_in_and_fan_out(fw.empty(*shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))


def test_fans_need_two_dimensions():
    with pytest.raises(ShapeError, match="at least 2 dimensions"):
        init.xavier_uniform_(fw.empty(5))


def test_uniform_and_normal():
    ours, theirs = _both("uniform_", a=-0.5, b=2.0)
    _same_distribution(ours, theirs)
    assert ours.min() >= -0.5 and ours.max() < 2.0
    ours, theirs = _both("normal_", mean=1.0, std=0.3)
    _same_distribution(ours, theirs)


def test_trunc_normal_stays_in_bounds():
    ours, theirs = _both("trunc_normal_", mean=0.5, std=1.0, a=-1.0, b=1.5)
    _same_distribution(ours, theirs)
    assert ours.min() >= -1.0 and ours.max() <= 1.5


def test_constants():
    p = nn.Parameter(fw.empty(3, 2))
    init.constant_(p, 0.25)
    assert p.detach().numpy().tolist() == [[0.25] * 2] * 3
    init.ones_(p)
    assert p.detach().numpy().sum() == 6
    init.zeros_(p)
    assert not p.detach().numpy().any()
    init.eye_(p)
    np.testing.assert_array_equal(p.detach().numpy(), np.eye(3, 2))


@pytest.mark.parametrize("gain", [1.0, 2.0])
def test_xavier(gain):
    fan_in, fan_out = 600, 900
    bound = gain * math.sqrt(6 / (fan_in + fan_out))
    ours, theirs = _both("xavier_uniform_", gain=gain)
    _same_distribution(ours, theirs, bound)
    ours, theirs = _both("xavier_normal_", gain=gain)
    _same_distribution(ours, theirs)
    assert ours.std() == pytest.approx(gain * math.sqrt(2 / (fan_in + fan_out)), rel=0.02)


@pytest.mark.parametrize("kwargs", [{}, {"a": math.sqrt(5)}, {"mode": "fan_out"},
                                    {"nonlinearity": "relu"},
                                    {"a": 0.1, "mode": "fan_out", "nonlinearity": "leaky_relu"}])
def test_kaiming(kwargs):
    fan = 900 if kwargs.get("mode") == "fan_out" else 600
    gain = init.calculate_gain(kwargs.get("nonlinearity", "leaky_relu"), kwargs.get("a", 0))
    ours, theirs = _both("kaiming_uniform_", **kwargs)
    _same_distribution(ours, theirs, gain * math.sqrt(3 / fan))
    ours, theirs = _both("kaiming_normal_", **kwargs)
    _same_distribution(ours, theirs)


def test_kaiming_rejects_an_unknown_mode():
    with pytest.raises(ValueError, match="fan_in"):
        init.kaiming_uniform_(fw.empty(3, 3), mode="fan_avg")


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 2, 3)])
def test_orthogonal_rows_or_columns_are_orthonormal(shape):
    p = nn.Parameter(fw.empty(*shape))
    init.orthogonal_(p, gain=2.0)
    flat = p.detach().numpy().reshape(shape[0], -1).astype(np.float64)
    small = min(flat.shape)
    gram = flat @ flat.T if flat.shape[0] == small else flat.T @ flat
    np.testing.assert_allclose(gram, 4.0 * np.eye(small), atol=1e-5)


def test_same_generator_seed_gives_the_same_values_and_default_uses_manual_seed():
    a, b = fw.empty(4, 4), fw.empty(4, 4)
    init.normal_(a, generator=fw.Generator(3))
    init.normal_(b, generator=fw.Generator(3))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    fw.manual_seed(7)
    init.uniform_(a)
    fw.manual_seed(7)
    init.uniform_(b)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_init_writes_in_place_and_keeps_the_dtype():
    p = nn.Parameter(fw.empty(3, 3, dtype=fw.float64))
    returned = init.kaiming_normal_(p)
    assert returned is p and p.dtype == fw.float64 and p.requires_grad


# -- every layer's default initialisation, against torch's on large layers ----------------------
def _params(ours, theirs):
    t = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        yield name, p.detach().numpy().astype(np.float64), t[name].detach().numpy().astype(
            np.float64)


LAYERS = [
    ("Linear", (600, 300), {}),
    ("Bilinear", (60, 40, 50), {}),
    ("Conv1d", (32, 64, 5), {}),
    ("Conv2d", (32, 64, 3), {"groups": 2}),
    ("ConvTranspose2d", (32, 64, 3), {}),
    ("Embedding", (1000, 64), {"padding_idx": 3}),
    ("RNN", (50, 120), {"num_layers": 2}),
    ("LSTM", (50, 120), {"bidirectional": True}),
    ("GRU", (50, 120), {}),
    ("MultiheadAttention", (256, 8), {}),
    ("MultiheadAttention", (256, 8), {"kdim": 64, "vdim": 32, "add_bias_kv": True}),
    ("LayerNorm", (64,), {}),
    ("GroupNorm", (4, 64), {}),
    ("BatchNorm2d", (64,), {}),
    ("RMSNorm", (64,), {}),
]


@pytest.mark.parametrize("name,args,kwargs", LAYERS, ids=[f"{n}-{i}" for i, (n, _, _) in
                                                          enumerate(LAYERS)])
def test_default_initialisation_matches_torch(name, args, kwargs):
    ours = getattr(nn, name)(*args, **kwargs)
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    for pname, a, b in _params(ours, theirs):
        assert a.shape == b.shape, pname
        if b.std() == 0:  # constants (norm weights, zero biases)
            np.testing.assert_array_equal(a, b, err_msg=pname)
        elif a.size < 2000:  # small vectors (biases): same support, loose moments
            bound = np.abs(b).max()
            assert np.abs(a).max() <= 1.5 * bound, pname
            assert abs(a.std() - b.std()) < 0.35 * b.std(), pname
        else:
            if name == "Embedding":
                a, b = np.delete(a, 3, axis=0), np.delete(b, 3, axis=0)
            _same_distribution(a.ravel(), b.ravel())
    if name == "Embedding":
        assert not ours.weight.detach().numpy()[3].any()
