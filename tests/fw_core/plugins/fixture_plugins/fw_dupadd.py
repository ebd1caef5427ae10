"""Claims the same ``add`` kernel as fw_fastadd, with the same priority: a tie between two
plugins, neither of which provides the cpu device. fw_dupadd sorts first by name, so its kernel
runs even where fw_fastadd comes first on ``sys.path``.
"""

import numpy as np

from fw_core import hookimpl
from fw_core.records import KernelSpec


@hookimpl
def fw_register_kernels():
    return [KernelSpec(op="add", device="cpu", fn=np.add, priority=10)]
