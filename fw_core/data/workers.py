"""The DataLoader's worker threads: running batch tasks ahead of the loop, in order.

Workers are threads (see :mod:`fw_core.data.loader`). Each one knows who it is while it loads:
:func:`get_worker_info` gives its id, the number of workers, its seed and the dataset, as
``torch.utils.data.get_worker_info`` does inside a worker process, and None in the thread
that iterates the loader. ``worker_init_fn(worker_id)`` runs in each worker as it starts. A
loader with ``persistent_workers=True`` keeps its threads from one epoch to the next (so
``worker_init_fn`` runs once per thread); otherwise each epoch starts new ones.
"""

from __future__ import annotations

__all__ = ["WorkerInfo", "get_worker_info"]

import concurrent.futures
import threading
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from itertools import count, islice

from ..autograd.grad_mode import is_grad_enabled, set_grad_enabled
from .errors import LoaderTimeoutError, WorkerInitError

_local = threading.local()


@dataclass(frozen=True)
class WorkerInfo:
    """Who the worker thread loading this sample is.

    Attributes:
        id: the worker's number, 0 to ``num_workers - 1``.
        num_workers: how many threads read the dataset. An IterableDataset is read by one
            thread whatever ``num_workers`` says (so 1 there): code that shards a stream by
            worker id, as PyTorch programs do, then reads it whole, once.
        seed: the epoch's base seed plus ``id`` (PyTorch's rule), for seeding a worker's own
            random state in ``worker_init_fn``.
        dataset: the dataset being read: the loader's own object, shared by every thread (a
            worker process in PyTorch holds a copy).
    """

    id: int
    num_workers: int
    seed: int
    dataset: object


def get_worker_info() -> WorkerInfo | None:
    """The :class:`WorkerInfo` of the worker thread calling it, or None outside a worker
    (in the loop, or with ``num_workers=0``), as ``torch.utils.data.get_worker_info``."""
    return getattr(_local, "info", None)


class Workers:
    """A pool of worker threads and what each one is told as it starts.

    Args:
        size: how many threads.
        dataset: what :attr:`WorkerInfo.dataset` names.
        init_fn: ``worker_init_fn(worker_id)``, run in each thread before its first task.
    """

    def __init__(self, size: int, dataset, init_fn: Callable[[int], None] | None):
        self.count, self.dataset, self.init_fn = size, dataset, init_fn
        self._ids = count()
        self._failure: tuple[int, BaseException, str] | None = None
        self.base_seed = 0
        self.pool = concurrent.futures.ThreadPoolExecutor(
            size, thread_name_prefix="fw-data", initializer=self._start)

    def _start(self) -> None:
        worker_id = next(self._ids)  # next() on a count is atomic: each thread gets its own
        _local.info = WorkerInfo(worker_id, self.count, self.base_seed + worker_id,
                                 self.dataset)
        if self.init_fn is None:
            return
        try:
            self.init_fn(worker_id)
        except BaseException as exc:
            self._failure = (worker_id, exc, "".join(traceback.format_exception(exc)))
            raise

    def submit(self, task: Callable, grad_enabled: bool):
        return self.pool.submit(_in_grad_mode, grad_enabled, task)

    def result(self, future, timeout: float):
        """The task's batch; waits at most ``timeout`` seconds (0: no limit)."""
        try:
            return future.result(timeout or None)
        except concurrent.futures.TimeoutError:
            raise LoaderTimeoutError(
                f"DataLoader timed out after {timeout} seconds waiting for a batch from its "
                f"{self.count} worker thread(s)",
                hint="raise timeout= (0 waits without limit), or make the dataset's "
                "__getitem__ faster") from None
        except concurrent.futures.BrokenExecutor:
            if self._failure is None:
                raise
            worker_id, exc, text = self._failure
            raise WorkerInitError(
                f"worker_init_fn raised {type(exc).__name__} in worker {worker_id}: {exc}",
                original=exc, traceback=text,
                hint=f"call worker_init_fn({worker_id}) outside the loader to reproduce it"
                ) from None

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def _in_grad_mode(enabled: bool, task: Callable):
    # grad mode is per thread: a worker takes the mode of the thread iterating the loader (as
    # PyTorch's worker threads do), so a loop under no_grad collates without recording
    if is_grad_enabled() != enabled:
        set_grad_enabled(enabled)
    return task()


def run(tasks: Iterator[Callable], workers: Workers | None, depth: int, timeout: float,
        end: object, keep: bool = False):
    """Run batch tasks in order, inline (``workers`` None) or on the worker threads with
    ``depth`` in flight; stop at the first task returning ``end``. ``keep``: leave the
    threads running for the next epoch (tasks still queued are cancelled)."""
    if workers is None:
        for task in tasks:
            batch = task()
            if batch is end:
                return
            yield batch
        return
    submit = partial(workers.submit, grad_enabled=is_grad_enabled())
    pending = deque(submit(task) for task in islice(tasks, depth))
    try:
        while pending:
            batch = workers.result(pending.popleft(), timeout)
            if batch is end:
                return
            task = next(tasks, None)
            if task is not None:
                pending.append(submit(task))
            yield batch
    finally:
        if keep:
            for future in pending:
                future.cancel()
        else:
            workers.close()
