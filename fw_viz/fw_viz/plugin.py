"""The fw_viz plugin: registers the graph-capture inspector, inactive.

The inspector's callback forwards to ``fw_viz.graph.INSPECTOR``, imported on the first call, so
loading the plugin imports nothing else of fw_viz and costs nothing per op until
``fw_viz.capture`` switches the inspector on.
"""

from __future__ import annotations

from fw_core import hookimpl
from fw_core.lazy import lazy_inspectors
from fw_core.records import Inspector

#: inspector name -> module of fw_viz whose ``INSPECTOR`` implements it
INSPECTORS: dict[str, str] = {"fw_viz.capture": "graph"}


def inspectors() -> list[Inspector]:
    """fw_viz's inspector records (inactive; ``fw_viz.capture`` switches them on)."""
    return lazy_inspectors("fw_viz", INSPECTORS)


@hookimpl
def fw_register_inspectors():
    return inspectors()
