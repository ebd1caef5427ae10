"""Shared meta-rule pieces: broadcasting, dtype promotion, dims, and input descriptions."""

from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes as _dt
from .._state import state
from ..device import Device
from ..errors import ArgumentError, DTypeError, FwError, IndexOutOfRangeError, ShapeError
from ..records import TensorSpec
from . import promotion


def spec_of(x) -> TensorSpec | object:
    """The TensorSpec of a tensor; Python scalars pass through unchanged."""
    data = getattr(x, "_data", None)
    if data is None:
        return x
    return TensorSpec(tuple(data.shape), _dt.BY_NUMPY[data.dtype])


def broadcast_shapes(*shapes, op: str | None = None) -> tuple[int, ...]:
    """The shape ``shapes`` broadcast to (NumPy/PyTorch rules), or a ShapeError saying which
    dimensions clash."""
    ndim = max((len(s) for s in shapes), default=0)
    result = []
    for axis in range(-ndim, 0):
        size = 1
        for s in shapes:
            if len(s) >= -axis:
                d = s[axis]
                if d != 1:
                    if size not in (1, d):
                        raise ShapeError(
                            f"shapes {' and '.join(str(tuple(x)) for x in shapes)} cannot be "
                            f"broadcast: dimension {axis} is {size} in one and {d} in another",
                            op=op,
                            hint="sizes must match or be 1 in every dimension, aligned from the "
                            "right; use reshape/unsqueeze to add the missing dimension",
                        )
                    size = d
        result.append(size)
    return tuple(result)


def promote(*items, float_result: bool = False) -> _dt.DType:
    """Result dtype of combining tensors (TensorSpecs) and Python scalars (see
    :mod:`fw_core.ops.promotion`)."""
    tensors = [i.dtype for i in items if isinstance(i, TensorSpec)]
    scalars = [i for i in items if not isinstance(i, TensorSpec)]
    return promotion.result(tensors, scalars, float_result)


def normalize_dim(dim: int, ndim: int, op: str | None = None) -> int:
    """``dim`` as a non-negative axis of an ``ndim``-dimensional tensor; a ShapeError for a
    dim that is not an int, an IndexOutOfRangeError (a ShapeError and an IndexError) for one out
    of range."""
    bound = max(ndim, 1)
    if dim.__class__ is not int and not isinstance(dim, numbers.Integral):
        raise ShapeError(f"dim must be an int, got {type(dim).__name__} {dim!r}", op=op,
                         hint=f"pass one dimension as an int in [{-bound}, {bound - 1}], e.g. "
                         "dim=-1 for the last")
    if not -bound <= dim < bound:  # an IndexError too, as PyTorch raises
        raise IndexOutOfRangeError(
            f"dimension {dim} is out of range for a {ndim}-d tensor",
            op=op, hint=f"use a dimension in [{-bound}, {bound - 1}]",
        )
    return dim % bound


def normalize_dims(dim, ndim: int, op: str | None = None) -> tuple[int, ...]:
    """``dim`` (None, an int or a sequence) as a sorted tuple of non-negative axes."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        return (normalize_dim(dim, ndim, op),)
    axes = tuple(sorted(normalize_dim(d, ndim, op) for d in dim))
    if len(set(axes)) != len(axes):
        raise ShapeError(f"dimension {dim} repeats an axis", op=op, hint="list each axis once")
    return axes


def require_floating(spec: TensorSpec, op: str) -> None:
    """Raise a DTypeError unless ``spec`` is floating point."""
    if not spec.dtype.is_floating_point:
        raise DTypeError(
            f"expects a floating-point tensor, got {spec.dtype.name}",
            op=op, hint="convert with .float() (or .to(fw.float64))",
        )


def describe(values=(), **named) -> str:
    """What arrived, for an error's ``inputs:`` line: tensors as dtype, shape and device, other
    values as a short repr; keywords follow as ``name=value``.

    >>> describe((fw.ones(3, 4), 2.0), dim=None)
    'float32[3, 4] on cpu, 2.0, dim=None'
    """
    parts = [_describe_one(v) for v in values if v is not None]  # None: an absent input
    parts += [f"{name}={_describe_one(v)}" for name, v in named.items()]
    return ", ".join(parts)


_LONGEST = 60  # characters of a value's repr an inputs line shows
_PLAIN = (bool, numbers.Number, str, bytes, type(None))


def _plain(v) -> bool:
    """A value whose repr reads well: scalars, strings and sequences of them."""
    return isinstance(v, _PLAIN) or (isinstance(v, (list, tuple)) and all(map(_plain, v)))


def _describe_one(v) -> str:
    data = getattr(v, "_data", None)
    if data is not None and hasattr(v, "_device"):
        shape = ", ".join(map(str, data.shape))
        dtype = _dt.BY_NUMPY.get(data.dtype)
        return f"{dtype.name if dtype else data.dtype}[{shape}] on {v._device}"
    if isinstance(v, _dt.DType):
        return v.name
    if isinstance(v, Device):
        return str(v)
    if isinstance(v, np.dtype):
        dtype = _dt.BY_NUMPY.get(v)
        return dtype.name if dtype else str(v)
    if isinstance(v, np.ndarray):
        return f"numpy.ndarray {v.dtype}[{', '.join(map(str, v.shape))}]"
    if isinstance(v, (list, tuple)) and not _plain(v):
        inner = ", ".join(_describe_one(item) for item in v[:8]) + (", ..." if len(v) > 8 else "")
        return f"[{inner}]" if isinstance(v, list) else f"({inner})"
    if isinstance(v, type):
        return v.__qualname__
    text = repr(v)
    if _plain(v) or isinstance(v, (range, dict, slice)):
        return text if len(text) <= _LONGEST else text[:_LONGEST - 3] + "..."
    name = getattr(v, "__name__", None) if callable(v) else None
    if name is not None:
        return f"{type(v).__name__} {name}"
    return type(v).__name__ if len(text) > _LONGEST or text.startswith("<") else text


def given(args: tuple):
    """What a ``*sizes`` argument was given as: ``f(2, 3)`` shows (2, 3), ``f((2, 3))`` too."""
    return args[0] if len(args) == 1 else args


def located(err: FwError, op: str | None, values=(), **named) -> FwError:
    """``err`` with the op, the running module and what arrived filled in where it lacks them
    (an error raised by a shared check deep inside an op learns where it happened)."""
    if err.op is None:
        err.op = op
    if err.module is None:
        err.module = state.module_path or None
    if err.inputs is None:
        err.inputs = describe(values, **named)
    return err


def argument_error(op: str, message: str, hint: str, *, error: type = ArgumentError,
                   values=(), **named) -> FwError:
    """An error for an argument ``op`` cannot take, with what arrived as its inputs line:
    ``raise argument_error("Dropout", "p must be in [0, 1], got 1.5", "...", p=1.5)``."""
    return error(message, op=op, module=state.module_path or None,
                 inputs=describe(values, **named), hint=hint)
