"""TensorDataset, Subset and ConcatDataset against torch.utils.data's: the same samples at
the same indices (negative ones included), lengths and cumulative sizes, a list index through
a Subset, and batches through the loader as lists where samples are tuples."""

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import fw_core as fw
from fw_core.data import ConcatDataset, DataIndexError, DataLoader, Subset, TensorDataset

X = np.arange(12).reshape(6, 2)
Y = np.arange(6) * 10


def test_tensor_dataset_samples_and_batches_match_torch():
    ours = TensorDataset(fw.tensor(X), fw.tensor(Y))
    theirs = tud.TensorDataset(torch.tensor(X), torch.tensor(Y))
    assert len(ours) == len(theirs)
    for i in (0, 3, -1):
        assert [t.tolist() for t in ours[i]] == [t.tolist() for t in theirs[i]]
    ours_batches = list(DataLoader(ours, batch_size=4))
    theirs_batches = list(tud.DataLoader(theirs, batch_size=4))
    assert all(type(a) is type(b) is list for a, b in zip(ours_batches, theirs_batches))
    assert [[t.tolist() for t in b] for b in ours_batches] == \
        [[t.tolist() for t in b] for b in theirs_batches]


def test_subset_reads_the_dataset_at_its_indices_as_torch():
    indices = [5, 0, 3, 3]
    ours, theirs = Subset(list(Y), indices), tud.Subset(list(Y), indices)
    assert len(ours) == len(theirs) == 4
    assert [ours[i] for i in range(-4, 4)] == [theirs[i] for i in range(-4, 4)]

    class Listed:
        def __len__(self):
            return 6

        def __getitem__(self, index):
            return ("batch", index) if isinstance(index, list) else ("one", index)

    assert Subset(Listed(), indices)[[1, 2]] == tud.Subset(Listed(), indices)[[1, 2]]
    assert Subset(Listed(), indices)[[1, 2]] == ("batch", [0, 3])


def test_concat_dataset_indexes_across_its_parts_as_torch():
    parts = [list(range(3)), list(range(10, 12)), [], list(range(20, 24))]
    ours, theirs = ConcatDataset(parts), tud.ConcatDataset(parts)
    assert ours.cumulative_sizes == theirs.cumulative_sizes and len(ours) == len(theirs)
    assert [ours[i] for i in range(-9, 9)] == [theirs[i] for i in range(-9, 9)]
    with pytest.raises(DataIndexError):
        ours[9]
    assert (TensorDataset(fw.zeros(2)) + TensorDataset(fw.ones(3))).cumulative_sizes == [2, 5]
