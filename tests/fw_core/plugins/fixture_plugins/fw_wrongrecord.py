"""Returns a KernelSpec from the devices hook (a wrong record type)."""

import numpy as np

from fw_core import hookimpl
from fw_core.records import KernelSpec


@hookimpl
def fw_register_devices():
    return [KernelSpec(op="add", device="cpu", fn=np.add)]
