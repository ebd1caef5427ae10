"""How many bytes a result needs and what the device has: OutOfMemoryError, before trying.

A creation op asks :func:`check_allocation` before its kernel runs, so ``fw.zeros(10**6, 10**6)``
is refused with the 4 TB it asks for and the RAM the machine has, instead of a raw NumPy
``MemoryError``. Any op whose kernel still runs out of memory gets the same error from
:func:`out_of_memory` (the dispatcher's failure path). Requests below ``_QUICK`` bytes skip the
check: reading the free memory costs more than allocating them.

Host memory is what a device whose arrays are NumPy arrays has (the CPU): total and available
RAM from ``/proc/meminfo`` (``os.sysconf`` elsewhere), plus free swap. Other devices report no
capacity to fw, so for them only a kernel's MemoryError is explained.
"""

from __future__ import annotations

import math
import os

import numpy as np

from .. import dtypes as _dt
from ..errors import OutOfMemoryError
from ..records import TensorSpec
from .meta import describe

_QUICK = 64 * 2 ** 20  # requests below this are not checked before trying


def host_memory() -> tuple[int, int] | None:
    """(total RAM, bytes available now including free swap), or None if the OS will not say."""
    try:
        with open("/proc/meminfo") as f:
            kib = dict(_meminfo_line(line) for line in f)
        available = kib.get("MemAvailable", kib["MemFree"]) + kib.get("SwapFree", 0)
        return kib["MemTotal"] * 1024, available * 1024
    except (OSError, KeyError, ValueError):
        pass
    try:
        page = os.sysconf("SC_PAGE_SIZE")
        return os.sysconf("SC_PHYS_PAGES") * page, os.sysconf("SC_AVPHYS_PAGES") * page
    except (OSError, ValueError, AttributeError):
        return None


def _meminfo_line(line: str) -> tuple[str, int]:
    """('MemTotal', 24576000) from 'MemTotal:       24576000 kB'."""
    name, _, rest = line.partition(":")
    return name, int(rest.split()[0])


def _uses_host_memory(device) -> bool:
    return device.spec.array_type is np.ndarray


def _size(n: int) -> str:
    value, unit = float(n), "B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if value < 1024 or unit == "EiB":
            break
        value /= 1024
    return f"{value:.0f} B" if unit == "B" else f"{value:.1f} {unit}"


def _what_device_has(device) -> str:
    if _uses_host_memory(device):
        memory = host_memory()
        if memory is not None:
            total, available = memory
            return (f"{device} has {_size(total)} of RAM, {_size(available)} available "
                    "(free swap included)")
        return f"{device} does not say how much RAM it has"
    usage = device.spec.allocator_usage
    if usage is not None:
        used, reserved = usage(device.index)
        return (f"{device} reports no capacity; its allocator holds {_size(used)} in live arrays "
                f"({_size(reserved)} reserved)")
    return f"{device} reports no capacity to fw"


def out_of_memory(op: str, result, device, inputs: str | dict) -> OutOfMemoryError:
    """The error for ``op``'s ``result`` (a TensorSpec, several, or a byte count) that
    ``device`` cannot hold; ``inputs`` describes what arrived (a dict is described here)."""
    if isinstance(result, int):
        asked, what = result, "its result"
    else:
        specs = [result] if isinstance(result, TensorSpec) else [
            s for s in result if isinstance(s, TensorSpec)]
        asked = sum(math.prod(s.shape) * s.dtype.itemsize for s in specs)
        what = " and ".join(f"a {s.dtype.name} tensor of shape {tuple(s.shape)}" for s in specs)
    return OutOfMemoryError(
        f"asks for {_size(asked)} ({asked:,} bytes) for {what}, but {_what_device_has(device)}",
        op=op, inputs=describe(**inputs) if isinstance(inputs, dict) else inputs,
        hint="use a smaller shape or a smaller dtype (float16, int32), or work through the "
        "data in batches; check that the sizes are what you meant (a stray extra dimension "
        "multiplies the size)")


def check_allocation(op: str, shape, dtype, device, arrived: dict) -> None:
    """Raise OutOfMemoryError when a new tensor of ``shape`` and ``dtype`` (a DType or NumPy
    dtype) is more than ``device`` can give now (known for host memory only); ``arrived`` are
    the op's arguments, described only if it raises."""
    asked = math.prod(shape) * dtype.itemsize
    if asked < _QUICK or not _uses_host_memory(device):
        return
    memory = host_memory()
    if memory is not None and asked > memory[1]:
        raise out_of_memory(op, TensorSpec(tuple(shape), _dt.as_dtype(dtype)), device, arrived)
