"""``Tensor.view(dtype)``: the same bytes read as another dtype, as in PyTorch.

Of equal element sizes the shape stays; otherwise the last dimension (which must be
contiguous) is scaled by the ratio of the sizes, and must divide evenly when the new elements
are larger. The result shares the input's storage. Not differentiable: the bits of a float are
no smooth function of its value (PyTorch's result does not require grad either).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..errors import DTypeError, FwError
from ..records import Structure, TensorSpec
from ..tensor import Tensor
from . import anchors
from ._shape_support import _share
from .dispatch import apply
from .meta import located
from .registry import define_op


def _view_dtype_meta(x, dtype):
    new = _dt.from_numpy(np.dtype(dtype))
    old = x.dtype
    if new.itemsize == old.itemsize:
        return TensorSpec(tuple(x.shape), new)
    what = f"to view {old.name} as {new.name} (different element sizes)"
    if not x.shape:
        raise DTypeError(f"a 0-d tensor cannot be viewed with another element size ({what})",
                         op="view", hint="reshape it to (1,) first")
    last = x.shape[-1]
    if new.itemsize > old.itemsize and (last * old.itemsize) % new.itemsize:
        ratio = new.itemsize // old.itemsize
        raise DTypeError(f"the last dimension ({last}) must be divisible by {ratio} {what}",
                         op="view", hint=f"pad or slice the last dim to a multiple of {ratio}")
    return TensorSpec(tuple(x.shape[:-1]) + (last * old.itemsize // new.itemsize,), new)


VIEW_DTYPE = define_op(
    "view_dtype", family="shape", builtin=True,
    doc="x's bytes reinterpreted as ``dtype``: the shape stays for equal element sizes, else the "
        "last dimension scales by the ratio of the sizes.",
    signature="view_dtype(x: Tensor, dtype) -> Tensor", meta=_view_dtype_meta, vjp=None,
    structure=Structure.OPAQUE,
    anchor=anchors.flat("reinterprets bits: the result is no smooth function of the values"))


def view_dtype(x: Tensor, dtype) -> Tensor:
    """``x.view(dtype)``: the same storage read as ``dtype`` (see the module docstring);
    raises DTypeError (a RuntimeError) where the last dim cannot be rescaled or is not
    contiguous."""
    try:
        dtype = _dt.as_dtype(dtype)
        _view_dtype_meta(x, dtype.numpy)
        data = x._data
        if dtype.itemsize != x.dtype.itemsize and data.ndim and data.shape[-1] != 1 and \
                data.strides[-1] != data.itemsize:
            raise DTypeError(f"viewing {x.dtype.name} as {dtype.name} needs the last dimension "
                             f"to be contiguous (stride 1), got strides {data.strides}",
                             op="view", hint="call .contiguous() first")
        out = apply(VIEW_DTYPE, (x.detach(),), {"dtype": dtype.numpy})
        return _share(x, out)
    except FwError as err:
        raise located(err, "view", (x,), dtype=dtype) from None
