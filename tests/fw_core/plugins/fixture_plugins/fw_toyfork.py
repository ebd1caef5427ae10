"""A fork of fw_toy that registers a device under the same name "toy" with a kernel for it,
and an inspector: fw_toy keeps the device (it is the device's own plugin), the fork's kernel
goes with its refused device, and its inspector loads.
"""

import numpy as np

from fw_core import hookimpl
from fw_core.records import DeviceSpec, Inspector, KernelSpec


@hookimpl
def fw_register_devices():
    return [DeviceSpec(name="toy", xp=np, array_type=np.ndarray, from_numpy=lambda a, i: a,
                       to_numpy=lambda a: a)]


@hookimpl
def fw_register_kernels():
    return [KernelSpec(op="mul", device="toy", fn=np.multiply, priority=5)]


@hookimpl
def fw_register_inspectors():
    return [Inspector(name="fw_toyfork.watch")]
