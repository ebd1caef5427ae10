"""The CUDA runtime seams fw_cuda's host-side tests swap in (imported by the tests)."""

from fw_cuda import device
from fw_cuda.device import CupyRuntime

#: whether this machine has a usable GPU (the host-side tests run either way)
HAS_GPU = device.runtime.unavailable_reason() is None


class NoDevice(CupyRuntime):
    """The seam as a machine without a GPU answers it."""

    def unavailable_reason(self):
        return "no CUDA device: reported by the test seam"


class TwoDevices(CupyRuntime):
    """The seam reporting two GPUs. Copies and kernels still go to real CuPy (and fail without
    a GPU): only selection logic is exercised, nothing pretends to run."""

    def unavailable_reason(self):
        return None

    def count(self):
        return 2
