"""GPU memory in fw's terms: the ``cuda`` memory policy, CuPy's pool read as fw lifecycle tags,
and pinned host staging for the DataLoader's host-to-device copies that overlap compute.

fw counts long-lived tensors by tag (``fw.memory.track``: parameters, gradients, optimizer
state); every other byte CuPy's pool hands out (activations and temporaries of kernels) is
counted here as "temporary". Under pressure fw's pool calls its release callbacks in
:data:`POLICIES`' order (debug captures first); :func:`release_cached` is the callback that also
returns CuPy's cached free blocks to the driver.
"""

from __future__ import annotations

import numpy as np

from fw_core import memory
from fw_core.records import MemoryPolicy

POLICIES = [MemoryPolicy(name="default", device="cuda",
                         release_order=("debug", "cache", "temporary"))]


def tag_usage(fw_stats: dict, cupy_pool) -> dict:
    """Per-tag live bytes of one GPU: fw's tracked tags from ``fw_stats`` (an entry of
    ``fw.memory.summary()``) plus CuPy's untracked bytes under "temporary", and the pool's
    reserved and cached-free bytes. ``cupy_pool`` is a ``cupy.cuda.MemoryPool`` (anything with
    ``used_bytes()``, ``total_bytes()`` and ``free_bytes()``)."""
    tags = {tag: fw_stats[tag]["live_bytes"] for tag in memory.TAGS}
    tracked = sum(tags.values())
    used = cupy_pool.used_bytes()
    tags["temporary"] += max(used - tracked, 0)
    return {"tags": tags, "used_bytes": used, "reserved_bytes": cupy_pool.total_bytes(),
            "cached_free_bytes": cupy_pool.free_bytes()}


def release_cached(cupy_pool, pinned_pool=None) -> int:
    """Give CuPy's cached free blocks (and pinned host blocks) back; returns the bytes freed."""
    before = cupy_pool.total_bytes()
    cupy_pool.free_all_blocks()
    if pinned_pool is not None:
        pinned_pool.free_all_blocks()
    return before - cupy_pool.total_bytes()


def stage_to_device(array: np.ndarray, stream, cupy):
    """Copy a host array to the current GPU on ``stream`` through a pinned buffer, without
    waiting: the copy overlaps kernels on other streams (the DataLoader's next batch while this
    one trains). Returns ``ready()``, which gives the device array.

    ``ready()`` blocks the host until the copy has ended, which it normally has (it had a whole
    training step): then any stream may read the array, and only then is the pinned buffer
    released to CuPy's pinned pool, where the next batch may reuse it.
    """
    pinned = cupy.cuda.alloc_pinned_memory(array.nbytes)
    host = np.frombuffer(pinned, dtype=array.dtype, count=array.size).reshape(array.shape)
    np.copyto(host, array)
    out = cupy.empty(array.shape, dtype=array.dtype)
    out.set(host, stream=stream)
    return _Staged(out, stream.record(), host)


class _Staged:
    """A started copy; calling it gives the device array once the copy has ended."""

    __slots__ = ("out", "copied", "host")

    def __init__(self, out, copied, host):
        self.out, self.copied, self.host = out, copied, host

    def __call__(self):
        self.copied.synchronize()
        self.host = None  # the copy has ended: the pinned buffer may be reused
        return self.out
