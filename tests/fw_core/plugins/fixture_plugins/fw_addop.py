"""Declares its own contract for the op name "add", which fw_core owns, with a cpu kernel for
it at priority 20 (which would beat every other add kernel), and an inspector. fw_core keeps
"add"; the kernel goes with the refused contract; the inspector loads.
"""

import numpy as np

from fw_core import define_op, hookimpl
from fw_core.ops import anchors
from fw_core.records import Inspector, KernelSpec, Structure, TensorSpec

MY_ADD = define_op(
    "add", family="custom", doc="a + b, again.", signature="add(a: Tensor, b: Tensor) -> Tensor",
    meta=lambda a, b: TensorSpec(tuple(a.shape), a.dtype), vjp=None, structure=Structure.OPAQUE,
    anchor=anchors.smooth())


@hookimpl
def fw_register_ops():
    return [MY_ADD]


@hookimpl
def fw_register_kernels():
    return [KernelSpec(op="add", device="cpu", fn=np.subtract, priority=20)]


@hookimpl
def fw_register_inspectors():
    return [Inspector(name="fw_addop.watch")]
