"""A device plugin whose device is not usable here (no "card"): state "no device"."""

import numpy as np

from fw_core import hookimpl
from fw_core.records import DeviceSpec, KernelSpec

REASON = "no toy2 card found (driver toy2drv is not loaded)"

TOY2 = DeviceSpec(name="toy2", xp=np, array_type=np.ndarray, from_numpy=lambda a, i: a,
                  to_numpy=lambda a: a, unavailable_reason=lambda: REASON, count=lambda: 0)


@hookimpl
def fw_register_devices():
    return [TOY2]


@hookimpl
def fw_register_kernels():
    return [KernelSpec(op="add", device="toy2", fn=np.add)]
