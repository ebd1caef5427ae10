"""The fw_viz plugin: registers the graph-capture inspector, inactive.

The inspector's callback forwards to ``fw_viz.graph.INSPECTOR``, imported on the first call, so
loading the plugin imports nothing else of fw_viz and costs nothing per op until
``fw_viz.capture`` switches the inspector on.
"""

from __future__ import annotations

import importlib

from fw_core import hookimpl
from fw_core.records import Inspector

#: inspector name -> module of fw_viz whose ``INSPECTOR`` implements it
INSPECTORS: dict[str, str] = {"fw_viz.capture": "graph"}


class _Forward:
    """``fn(arg)`` that calls ``fw_viz.<module>.INSPECTOR.<callback>(arg)``, importing the module
    the first time."""

    def __init__(self, module: str, callback: str):
        self.module = module
        self.callback = callback
        self.target = None

    def __call__(self, arg) -> None:
        target = self.target
        if target is None:
            module = importlib.import_module(f"fw_viz.{self.module}")
            target = getattr(module.INSPECTOR, self.callback) or (lambda arg: None)
            self.target = target
        target(arg)


def inspectors() -> list[Inspector]:
    """fw_viz's inspector records (inactive; ``fw_viz.capture`` switches them on)."""
    return [Inspector(name=name, on_op=_Forward(module, "on_op"),
                      on_backward=_Forward(module, "on_backward"))
            for name, module in INSPECTORS.items()]


@hookimpl
def fw_register_inspectors():
    return inspectors()
