"""oneDNN's thread pool: the GNU OpenMP runtime (libgomp) that ``libdnnl.so`` was linked with.

libgomp's pool does not survive ``fork``: in a forked child, a parallel region of more than one
thread waits forever for the parent's threads (a ``multiprocessing`` worker running one matmul
hangs). So a forked child runs oneDNN on one thread, and stays there: :func:`set_num_threads`
leaves it at one.

The functions are looked up through oneDNN's own library handle, so they reach the libgomp that
oneDNN loaded, even when another copy is in the process (a wheel that bundles its own).

OpenMP keeps the thread count per calling thread: :func:`set_num_threads` sets it for primitives
run from the thread that calls it (and for threads it starts afterwards); other threads keep
``OMP_NUM_THREADS`` or the CPU count. libgomp's idle threads spin for a while before they sleep
(``OMP_WAIT_POLICY``, ``GOMP_SPINCOUNT``), which is why fw_onednn registers this pool as
spinning: fw then holds OpenBLAS to one thread while fw_onednn is loaded (``fw.threads.pools()``).
"""

from __future__ import annotations

import ctypes
import os

from .arguments import whole_number
from .capi import lib

_set = lib.omp_set_num_threads
_set.argtypes, _set.restype = [ctypes.c_int], None
_get = lib.omp_get_max_threads
_get.argtypes, _get.restype = [], ctypes.c_int


_forked = False  # this process was forked from one that loaded oneDNN


def _one_thread_after_fork() -> None:
    global _forked
    _forked = True
    _set(1)


os.register_at_fork(after_in_child=_one_thread_after_fork)


def get_num_threads() -> int:
    """The threads oneDNN's next primitive run from this thread will use."""
    return _get()


def set_num_threads(n: int) -> None:
    """Run oneDNN's primitives on ``n`` OpenMP threads from now on (from this thread); on one
    in a forked child (see the module's docstring).

    Raises:
        ArgumentError: ``n`` is not a positive integer.
    """
    n = whole_number(n, least=1, setter="fw_onednn.set_num_threads", name="n",
                     example="fw_onednn.set_num_threads(2)")
    _set(1 if _forked else n)
