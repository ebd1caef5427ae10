"""Dropout1d/2d/3d, AlphaDropout, FeatureAlphaDropout and their functional forms: PyTorch's
behaviour where it is deterministic (evaluation, p = 0 and 1, errors, warnings, repr) and the
statistics and structure of the masks where it is random."""

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_core.nn as nn
import fw_core.nn.functional as F

from .layer_check import check_layer

rng = np.random.default_rng(0)


@pytest.mark.parametrize("cls,shape", [("Dropout1d", (2, 3, 4)), ("Dropout2d", (2, 3, 4, 5)),
                                       ("Dropout3d", (2, 3, 2, 2, 2)), ("AlphaDropout", (5, 4)),
                                       ("FeatureAlphaDropout", (2, 3, 4))])
def test_eval_mode_and_p0_match_torch(cls, shape):
    x = rng.standard_normal(shape)
    check_layer(getattr(nn, cls)(0.5), getattr(torch.nn, cls)(0.5), [x], modes=("eval",))
    check_layer(getattr(nn, cls)(0.0), getattr(torch.nn, cls)(0.0), [x])
    check_layer(getattr(nn, cls)(1.0), getattr(torch.nn, cls)(1.0), [x])
    assert repr(getattr(nn, cls)(0.3, True)) == repr(getattr(torch.nn, cls)(0.3, True))


@pytest.mark.parametrize("fn,shape", [(F.dropout1d, (40, 50, 6)), (F.dropout1d, (500, 6)),
                                      (F.dropout2d, (40, 50, 3, 2)),
                                      (F.dropout3d, (40, 50, 2, 2, 2)),
                                      (F.dropout3d, (500, 2, 2, 2))])
def test_channel_dropout_zeroes_whole_channels(fn, shape):
    x = fw.ones(*shape, requires_grad=True)
    out = fn(x, 0.3)
    a = out.detach().numpy()
    channels = a.reshape(a.shape[0] * a.shape[1] if len(shape) == fn_batched_ndim(fn) else
                         a.shape[0], -1)
    assert (channels.min(1) == channels.max(1)).all()  # a channel is kept or dropped whole
    assert set(np.unique(a)) <= {0.0, np.float32(1 / 0.7)}
    assert abs((a == 0).mean() - 0.3) < 0.03
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), a, rtol=1e-6)  # gradient = the scaled mask


def fn_batched_ndim(fn):
    return {F.dropout1d: 3, F.dropout2d: 4, F.dropout3d: 5}[fn]


def test_alpha_dropout_keeps_mean_and_variance():
    x = fw.randn(400_000)
    out = F.alpha_dropout(x, 0.2, training=True).numpy()
    assert abs(out.mean()) < 0.01 and abs(out.std() - 1) < 0.01
    dropped = np.unique(out[~np.isclose(out, x.numpy() * out[0] / x.numpy()[0])])
    assert dropped.size >= 1
    a = 1 / np.sqrt((1.7580993408473766 ** 2 * 0.2 + 1) * 0.8)
    expected_dropped = -1.7580993408473766 * a + 1.7580993408473766 * a * 0.2
    assert np.isclose(out, expected_dropped, atol=1e-6).mean() == pytest.approx(0.2, abs=0.01)


def test_alpha_dropout_defaults_to_no_training_as_torch():
    x = fw.randn(10)
    assert F.alpha_dropout(x, 0.5) is x
    assert F.feature_alpha_dropout(x, 0.5) is x


def test_feature_alpha_dropout_drops_channels():
    out = F.feature_alpha_dropout(fw.randn(50, 40, 8), 0.5, training=True).numpy()
    a = 1 / np.sqrt((1.7580993408473766 ** 2 * 0.5 + 1) * 0.5)
    dropped = np.isclose(out, -1.7580993408473766 * a * 0.5, atol=1e-6).all(-1)
    assert 0.4 < dropped.mean() < 0.6


def test_errors_and_warnings_read_as_torch():
    with pytest.raises(RuntimeError, match="Expected 2D or 3D input"):
        F.dropout1d(fw.ones(2, 3, 4, 5))
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout2d(fw.ones(2, 3, 4, 5), 1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout3d(-0.1)
    with pytest.warns(UserWarning, match="assuming that channel-wise 1D dropout"):
        F.dropout2d(fw.ones(2, 3, 4))
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout3d"):
        F.dropout3d(fw.ones(2, 3))


def test_inplace_writes_into_an_untracked_input():
    x = fw.ones(20, 30, 4)
    out = nn.Dropout1d(0.5, inplace=True)(x)
    assert out is x and (x.numpy() == 0).any()
    y = fw.ones(30, 4)
    assert F.dropout1d(y, 0.5, inplace=True) is y and (y.numpy() == 0).any()


def test_variants_are_not_dropout_subclasses_as_in_torch():
    assert not isinstance(nn.Dropout2d(), nn.Dropout)
    assert not issubclass(torch.nn.Dropout2d, torch.nn.Dropout)
