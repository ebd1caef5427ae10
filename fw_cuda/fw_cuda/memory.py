"""GPU memory in fw's terms: the ``cuda`` memory policy, CuPy's pool read as fw lifecycle tags,
and pinned host staging for the DataLoader's host-to-device copies that overlap compute.

fw counts long-lived tensors by tag (``fw.memory.track``: parameters, gradients, optimizer
state). The ``cuda`` device reports CuPy's pool figures to fw's pool (``allocator_usage``), so
``fw.memory.summary("cuda")`` counts every other byte CuPy hands out (activations, kernel
temporaries) as "temporary", and a limit set with ``fw.memory.set_limit`` is judged on the bytes
CuPy has reserved. Under pressure fw's pool drops its free blocks and calls
:func:`release_cached` (CuPy's cached blocks back to the driver), then its release callbacks in
:data:`POLICIES`' order: debug captures first.
"""

from __future__ import annotations

import numpy as np

from fw_core.records import MemoryPolicy

POLICIES = [MemoryPolicy(name="default", device="cuda",
                         release_order=("debug", "cache", "temporary"))]


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

    The copy first waits for the work queued so far on the current (compute) stream: the
    block CuPy's pool hands out for the result may have been freed by the host while kernels
    queued earlier still read it (the host runs ahead of the GPU). The copy of batch k+1,
    started as batch k is handed out, so waits for batch k-1's step and overlaps batch k's.
    """
    pinned = cupy.cuda.alloc_pinned_memory(array.nbytes)
    host = np.frombuffer(pinned, dtype=array.dtype, count=array.size).reshape(array.shape)
    np.copyto(host, array)
    out = cupy.empty(array.shape, dtype=array.dtype)
    stream.wait_event(cupy.cuda.get_current_stream().record())
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
