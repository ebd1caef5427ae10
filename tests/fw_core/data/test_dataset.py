"""Datasets: TensorDataset, ArrayDataset, Subset, ConcatDataset, random_split."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.data import (
    ArrayDataset,
    ConcatDataset,
    DataError,
    DataIndexError,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)
from fw_core.errors import FwError, ShapeError


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i * i


def test_tensor_dataset_rows_and_negative_index():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    ds = TensorDataset(fw.tensor(x), fw.arange(6))
    assert len(ds) == 6
    row, label = ds[4]
    np.testing.assert_array_equal(row.numpy(), x[4])
    assert label.item() == 4 and label.shape == ()
    np.testing.assert_array_equal(ds[-1][0].numpy(), x[5])


def test_tensor_dataset_accepts_numpy_and_iterates_to_the_end():
    ds = TensorDataset(np.arange(3), np.array([1.5, 2.5, 3.5]))
    assert [int(a) for a, _ in ds] == [0, 1, 2]  # the IndexError at 3 ends iteration
    assert ds.tensors[1].dtype == fw.float64


def test_tensor_dataset_index_out_of_range_names_length():
    ds = TensorDataset(fw.zeros(3, 2))
    with pytest.raises(DataIndexError, match="index 3 is out of range .* length 3") as info:
        ds[3]
    assert isinstance(info.value, IndexError) and isinstance(info.value, FwError)
    with pytest.raises(DataError, match="integers"):
        ds[1.5]


def test_tensor_dataset_rejects_different_first_dimensions():
    with pytest.raises(ShapeError, match=r"first dimension") as info:
        TensorDataset(fw.zeros(4, 2), fw.zeros(5))
    assert "(4, 2)" in str(info.value) and "(5,)" in str(info.value)
    with pytest.raises(DataError):
        TensorDataset()


def test_tensor_dataset_get_batch_equals_stacked_samples():
    x, y = np.random.default_rng(0).normal(size=(7, 3)).astype(np.float32), np.arange(7)
    ds = TensorDataset(x, y)
    bx, by = ds.get_batch([6, 0, -2])
    np.testing.assert_array_equal(bx.numpy(), x[[6, 0, 5]])
    assert by.tolist() == [6, 0, 5] and by.dtype == fw.int64
    with pytest.raises(DataIndexError, match="index 7"):
        ds.get_batch([1, 7])


def test_array_dataset_applies_transforms_and_skips_the_fast_path_then():
    data, targets = np.arange(8).reshape(4, 2), np.array([3, 1, 2, 0])
    plain = ArrayDataset(data, targets, classes="abcd")
    sample, target = plain[2]
    np.testing.assert_array_equal(sample, [4, 5])
    assert target == 2 and plain.classes == ["a", "b", "c", "d"]
    x, y = plain.get_batch([0, 3])
    assert x.tolist() == [[0, 1], [6, 7]] and y.tolist() == [3, 0]
    shifted = ArrayDataset(data, targets, transform=lambda s: s + 100,
                           target_transform=lambda t: -t)
    sample, target = shifted[1]
    assert sample.tolist() == [102, 103] and target == -1
    assert shifted.get_batch([0]) is None
    with pytest.raises(ShapeError, match="one target per sample"):
        ArrayDataset(data, targets[:3])


def test_subset_maps_indices_and_forwards_the_fast_path():
    ds = TensorDataset(fw.arange(10) * 10)
    sub = Subset(ds, [9, 2, 5])
    assert len(sub) == 3
    assert sub[0][0].item() == 90 and sub[-1][0].item() == 50
    assert sub.get_batch([2, 0])[0].tolist() == [50, 90]
    assert Subset(Squares(5), [4, 1]).get_batch([0, 1]) is None
    assert Subset(Squares(5), fw.tensor([4, 1]))[0] == 16
    with pytest.raises(DataIndexError):
        sub[3]


def test_concat_dataset_crosses_boundaries():
    a, b = Squares(3), Squares(2)
    both = ConcatDataset([a, b])
    assert len(both) == 5 and both.cumulative_sizes == [3, 5]
    assert [both[i] for i in range(5)] == [0, 1, 4, 0, 1]
    assert both[-1] == 1 and both[-5] == 0
    assert [x for x in a + b] == [0, 1, 4, 0, 1]
    with pytest.raises(DataIndexError):
        both[5]
    with pytest.raises(DataError, match="at least one"):
        ConcatDataset([])


def test_concat_refuses_iterable_datasets():
    class Stream(IterableDataset):
        def __iter__(self):
            yield 1

    with pytest.raises(DataError, match="IterableDataset") as caught:
        ConcatDataset([Squares(2), Stream()])
    assert "ChainDataset" in caught.value.hint
    assert list(Stream() + Stream()) == [1, 1]  # streams chain, as in PyTorch


def test_random_split_is_disjoint_complete_and_reproducible():
    ds = Squares(50)
    parts = random_split(ds, [30, 15, 5], generator=fw.Generator(7))
    assert [len(p) for p in parts] == [30, 15, 5]
    seen = np.concatenate([p.indices for p in parts])
    assert sorted(seen.tolist()) == list(range(50))
    again = random_split(ds, [30, 15, 5], generator=fw.Generator(7))
    for p, q in zip(parts, again):
        np.testing.assert_array_equal(p.indices, q.indices)
    other = random_split(ds, [30, 15, 5], generator=fw.Generator(8))
    assert not np.array_equal(parts[0].indices, other[0].indices)
    assert parts[0].indices.tolist() != list(range(30))  # shuffled, not a prefix


def test_random_split_fractions_give_the_remainder_to_the_first_subsets():
    sizes = [len(p) for p in random_split(Squares(10), [0.33, 0.33, 0.34])]
    assert sizes == [4, 3, 3]
    assert [len(p) for p in random_split(Squares(10), [0.8, 0.2])] == [8, 2]


def test_random_split_follows_the_default_generator():
    fw.manual_seed(3)
    a = random_split(Squares(20), [10, 10])[0].indices
    fw.manual_seed(3)
    b = random_split(Squares(20), [10, 10])[0].indices
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("lengths", [[5, 4], [5, 6], [-1, 11], [0.5, 0.6], ["a", 1]])
def test_random_split_rejects_lengths_that_do_not_add_up(lengths):
    with pytest.raises(DataError):
        random_split(Squares(10), lengths)


def test_base_classes_say_what_a_subclass_must_define():
    from fw_core.errors import UnsupportedError

    with pytest.raises(UnsupportedError, match=r"must define __getitem__"):
        Dataset()[0]
    with pytest.raises(UnsupportedError, match=r"must define __iter__"):
        iter(IterableDataset())
    assert Dataset().get_batch([0]) is None
