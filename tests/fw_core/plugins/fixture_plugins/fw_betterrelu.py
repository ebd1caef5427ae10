"""A third party's cpu kernels: relu at fw_cpu's own priority (0), a tie with the device's
plugin, and exp at priority 1, which replaces fw_cpu's. Its name sorts before fw_cpu and its
folder comes first on ``sys.path``: either once made fw_cpu the plugin that failed.

``CALLS`` records which of its kernels ran.
"""

import numpy as np

from fw_core import hookimpl
from fw_core.records import KernelSpec

CALLS: list[str] = []


def _relu(x):
    CALLS.append("relu")
    return np.maximum(x, x.dtype.type(0))


def _exp(x):
    CALLS.append("exp")
    return np.exp(x)


@hookimpl
def fw_register_kernels():
    return [KernelSpec(op="relu", device="cpu", fn=_relu),
            KernelSpec(op="exp", device="cpu", fn=_exp, priority=1)]
