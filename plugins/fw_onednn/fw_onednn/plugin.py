"""The fw_onednn plugin: oneDNN kernels for fw's ``cpu`` device above fw_cpu's, each behind a
guard, and oneDNN's OpenMP thread pool.

Importing it loads ``libdnnl.so`` (~4 ms) and creates the engine, so a missing library or
OpenMP runtime fails the plugin at load with the fix, and fw_cpu serves every op. Numba is
imported only when the first primitive runs.
"""

from __future__ import annotations

import dataclasses

from fw_core import hookimpl, plugins
from fw_core.records import KernelCache, KernelSpec, ThreadPool

from . import cache, chain, conv, eltwise, fusion, kernels, norms, pooling, rnn, runtime, threads

NAME = "fw_onednn"

#: above fw_cpu's kernels (priority 0): the guard decides per call, fw_cpu runs what it refuses
PRIORITY = 10


@hookimpl
def fw_register_kernels():
    return [KernelSpec(op=op, device="cpu", fn=fn, priority=PRIORITY, guard=guard, takes=takes)
            for op, guard, fn, takes in (*kernels.KERNELS, *conv.KERNELS, *pooling.KERNELS,
                                          *eltwise.KERNELS, *norms.KERNELS, *rnn.KERNELS)]


@hookimpl
def fw_register_fusion_rules():
    # tried before fw_cpu's cpu.blas_epilogue: a product and its epilogue as one primitive;
    # chains of convolutions, poolings and activations in oneDNN's blocked layouts
    return [fusion.RULE, chain.RULE]


@hookimpl
def fw_register_thread_pools():
    # libgomp's idle threads spin, and oneDNN does the heavy GEMMs: this pool keeps the cores
    return [ThreadPool(name="onednn-openmp", get=threads.get_num_threads,
                       set=threads.set_num_threads, spins=True, priority=PRIORITY)]


@hookimpl
def fw_register_kernel_caches():
    return [KernelCache(name="onednn.primitives",
                        info=lambda: dataclasses.asdict(cache.cache_info()))]


@hookimpl
def fw_configure(config):
    # `fw plugins` shows a loaded plugin's notes: the library version and ISA go there
    plugins.require(NAME).notes.append(runtime.describe())
