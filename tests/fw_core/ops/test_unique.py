"""``unique`` and ``unique_consecutive`` (fw_core/ops/unique.py) against torch: values,
inverse indices and counts, flattened and along a dimension, NaN and 0-d inputs."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import IndexOutOfRangeError

torch = pytest.importorskip("torch")

INPUTS = {
    "ints": np.array([3, 1, 2, 3, 1, 5, 5]),
    "floats_with_nan": np.array([np.nan, 1.0, np.nan, -0.5, 1.0]),
    "rows": np.array([[1, 2], [1, 2], [0, 3], [1, 2]]),
    "scalar": np.array(5),
    "empty": np.zeros(0, dtype=np.float32),
}
FLAGS = [(False, False), (True, False), (False, True), (True, True)]


def _same(ours, theirs):
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("name", ["unique", "unique_consecutive"])
@pytest.mark.parametrize("key", sorted(INPUTS))
@pytest.mark.parametrize("inverse, counts", FLAGS)
def test_flattened_matches_torch(name, key, inverse, counts):
    values = INPUTS[key]
    ours = getattr(fw, name)(fw.tensor(values), return_inverse=inverse, return_counts=counts)
    theirs = getattr(torch, name)(torch.tensor(values), return_inverse=inverse,
                                  return_counts=counts)
    _same(ours, theirs)


@pytest.mark.parametrize("name", ["unique", "unique_consecutive"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_along_a_dimension_matches_torch(name, dim):
    values = INPUTS["rows"]
    ours = getattr(fw.tensor(values), name)(return_inverse=True, return_counts=True, dim=dim)
    theirs = getattr(torch.tensor(values), name)(return_inverse=True, return_counts=True,
                                                 dim=dim)
    _same(ours, theirs)


def test_a_dimension_of_a_0d_input_or_out_of_range_is_an_index_error():
    with pytest.raises(IndexOutOfRangeError, match="unique"):
        fw.unique(fw.tensor(5), dim=0)
    with pytest.raises(IndexError, match="out of range"):
        fw.unique(fw.ones(2, 2), dim=2)


def test_under_compile_it_is_a_logged_graph_break():
    step = fw.compile(lambda x: fw.unique(x * 2))
    for _ in range(3):
        assert step(fw.tensor([2.0, 1.0, 2.0])).tolist() == [2.0, 4.0]
    assert step.counts["plan_calls"] == 0
    assert ".numpy()" in step.explain() and "test_unique.py" in step.explain()
