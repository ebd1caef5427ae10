"""The plugin contract: every hook fw calls, one per family. The docstrings are the contract.

A plugin is a module (or object) with functions named like these hooks, decorated with
``fw_core.hookimpl``, published under the ``fw.plugins`` entry-point group. All ``fw_register_*``
hooks are called once per load (at ``import fw_core`` and on ``fw.plugins.use``), each plugin
separately so a failure is pinned on its author; they return iterables of typed records
(:mod:`fw_core.records`). fw freezes the results into plain tables: no hook is ever called on
the per-op path.
"""

from __future__ import annotations

from collections.abc import Iterable

import pluggy

from .records import (
    DeviceSpec,
    FusionRule,
    Inspector,
    KernelCache,
    KernelSpec,
    MemoryPolicy,
    OpDef,
    PluginConfig,
    ThreadPool,
)

hookspec = pluggy.HookspecMarker("fw")
hookimpl = pluggy.HookimplMarker("fw")


@hookspec
def fw_register_ops() -> Iterable[OpDef]:
    """Register op contracts (custom ops) with their meta rule, VJP, structure and anchor.

    Called first, before devices and kernels. Op names are unique across plugins: a second
    contract for a name is refused with a note (with that plugin's kernels for it), the first
    in load order (fw_core, then plugins by name) keeps it. Build the records with
    ``fw_core.ops.define_op`` (or the family helpers) so the op also gets a callable.
    """


@hookspec
def fw_register_devices() -> Iterable[DeviceSpec]:
    """Register devices: name, array namespace, host transfers, availability.

    Called after ops. A device whose ``unavailable_reason()`` returns a string (asked when the
    device is first needed, not at import) is listed but cannot hold tensors; if all of a
    plugin's devices are unavailable the plugin shows as "no device" in ``fw plugins`` with
    that reason. A device name registered by two plugins is
    kept by the device's own plugin (``fw_<device>``), else by the first in load order (fw_core,
    then plugins by name); the other's device is refused with a note, the rest of it loads.
    """


@hookspec
def fw_register_kernels() -> Iterable[KernelSpec]:
    """Register kernels: raw-array implementations of ops on devices.

    Called after ops and devices. A kernel whose op or device is not loaded is ignored with a
    note in ``fw plugins`` (the plugin still loads), so a device plugin can ship kernels for the
    ops of optional plugins. For one (op, device), the highest ``priority`` wins; at equal
    priority the plugin providing the device wins, else the first in load order, and the
    other's kernel is refused with a note naming both (the rest of that plugin loads). A
    kernel whose import is costly may be given as a ``LazyKernel`` (``fw_core.records``): it is
    listed and settled at load, and imported when the first device of its type is made.
    """


@hookspec
def fw_register_fusion_rules() -> Iterable[FusionRule]:
    """Register fusion rules: which op groups a device can fuse, and a code generator for them.

    Collected at load; the compiler asks the rules of the target device (highest priority first)
    when it fuses a graph. fw_core decides the grouping; the rule only generates code.
    """


@hookspec
def fw_register_memory_policies() -> Iterable[MemoryPolicy]:
    """Register memory pool policies for devices (size classes, release order by lifecycle tag).

    The last registered policy named "default" for a device is that device's default; others
    can be selected by name (``fw.context("low_memory")``).
    """


@hookspec
def fw_register_inspectors() -> Iterable[Inspector]:
    """Register inspectors: observers of op runs and backward passes.

    Inspectors cost nothing until activated (``fw.inspectors.activate(name)``); while any is
    active, every op calls its ``on_op`` with an :class:`~fw_core.records.OpEvent`.
    """


@hookspec
def fw_register_thread_pools() -> Iterable[ThreadPool]:
    """Register the thread pools of the libraries this plugin computes with.

    fw sets them together (``fw.set_num_threads``) and keeps pools whose idle threads spin
    from fighting over the cores: of those, only the highest ``priority`` one runs at full
    strength, the others on one thread.
    """


@hookspec
def fw_register_kernel_caches() -> Iterable[KernelCache]:
    """Register the caches this plugin keeps of built kernels or library primitives.

    ``fw.compile.explain()`` reports each one's counters (hits, misses, evictions, size), so a
    user sees whether kernels are being rebuilt.
    """


@hookspec
def fw_configure(config: PluginConfig) -> None:
    """Called once after every plugin registered and the tables are frozen.

    ``config`` lists the loaded plugins, devices and ops. Use it to check optional partners
    (a visualiser looking for the debugger) or warm caches. An exception fails this plugin only.
    """


@hookspec
def fw_unconfigure() -> None:
    """Called before the plugins are reloaded (``fw.plugins.use``) or at interpreter exit.

    Release what ``fw_configure`` acquired (threads, files, device contexts).
    """
