"""Counting: ``histc`` (a histogram of equal-width bins) and ``bincount`` (occurrences of each
non-negative integer), as in PyTorch. Counts are piecewise constant in the values, so neither is
differentiable, as in PyTorch.

Where PyTorch reads the data to size the result (``bincount``'s length, ``histc``'s range when
``min == max``) fw reads it on the host too: under ``fw.compile`` a logged graph break, as
``.item()`` is. With its range given, ``histc`` is one op that never leaves the device.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["bincount", "histc"]

from .. import dtypes as _dt
from ..errors import DTypeError, FwError, InvalidArgumentError
from ..records import Structure, TensorSpec
from . import anchors
from .dispatch import apply
from .meta import argument_error, located
from .registry import define_op

if TYPE_CHECKING:
    from ..tensor import Tensor

_COUNTS = anchors.flat("counts are piecewise constant in the values: no gradient flows")


def _histc_meta(x, bins, min, max):  # noqa: A002 - the op's attribute names
    return TensorSpec((bins,), x.dtype)


def _bincount_meta(x, weights=None, *, length):
    if weights is None:
        return TensorSpec((length,), _dt.int64)
    return TensorSpec((length,), weights.dtype if weights.dtype.is_floating_point
                      else _dt.float64)


HISTC = define_op(
    "histc", family="counting", builtin=True,
    doc="Counts of x's elements in ``bins`` equal-width bins over [min, max] (max in the last "
        "bin; elements outside and NaN are not counted), in x's dtype.",
    signature="histc(x: Tensor[float], bins: int, min: float, max: float) -> Tensor[bins]",
    meta=_histc_meta, vjp=None, structure=Structure.REDUCTION, anchor=_COUNTS)
BINCOUNT = define_op(
    "bincount", family="counting", builtin=True,
    doc="out[i] = how often i occurs in the 1-d non-negative integers x (the sum of their "
        "weights, when given), for i < length.",
    signature="bincount(x: Tensor[int], weights: Tensor | None = None, length: int) -> Tensor",
    meta=_bincount_meta, vjp=None, structure=Structure.REDUCTION, anchor=_COUNTS)


def histc(input, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002 - torch's
    """A histogram of ``input``'s elements in ``bins`` equal-width bins over ``[min, max]``;
    ``min == max`` (the default) takes the data's range (widened by 1 each way if that is one
    value). Elements outside the range and NaN are ignored. Floating-point input only; the
    counts come in its dtype, as PyTorch's.

    >>> fw.histc(fw.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    try:
        if not input.dtype.is_floating_point:
            raise DTypeError(f"histc takes floating-point tensors, got {input.dtype.name}",
                             op="histc", hint="convert first, e.g. x.float()")
        if isinstance(bins, bool) or not isinstance(bins, int) or bins <= 0:
            raise argument_error("histc", f"bins must be an int > 0, got {bins!r}",
                                 "pass a positive number of bins", error=InvalidArgumentError,
                                 values=(input,), bins=bins)
        low, high = float(min), float(max)
        if low == high and input.numel():
            values = input.detach()
            low, high = float(values.min().item()), float(values.max().item())
        if low == high:
            low, high = low - 1, high + 1
        if low > high:
            raise argument_error("histc", f"max must be larger than min, got min={min}, "
                                 f"max={max}", "swap them", error=InvalidArgumentError,
                                 values=(input,), min=min, max=max)
    except FwError as err:
        raise located(err, "histc", (input,), bins=bins, min=min, max=max) from None
    return apply(HISTC, (input,), {"bins": bins, "min": low, "max": high})


def bincount(input, weights=None, minlength: int = 0) -> Tensor:
    """How often each value ``0 .. max(input)`` occurs in the 1-d non-negative integer tensor
    ``input`` (at least ``minlength`` counts), as int64; with ``weights`` (one per element),
    the sum of their weights instead, in their floating dtype (float64 for integer weights),
    as PyTorch's. InvalidArgumentError (a RuntimeError, as torch's) for other inputs."""
    try:
        if input.dtype.category != _dt.INTEGER:
            raise DTypeError(f"bincount takes integer tensors, got {input.dtype.name}",
                             op="bincount", hint="convert first, e.g. x.long()")
        refusal = _bincount_refusal(input, weights, minlength)
        if refusal:
            raise argument_error("bincount", refusal[0], refusal[1], error=InvalidArgumentError,
                                 values=(input,), minlength=minlength)
        top = int(input.detach().max().item()) + 1 if input.numel() else 0
    except FwError as err:
        raise located(err, "bincount", (input,), minlength=minlength) from None
    inputs = (input,) if weights is None else (input, weights)
    return apply(BINCOUNT, inputs, {"length": max(top, minlength)})


def _bincount_refusal(input, weights, minlength):
    """(what is wrong, the fix) for arguments PyTorch's bincount refuses, or None."""
    if isinstance(minlength, bool) or not isinstance(minlength, int) or minlength < 0:
        return f"minlength must be an int >= 0, got {minlength!r}", "pass minlength >= 0"
    if input.ndim != 1:
        return (f"bincount only supports 1-d inputs, got {input.ndim}-d",
                "flatten first: x.reshape(-1)")
    if input.numel() and int(input.detach().min().item()) < 0:
        return "bincount only supports non-negative inputs", "shift or mask the negatives first"
    if weights is not None and tuple(weights.shape) != tuple(input.shape):
        return (f"weights should be 1-d and have the same length as input ({input.shape[0]}), "
                f"got shape {tuple(weights.shape)}", "pass one weight per element")
    return None


#: Tensor methods this family provides (bound by fw_core.tensor_methods)
METHODS = {name: globals()[name] for name in __all__}
