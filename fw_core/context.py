"""Execution contexts: named presets over the scheduler's knobs and the memory policy.

``with fw.context("low_memory"): ...`` (or ``@fw.context("debug")`` on a function) sets every
knob of the preset for the block and restores the previous settings on exit, also when the
block raises. Contexts nest: the innermost wins, and each exit restores what its entry found.
:data:`PRESETS` is the one table the code and ``docs/performance.md`` share.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict

from . import inspectors, scheduler
from .errors import ArgumentError

#: preset -> scheduler knobs (see fw_core.scheduler.Knobs) plus the inspector it switches on
#: (only if a plugin registered it). One source: docs/performance.md shows this table.
PRESETS: dict[str, dict] = {
    # serving: compile early; a size that changes is dynamic early, so a new request shape
    # compiles at once as a partial rebuild
    "low_latency": {"compile_after": 1, "fusion": "measure", "bucket_after": 2,
                    "max_plans": 64, "memory_policy": "default", "enabled": True,
                    "inspector": None},
    # training loops: fixed shapes, so keep shape-specialised plans (fastest kernels)
    "throughput": {"compile_after": 2, "fusion": "measure", "bucket_after": 8,
                   "max_plans": 32, "memory_policy": "default", "enabled": True,
                   "inspector": None},
    # few plans and buffers, finer size classes (less rounding waste in the pools)
    "low_memory": {"compile_after": 2, "fusion": "measure", "bucket_after": 2,
                   "max_plans": 4, "memory_policy": "low_memory", "enabled": True,
                   "inspector": None},
    # every op runs eagerly, visible to inspectors; anomaly detection when fw_debugger is there
    "debug": {"compile_after": 2, "fusion": "never", "bucket_after": 4,
              "max_plans": 32, "memory_policy": "default", "enabled": False,
              "inspector": "fw_debugger.anomaly"},
}


class context(contextlib.ContextDecorator):
    """Run a block (or a decorated function) under a preset of :data:`PRESETS`.

    Args:
        name: "low_latency", "throughput", "low_memory" or "debug".

    Raises:
        ArgumentError: an unknown name (the message lists the presets).

    Example::

        with fw.context("debug"):
            loss = model(x)          # eager, every op visible to the active inspectors

    ``fw.context.PRESETS`` is the table; ``fw.context.current()`` names the preset in force.
    """

    PRESETS = PRESETS

    def __init__(self, name: str):
        if name not in PRESETS:
            raise ArgumentError(f"unknown context {name!r}",
                                hint=f"use one of {', '.join(PRESETS)}")
        self.name = name
        self._saved: list[tuple] = []  # a stack: a decorated function may recurse

    def __enter__(self) -> context:
        preset = dict(PRESETS[self.name])
        wanted = preset.pop("inspector")
        previous = scheduler.knobs()
        scheduler.configure(**preset, name=self.name)
        switched_on = None
        if wanted and wanted in inspectors.registered() and wanted not in inspectors.active():
            inspectors.activate(wanted)
            switched_on = wanted
        self._saved.append((previous, switched_on))
        return self

    def __exit__(self, *exc_info) -> bool:
        previous, switched_on = self._saved.pop()
        if switched_on is not None:
            inspectors.deactivate(switched_on)
        scheduler.configure(**asdict(previous))
        return False

    def __repr__(self) -> str:
        return f"fw.context({self.name!r})"

    @staticmethod
    def current() -> str:
        """The name of the innermost active preset ("default" outside any, "custom" after
        ``fw.scheduler.configure``)."""
        return scheduler.knobs().name
