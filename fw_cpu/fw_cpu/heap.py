"""How the C heap that NumPy's arrays live in hands memory back, set once when fw_cpu loads.

glibc's malloc serves a block above its mmap threshold (128 KiB at start, raised as such blocks
are freed) with a fresh mapping, and returns free memory at the top of the heap to the system
past its trim threshold. A training step frees its activations and allocates them again on the
next step, so under those defaults every step faults the same megabytes in again: 4,120 page
faults per step of the benchmark transformer, a fifth of its time, and 1,536 per cnn step.
:func:`keep_freed_blocks` raises both thresholds so a step reuses the memory the last one
freed; the peak (what the step holds at once) is unchanged, only memory freed after it stays
mapped for reuse, up to :data:`TRIM_THRESHOLD`.

Not applied where the user chose: ``FW_CPU_HEAP=system`` leaves glibc's defaults, and so does
any ``MALLOC_*_`` variable glibc reads for these settings; nor off glibc (musl, macOS).
"""

from __future__ import annotations

import ctypes
import os

#: blocks up to this size come from the heap, not from a mapping of their own (glibc's maximum)
MMAP_THRESHOLD = 32 << 20
#: free memory at the top of the heap kept mapped for the next allocation
TRIM_THRESHOLD = 128 << 20

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt parameters, from glibc's malloc.h
_USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_",
                  "MALLOC_MMAP_MAX_")


def keep_freed_blocks() -> str:
    """Set the thresholds (see the module docstring) unless the user chose otherwise; return a
    line for ``fw plugins`` saying what the heap does."""
    if os.environ.get("FW_CPU_HEAP") == "system":
        return "heap: glibc's defaults (FW_CPU_HEAP=system)"
    chosen = [name for name in _USER_SETTINGS if name in os.environ]
    if chosen:
        return f"heap: as {', '.join(chosen)} sets it"
    libc = _glibc()
    if libc is None:
        return "heap: the C library's defaults (not glibc)"
    if not (libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
            and libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)):
        return "heap: glibc's defaults (mallopt refused the thresholds)"
    return (f"heap: blocks up to {MMAP_THRESHOLD >> 20} MiB reuse freed memory, up to "
            f"{TRIM_THRESHOLD >> 20} MiB of it kept mapped (FW_CPU_HEAP=system: glibc's "
            "defaults)")


def _glibc():
    """The process's C library when it is glibc, else None."""
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "gnu_get_libc_version"):
        return None
    libc.mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    libc.mallopt.restype = ctypes.c_int
    return libc
