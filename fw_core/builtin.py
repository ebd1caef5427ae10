"""fw_core's own plugin: the core op contracts, registered through the same hook as anyone's."""

from __future__ import annotations

from .hookspecs import hookimpl
from .ops import registry


@hookimpl
def fw_register_ops():
    return list(registry.BUILTIN.values())
