"""The fw_cpu plugin: registers the ``cpu`` device and its kernels through the fw hooks."""

from __future__ import annotations

import numpy as np

from fw_core import hookimpl, plugins
from fw_core.records import KernelSpec, MemoryPolicy

from . import heap, special
from .device import CPU
from .fused_optim import fused_adam
from .kernels import all_kernels
from .pool_loops import fast_pooling
from .row_loops import row_loops


@hookimpl
def fw_register_devices():
    return [CPU]


@hookimpl
def fw_register_kernels():
    table = all_kernels(np, special)
    table["adam_update"] = fused_adam(table["adam_update"])
    table.update(fast_pooling(table))
    table.update(row_loops(table))
    return [KernelSpec(op=name, device="cpu", fn=fn) for name, fn in table.items()]


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
