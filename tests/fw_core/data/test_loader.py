"""DataLoader: order, shuffling, batching, collation, worker threads and their errors."""

import collections
import threading
import time

import numpy as np
import pytest

import fw_core as fw
from fw_core.data import (
    ArrayDataset,
    BatchSampler,
    DataError,
    DataLoader,
    Dataset,
    IterableDataset,
    SampleError,
    TensorDataset,
    UnsizedError,
    default_collate,
    sample_generator,
)
from fw_core.data.transforms import Lambda


class Numbers(Dataset):
    """Sample i is (i as float array [i, -i], label i); optional sleep and failure."""

    def __init__(self, n, fail_at=None, delay=None):
        self.n, self.fail_at, self.delay = n, fail_at, delay
        self.accessed = []
        self._lock = threading.Lock()

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        with self._lock:
            self.accessed.append(i)
        if self.delay is not None:
            time.sleep(self.delay(i))
        if i == self.fail_at:
            explode(i)
        return np.array([i, -i], dtype=np.float32), i


def explode(i):
    raise ValueError(f"boom at {i}")


class Stream(IterableDataset):
    def __init__(self, n, fail_at=None, sized=True):
        self.n, self.fail_at, self.sized = n, fail_at, sized

    def __iter__(self):
        for i in range(self.n):
            if i == self.fail_at:
                explode(i)
            yield i

    def __len__(self):
        if not self.sized:
            raise TypeError("no length")
        return self.n


def labels(loader):
    return [y.tolist() for _, y in loader]


def test_batches_come_in_order_and_the_last_may_be_short():
    loader = DataLoader(Numbers(10), batch_size=3)
    batches = list(loader)
    assert len(loader) == 4 and len(batches) == 4
    assert [y.tolist() for _, y in batches] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    x, y = batches[1]
    assert x.shape == (3, 2) and x.dtype == fw.float32 and y.dtype == fw.int64
    np.testing.assert_array_equal(x.numpy(), [[3, -3], [4, -4], [5, -5]])


def test_drop_last_drops_the_short_batch():
    loader = DataLoader(Numbers(10), batch_size=3, drop_last=True)
    assert len(loader) == 3 and labels(loader) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]


def test_shuffle_is_fixed_by_the_generator_seed():
    def order(seed):
        return sum(labels(DataLoader(Numbers(20), batch_size=4, shuffle=True,
                                     generator=fw.Generator(seed))), [])

    assert order(3) == order(3)
    assert order(3) != order(4)
    assert sorted(order(3)) == list(range(20)) and order(3) != list(range(20))


def test_shuffle_follows_manual_seed_and_epochs_differ():
    loader = DataLoader(Numbers(30), batch_size=30, shuffle=True)
    fw.manual_seed(5)
    first, second = labels(loader), labels(loader)
    fw.manual_seed(5)
    assert labels(loader) == first and first != second


def test_custom_collate_receives_the_list_of_samples():
    seen = []

    def collate(samples):
        seen.append(len(samples))
        return [label for _, label in samples]

    assert list(DataLoader(Numbers(5), batch_size=2, collate_fn=collate)) == [[0, 1], [2, 3],
                                                                              [4]]
    assert seen == [2, 2, 1]


def test_fast_path_matches_sample_by_sample_collation():
    x = np.random.default_rng(0).normal(size=(11, 3)).astype(np.float32)
    ds = TensorDataset(x, np.arange(11))
    fast = list(DataLoader(ds, batch_size=4, shuffle=True, generator=fw.Generator(1)))
    slow = list(DataLoader(ds, batch_size=4, shuffle=True, generator=fw.Generator(1),
                           collate_fn=lambda s: default_collate(s)))
    for (fx, fy), (sx, sy) in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(fx.numpy(), sx.numpy())
        assert fy.tolist() == sy.tolist() and fx.dtype == sx.dtype and fy.dtype == sy.dtype


def test_batch_sampler_and_sampler_arguments():
    loader = DataLoader(Numbers(6), batch_sampler=[[5, 0], [3]])
    assert labels(loader) == [[5, 0], [3]] and len(loader) == 2
    loader = DataLoader(Numbers(6), batch_sampler=BatchSampler(range(6), 4, drop_last=True))
    assert labels(loader) == [[0, 1, 2, 3]]
    assert labels(DataLoader(Numbers(6), sampler=[4, 2, 0], batch_size=2)) == [[4, 2], [0]]


@pytest.mark.parametrize("kwargs, match", [
    ({"batch_size": 0}, "batch_size"),
    ({"batch_size": 2.0}, "batch_size"),
    ({"num_workers": -1}, "num_workers"),
    ({"prefetch_factor": 2}, "prefetch_factor needs num_workers"),
    ({"num_workers": 1, "prefetch_factor": 0}, "prefetch_factor"),
    ({"shuffle": True, "sampler": [0, 1]}, "shuffle=True and a sampler"),
    ({"batch_sampler": [[0]], "batch_size": 2}, "batch_sampler"),
    ({"batch_sampler": [[0]], "drop_last": True}, "batch_sampler"),
])
def test_conflicting_or_bad_arguments_raise(kwargs, match):
    with pytest.raises(DataError, match=match):
        DataLoader(Numbers(4), **kwargs)


def test_pin_memory_is_accepted_as_a_no_op():
    assert labels(DataLoader(Numbers(3), batch_size=3, pin_memory=True)) == [[0, 1, 2]]


# -- collation -------------------------------------------------------------------------------------
def test_default_collate_numbers_keep_fw_dtypes():
    assert default_collate([1, 2]).dtype == fw.int64
    assert default_collate([1.5, 2]).dtype == fw.float32
    assert default_collate([True, False]).tolist() == [True, False]
    assert default_collate([np.float64(1), np.float64(2)]).dtype == fw.float64
    assert default_collate([np.int32(1), np.int32(2)]).dtype == fw.int32


def test_default_collate_arrays_and_tensors_stack():
    batch = default_collate([np.zeros((2, 2), np.uint8), np.ones((2, 2), np.uint8)])
    assert batch.shape == (2, 2, 2) and batch.dtype == fw.uint8
    stacked = default_collate([fw.tensor([1.0, 2.0]), fw.tensor([3.0, 4.0])])
    assert stacked.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_default_collate_structures():
    Pair = collections.namedtuple("Pair", "image label")
    out = default_collate([Pair(np.zeros(3), 1), Pair(np.ones(3), 2)])
    assert isinstance(out, Pair) and out.label.tolist() == [1, 2]
    out = default_collate([{"x": 1.0, "name": "a"}, {"x": 2.0, "name": "b"}])
    assert out["x"].tolist() == [1.0, 2.0] and out["name"] == ["a", "b"]
    out = default_collate([[1, (2.0, "s")], [3, (4.0, "t")]])
    assert isinstance(out, list) and out[0].tolist() == [1, 3]
    assert out[1][0].tolist() == [2.0, 4.0] and out[1][1] == ["s", "t"]


def test_default_collate_names_the_sample_that_does_not_fit():
    with pytest.raises(DataError, match=r"sample 2 of the batch is a ndarray of shape \(3,\)"):
        default_collate([np.zeros(2), np.zeros(2), np.zeros(3)])
    with pytest.raises(DataError, match="sample 1 .* shape"):
        default_collate([fw.zeros(2), fw.zeros(3)])
    with pytest.raises(DataError, match="sample 1 .* keys"):
        default_collate([{"a": 1}, {"b": 1}])
    with pytest.raises(DataError, match="sample 1 .* 2 fields"):
        default_collate([(1, 2), (1,)])
    with pytest.raises(DataError, match="sample 1 .* str"):
        default_collate([1, "a"])
    with pytest.raises(DataError, match="cannot batch samples of type object"):
        default_collate([object(), object()])
    with pytest.raises(DataError, match="non-empty"):
        default_collate([])


# -- workers ---------------------------------------------------------------------------------------
def test_workers_keep_the_order_when_batches_finish_out_of_order():
    slow_first = Numbers(40, delay=lambda i: 0.02 if i % 8 < 4 else 0.0)
    threaded = labels(DataLoader(slow_first, batch_size=4, num_workers=4))
    assert threaded == labels(DataLoader(Numbers(40), batch_size=4))
    shuffled = [labels(DataLoader(Numbers(40), batch_size=4, shuffle=True, num_workers=w,
                                  generator=fw.Generator(9))) for w in (0, 3)]
    assert shuffled[0] == shuffled[1]


def test_workers_prefetch_a_bounded_number_of_batches():
    ds = Numbers(100)
    it = iter(DataLoader(ds, batch_size=2, num_workers=2, prefetch_factor=3))
    next(it)
    deadline = time.monotonic() + 5
    while len(ds.accessed) < 14 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    # the batch handed out plus num_workers * prefetch_factor = 6 batches in flight
    assert len(ds.accessed) == 14
    it.close()


def test_worker_error_names_the_sample_and_keeps_the_traceback():
    loader = DataLoader(Numbers(20, fail_at=13), batch_size=4, num_workers=3)
    with pytest.raises(SampleError) as info:
        list(loader)
    err = info.value
    assert err.index == 13 and isinstance(err.original, ValueError)
    assert "sample 13 of Numbers raised ValueError: boom at 13" in str(err)
    assert "batch 3" in str(err) and "worker thread" in str(err)
    assert "in explode" in err.traceback and "boom at 13" in err.traceback
    assert "in explode" in str(err)


def test_main_thread_error_is_reported_the_same_way():
    with pytest.raises(SampleError, match="sample 13") as info:
        list(DataLoader(Numbers(20, fail_at=13), batch_size=4))
    assert "main thread" in str(info.value) and info.value.index == 13


def test_fast_path_errors_name_the_batch_indices():
    ds = TensorDataset(fw.zeros(4))
    with pytest.raises(SampleError, match=r"samples \[2, 9\]"):
        list(DataLoader(ds, batch_sampler=[[2, 9]]))


def test_breaking_out_early_stops_the_worker_threads():
    loader = DataLoader(Numbers(200, delay=lambda i: 0.001), batch_size=2, num_workers=3)
    for k, _ in enumerate(loader):
        if k == 2:
            break
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(
            t.name.startswith("fw-data") for t in threading.enumerate()):
        time.sleep(0.01)
    assert not any(t.name.startswith("fw-data") for t in threading.enumerate())


# -- iterable datasets -----------------------------------------------------------------------------
@pytest.mark.parametrize("workers", [0, 2])
def test_iterable_dataset_batches_the_stream_in_order(workers):
    loader = DataLoader(Stream(7), batch_size=3, num_workers=workers)
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(loader) == 3
    dropped = DataLoader(Stream(7), batch_size=3, drop_last=True, num_workers=workers)
    assert [b.tolist() for b in dropped] == [[0, 1, 2], [3, 4, 5]] and len(dropped) == 2


def test_iterable_dataset_without_length():
    loader = DataLoader(Stream(5, sized=False), batch_size=2)
    with pytest.raises(UnsizedError, match="Stream has no length"):
        len(loader)
    assert [b.tolist() for b in list(loader)] == [[0, 1], [2, 3], [4]]


@pytest.mark.parametrize("workers", [0, 1])
def test_iterable_dataset_error_names_the_stream_position(workers):
    with pytest.raises(SampleError, match="stream sample 4") as info:
        list(DataLoader(Stream(9, fail_at=4), batch_size=3, num_workers=workers))
    assert info.value.index == 4 and "in explode" in info.value.traceback


def test_iterable_dataset_refuses_shuffle_and_samplers():
    for kwargs in ({"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}):
        with pytest.raises(DataError, match="IterableDataset"):
            DataLoader(Stream(3), **kwargs)


# -- randomness in transforms ----------------------------------------------------------------------
def _noisy_dataset():
    def jitter(sample):
        return sample + sample_generator().numpy.normal(size=sample.shape).astype(np.float32)

    return ArrayDataset(np.zeros((24, 3), np.float32), np.arange(24), transform=Lambda(jitter))


def test_random_transforms_repeat_with_any_number_of_workers():
    runs = [[x.numpy() for x, _ in DataLoader(_noisy_dataset(), batch_size=5, shuffle=True,
                                              num_workers=w, generator=fw.Generator(2))]
            for w in (0, 1, 4)]
    for other in runs[1:]:
        for a, b in zip(runs[0], other, strict=True):
            np.testing.assert_array_equal(a, b)
    assert not np.array_equal(runs[0][0][0], runs[0][0][1])  # each sample draws its own noise


def test_random_transforms_differ_between_epochs():
    loader = DataLoader(_noisy_dataset(), batch_size=24, generator=fw.Generator(0))
    first, second = next(iter(loader))[0].numpy(), next(iter(loader))[0].numpy()
    assert not np.array_equal(first, second)


def test_sample_generator_outside_a_loader_is_the_default():
    assert sample_generator() is fw.random.default_generator
