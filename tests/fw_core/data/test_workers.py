"""The DataLoader's worker threads as PyTorch programs use them: get_worker_info,
worker_init_fn, persistent_workers, timeout, and the options PyTorch refuses without workers."""

import threading
import time

import pytest
import torch

import fw_core as fw
from fw_core.data import (
    DataError,
    DataLoader,
    Dataset,
    IterableDataset,
    LoaderTimeoutError,
    WorkerInitError,
    get_worker_info,
)


class WhoLoads(Dataset):
    """Sample i is (i, the id of the worker that loaded it or -1, its num_workers or -1)."""

    def __len__(self):
        return 8

    def __getitem__(self, index):
        info = get_worker_info()
        return index, -1 if info is None else info.id, -1 if info is None else info.num_workers


def test_get_worker_info_is_none_outside_workers_and_names_the_worker_inside():
    assert get_worker_info() is None
    ids, counts = set(), set()
    for _, worker, count in DataLoader(WhoLoads(), batch_size=2):
        ids |= set(worker.tolist())
        counts |= set(count.tolist())
    assert ids == {-1} and counts == {-1}  # num_workers=0: loaded in the loop
    ids, counts = set(), set()
    ds = WhoLoads()
    for _, worker, count in DataLoader(ds, batch_size=1, num_workers=3):
        ids |= set(worker.tolist())
        counts |= set(count.tolist())
    assert ids <= {0, 1, 2} and counts == {3}


def test_worker_info_dataset_and_seed_follow_pytorch():
    seen = []

    class Record(WhoLoads):
        def __getitem__(self, index):
            seen.append(get_worker_info())
            return index

    ds = Record()
    fw.manual_seed(0)
    list(DataLoader(ds, batch_size=2, num_workers=2))
    assert all(info.dataset is ds for info in seen)
    bases = {info.seed - info.id for info in seen}
    assert len(bases) == 1  # each worker's seed is the epoch's base seed plus its id


def test_a_sharded_iterable_dataset_is_read_once():
    class Sharded(IterableDataset):
        """The sharding PyTorch's docs show: each worker takes its slice of the range."""

        def __iter__(self):
            info = get_worker_info()
            if info is None:
                return iter(range(10))
            return iter(range(info.id, 10, info.num_workers))

    for workers in (0, 1, 4):
        got = [x for batch in DataLoader(Sharded(), batch_size=3, num_workers=workers)
               for x in batch.tolist()]
        assert got == list(range(10))


def test_worker_init_fn_runs_once_in_each_new_worker_thread():
    started, lock = [], threading.Lock()

    def init(worker_id):
        with lock:
            started.append((worker_id, threading.current_thread().name))

    loader = DataLoader(WhoLoads(), batch_size=1, num_workers=2, worker_init_fn=init)
    list(loader)
    assert sorted(w for w, _ in started) == [0, 1]
    assert all(name.startswith("fw-data") for _, name in started)
    list(loader)  # a new epoch starts new threads
    assert len(started) == 4


def test_persistent_workers_keep_their_threads_between_epochs():
    started = []
    loader = DataLoader(WhoLoads(), batch_size=1, num_workers=2, persistent_workers=True,
                        worker_init_fn=started.append)
    first = [b[0].tolist() for b in loader]
    second = [b[0].tolist() for b in loader]
    assert first == second == [[i] for i in range(8)]
    assert sorted(started) == [0, 1]  # init ran once per thread, not per epoch


def test_persistent_workers_follow_the_grad_mode_of_each_epoch():
    class Grad(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, index):
            return float(fw.is_grad_enabled())

    loader = DataLoader(Grad(), batch_size=2, num_workers=1, persistent_workers=True)
    assert next(iter(loader)).tolist() == [1.0, 1.0]
    with fw.no_grad():
        assert next(iter(loader)).tolist() == [0.0, 0.0]


def test_a_failing_worker_init_fn_is_reported_with_its_traceback():
    def init(worker_id):
        raise KeyError("no shard file")

    with pytest.raises(WorkerInitError, match="worker_init_fn raised KeyError") as caught:
        list(DataLoader(WhoLoads(), batch_size=1, num_workers=1, worker_init_fn=init))
    assert isinstance(caught.value, RuntimeError)
    assert isinstance(caught.value.original, KeyError)
    assert "no shard file" in str(caught.value) and "original traceback" in str(caught.value)


def test_timeout_raises_a_runtime_error_when_a_batch_is_late():
    class Slow(WhoLoads):
        def __getitem__(self, index):
            time.sleep(0.5)
            return index

    with pytest.raises(LoaderTimeoutError, match="timed out after 0.05 seconds") as caught:
        list(DataLoader(Slow(), batch_size=1, num_workers=1, timeout=0.05))
    assert isinstance(caught.value, RuntimeError)  # as PyTorch raises
    assert len(list(DataLoader(WhoLoads(), batch_size=4, num_workers=1, timeout=5))) == 2


@pytest.mark.parametrize("kwargs,match", [
    ({"timeout": -1}, "timeout must be a number of seconds >= 0"),
    ({"persistent_workers": True}, "persistent_workers needs num_workers > 0"),
    ({"multiprocessing_context": "spawn"}, "multiprocessing_context needs num_workers > 0"),
])
def test_worker_options_pytorch_refuses_are_refused(kwargs, match):
    with pytest.raises(DataError, match=match):
        DataLoader(WhoLoads(), **kwargs)
    with pytest.raises(ValueError):  # PyTorch raises ValueError for each of these
        torch.utils.data.DataLoader(range(3), **kwargs)


def test_a_worker_init_fn_that_cannot_be_called_is_refused_before_any_batch():
    # PyTorch finds out in the first worker; fw when the loader is made
    with pytest.raises(DataError, match="worker_init_fn must be callable, got int"):
        DataLoader(WhoLoads(), num_workers=1, worker_init_fn=3)


def test_the_signature_takes_pytorchs_positional_order():
    # dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn,
    # pin_memory, drop_last, timeout, worker_init_fn, multiprocessing_context, generator
    g = fw.Generator(3)
    loader = DataLoader(WhoLoads(), 4, True, None, None, 1, None, False, True, 10, None,
                        "spawn", g, prefetch_factor=1, pin_memory_device="", in_order=False)
    assert loader.generator is g and loader.timeout == 10 and loader.drop_last
    assert sorted(x for b in loader for x in b[0].tolist()) == list(range(8))
