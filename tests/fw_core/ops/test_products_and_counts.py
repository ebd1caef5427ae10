"""mm/mv/dot, the scaled sums (addmm & co.), kron, cross, cdist, histc and bincount where PyTorch
does more than compute values: its rank checks and errors, beta=0 ignoring NaN, cross's
deprecated default dim, cdist's zero-distance gradient, counts that carry no gradient."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import DTypeError, FwError

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("call", [
    lambda lib: lib.mm(lib.ones(2, 3), lib.ones(3)),
    lambda lib: lib.mm(lib.ones(2, 3), lib.ones(4, 2)),
    lambda lib: lib.mv(lib.ones(2, 3), lib.ones(2, 3)),
    lambda lib: lib.dot(lib.ones(3), lib.ones(4)),
    lambda lib: lib.dot(lib.ones(2, 3), lib.ones(3)),
    lambda lib: lib.addmm(lib.ones(3, 3), lib.ones(2, 3), lib.ones(3, 2)),
    lambda lib: lib.cross(lib.ones(4, 2), lib.ones(4, 2), dim=1),
    lambda lib: lib.cross(lib.ones(2, 3), lib.ones(3)),
    lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), p=-1.0),
    lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 4)),
    lambda lib: lib.histc(lib.ones(3), bins=0),
    lambda lib: lib.histc(lib.ones(3), min=2, max=1),
    lambda lib: lib.bincount(lib.tensor([-1, 2])),
    lambda lib: lib.bincount(lib.tensor([[1, 2]])),
    lambda lib: lib.bincount(lib.tensor([1, 2]), weights=lib.ones(3)),
    lambda lib: lib.bincount(lib.tensor([1, 2]), minlength=-1),
], ids=["mm_vector", "mm_inner", "mv_matrix", "dot_sizes", "dot_rank", "addmm_input",
        "cross_size", "cross_ranks", "cdist_p", "cdist_columns", "histc_bins", "histc_range",
        "bincount_negative", "bincount_2d", "bincount_weights", "bincount_minlength"])
@pytest.mark.filterwarnings("ignore:Using torch.cross without")
def test_refusals_are_runtime_errors_as_in_torch(call):
    with pytest.raises(RuntimeError):
        call(torch)
    with pytest.raises(RuntimeError) as info:
        call(fw)
    assert isinstance(info.value, FwError) and info.value.hint


def test_float_bincount_and_integer_histc_are_refused_by_dtype():
    with pytest.raises(DTypeError, match="bincount"):
        fw.bincount(fw.tensor([1.0, 2.0]))
    with pytest.raises(DTypeError, match="histc"):
        fw.histc(fw.tensor([1, 2]))


def test_addmm_with_beta_zero_ignores_nan_in_input():
    values = np.array([[np.nan, np.inf], [1.0, 2.0]])
    a, b = np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(3, 2)
    got = fw.addmm(fw.tensor(values), fw.tensor(a), fw.tensor(b), beta=0, alpha=2)
    expected = torch.addmm(torch.tensor(values), torch.tensor(a), torch.tensor(b), beta=0,
                           alpha=2)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_cross_without_dim_takes_the_first_size_3_dimension_and_warns():
    a = np.random.default_rng(0).standard_normal((3, 3, 2))
    b = np.random.default_rng(1).standard_normal((3, 3, 2))
    with pytest.warns(UserWarning, match="dim"):
        got = fw.cross(fw.tensor(a), fw.tensor(b))
    expected = torch.cross(torch.tensor(a), torch.tensor(b))  # torch warns once per process
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)


def test_kron_promotes_and_matches_torch_on_integers():
    a, b = np.array([[1, 2], [3, 4]]), np.array([0.5, -1.0], np.float32)
    got = fw.kron(fw.tensor(a), fw.tensor(b))
    expected = torch.kron(torch.tensor(a), torch.tensor(b))
    assert got.dtype is fw.float32
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    assert fw.kron(fw.tensor(2), fw.tensor(3)).tolist() == 6


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, np.inf])
def test_cdist_gradient_is_zero_where_rows_coincide(p):
    x1, x2 = np.array([[0.0, 0.0], [1.0, 2.0]]), np.array([[0.0, 0.0], [1.0, 1.0]])
    ours = [fw.tensor(x, requires_grad=True) for x in (x1, x2)]
    theirs = [torch.tensor(x, requires_grad=True) for x in (x1, x2)]
    fw.cdist(*ours, p=p).sum().backward()
    torch.cdist(*theirs, p=p).sum().backward()
    for mine, their in zip(ours, theirs):
        np.testing.assert_allclose(mine.grad.numpy(), their.grad.numpy(), rtol=1e-12)


def test_counts_carry_no_gradient():
    x = fw.tensor([0.5, 1.5, 1.7], requires_grad=True)
    assert not fw.histc(x, bins=2, min=0, max=2).requires_grad
    weights = fw.tensor([1.0, 2.0, 3.0], requires_grad=True)
    assert not fw.bincount(fw.tensor([0, 2, 2]), weights).requires_grad
    assert fw.bincount(fw.tensor([0, 2, 2]), weights).tolist() == [1.0, 0.0, 5.0]
    assert fw.bincount(fw.tensor([], dtype=fw.int64)).tolist() == []
