"""``fw.utils.data`` is ``torch.utils.data`` for fw: the same objects as ``fw.data``, the
submodules PyTorch programs import from, and the names a typical program uses, behaving as
PyTorch's (ChainDataset, StackDataset, a Sampler subclass calling ``super().__init__``)."""

import numpy as np
import pytest
import torch

import fw_core as fw
from fw_core.data import ChainDataset, DataError, IterableDataset, StackDataset, TensorDataset
from fw_core.errors import MissingNameError

#: what ``from torch.utils.data import ...`` brings in typical training scripts
TYPICAL = ("DataLoader", "Dataset", "IterableDataset", "TensorDataset", "Subset",
           "ConcatDataset", "ChainDataset", "StackDataset", "random_split", "Sampler",
           "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler", "default_collate", "get_worker_info")


def test_utils_data_holds_the_very_objects_of_fw_data():
    from fw_core.utils.data import DataLoader, TensorDataset  # noqa: F401 - the import works

    for name in TYPICAL:
        assert hasattr(torch.utils.data, name)
        assert getattr(fw.utils.data, name) is getattr(fw.data, name), name
    assert set(fw.data.__all__) <= set(fw.utils.data.__all__)


def test_pytorchs_submodules_import_the_same_objects():
    from fw_core.utils.data.dataloader import DataLoader, default_collate, get_worker_info
    from fw_core.utils.data.dataset import Subset
    from fw_core.utils.data.sampler import BatchSampler

    assert DataLoader is fw.data.DataLoader and default_collate is fw.data.default_collate
    assert get_worker_info is fw.data.get_worker_info
    assert Subset is fw.data.Subset and BatchSampler is fw.data.BatchSampler


def test_a_name_fw_lacks_raises_missing_name_error():
    with pytest.raises(MissingNameError, match="fw has no utils.data.IterDataPipe yet"):
        fw.utils.data.IterDataPipe  # noqa: B018
    with pytest.raises(MissingNameError, match="fw has no utils.tensorboard"):
        fw.utils.tensorboard  # noqa: B018
    assert not hasattr(fw.utils.data, "DataPipe")  # an AttributeError, so hasattr works


class Count(IterableDataset):
    def __init__(self, start, stop):
        self.start, self.stop = start, stop

    def __iter__(self):
        return iter(range(self.start, self.stop))

    def __len__(self):
        return self.stop - self.start


class TorchCount(torch.utils.data.IterableDataset):
    def __init__(self, start, stop):
        self.start, self.stop = start, stop

    def __iter__(self):
        return iter(range(self.start, self.stop))

    def __len__(self):
        return self.stop - self.start


def test_chain_dataset_reads_streams_in_turn_as_torch():
    ours = ChainDataset([Count(0, 3), Count(10, 12)])
    theirs = torch.utils.data.ChainDataset([TorchCount(0, 3), TorchCount(10, 12)])
    assert list(ours) == list(theirs) == [0, 1, 2, 10, 11]
    assert len(ours) == len(theirs) == 5
    assert list(Count(0, 2) + Count(5, 6)) == list(TorchCount(0, 2) + TorchCount(5, 6))
    batches = [b.tolist() for b in fw.data.DataLoader(ours, batch_size=2)]
    assert batches == [[0, 1], [2, 10], [11]]
    with pytest.raises(DataError, match="IterableDatasets only, got a TensorDataset"):
        ChainDataset([TensorDataset(fw.zeros(2))])


def test_stack_dataset_gives_tuples_or_dicts_as_torch():
    x, y = np.arange(6.0).reshape(3, 2), np.array([4, 5, 6])
    ours = StackDataset(TensorDataset(fw.tensor(x)), TensorDataset(fw.tensor(y)))
    theirs = torch.utils.data.StackDataset(torch.utils.data.TensorDataset(torch.tensor(x)),
                                           torch.utils.data.TensorDataset(torch.tensor(y)))
    assert len(ours) == len(theirs) == 3
    (a,), (b,) = ours[1]
    (ta,), (tb,) = theirs[1]
    assert a.tolist() == ta.tolist() and b.item() == tb.item()
    keyed = StackDataset(image=TensorDataset(fw.tensor(x)), label=[7, 8, 9])
    assert keyed[2]["label"] == torch.utils.data.StackDataset(image=x, label=[7, 8, 9])[2]["label"]
    batch = next(iter(fw.data.DataLoader(keyed, batch_size=3)))
    assert batch["label"].tolist() == [7, 8, 9] and batch["image"][0].shape == (3, 2)


def test_stack_dataset_batches_in_one_step_when_every_member_can():
    x, y = fw.arange(10).reshape(5, 2), fw.arange(5)
    stacked = StackDataset(TensorDataset(x), TensorDataset(y))
    fast = stacked.get_batch([4, 0])
    assert fast[0][0].tolist() == [[8, 9], [0, 1]] and fast[1][0].tolist() == [4, 0]
    assert StackDataset(TensorDataset(x), list(range(5))).get_batch([1]) is None


@pytest.mark.parametrize("args,kwargs,match", [
    ((), {}, "at least one dataset"),
    (([1, 2],), {"b": [1, 2]}, "not both"),
    (([1, 2], [1]), {}, r"lengths differ: \[2, 1\]"),
])
def test_stack_dataset_refuses_what_torch_refuses(args, kwargs, match):
    with pytest.raises(DataError, match=match):
        StackDataset(*args, **kwargs)
    if args or kwargs:  # torch takes an empty StackDataset
        with pytest.raises(ValueError):
            torch.utils.data.StackDataset(*args, **kwargs)


def test_a_sampler_subclass_may_pass_its_data_source_up():
    class EvensFirst(fw.data.Sampler):
        def __init__(self, data_source):
            super().__init__(data_source)
            self.n = len(data_source)

        def __iter__(self):
            return iter([*range(0, self.n, 2), *range(1, self.n, 2)])

        def __len__(self):
            return self.n

    ds = TensorDataset(fw.arange(5))
    loader = fw.data.DataLoader(ds, batch_size=5, sampler=EvensFirst(ds))
    assert next(iter(loader))[0].tolist() == [0, 2, 4, 1, 3]
