"""Overrides fw_cpu's ``add`` kernel with a higher priority (and counts its calls).

``CONFIGURED`` collects the PluginConfig of every ``fw_configure`` call: a plugin that lost a
kernel to a tie still loads and is configured.
"""

import numpy as np

from fw_core import hookimpl
from fw_core.records import KernelSpec

CALLS: list[str] = []
CONFIGURED: list = []


def _add(a, b):
    CALLS.append("add")
    return np.add(a, b)


@hookimpl
def fw_register_kernels():
    return [KernelSpec(op="add", device="cpu", fn=_add, priority=10)]


@hookimpl
def fw_configure(config):
    CONFIGURED.append(config)
