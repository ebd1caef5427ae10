"""Elementwise work over blocks that stay in cache, split across threads.

A chain of ufunc calls over whole arrays streams every array through memory once per call; on
a block of a few ten thousand elements each call finds its operands in the core's cache, which
is several times faster for long chains (GELU's erf is two dozen passes). :func:`cut` cuts an
array's index space into such blocks; :func:`run_parts` runs one part of the blocks per thread
at once, NumPy's loops releasing the GIL while they work.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

#: elements per block: a float64 temporary of a block is 256 KiB, so the few a chain keeps live
#: share a core's L2 cache
BLOCK = 1 << 15
#: threads running the blocks of one call (the calling thread is one of them)
THREADS = min(2, os.cpu_count() or 1)
_pool: ThreadPoolExecutor | None = None


def cut(shape: tuple[int, ...], block: int | None = None) -> list[tuple]:
    """Index tuples cutting an array of ``shape`` into blocks of at most about ``block``
    elements (default :data:`BLOCK`), in C order: whole trailing axes, a run of one axis,
    single indices before it. Runs of the first axis are evened out so that each of
    :data:`THREADS` threads gets as many.

    >>> cut((2, 3, 4), 8)
    [(0, slice(0, 2)), (0, slice(2, 3)), (1, slice(0, 2)), (1, slice(2, 3))]
    """
    block = BLOCK if block is None else block
    axis = len(shape)
    while axis > 0 and math.prod(shape[axis - 1:]) <= block:
        axis -= 1
    if axis == 0:
        return [(Ellipsis,)]
    axis -= 1  # the axis cut in runs: its trailing axes fit a block whole
    run = max(1, block // math.prod(shape[axis + 1:]))
    if axis == 0:  # as many runs for each thread, of about one length
        runs = -(-shape[0] // run)
        run = -(-shape[0] // (-(-runs // THREADS) * THREADS))
    keys = []
    for outer in _indices(shape[:axis]):
        for start in range(0, shape[axis], run):
            keys.append(outer + (slice(start, min(start + run, shape[axis])),))
    return keys


def _indices(shape):
    """Every index tuple of ``shape`` in C order (one empty tuple for ``()``)."""
    keys = [()]
    for n in shape:
        keys = [k + (i,) for k in keys for i in range(n)]
    return keys


def parts(keys: list) -> list[list]:
    """``keys`` split into up to :data:`THREADS` runs of consecutive blocks, about equal."""
    count = min(THREADS, len(keys))
    bounds = [round(i * len(keys) / count) for i in range(count + 1)]
    return [keys[a:b] for a, b in zip(bounds, bounds[1:])]


def run_parts(work: list) -> None:
    """Call each of ``work`` (callables), the first on this thread and the rest at once on the
    pool's threads; return when all are done, raising the first error."""
    global _pool
    if len(work) == 1:
        work[0]()
        return
    if _pool is None:
        _pool = ThreadPoolExecutor(max(THREADS, len(work)) - 1, thread_name_prefix="fw_edge-blocks")
    pending = [_pool.submit(fn) for fn in work[1:]]
    try:
        work[0]()
    finally:
        for future in pending:
            future.result()
