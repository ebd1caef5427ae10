"""The fw_cuda plugin: registers the ``cuda`` device, its kernels, fusion rules and memory
policy through the fw hooks. Without CuPy it registers the device alone (listed as "no device"
with the reason), so ``import fw_cuda`` and ``fw plugins`` always work."""

from __future__ import annotations

from fw_core import hookimpl
from fw_core.records import KernelSpec

from . import device


@hookimpl
def fw_register_devices():
    return [device.cuda_spec()]


@hookimpl
def fw_register_kernels():
    if device.runtime.cupy is None:
        return []
    from .kernels import cuda_kernels

    return [KernelSpec(op=name, device="cuda", fn=fn) for name, fn in cuda_kernels().items()]


@hookimpl
def fw_register_fusion_rules():
    if device.runtime.cupy is None:
        return []
    from .fusion import RULES  # CUDA C source, compiled as a cupy.RawKernel on first call

    return RULES


@hookimpl
def fw_register_memory_policies():
    from .memory import POLICIES

    return POLICIES
