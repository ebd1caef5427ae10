"""Embedding against PyTorch: lookups, gradients, padding_idx, from_pretrained, errors."""

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_core.nn as nn
from fw_core.errors import FwError, ShapeError, UnsupportedError

from .layer_check import check_layer

rng = np.random.default_rng(0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("padding_idx", [None, 0, 3, -1])
@pytest.mark.parametrize("shape", [(7,), (2, 5), ()])
def test_embedding(shape, padding_idx, dtype):
    ids = rng.integers(0, 10, shape)
    if shape:
        ids.flat[0] = 3  # the padding row (when 3) and a repeated id
        ids.flat[-1] = 3
    check_layer(nn.Embedding(10, 4, padding_idx=padding_idx),
                torch.nn.Embedding(10, 4, padding_idx=padding_idx), [ids], dtype=dtype)


def test_padding_row_starts_at_zero_and_gets_no_gradient():
    layer = nn.Embedding(5, 3, padding_idx=1)
    assert not layer.weight.detach().numpy()[1].any()
    layer(fw.tensor([1, 1, 2])).sum().backward()
    assert not layer.weight.grad.numpy()[1].any()
    np.testing.assert_array_equal(layer.weight.grad.numpy()[2], [1, 1, 1])


def test_from_pretrained_is_frozen_by_default():
    weights = fw.randn(4, 2)
    layer = nn.Embedding.from_pretrained(weights)
    assert not layer.weight.requires_grad
    np.testing.assert_array_equal(layer(fw.tensor([2])).numpy()[0], weights.numpy()[2])
    assert nn.Embedding.from_pretrained(weights, freeze=False).weight.requires_grad


def test_out_of_range_ids_are_named():
    with pytest.raises(FwError, match="index 10 is out of range"):
        nn.Embedding(10, 3)(fw.tensor([1, 10]))


def test_unsupported_options_and_bad_padding_idx():
    with pytest.raises(UnsupportedError, match="max_norm"):
        nn.Embedding(10, 3, max_norm=1.0)
    with pytest.raises(ShapeError, match="padding_idx 10"):
        nn.Embedding(10, 3, padding_idx=10)


def test_repr():
    assert repr(nn.Embedding(10, 3, padding_idx=2)) == repr(torch.nn.Embedding(10, 3,
                                                                               padding_idx=2))
