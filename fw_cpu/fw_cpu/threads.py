"""fw_cpu's thread pools: NumPy's BLAS (OpenBLAS, through threadpoolctl) and Numba's workers.

OpenBLAS's idle threads spin, so it registers as a spinning pool: when another plugin's
spinning pool of higher priority is loaded (oneDNN's OpenMP threads), fw holds OpenBLAS to one
thread. Numba runs on its "workqueue" layer (see ``fusion/loader.py``), whose idle threads
sleep. Numba is imported only when a fused kernel is first generated; a thread count set
before then is applied at that point.
"""

from __future__ import annotations

import os
import sys

from fw_core.records import ThreadPool

_numba_wanted: list[int | None] = [None]


def _blas():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController().select(user_api="blas")


def _blas_threads() -> int:
    counts = [lib.num_threads for lib in _blas().lib_controllers]
    return max(counts, default=1)


def _set_blas_threads(n: int) -> None:
    _blas().limit(limits=n)


def _numba_threads() -> int:
    if "numba" in sys.modules:
        return sys.modules["numba"].get_num_threads()
    return _numba_wanted[0] or os.cpu_count() or 1


def _set_numba_threads(n: int) -> None:
    _numba_wanted[0] = n
    if "numba" in sys.modules:
        apply_numba_threads()


def apply_numba_threads() -> None:
    """Give Numba the thread count asked for so far (at most what it started with)."""
    if _numba_wanted[0] is not None:
        import numba

        numba.set_num_threads(min(_numba_wanted[0], numba.config.NUMBA_NUM_THREADS))


POOLS = [ThreadPool(name="openblas", get=_blas_threads, set=_set_blas_threads, spins=True),
         ThreadPool(name="numba", get=_numba_threads, set=_set_numba_threads)]
