"""One thread count for every pool fw's plugins compute with, and no two pools fighting.

Plugins register their libraries' pools (``fw_register_thread_pools``): fw_cpu NumPy's BLAS
and Numba's, fw_onednn oneDNN's OpenMP pool. :func:`set_num_threads` sets them together.
Pools whose idle threads busy-wait (OpenMP, OpenBLAS) must not take turns on the same cores —
each turn the other pool's threads are still spinning, and a GEMM gets many times slower — so
only the spinning pool of highest priority keeps its threads; the others run on one thread.
Each such decision is logged by the scheduler (``fw.scheduler.log()``).
"""

from __future__ import annotations

import os
import threading

from .errors import ArgumentError
from .records import ThreadPool

_lock = threading.Lock()
_pools: dict[str, tuple[ThreadPool, str]] = {}  # name -> (pool, plugin)
_held: dict[str, str] = {}  # name -> why it runs on one thread
_before: dict[str, int] = {}  # name -> its threads before it was held
_wanted: list[int | None] = [None]  # what set_num_threads asked for (None: the pools' own)


def set_num_threads(n: int) -> None:
    """Use ``n`` threads for computation: every pool at full strength gets ``n`` (a pool held
    to one thread stays there, see :func:`pools`).

    Raises:
        ArgumentError: ``n`` is not a positive integer.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ArgumentError(f"set_num_threads needs a positive integer, got {n!r}",
                            op="set_num_threads", inputs=f"n={n!r}",
                            hint=f"e.g. fw.set_num_threads({os.cpu_count() or 1})")
    with _lock:
        _wanted[0] = n
        for name, (pool, _) in _pools.items():
            if name not in _held:
                pool.set(n)


def get_num_threads() -> int:
    """The threads computation uses: the largest of the pools at full strength (the machine's
    CPU count when no plugin registered a pool)."""
    with _lock:
        counts = [pool.get() for name, (pool, _) in _pools.items() if name not in _held]
    return max(counts, default=os.cpu_count() or 1)


def pools() -> list[dict]:
    """Each registered pool: its name, plugin, threads now, and why it is held to one thread
    (None when it runs at full strength)."""
    with _lock:
        return [{"name": name, "plugin": plugin, "threads": pool.get(), "spins": pool.spins,
                 "held": _held.get(name)} for name, (pool, plugin) in _pools.items()]


def _reset(registered: dict[str, tuple[ThreadPool, str]]) -> None:
    """Take over the pools of a plugin load and settle which spinning pool keeps the cores."""
    from . import scheduler

    with _lock:
        _pools.clear()
        _pools.update(registered)
        spinning = sorted((entry for entry in _pools.values() if entry[0].spins),
                          key=lambda entry: -entry[0].priority)
        held = {}
        for pool, _ in spinning[1:]:
            leader, owner = spinning[0]
            held[pool.name] = (f"its idle threads spin, as those of {leader.name} ({owner}, "
                               f"priority {leader.priority}) do: taking turns on the same "
                               "cores would slow both")
        for name, (pool, _) in _pools.items():
            if name in held and name not in _held:
                _before[name] = pool.get()
                pool.set(1)
                scheduler.decide("threads", name, 1, held[name])
            elif name not in held:
                before = _before.pop(name, None)
                if _wanted[0] is not None or before is not None:
                    pool.set(_wanted[0] or before)
        _held.clear()
        _held.update(held)
