"""DataLoader(batch_size=None): automatic batching off, as torch.utils.data's: every sample
(every sampler index, every stream item) passes through collate_fn alone, default_convert by
default; len() counts samples; drop_last is refused."""

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import fw_core as fw
from fw_core.data import DataError, DataLoader, IterableDataset, default_convert


class Rows(fw.data.Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"x": np.array([i, 10 * i], np.int32), "id": i}


class Stream(IterableDataset):
    def __iter__(self):
        return iter((np.float32(i), i) for i in range(4))

    def __len__(self):
        return 4


class TorchStream(tud.IterableDataset):
    def __iter__(self):
        return iter((np.float32(i), i) for i in range(4))


def plain(value):
    """Tensors as nested lists, so fw's and torch's outputs compare with ==."""
    if hasattr(value, "tolist"):
        return ("tensor", value.tolist())
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value)
    return value


@pytest.mark.parametrize("workers", [0, 2])
def test_map_style_samples_are_converted_one_by_one_as_torch(workers):
    ours = DataLoader(Rows(), batch_size=None, num_workers=workers)
    theirs = tud.DataLoader(Rows(), batch_size=None)
    assert ours.collate_fn is default_convert
    assert [plain(s) for s in ours] == [plain(s) for s in theirs]
    assert len(ours) == len(theirs) == 5
    assert isinstance(next(iter(ours))["x"], fw.Tensor) and next(iter(ours))["id"] == 0


@pytest.mark.parametrize("workers", [0, 1])
def test_stream_items_are_converted_one_by_one_as_torch(workers):
    ours = [plain(s) for s in DataLoader(Stream(), batch_size=None, num_workers=workers)]
    theirs = [plain(s) for s in tud.DataLoader(TorchStream(), batch_size=None)]
    assert ours == theirs and ours[1] == [("tensor", 1.0), 1]
    assert len(DataLoader(Stream(), batch_size=None)) == 4


def test_a_sampler_or_shuffle_orders_the_unbatched_samples():
    order = [3, 0, 4]
    ours = DataLoader(Rows(), batch_size=None, sampler=order)
    assert [s["id"] for s in ours] == order and len(ours) == 3
    shuffled = DataLoader(Rows(), batch_size=None, shuffle=True, generator=fw.Generator(1))
    assert sorted(s["id"] for s in shuffled) == [0, 1, 2, 3, 4]


def test_a_given_collate_fn_receives_one_sample():
    seen = []
    loader = DataLoader(Rows(), batch_size=None, collate_fn=lambda s: seen.append(s) or s["id"])
    assert list(loader) == [0, 1, 2, 3, 4]
    assert isinstance(seen[0]["x"], np.ndarray)  # the sample as the dataset returned it


def test_drop_last_without_batching_is_refused_as_torch():
    with pytest.raises(ValueError, match="mutually exclusive with drop_last"):
        tud.DataLoader(Rows(), batch_size=None, drop_last=True)
    with pytest.raises(DataError, match="batch_size=None turns automatic batching off"):
        DataLoader(Rows(), batch_size=None, drop_last=True)
    with pytest.raises(ValueError):
        tud.DataLoader(Rows(), batch_size=None, batch_sampler=[[0]])
    with pytest.raises(DataError, match="batch_sampler already decides"):
        DataLoader(Rows(), batch_size=None, batch_sampler=[[0]])


def test_getitems_is_read_for_a_whole_batch_as_torch():
    class Many(fw.data.Dataset):
        calls = []

        def __len__(self):
            return 4

        def __getitem__(self, i):
            raise AssertionError("the loader should ask __getitems__")

        def __getitems__(self, indices):
            self.calls.append(list(indices))
            return [i * 2 for i in indices]

    batches = [b.tolist() for b in DataLoader(Many(), batch_size=3)]
    assert batches == [[0, 2, 4], [6]] and Many.calls == [[0, 1, 2], [3]]
    assert [b.tolist() for b in tud.DataLoader(Many(), batch_size=3)] == batches
    assert torch.__version__  # the comparison above ran against torch's loader
