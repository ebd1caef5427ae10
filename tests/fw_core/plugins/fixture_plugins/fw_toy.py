"""A device plugin: device "toy" holds NumPy arrays and has kernels for add and mul only.

Every op without a toy kernel falls back to the CPU (with a one-time FallbackWarning). It also
ships a kernel for the op "cube" of the optional plugin fw_cube, used only when that is loaded.
``CALLS`` records the toy kernels that ran, so a test can tell the plugin's code was used.
"""

import numpy as np

from fw_core import hookimpl
from fw_core.records import DeviceSpec, KernelSpec

CALLS: list[str] = []


def _from_numpy(array, index):
    return np.array(array, copy=True)  # the toy device owns its memory


def _to_numpy(array):
    return array


def _add(a, b):
    CALLS.append("add")
    return np.add(a, b)


def _mul(a, b):
    CALLS.append("mul")
    return np.multiply(a, b)


def _cube(x):
    CALLS.append("cube")
    return x * x * x


TOY = DeviceSpec(name="toy", xp=np, array_type=np.ndarray, from_numpy=_from_numpy,
                 to_numpy=_to_numpy, count=lambda: 2, description="a test device on NumPy")


@hookimpl
def fw_register_devices():
    return [TOY]


@hookimpl
def fw_register_kernels():
    return [
        KernelSpec(op="add", device="toy", fn=_add),
        KernelSpec(op="mul", device="toy", fn=_mul, dtypes=frozenset({"float32", "float64"})),
        KernelSpec(op="cube", device="toy", fn=_cube),
    ]
