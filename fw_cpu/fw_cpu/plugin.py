"""The fw_cpu plugin: registers the ``cpu`` device and its kernels through the fw hooks."""

from __future__ import annotations

import numpy as np

from fw_core import hookimpl, plugins
from fw_core.records import KernelSpec, MemoryPolicy

from . import fused_optim, heap, pool_loops, row_loops, special
from .device import CPU
from .kernels import all_kernels


@hookimpl
def fw_register_devices():
    return [CPU]


@hookimpl
def fw_register_kernels():
    # the generic kernels, and above them the Numba loops that take the calls their guards accept
    generic = [KernelSpec(op=name, device="cpu", fn=fn)
               for name, fn in all_kernels(np, special).items()]
    return [*generic, *fused_optim.KERNELS, *pool_loops.KERNELS, *row_loops.KERNELS]


@hookimpl
def fw_register_fusion_rules():
    # the rules import Numba only when they first generate a kernel (fw_cpu/fusion/rules.py)
    from .fusion.rules import rules

    return rules()


@hookimpl
def fw_register_thread_pools():
    from .threads import POOLS

    return POOLS


@hookimpl
def fw_register_memory_policies():
    # Host memory: NumPy's allocator already recycles small blocks; release debug captures first.
    return [MemoryPolicy(name="default", device="cpu",
                         release_order=("debug", "cache", "temporary"))]


@hookimpl
def fw_configure(config):
    # Like PyTorch, produce inf/nan silently; fw_debugger.detect_anomaly() says where they arise.
    np.seterr(divide="ignore", invalid="ignore", over="ignore", under="ignore")
    plugins.require("fw_cpu").notes.append(heap.keep_freed_blocks())
