"""sort, topk and msort (argsort's order plus a gather) against torch: indices with ties,
gradients of the values, and the refusal of an impossible k."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import ArgumentError

torch = pytest.importorskip("torch")

VALUES = np.array([[3.0, 1.0, 3.0, -2.0, 1.0], [0.5, 7.0, 7.0, 2.0, -1.0]])


@pytest.mark.parametrize("descending", [False, True])
def test_sort_gives_torch_stable_order_and_gradients(descending):
    ours = fw.tensor(VALUES, requires_grad=True)
    theirs = torch.tensor(VALUES, requires_grad=True)
    got = ours.sort(dim=1, descending=descending)
    expected = torch.sort(theirs, dim=1, descending=descending, stable=True)
    assert got.indices.tolist() == expected.indices.tolist()
    weights = np.arange(10.0).reshape(2, 5)
    (grad,) = fw.autograd.grad((got.values * fw.tensor(weights)).sum(), [ours])
    (expected_grad,) = torch.autograd.grad((expected.values * torch.tensor(weights)).sum(),
                                           [theirs])
    np.testing.assert_array_equal(grad.numpy(), expected_grad.numpy())


def test_topk_and_msort_match_torch():
    values = np.random.default_rng(0).standard_normal((4, 6))
    for kwargs in ({}, {"largest": False}, {"dim": 0}):
        got = fw.topk(fw.tensor(values), 3, **kwargs)
        expected = torch.topk(torch.tensor(values), 3, **kwargs)
        np.testing.assert_array_equal(got.values.numpy(), expected.values.numpy())
        np.testing.assert_array_equal(got.indices.numpy(), expected.indices.numpy())
    np.testing.assert_array_equal(fw.msort(fw.tensor(values)).numpy(),
                                  torch.msort(torch.tensor(values)).numpy())


def test_an_impossible_k_is_refused():
    with pytest.raises(ArgumentError, match=r"k must be an int in \[0, 5\]"):
        fw.topk(fw.ones(2, 5), 6)


REPEATS = np.array([[3.0, 1.0, 3.0, 2.0, 1.0, 3.0, 1.0], [5.0, 5.0, 2.0, 2.0, 7.0, 0.0, 9.0]])


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.median(x, 1), lambda lib, x: lib.mode(x, 1),
    lambda lib, x: lib.median(x, 0, keepdim=True), lambda lib, x: lib.kthvalue(x, 4, 1),
], ids=["median", "mode", "median_dim0_keepdim", "kthvalue"])
def test_order_statistics_with_ties_match_torch_with_gradients(call):
    ours = fw.tensor(REPEATS, requires_grad=True)
    theirs = torch.tensor(REPEATS, requires_grad=True)
    got, expected = call(fw, ours), call(torch, theirs)
    assert got.values.tolist() == expected.values.tolist()
    assert got.indices.tolist() == expected.indices.tolist()
    got.values.sum().backward()
    expected.values.sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


def test_median_without_dim_is_a_0d_lower_median_and_nan_when_empty():
    assert fw.median(fw.tensor([1.0, 2.0, 3.0, 4.0])).item() == 2.0
    assert fw.median(fw.tensor([[1, 5], [2, 2]])).tolist() == 2
    assert np.isnan(fw.median(fw.tensor([1.0, np.nan, 0.0])).item())
    assert np.isnan(fw.median(fw.ones(0)).item())


def test_order_statistics_refuse_what_torch_refuses():
    x = fw.ones(2, 3)
    for k in (0, 4):
        with pytest.raises(RuntimeError, match="out of range"):
            fw.kthvalue(x, k, 1)
    for op in (lambda t: fw.median(t, 0), lambda t: fw.mode(t, 0), lambda t: fw.kthvalue(t, 1, 0)):
        with pytest.raises(IndexError, match="non-zero size"):
            op(fw.ones(0, 3))
    with pytest.raises(IndexError):
        fw.mode(x, 2)
