"""The fw_cuda plugin: registers the ``cuda`` device, its kernels, fusion rules and memory
policy through the fw hooks. Without CuPy it registers the device alone (listed as "no device"
with the reason), so ``import fw_cuda`` and ``fw plugins`` always work.

Loading it imports no CuPy: the device is probed when first needed, and the kernels are
LazyKernels of :func:`fw_cuda.kernels.cuda_kernels`, built when the first ``cuda`` device is
made.
"""

from __future__ import annotations

from fw_core import hookimpl
from fw_core.records import KernelSpec, LazyKernel

from . import device

#: the function whose table holds the cuda kernels (imported with CuPy on first use)
TABLE = "fw_cuda.kernels:cuda_kernels"
#: the hand-written kernels above some generic ones, and their guards (imported with CuPy too)
FAST_TABLE, FAST_GUARDS = "fw_cuda.kernels:fast_kernels", "fw_cuda.kernels:fast_guards"


@hookimpl
def fw_register_devices():
    return [device.cuda_spec()]


@hookimpl
def fw_register_kernels():
    if not device.runtime.installed():
        return []
    from .kernels import FAST, op_names

    generic = [KernelSpec(op=name, device="cuda", fn=LazyKernel(TABLE, name))
               for name in op_names()]
    fast = [KernelSpec(op=name, device="cuda", fn=LazyKernel(FAST_TABLE, name), priority=1,
                       guard=LazyKernel(FAST_GUARDS, name), takes=takes)
            for name, takes in FAST.items()]
    return generic + fast


@hookimpl
def fw_register_fusion_rules():
    if not device.runtime.installed():
        return []
    from .fusion import RULES  # CUDA C source, compiled as a cupy.RawKernel on first call

    return RULES


@hookimpl
def fw_register_memory_policies():
    from .memory import POLICIES

    return POLICIES
