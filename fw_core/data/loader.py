"""DataLoader: batches from a dataset, in order, optionally prefetched by worker threads.

Workers are threads, not processes: NumPy, file reads and image decoding release the GIL, and
threads share the dataset without pickling it. ``num_workers`` threads fetch and collate up to
``num_workers * prefetch_factor`` batches ahead; batches still come out in sampler order
(:mod:`fw_core.data.workers`).

Randomness is reproducible whatever ``num_workers`` is: each epoch draws one base seed from the
loader's generator (default ``fw.random.default_generator``), and batch ``k`` gets its own
stream derived from (base seed, k). Random transforms that were given no generator draw from
that stream (:func:`sample_generator`), so the same seed gives the same augmented batches with
0, 1 or 8 workers.
"""

from __future__ import annotations

__all__ = ["DataLoader", "default_collate", "default_convert", "sample_generator"]

import contextlib
import numbers
import threading
import traceback
from collections.abc import Iterator
from functools import partial
from itertools import count

import numpy as np

from .. import random as _random
from ..device import get as get_device
from ..errors import FwError
from ..ops.meta import describe, located
from .collate import default_collate, default_convert
from .dataset import IterableDataset, length_of
from .errors import DataError, SampleError
from .sampler import BatchSampler, RandomSampler, SequentialSampler
from .staging import one_ahead
from .workers import Workers, run

# -- per-batch random streams --------------------------------------------------------------------
_local = threading.local()


def sample_generator() -> _random.Generator:
    """The generator a random transform draws from when it was given none.

    Inside a DataLoader: the stream of the batch being loaded (derived from the epoch's base
    seed and the batch number, the same with or without workers). Elsewhere:
    ``fw.random.default_generator``.
    """
    seed = getattr(_local, "seed", None)
    if seed is None:
        return _random.default_generator
    if _local.generator is None:
        state = np.random.SeedSequence(seed).generate_state(1, np.uint64)
        _local.generator = _random.Generator(int(state[0]))
    return _local.generator


@contextlib.contextmanager
def _batch_stream(seed: tuple[int, int]):
    saved = getattr(_local, "seed", None), getattr(_local, "generator", None)
    _local.seed, _local.generator = seed, None
    try:
        yield
    finally:
        _local.seed, _local.generator = saved


# -- fetching one batch ----------------------------------------------------------------------------
_END = object()  # a stream task's result once the iterable dataset is exhausted


def _sample_error(dataset, index, exc: Exception, batch_no: int, what: str) -> SampleError:
    thread = threading.current_thread()
    where = ("the main thread" if thread is threading.main_thread()
             else f"loader worker thread {thread.name!r}")
    return SampleError(
        f"{what} {index} of {type(dataset).__name__} raised {type(exc).__name__}: {exc}",
        index=index, original=exc, traceback="".join(traceback.format_exception(exc)),
        inputs=f"batch {batch_no}, loaded in {where}",
        hint=f"reproduce it outside the loader with dataset[{index}]" if what == "sample"
        else "iterate the dataset itself to reproduce it")


def _read(dataset, index, batch_no: int):
    try:
        return dataset[index]
    except Exception as exc:
        raise _sample_error(dataset, index, exc, batch_no, "sample") from None


def _fetch_indices(dataset, fast, collate, indices: list, seed, batch_no: int):
    """One batch of a map-style dataset: its ``get_batch`` fast path where it gives one, else
    the samples (from ``__getitems__(indices)`` where the dataset defines it, as PyTorch's
    fetcher reads them) passed to ``collate``."""
    with _batch_stream(seed):
        batch = _read_many(dataset, fast, indices, batch_no)
        if batch is not None:
            return batch
        samples = _read_many(dataset, getattr(dataset, "__getitems__", None), indices, batch_no)
        if samples is None:
            samples = [_read(dataset, index, batch_no) for index in indices]
        return collate(samples)


def _read_many(dataset, read, indices: list, batch_no: int):
    """``read(indices)``, None where there is no ``read``."""
    if read is None:
        return None
    try:
        return read(indices)
    except Exception as exc:
        raise _sample_error(dataset, indices, exc, batch_no, "samples") from None


def _fetch_index(dataset, collate, index, seed, sample_no: int):
    """One sample of a map-style dataset, passed to ``collate`` alone (no automatic
    batching: ``batch_size=None``)."""
    with _batch_stream(seed):
        return collate(_read(dataset, index, sample_no))


def _fetch_stream(dataset, iterator, batch_size: int | None, drop_last: bool, collate, seed,
                  batch_no: int):
    """The next ``batch_size`` samples of a stream, collated; with ``batch_size`` None the
    next sample alone, passed to ``collate``. ``_END`` once the stream has nothing left (or,
    with ``drop_last``, only a partial batch)."""
    wanted = 1 if batch_size is None else batch_size
    samples = []
    with _batch_stream(seed):
        while len(samples) < wanted:
            try:
                samples.append(next(iterator))
            except StopIteration:
                break
            except Exception as exc:
                position = batch_no * wanted + len(samples)
                raise _sample_error(dataset, position, exc, batch_no,
                                    "stream sample") from None
        if not samples or (drop_last and len(samples) < wanted):
            return _END
        return collate(samples) if batch_size is not None else collate(samples[0])


# -- the loader ----------------------------------------------------------------------------------
class DataLoader:
    """Iterate a dataset in batches.

    Args:
        dataset: a map-style :class:`~fw_core.data.Dataset` (``len`` and ``ds[i]``) or an
            :class:`~fw_core.data.IterableDataset` (batched in stream order).
        batch_size: samples per batch; None turns automatic batching off: each sample (each
            index of the sampler, or each item of a stream) passes through ``collate_fn`` on
            its own (default then :func:`default_convert`), as in PyTorch.
        shuffle: visit samples in a new random order each epoch (a RandomSampler drawing from
            ``generator``).
        sampler: the order of indices (excludes ``shuffle``).
        batch_sampler: yields whole index lists (excludes batch_size, shuffle, sampler and
            drop_last).
        num_workers: threads that load batches in the background (0: load in the loop).
        collate_fn: turns a list of samples into a batch (default :func:`default_collate`),
            or with ``batch_size=None`` one sample into what the loop receives.
        pin_memory: accepted for PyTorch compatibility; a no-op. Page-locked staging is the
            device's business: with ``device="cuda"`` every batch goes through pinned buffers.
        device: put every batch's tensors on this device (``"cuda"``, ``"cuda:1"``), batch
            k+1's copies started before batch k is handed out, so a device with asynchronous
            copies (cuda: pinned buffer, copy stream) moves the next batch while the loop
            trains on this one. None: batches stay where collate made them (the CPU).
        drop_last: drop the last batch when it is smaller than ``batch_size`` (refused with
            ``batch_size=None``).
        timeout: seconds to wait for a batch from the workers before a LoaderTimeoutError
            (0: no limit; only with num_workers > 0, as in PyTorch).
        worker_init_fn: ``fn(worker_id)``, run in each worker thread as it starts (where
            :func:`~fw_core.data.get_worker_info` already answers).
        multiprocessing_context: accepted for PyTorch compatibility (it needs num_workers > 0,
            as there); fw's workers are threads, so there is no process start method to pick.
        generator: the random stream for shuffling and for the per-batch streams of random
            transforms (default ``fw.random.default_generator``; one draw per epoch).
        prefetch_factor: batches each worker loads ahead (default 2; needs num_workers > 0).
        persistent_workers: keep the worker threads from one epoch to the next (needs
            num_workers > 0): ``worker_init_fn`` then runs once per thread, not per epoch.
        pin_memory_device: accepted for PyTorch compatibility (deprecated there); a no-op,
            as ``pin_memory`` is.
        in_order: accepted for PyTorch compatibility; batches always come in sampler order
            (what ``in_order=False`` allows, never requires).

    An IterableDataset is read by one background thread whatever ``num_workers`` says (one
    iterator cannot be shared and keep its order); that thread still overlaps loading with
    the loop's work.

    Errors in the dataset arrive in the loop as :class:`~fw_core.data.errors.SampleError`
    naming the sample index, the batch and the original traceback.

    >>> loader = fw.data.DataLoader(ds, batch_size=32, shuffle=True, num_workers=2)
    >>> for x, y in loader: ...
    >>> on_gpu = fw.data.DataLoader(ds, batch_size=32, device="cuda")  # copies overlap compute
    """

    def __init__(self, dataset, batch_size: int = 1, shuffle: bool = False, sampler=None,
                 batch_sampler=None, num_workers: int = 0, collate_fn=None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn=None, multiprocessing_context=None,
                 generator: _random.Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True, device=None):
        arguments = {"dataset": dataset, "batch_size": batch_size, "shuffle": shuffle,
                     "sampler": sampler, "batch_sampler": batch_sampler,
                     "num_workers": num_workers, "prefetch_factor": prefetch_factor}
        try:
            self._check_arguments(dataset, collate_fn, sampler, batch_sampler)
        except FwError as err:
            raise located(err, "DataLoader", **arguments) from None
        self.dataset = dataset
        self.device = None if device is None else get_device(device)
        self.num_workers = _count(num_workers, "num_workers", 0, arguments)
        if prefetch_factor is not None and self.num_workers == 0:
            raise _bad("prefetch_factor needs num_workers > 0",
                       "pass num_workers=2 (or more), or drop prefetch_factor", arguments)
        self.prefetch_factor = (None if self.num_workers == 0 else
                                _count(2 if prefetch_factor is None else prefetch_factor,
                                       "prefetch_factor", 1, arguments))
        self._check_workers(timeout, worker_init_fn, multiprocessing_context,
                            persistent_workers, arguments)
        self.timeout, self.worker_init_fn = timeout, worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = bool(persistent_workers)
        self._workers: Workers | None = None  # the threads kept between epochs, if persistent
        if collate_fn is None:
            collate_fn = default_convert if batch_size is None else default_collate
        self.collate_fn = collate_fn
        self.pin_memory, self.pin_memory_device = pin_memory, pin_memory_device
        self.in_order = in_order
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable and (shuffle or sampler is not None or batch_sampler is not None):
            raise _bad("an IterableDataset has no indices, so shuffle, sampler and "
                       "batch_sampler do not apply to it",
                       "shuffle inside the dataset's __iter__, or use a map-style Dataset",
                       arguments)
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise _bad("batch_sampler already decides batch size, order and dropping",
                           "do not pass batch_size, shuffle, sampler or drop_last with it; "
                           "give them to the batch sampler instead", arguments)
            self.batch_size, self.drop_last = None, False
            self.sampler, self.batch_sampler = None, batch_sampler
            return
        if shuffle and sampler is not None:
            raise _bad("shuffle=True and a sampler both decide the order",
                       "pass one of them (e.g. RandomSampler(ds) as the sampler)", arguments)
        if batch_size is None and drop_last:
            raise _bad("batch_size=None turns automatic batching off, so there is no last "
                       "batch for drop_last to drop", "drop drop_last, or pass a batch_size",
                       arguments)
        self.batch_size = None if batch_size is None else _count(batch_size, "batch_size", 1,
                                                                 arguments)
        self.drop_last = bool(drop_last)
        self.sampler = self.batch_sampler = None
        if self._iterable:
            return
        if sampler is None:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        self.sampler = sampler
        if self.batch_size is not None:
            self.batch_sampler = BatchSampler(sampler, self.batch_size, self.drop_last)

    @staticmethod
    def _check_arguments(dataset, collate_fn, sampler, batch_sampler) -> None:
        """Refuse a dataset, collate_fn or sampler that cannot work, before any batch."""
        if not isinstance(dataset, IterableDataset):
            if not hasattr(dataset, "__getitem__"):
                raise DataError(f"the dataset ({type(dataset).__name__}) has no __getitem__ (as a "
                                "map-style dataset has) and is not an IterableDataset",
                                hint="pass a Dataset (len and ds[i]), an IterableDataset, or a "
                                "list of samples")
            if hasattr(dataset, "__len__"):
                length_of(dataset, "DataLoader")  # a negative length fails here, not mid-epoch
        if collate_fn is not None and not callable(collate_fn):
            raise DataError(f"collate_fn must be callable, got {type(collate_fn).__name__}",
                            hint="pass a function taking a list of samples, or None for "
                            "default_collate")
        for name, value in (("sampler", sampler), ("batch_sampler", batch_sampler)):
            if value is not None and not hasattr(value, "__iter__"):
                raise DataError(f"{name} must be iterable (yielding indices), got "
                                f"{type(value).__name__}",
                                hint=f"pass a Sampler, a list or a range as {name}")

    def _check_workers(self, timeout, worker_init_fn, multiprocessing_context,
                       persistent_workers, arguments) -> None:
        """Refuse the worker options PyTorch refuses (each needs worker threads to act on)."""
        if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real) or timeout < 0:
            raise _bad(f"timeout must be a number of seconds >= 0, got {timeout!r}",
                       "pass timeout=0 (wait without limit) or a positive number", arguments)
        if worker_init_fn is not None and not callable(worker_init_fn):
            raise _bad(f"worker_init_fn must be callable, got {type(worker_init_fn).__name__}",
                       "pass a function taking the worker id, or None", arguments)
        for name, value in (("persistent_workers", persistent_workers),
                            ("multiprocessing_context", multiprocessing_context)):
            if value and self.num_workers == 0:
                raise _bad(f"{name} needs num_workers > 0", f"pass num_workers=2 (or more), "
                           f"or drop {name}", arguments)

    def __len__(self) -> int:
        """Batches per epoch, or samples with ``batch_size=None`` (an IterableDataset needs
        ``__len__`` for this)."""
        if not self._iterable:
            return length_of(self.sampler if self.batch_sampler is None else self.batch_sampler)
        n = length_of(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self) -> Iterator:
        base = int((self.generator or _random.default_generator).numpy.integers(2 ** 63))
        if self._iterable:
            step = partial(_fetch_stream, self.dataset, iter(self.dataset), self.batch_size,
                           self.drop_last, self.collate_fn)
            tasks = (partial(step, (base, k), k) for k in count())
            readers = min(self.num_workers, 1)  # one iterator: one reader keeps the order
        elif self.batch_sampler is None:
            step = partial(_fetch_index, self.dataset, self.collate_fn)
            tasks = (partial(step, index, (base, k), k) for k, index in enumerate(self.sampler))
            readers = self.num_workers
        else:
            fast = (getattr(self.dataset, "get_batch", None)
                    if self.collate_fn is default_collate else None)
            step = partial(_fetch_indices, self.dataset, fast, self.collate_fn)
            tasks = (partial(step, list(indices), (base, k), k)
                     for k, indices in enumerate(self.batch_sampler))
            readers = self.num_workers
        workers = self._workers
        if workers is None and readers:
            workers = Workers(readers, self.dataset, self.worker_init_fn)
            workers.base_seed = base
            if self.persistent_workers:
                self._workers = workers
        depth = readers * (self.prefetch_factor or 0)
        batches = run(tasks, workers, depth, self.timeout, _END, keep=self.persistent_workers)
        return batches if self.device is None else one_ahead(batches, self.device)


def _bad(message: str, hint: str, arguments: dict) -> DataError:
    return DataError(message, op="DataLoader", inputs=describe(**arguments), hint=hint)


def _count(value, name: str, minimum: int, arguments: dict) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise _bad(f"{name} must be an integer >= {minimum}, got {value!r}",
                   f"pass {name}={max(minimum, 1)} or more" if minimum else
                   f"pass {name}=0 (load in the loop) or a number of worker threads",
                   arguments)
    return int(value)
