"""Binds each op family's ``METHODS`` onto Tensor, and defines in-place writes.

In-place methods (``x.add_(y)``, ``x[i] = v``, ``x.zero_()``) compute out of place and copy
into ``x``'s storage, bumping its version counter so a backward that saved ``x`` fails loudly
instead of silently using the new values. They are refused on tensors that require grad while
grad mode is on (PyTorch refuses the same on leaves); use them under ``fw.no_grad()``.
"""

from __future__ import annotations

from . import capture
from ._state import state
from .autograd.grad_mode import INFERENCE, check_inference_write
from .errors import AutogradError, ShapeError
from .tensor import Tensor


def _check_writable(x: Tensor, what: str) -> None:
    if x._vc is INFERENCE:
        check_inference_write()
    if state.grad_enabled and (x.requires_grad or x._node is not None):
        raise AutogradError(
            f"{what} on a tensor that requires grad while gradients are recorded",
            hint="use the out-of-place form (x = x + y), or do it under `with fw.no_grad():` "
            "(e.g. parameter updates)",
        )


def _check_storage_writeable(x: Tensor) -> None:
    flags = getattr(x._data, "flags", None)
    if not getattr(flags, "writeable", True):
        raise AutogradError(
            f"cannot write in place into a tensor of shape {tuple(x.shape)}: its storage is a "
            "read-only broadcast view (from expand/broadcast_to)",
            hint="make it writable first: x = x.clone() (or x.contiguous())",
        )


def bump_version(x: Tensor) -> None:
    """Mark ``x``'s storage as modified (shared with its views)."""
    capture.in_place_write(x)
    if x._vc is None:
        x._vc = [1]
    else:
        x._vc[0] += 1


def assign_(x: Tensor, value) -> Tensor:
    """Write ``value`` (broadcast, cast to x's dtype) into ``x``'s storage; return ``x``."""
    _check_writable(x, "in-place update")
    source = value._data if isinstance(value, Tensor) else value
    if isinstance(value, Tensor) and value._device is not x._device:
        source = value.to(x._device)._data
    _check_storage_writeable(x)
    try:
        x._device.xp.copyto(x._data, source, casting="unsafe")
    except ValueError:
        shape = getattr(source, "shape", ())
        raise ShapeError(f"cannot write a value of shape {tuple(shape)} into a tensor of shape "
                         f"{tuple(x.shape)} in place",
                         hint="the value must broadcast to the tensor's shape") from None
    bump_version(x)
    return x


def maybe_inplace(x: Tensor, out: Tensor, inplace: bool) -> Tensor:
    """``out`` written back into ``x`` when ``inplace`` asks and autograd does not record ``x``
    (PyTorch's ``inplace=True`` activations; where autograd needs ``x``, ``out`` is returned
    and ``x`` left as it was)."""
    if inplace and not (state.grad_enabled and (x.requires_grad or x._node is not None)):
        return assign_(x, out)
    return out


def _setitem(x: Tensor, index, value) -> None:
    _check_writable(x, "item assignment")
    _check_storage_writeable(x)
    from .ops.indexing import normalize_index

    index = normalize_index(index, x)
    source = value._data if isinstance(value, Tensor) else value
    if isinstance(value, Tensor) and value._device is not x._device:
        source = value.to(x._device)._data
    try:
        x._data[index] = source
    except ValueError as exc:
        raise ShapeError(f"cannot assign this value to x[{index!r}]: {exc}",
                         hint="the value must broadcast to the indexed region") from None
    bump_version(x)


def _zero_(x: Tensor) -> Tensor:
    return assign_(x, 0)


def _fill_(x: Tensor, value) -> Tensor:
    return assign_(x, value)


def _copy_(x: Tensor, source: Tensor) -> Tensor:
    return assign_(x, source)


def _bind() -> None:
    from .ops import FAMILIES

    for family in FAMILIES:
        for name, fn in getattr(family, "METHODS", {}).items():
            setattr(Tensor, name, fn)
    Tensor.__setitem__ = _setitem
    Tensor.zero_ = _zero_
    Tensor.fill_ = _fill_
    Tensor.copy_ = _copy_


_bind()
