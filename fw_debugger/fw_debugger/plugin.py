"""The fw_debugger plugin: registers the debugger's inspectors, none of them active.

Each inspector is built here by name; its callbacks forward to the ``INSPECTOR`` record of the
module that implements it, imported on the first call. Loading the plugin therefore imports
nothing else of fw_debugger, and costs nothing per op until a tool switches an inspector on
(``detect_anomaly()``, ``break_on()``, ``record()``, ``fw.context("debug")``).
"""

from __future__ import annotations

import importlib

from fw_core import hookimpl
from fw_core.records import Inspector

#: inspector name -> module of fw_debugger whose ``INSPECTOR`` implements it
INSPECTORS: dict[str, str] = {
    "fw_debugger.anomaly": "anomaly",
    "fw_debugger.breakpoints": "breakpoints",
    "fw_debugger.record": "record",
    "fw_debugger.health": "health",
}


class _Forward:
    """``fn(arg)`` that calls ``fw_debugger.<module>.INSPECTOR.<callback>(arg)``, importing the
    module the first time."""

    def __init__(self, module: str, callback: str):
        self.module = module
        self.callback = callback
        self.target = None

    def __call__(self, arg) -> None:
        target = self.target
        if target is None:
            module = importlib.import_module(f"fw_debugger.{self.module}")
            target = getattr(module.INSPECTOR, self.callback) or (lambda arg: None)
            self.target = target
        target(arg)


def inspectors() -> list[Inspector]:
    """The debugger's inspector records (inactive; switched on by name)."""
    return [Inspector(name=name, on_op=_Forward(module, "on_op"),
                      on_backward=_Forward(module, "on_backward"))
            for name, module in INSPECTORS.items()]


@hookimpl
def fw_register_inspectors():
    return inspectors()
