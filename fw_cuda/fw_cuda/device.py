"""The ``cuda`` device record, and the one seam through which every CUDA runtime call goes.

:data:`runtime` answers availability, device count, host<->device copies (and the DataLoader's
asynchronous staged copies), synchronisation, and CuPy's memory-pool figures and release.
The ``cuda`` :class:`~fw_core.records.DeviceSpec` calls it at call time (never a captured
reference), so a test can swap in a seam that reports "no device" or a device count and check
fw's host-side logic (selection, errors, ``fw plugins``) without pretending a kernel ran.
"""

from __future__ import annotations

import importlib
import importlib.util

import numpy as np

from fw_core.records import DeviceSpec

from . import memory

INSTALL_HINT = ('pip install "fw-cuda[cuda12]" (CUDA 12.x driver) or "fw-cuda[cuda13]" '
                "(CUDA 13.x driver)")


class CupyRuntime:
    """The CUDA runtime as CuPy exposes it. CuPy itself is optional: without it the device is
    listed with the reason "CuPy not installed".

    ``import cupy`` needs no GPU; the first device call raises
    ``cupy_backends.cuda.api.runtime.CUDARuntimeError`` when there is no driver or device, and
    :meth:`unavailable_reason` turns that into the sentence ``fw plugins`` shows. CuPy is
    imported only when a device call is first made: ``fw plugins``, a ``cuda`` device asked for
    (``import cupy`` and its ``cupyx.scipy.special`` take ~0.3 s, which ``import fw_core`` would
    otherwise pay on every machine).
    """

    def __init__(self, module: str = "cupy"):
        self._module = module
        self._cupy = None
        self._import_error: str | None = None
        self._copy_streams: dict[int, object] = {}  # GPU index -> its host-to-device stream

    def installed(self) -> bool:
        """Whether CuPy is installed (found, not imported)."""
        return importlib.util.find_spec(self._module) is not None

    @property
    def cupy(self):
        """The CuPy module, or None when it cannot be imported."""
        if self._cupy is None and self._import_error is None:
            try:
                self._cupy = importlib.import_module(self._module)
            except ImportError as exc:
                self._import_error = f"{type(exc).__name__}: {exc}"
        return self._cupy

    def unavailable_reason(self) -> str | None:
        """None when at least one GPU is usable, else why not and what to do."""
        cupy = self.cupy
        if cupy is None:
            return f"CuPy not installed ({self._import_error}); {INSTALL_HINT}"
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except RuntimeError as exc:  # CUDARuntimeError derives from RuntimeError
            return (f"no CUDA device: CuPy raised {type(exc).__name__} ({exc}); install an "
                    "NVIDIA driver that supports the CuPy wheel's CUDA version, or "
                    f"{INSTALL_HINT}")
        if count == 0:
            return "no CUDA device: the driver reports 0 GPUs"
        return None

    def count(self) -> int:
        return self.cupy.cuda.runtime.getDeviceCount()

    def from_numpy(self, array: np.ndarray, index: int):
        with self.cupy.cuda.Device(index):
            return self.cupy.asarray(array)

    def to_numpy(self, array) -> np.ndarray:
        return self.cupy.asnumpy(array)

    def synchronize(self, index: int) -> None:
        self.cupy.cuda.Device(index).synchronize()

    def properties(self, index: int) -> dict:
        """What GPU ``index`` is (the keys of :attr:`DeviceSpec.properties`), from
        ``cudaGetDeviceProperties``."""
        found = self.cupy.cuda.runtime.getDeviceProperties(index)
        name = found["name"]
        return {"name": name.decode() if isinstance(name, bytes) else str(name),
                "total_memory": int(found["totalGlobalMem"]), "major": int(found["major"]),
                "minor": int(found["minor"]),
                "multi_processor_count": int(found["multiProcessorCount"])}

    def pool_usage(self, index: int) -> tuple[int, int]:
        """(used, reserved) bytes of CuPy's memory pool on GPU ``index``."""
        with self.cupy.cuda.Device(index):
            pool = self.cupy.get_default_memory_pool()
            return pool.used_bytes(), pool.total_bytes()

    def release_cached(self, index: int) -> int:
        """Give CuPy's cached blocks on GPU ``index`` (and pinned host blocks) back."""
        with self.cupy.cuda.Device(index):
            return memory.release_cached(self.cupy.get_default_memory_pool(),
                                         self.cupy.get_default_pinned_memory_pool())

    def stage(self, array: np.ndarray, index: int):
        """Start a host-to-device copy through a pinned buffer on GPU ``index``'s copy stream;
        returns ``ready()`` (see :func:`fw_cuda.memory.stage_to_device`)."""
        with self.cupy.cuda.Device(index):
            if index not in self._copy_streams:
                self._copy_streams[index] = self.cupy.cuda.Stream(non_blocking=True)
            return memory.stage_to_device(array, self._copy_streams[index], self.cupy)


#: the seam: replace it (tests: ``monkeypatch.setattr(fw_cuda.device, "runtime", seam)``)
runtime = CupyRuntime()


def namespace():
    """(CuPy, ``cupy.ndarray``): the array namespace of a ``cuda`` device, asked for when the
    first one is made (CuPy is importable then: the device passed its availability probe)."""
    cupy = runtime.cupy
    return cupy, cupy.ndarray


def cuda_spec() -> DeviceSpec:
    """The ``cuda`` device (``cuda:N`` for GPU N), delegating to :data:`runtime`. Making it
    imports nothing: CuPy loads when the device is first probed or used."""
    return DeviceSpec(
        name="cuda",
        xp=None,
        array_type=None,
        namespace=namespace,
        from_numpy=lambda array, index: runtime.from_numpy(array, index),
        to_numpy=lambda array: runtime.to_numpy(array),
        unavailable_reason=lambda: runtime.unavailable_reason(),
        synchronize=lambda index: runtime.synchronize(index),
        count=lambda: runtime.count(),
        description="NVIDIA GPUs through CuPy (cuBLAS contractions, CUDA C fused kernels)",
        stage=lambda array, index: runtime.stage(array, index),
        allocator_usage=lambda index: runtime.pool_usage(index),
        release_cached=lambda index: runtime.release_cached(index),
        properties=lambda index: runtime.properties(index),
    )
