"""diagonal/diag/trace, unfold, rot90, meshgrid and view(dtype) beyond the conformance cases:
views that write through, the errors torch raises (same builtin types), and meshgrid's
warning and gradients."""

import warnings

import numpy as np
import pytest
import torch

import fw_core as fw

X = np.arange(12.0, dtype=np.float32).reshape(3, 4)

ERRORS = [
    ("diag of a 3-d tensor", lambda m, x: m.diag(x.reshape(1, 3, 4)), RuntimeError),
    ("trace of a vector", lambda m, x: m.trace(x[0]), RuntimeError),
    ("diagonal over one dim twice", lambda m, x: x.diagonal(0, 0, 0), RuntimeError),
    ("diagonal dim out of range", lambda m, x: x.diagonal(0, 0, 2), IndexError),
    ("unfold longer than the dim", lambda m, x: x.unfold(1, 5, 1), RuntimeError),
    ("unfold dim out of range", lambda m, x: x.unfold(2, 1, 1), IndexError),
    ("unfold with step 0", lambda m, x: x.unfold(0, 1, 0), RuntimeError),
    ("rot90 about one dim", lambda m, x: m.rot90(x, 1, (0, 0)), RuntimeError),
    ("rot90 with three dims", lambda m, x: m.rot90(x, 1, (0, 1, 0)), RuntimeError),
    ("meshgrid of a matrix", lambda m, x: m.meshgrid(x, indexing="ij"), RuntimeError),
    ("meshgrid of mixed dtypes",
     lambda m, x: m.meshgrid(x[0], x[0].double(), indexing="ij"), RuntimeError),
    ("view as a wider dtype that does not divide",
     lambda m, x: x[:, :3].contiguous().view(m.float64), RuntimeError),
    ("view a 0-d tensor as another size", lambda m, x: x[0, 0].view(m.float64), RuntimeError),
    ("view a transposed tensor as another size", lambda m, x: x.t().view(m.float16),
     RuntimeError),
]


@pytest.mark.parametrize("what, call, expected", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_the_exceptions_torch_raises(what, call, expected):
    with pytest.raises(expected):
        call(torch, torch.tensor(X))
    with pytest.raises(expected) as info:
        call(fw, fw.tensor(X))
    assert isinstance(info.value, fw.errors.FwError)


def test_diagonal_is_a_view_that_writes_into_its_input():
    x = fw.tensor(X)
    with fw.no_grad():
        x.diagonal(1).fill_(-1.0)
    expected = X.copy()
    expected[[0, 1, 2], [1, 2, 3]] = -1.0
    np.testing.assert_array_equal(x.numpy(), expected)


def test_diag_copies():
    x = fw.tensor(X)
    d = x.diag()
    with fw.no_grad():
        d.fill_(0.0)
    np.testing.assert_array_equal(x.numpy(), X)


def test_trace_of_integers_is_int64_as_in_torch():
    assert fw.trace(fw.tensor(X).int()).dtype is fw.int64
    assert fw.trace(fw.tensor(X).int()).item() == torch.trace(torch.tensor(X).int()).item()


def test_meshgrid_without_indexing_warns_and_means_ij():
    with pytest.warns(UserWarning, match="indexing"):
        a, b = fw.meshgrid(fw.arange(3), fw.arange(2))
    assert a.shape == b.shape == (3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fw.meshgrid(fw.arange(3), indexing="xy")


def test_meshgrid_gradients_sum_over_each_grid():
    xs = [np.array([0.5, 1.0, 2.0]), np.array([3.0, 4.0])]
    ours = [fw.tensor(v, requires_grad=True) for v in xs]
    theirs = [torch.tensor(v, requires_grad=True) for v in xs]
    weights = np.arange(6.0).reshape(2, 3)
    sum(((g * fw.tensor(weights * (i + 1))).sum() for i, g in enumerate(
        fw.meshgrid(*ours, indexing="xy")))).backward()
    sum(((g * torch.tensor(weights * (i + 1))).sum() for i, g in enumerate(
        torch.meshgrid(*theirs, indexing="xy")))).backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy())


def test_view_dtype_shares_storage_and_round_trips():
    x = fw.tensor(X)
    bits = x.view(fw.int32)
    assert bits.view(fw.float32).tolist() == x.tolist()
    with fw.no_grad():
        bits[0, 0] = 0x3F800000  # the bits of 1.0
    assert x[0, 0].item() == 1.0
    assert not fw.tensor(X, requires_grad=True).view(fw.int16).requires_grad
