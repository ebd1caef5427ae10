"""Claims the same ``add`` kernel as fw_fastadd with the same priority: a conflict.

``CONFIGURED`` shows whether fw treated it as loaded (it must not, once it failed).
"""

import numpy as np

from fw_core import hookimpl
from fw_core.records import KernelSpec

CONFIGURED: list = []


@hookimpl
def fw_register_kernels():
    return [KernelSpec(op="add", device="cpu", fn=np.add, priority=10)]


@hookimpl
def fw_configure(config):
    CONFIGURED.append(config)
