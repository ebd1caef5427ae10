"""fw.cuda: what ``torch.cuda`` answers about GPUs, answered by the plugin that provides the
``cuda`` device (fw_cuda) through its device record.

Nothing here runs at ``import fw_core``: the first call asks the plugin whether a GPU works
(fw_cuda then imports CuPy), once per plugin load. Without a usable GPU (no fw_cuda, no CuPy,
no driver or device) ``is_available()`` is False and ``device_count()`` 0, as in PyTorch; so
are its other quiet answers there: ``manual_seed``, ``manual_seed_all`` and ``empty_cache`` do
nothing, and the ``memory_*`` figures are 0. Everything else raises a DeviceError (a
RuntimeError) that says CUDA is not available and why: the reason ``fw plugins`` shows.

The current device: ``set_device(1)`` makes ``"cuda"`` name ``cuda:1`` (``fw.device("cuda")``,
``t.to("cuda")``), as in PyTorch.

>>> if fw.cuda.is_available():
...     print(fw.cuda.get_device_name(), fw.cuda.memory_allocated())
"""

from __future__ import annotations

__all__ = ["DeviceProperties", "current_device", "device_count", "empty_cache",
           "get_device_capability", "get_device_name", "get_device_properties",
           "is_available", "manual_seed", "manual_seed_all", "max_memory_allocated",
           "memory_allocated", "memory_reserved", "reset_peak_memory_stats", "set_device",
           "synchronize"]

import operator
from dataclasses import dataclass

from . import memory as _memory
from .device import Device, registry, set_current
from .device import get as _get
from .errors import DeviceError
from .records import DeviceSpec

_KIND = "cuda"


@dataclass(frozen=True)
class DeviceProperties:
    """What a GPU is, as ``torch.cuda.get_device_properties`` names it: ``name``,
    ``total_memory`` (bytes), ``major`` and ``minor`` (compute capability) and
    ``multi_processor_count``."""

    name: str
    total_memory: int
    major: int
    minor: int
    multi_processor_count: int


def _unavailable_reason() -> str | None:
    if _KIND not in registry.specs:
        return registry.blocked_hint.get(_KIND) or (
            "no loaded plugin provides the cuda device; pip install fw-cuda")
    return registry.unavailable_reason(_KIND)


def _spec(what: str) -> DeviceSpec:
    """The ``cuda`` device record, or the DeviceError saying why CUDA is not available."""
    reason = _unavailable_reason()
    if reason is not None:
        raise DeviceError(f"CUDA is not available: {reason}", op=f"fw.cuda.{what}",
                          hint="run on 'cpu' (fw.cuda.is_available() says whether a GPU "
                          "works); `fw plugins` shows the cuda plugin's state")
    return registry.specs[_KIND]


def _device(device, what: str) -> Device:
    """The cuda Device that ``device`` names: None (the current one), an index, ``"cuda"``,
    ``"cuda:1"`` or a Device."""
    _spec(what)
    if device is None:
        return _get(_KIND)
    if isinstance(device, str | Device):
        found = _get(device)
        if found.type != _KIND:
            raise DeviceError(f"expected a cuda device, got {found}", op=f"fw.cuda.{what}",
                              hint="pass an index, 'cuda', 'cuda:N' or a cuda Device")
        return found
    try:
        index = operator.index(device)
    except TypeError:
        raise DeviceError(f"expected a device index, 'cuda:N' or a Device, got "
                          f"{type(device).__name__} {device!r}", op=f"fw.cuda.{what}",
                          hint="e.g. fw.cuda.get_device_name(0)") from None
    return _get(_KIND) if index < 0 else _get(f"{_KIND}:{index}")


def is_available() -> bool:
    """Whether a loaded plugin's ``cuda`` device works here (a GPU, a driver, CuPy)."""
    return _unavailable_reason() is None


def device_count() -> int:
    """How many GPUs there are; 0 when CUDA is not available."""
    return registry.specs[_KIND].count() if is_available() else 0


def current_device() -> int:
    """The index of the device ``"cuda"`` names (0 unless :func:`set_device` chose another)."""
    _spec("current_device")
    return _get(_KIND).index


def set_device(device) -> None:
    """Make ``"cuda"`` name this GPU (an index, ``"cuda:N"`` or a Device); a negative index
    changes nothing, as in PyTorch.

    Raises:
        DeviceError: CUDA is not available, or there is no such GPU.
    """
    found = _device(device, "set_device")
    set_current(_KIND, found.index)


def get_device_properties(device=None) -> DeviceProperties:
    """What the GPU is (default: the current one), from the plugin's device record."""
    found = _device(device, "get_device_properties")
    read = found.spec.properties
    if read is None:
        raise DeviceError(f"the plugin providing cuda ({registry.owners[_KIND]}) does not "
                          "report device properties", op="fw.cuda.get_device_properties",
                          hint="upgrade the plugin (DeviceSpec.properties)")
    return DeviceProperties(**read(found.index))


def get_device_name(device=None) -> str:
    """The GPU's name, e.g. ``"NVIDIA H200"`` (default: the current one)."""
    return get_device_properties(device).name


def get_device_capability(device=None) -> tuple[int, int]:
    """The GPU's compute capability ``(major, minor)`` (default: the current one)."""
    found = get_device_properties(device)
    return found.major, found.minor


def synchronize(device=None) -> None:
    """Wait until the work queued on the GPU (default: the current one) has finished."""
    found = _device(device, "synchronize")
    found.spec.synchronize(found.index)


def manual_seed(seed: int) -> None:
    """Accepted for PyTorch compatibility; changes nothing. fw draws every device's random
    numbers on the host from one generator, which ``fw.manual_seed`` seeds (as
    ``torch.manual_seed`` seeds every device), so the same seed gives the same numbers on cpu
    and cuda. ``seed`` still goes through ``int()``, as in PyTorch (a ValueError or TypeError
    for what is no integer)."""
    int(seed)


def manual_seed_all(seed: int) -> None:
    """Accepted for PyTorch compatibility; changes nothing (see :func:`manual_seed`)."""
    int(seed)


def empty_cache() -> None:
    """Give the blocks cached for reuse on every GPU back to the driver: fw's pool's and the
    device allocator's (CuPy's). Live tensors keep their memory. Nothing to do without CUDA."""
    if not is_available():
        return
    for index in range(device_count()):
        _memory.pool(_get(f"{_KIND}:{index}")).trim()


def _pool(device, what: str) -> dict | None:
    """The "pool" entry of ``fw.memory.summary`` for the GPU, or None without CUDA."""
    if not is_available():
        return None
    found = _device(device, what)
    return _memory.summary(found)[str(found)]["pool"]


def memory_allocated(device=None) -> int:
    """Bytes held by live tensors on the GPU (default: the current one); 0 without CUDA."""
    pool = _pool(device, "memory_allocated")
    return 0 if pool is None else pool["live_bytes"]


def max_memory_allocated(device=None) -> int:
    """The most bytes held by live tensors since the start or the last
    :func:`reset_peak_memory_stats`; 0 without CUDA. fw counts its tracked tensors at every
    allocation and the device allocator's other bytes when it reads them (memory reports and
    pressure checks), so this may lie below the true peak between two readings."""
    pool = _pool(device, "max_memory_allocated")
    return 0 if pool is None else max(pool["peak_bytes"], pool.get("device_used_peak_bytes", 0))


def memory_reserved(device=None) -> int:
    """Bytes the GPU's allocator holds, live or cached for reuse; 0 without CUDA."""
    pool = _pool(device, "memory_reserved")
    return 0 if pool is None else pool.get("device_reserved_bytes", pool["reserved_bytes"])


def reset_peak_memory_stats(device=None) -> None:
    """Start :func:`max_memory_allocated` again from the bytes live now."""
    _memory.reset_peak(_device(device, "reset_peak_memory_stats"))

# a name this module lacks raises a MissingNameError naming fw's equivalent, if any
from .names import guard as _guard  # noqa: E402

_guard(__name__, "cuda")
