"""DataLoader, dataset and sampler arguments that cannot work are refused when they are given,
each error naming the loader (or dataset, sampler), what arrived and a fix."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.data import (
    ArrayDataset,
    DataError,
    DataIndexError,
    DataLoader,
    Dataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    TensorDataset,
)


class NegativeLength(Dataset):
    def __len__(self):
        return -3

    def __getitem__(self, index):
        return index


def _teaches(err, op: str) -> None:
    text = str(err)
    assert err.op == op and text.startswith(f"{op}: ")
    assert "\n  inputs:" in text and "\n  fix:" in text


@pytest.mark.parametrize("kwargs,match", [
    ({"batch_size": 0}, "batch_size must be an integer >= 1, got 0"),
    ({"collate_fn": 5}, "collate_fn must be callable, got int"),
    ({"sampler": 5}, "sampler must be iterable"),
    ({"batch_sampler": 3}, "batch_sampler must be iterable"),
    ({"num_workers": -1}, "num_workers must be an integer >= 0"),
])
def test_loader_arguments_name_the_loader_and_a_fix(kwargs, match):
    with pytest.raises(DataError, match=match) as info:
        DataLoader(TensorDataset(fw.zeros(4, 2)), **kwargs)
    _teaches(info.value, "DataLoader")
    assert "dataset=TensorDataset" in info.value.inputs


def test_a_negative_length_is_refused_when_the_loader_is_built():
    # Python's own len() raised a bare ValueError, and only once the loop had started
    with pytest.raises(DataError, match=r"NegativeLength.__len__\(\) returned -3") as info:
        DataLoader(NegativeLength())
    _teaches(info.value, "DataLoader")
    with pytest.raises(DataError, match="a negative length") as info:
        len(SequentialSampler(NegativeLength()))
    _teaches(info.value, "SequentialSampler")
    with pytest.raises(DataError, match="a negative length"):
        len(RandomSampler(NegativeLength()))


def test_something_that_is_not_a_dataset_is_refused():
    with pytest.raises(DataError, match=r"the dataset \(int\) has no __getitem__"):
        DataLoader(5)
    assert [b.tolist() for b in DataLoader([1, 2, 3], batch_size=2)] == [[1, 2], [3]]


def test_subset_indices_are_checked_when_the_subset_is_made():
    ds = TensorDataset(fw.arange(10))
    with pytest.raises(DataIndexError, match="index 20 is out of range for a dataset of length"):
        Subset(ds, [0, 20])
    assert Subset(ds, [-1, 0])[0][0].item() == 9


def test_array_dataset_targets_must_index_its_classes():
    with pytest.raises(DataError, match="label 4 at position 1, but there are 2 classes") as info:
        ArrayDataset(np.zeros((2, 3)), np.array([0, 4]), classes=["cat", "dog"])
    _teaches(info.value, "ArrayDataset")
    with pytest.raises(DataError, match="label 0.5 at position 0"):
        ArrayDataset(np.zeros((2, 3)), np.array([0.5, 1.0]), classes=["cat", "dog"])
    assert len(ArrayDataset(np.zeros((2, 3)), np.array([7.0, 0.25]))) == 2  # no classes: any
