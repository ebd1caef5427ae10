"""A plugin whose import takes just over fw's slow-import threshold (1 s)."""

import time

from fw_core import hookimpl
from fw_core.records import KernelSpec

time.sleep(1.05)


@hookimpl
def fw_register_kernels():
    return [KernelSpec(op="cube", device="cpu", fn=lambda x: x * x * x)]
