"""The fw_debugger plugin: registers the debugger's inspectors, none of them active.

Each inspector is built here by name; its callbacks forward to the ``INSPECTOR`` record of the
module that implements it, imported on the first call. Loading the plugin therefore imports
nothing else of fw_debugger, and costs nothing per op until a tool switches an inspector on
(``detect_anomaly()``, ``break_on()``, ``record()``, ``fw.context("debug")``).
"""

from __future__ import annotations

from fw_core import hookimpl
from fw_core.lazy import lazy_inspectors
from fw_core.records import Inspector

#: inspector name -> module of fw_debugger whose ``INSPECTOR`` implements it
INSPECTORS: dict[str, str] = {
    "fw_debugger.anomaly": "anomaly",
    "fw_debugger.breakpoints": "breakpoints",
    "fw_debugger.record": "record",
    "fw_debugger.health": "health",
}


def inspectors() -> list[Inspector]:
    """The debugger's inspector records (inactive; switched on by name)."""
    return lazy_inspectors("fw_debugger", INSPECTORS)


@hookimpl
def fw_register_inspectors():
    return inspectors()
