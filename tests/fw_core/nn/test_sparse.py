"""Embedding and EmbeddingBag against PyTorch: lookups, gradients, padding_idx, max_norm,
scale_grad_by_freq, bags (sum/mean/max, offsets, per_sample_weights), from_pretrained,
errors."""

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
    with pytest.raises(UnsupportedError, match="sparse"):
        nn.Embedding(10, 3, sparse=True)
    with pytest.raises(ShapeError, match="padding_idx 10"):
        nn.Embedding(10, 3, padding_idx=10)


def test_repr():
    assert repr(nn.Embedding(10, 3, padding_idx=2)) == repr(torch.nn.Embedding(10, 3,
                                                                               padding_idx=2))


@pytest.mark.parametrize("norm_type", [2.0, 1.0])
def test_max_norm_renormalises_the_rows_looked_up_in_place(norm_type):
    weights = rng.standard_normal((10, 4)) * 2
    ours, theirs = (nn.Embedding(10, 4, max_norm=1.5, norm_type=norm_type),
                    torch.nn.Embedding(10, 4, max_norm=1.5, norm_type=norm_type))
    ids = np.array([[1, 2, 1], [7, 0, 2]])
    check_layer(ours.double(), theirs.double(), [ids], dtype="float64")
    ours.load_state_dict({"weight": weights})
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(weights))
    ours(fw.tensor(ids))
    theirs(torch.from_numpy(ids))
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               atol=1e-12)
    untouched = [3, 4, 5, 6, 8, 9]
    np.testing.assert_array_equal(ours.weight.detach().numpy()[untouched], weights[untouched])


def test_scale_grad_by_freq_and_functional_embedding():
    ids = np.array([[1, 2, 1], [1, 0, 2]])
    check_layer(nn.Embedding(5, 3, scale_grad_by_freq=True, padding_idx=0),
                torch.nn.Embedding(5, 3, scale_grad_by_freq=True, padding_idx=0), [ids])
    w = rng.standard_normal((5, 3))
    ours = fw.tensor(w, requires_grad=True)
    theirs = torch.from_numpy(w).requires_grad_(True)
    out = nn.functional.embedding(fw.tensor(ids), ours, padding_idx=2, max_norm=0.5)
    out_t = torch.nn.functional.embedding(torch.from_numpy(ids), theirs, padding_idx=2,
                                          max_norm=0.5)
    np.testing.assert_allclose(out.detach().numpy(), out_t.detach().numpy(), atol=1e-12)
    out.sum().backward()
    out_t.sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-12)


BAGS = [({"mode": "sum"}, True), ({"mode": "mean"}, True), ({"mode": "max"}, True),
        ({"mode": "mean", "padding_idx": 2}, True), ({"mode": "max", "padding_idx": 2}, True),
        ({"mode": "sum", "include_last_offset": True}, True), ({"mode": "mean"}, False),
        ({"mode": "max", "padding_idx": 0}, False)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options,flat", BAGS, ids=str)
def test_embedding_bag(options, flat, dtype):
    if flat:
        ids = np.array([1, 2, 4, 5, 4, 3, 2, 9, 2, 2])
        offsets = np.array([0, 2, 2, 5, 8, 10] if options.get("include_last_offset")
                           else [0, 2, 2, 5, 8])
        args = [ids, offsets]
    else:
        args = [rng.integers(0, 10, (4, 3))]
    check_layer(nn.EmbeddingBag(10, 3, **options), torch.nn.EmbeddingBag(10, 3, **options),
                args, dtype=dtype)


def test_embedding_bag_per_sample_weights():
    ids, offsets = np.array([1, 2, 4, 5, 4, 3]), np.array([0, 2, 2])
    weights = rng.standard_normal(6)
    check_layer(nn.EmbeddingBag(10, 3, mode="sum"), torch.nn.EmbeddingBag(10, 3, mode="sum"),
                [ids, offsets, weights], dtype="float64")


def test_embedding_bag_max_norm_and_functional_form():
    w = rng.standard_normal((10, 3)) * 3
    ids = np.array([[1, 2], [2, 7]])
    ours, theirs = fw.tensor(w), torch.from_numpy(w.copy())
    out = nn.functional.embedding_bag(fw.tensor(ids), ours, max_norm=1.0, mode="sum")
    out_t = torch.nn.functional.embedding_bag(torch.from_numpy(ids), theirs, max_norm=1.0,
                                              mode="sum")
    np.testing.assert_allclose(out.numpy(), out_t.numpy(), atol=1e-12)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12)


def test_embedding_bag_errors_repr_and_from_pretrained():
    bag = nn.EmbeddingBag(10, 3)
    with pytest.raises(RuntimeError, match="offsets has to be a 1D Tensor"):
        bag(fw.tensor([1, 2, 3]))
    with pytest.raises(ValueError, match="offsets has to be None"):
        bag(fw.tensor([[1, 2]]), fw.tensor([0]))
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        bag(fw.tensor([1, 2, 3]), fw.tensor([1]))
    with pytest.raises(ValueError, match="only supported for mode='sum'"):
        bag(fw.tensor([[1, 2]]), per_sample_weights=fw.ones(1, 2))
    with pytest.raises(ValueError, match="mode"):
        nn.EmbeddingBag(10, 3, mode="median")
    for options in [{}, {"mode": "max", "padding_idx": 1, "max_norm": 2.0}]:
        assert repr(nn.EmbeddingBag(10, 3, **options)) == \
            repr(torch.nn.EmbeddingBag(10, 3, **options))
    assert repr(nn.Embedding(10, 3, max_norm=1.0, scale_grad_by_freq=True)) == \
        repr(torch.nn.Embedding(10, 3, max_norm=1.0, scale_grad_by_freq=True))
    table = fw.randn(4, 2)
    frozen = nn.EmbeddingBag.from_pretrained(table, mode="sum")
    assert not frozen.weight.requires_grad
    np.testing.assert_allclose(frozen(fw.tensor([[0, 3]])).numpy()[0],
                               table.numpy()[0] + table.numpy()[3], atol=1e-6)
