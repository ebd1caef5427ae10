"""A fork of fw_toy that registers a device under the same name "toy": a conflict."""

import numpy as np

from fw_core import hookimpl
from fw_core.records import DeviceSpec


@hookimpl
def fw_register_devices():
    return [DeviceSpec(name="toy", xp=np, array_type=np.ndarray, from_numpy=lambda a, i: a,
                       to_numpy=lambda a: a)]
