"""The fw_onednn plugin: oneDNN kernels for fw's ``cpu`` device above fw_cpu's, each behind a
guard, oneDNN's OpenMP thread pool, and fusion rules.

Loading the plugin (at ``import fw_core``) registers what :mod:`fw_onednn.catalog` names and
checks that the oneDNN wheel is installed; ``libdnnl.so`` (24 MiB resident) and the modules
that call it load when the first cpu tensor is made (:func:`kernel_table`). Should the library
fail to load then, fw_onednn is marked failed with the reason and its guards refuse every call,
so fw_cpu serves them. Numba is imported only when the first primitive runs.
"""

from __future__ import annotations

import functools
import importlib
import sys
import warnings

from fw_core import hookimpl, plugins
from fw_core.errors import PluginError
from fw_core.records import KernelCache, KernelSpec, LazyKernel, ThreadPool

from . import catalog, library

NAME = "fw_onednn"

#: above fw_cpu's kernels (priority 0): the guard decides per call, fw_cpu runs what it refuses
PRIORITY = 10

_KERNELS, _GUARDS = f"{__name__}:kernel_table", f"{__name__}:guard_table"


@hookimpl
def fw_register_kernels():
    library.find()  # a missing wheel fails the plugin here, with the fix
    return [KernelSpec(op=op, device="cpu", fn=LazyKernel(_KERNELS, op), priority=PRIORITY,
                       guard=LazyKernel(_GUARDS, op), takes=takes)
            for op, takes in catalog.TAKES.items()]


def kernel_table() -> dict:
    """{op: kernel} of every module :mod:`fw_onednn.catalog` names (loading oneDNN)."""
    return {op: kernel for op, (_, kernel) in _served().items()}


def guard_table() -> dict:
    """{op: guard} of the same modules; guards that refuse every call if oneDNN failed to
    load."""
    return {op: guard for op, (guard, _) in _served().items()}


@functools.cache
def _served() -> dict:
    try:
        modules = [importlib.import_module(f"{__package__}.{m}") for m in catalog.MODULES]
    except PluginError as exc:
        info = plugins.require(NAME)
        info.state, info.reason = plugins.FAILED, f"cannot load oneDNN: {exc.message}"
        info.fix = exc.hint
        warnings.warn(f"fw_onednn cannot load oneDNN ({exc.message}): fw_cpu runs every op "
                      f"instead; {exc.hint}", stacklevel=2)
        return {op: (_refuse, _refuse) for op in catalog.TAKES}
    _note_library(plugins.require(NAME).notes)
    return {op: (guard, kernel) for module in modules for op, guard, kernel, _ in module.KERNELS}


def _note_library(notes: list[str]) -> None:
    """Put the library's line in the plugin's notes (``fw plugins``): version, threading
    runtime and ISA once it is loaded, where it comes from until then."""
    runtime = sys.modules.get(f"{__package__}.runtime")
    line = (runtime.describe() if runtime else
            f"oneDNN ({library.SONAME} of {library.DISTRIBUTION}), loaded with the first cpu "
            "tensor")
    notes[:] = [n for n in notes if not n.startswith("oneDNN ")] + [line]


def _refuse(*_arrays, **_attrs) -> bool:
    return False


@hookimpl
def fw_register_fusion_rules():
    # tried before fw_cpu's cpu.blas_epilogue: a product and its epilogue as one primitive;
    # chains of convolutions, poolings and activations in oneDNN's blocked layouts
    return [catalog.POST_OPS, catalog.BLOCKED_CHAIN]


def _threads():
    return importlib.import_module(f"{__package__}.threads")


@hookimpl
def fw_register_thread_pools():
    # libgomp's idle threads spin, and oneDNN does the heavy GEMMs: this pool keeps the cores
    return [ThreadPool(name="onednn-openmp", get=lambda: _threads().get_num_threads(),
                       set=lambda n: _threads().set_num_threads(n), spins=True,
                       priority=PRIORITY)]


@hookimpl
def fw_register_kernel_caches():
    from . import cache

    return [KernelCache(name="onednn.primitives", info=cache.info_dict)]


@hookimpl
def fw_configure(config):
    _note_library(plugins.require(NAME).notes)
