"""Dropout: identity in eval mode and at p=0, the right statistics and gradients in training."""

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_core.nn as nn

from .layer_check import check_layer


def test_eval_mode_and_p0_match_torch_exactly():
    x = np.random.default_rng(0).standard_normal((4, 5))
    check_layer(nn.Dropout(0.5), torch.nn.Dropout(0.5), [x], modes=("eval",))
    check_layer(nn.Dropout(0.0), torch.nn.Dropout(0.0), [x])


def test_eval_mode_returns_the_input():
    layer = nn.Dropout(0.3).eval()
    x = fw.randn(3)
    assert layer(x) is x


def test_training_zeroes_a_fraction_p_and_scales_the_rest():
    layer = nn.Dropout(0.3)
    x = fw.ones(200_000)
    out = layer(x).numpy()
    kept = out != 0
    assert abs(1 - kept.mean() - 0.3) < 0.005
    np.testing.assert_allclose(out[kept], 1 / 0.7, rtol=1e-6)


def test_gradient_flows_through_the_kept_elements_only():
    x = fw.randn(1000, requires_grad=True)
    out = nn.Dropout(0.5)(x)
    out.sum().backward()
    kept = out.detach().numpy() != 0
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, 2.0, 0.0))


def test_the_mask_follows_the_seed():
    fw.manual_seed(5)
    a = nn.Dropout(0.5)(fw.ones(50)).numpy()
    fw.manual_seed(5)
    b = nn.Dropout(0.5)(fw.ones(50)).numpy()
    np.testing.assert_array_equal(a, b)


def test_p1_zeroes_everything():
    assert not nn.Dropout(1.0)(fw.ones(10)).numpy().any()


def test_inplace_writes_into_an_untracked_input():
    x = fw.ones(100)
    out = nn.Dropout(0.5, inplace=True)(x)
    assert out is x and (x.numpy() == 0).any()


def test_bad_probability():
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


def test_repr():
    assert repr(nn.Dropout(0.2)) == repr(torch.nn.Dropout(0.2))
