"""Shared meta-rule pieces: broadcasting, dtype promotion, dims, and input descriptions."""

from __future__ import annotations

from .. import dtypes as _dt
from ..errors import DTypeError, ShapeError
from ..records import TensorSpec


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
    """Result dtype of combining tensors (TensorSpecs) and Python scalars."""
    tensor_dtypes = [i.dtype for i in items if isinstance(i, TensorSpec)]
    dtype = tensor_dtypes[0]
    for d in tensor_dtypes[1:]:
        dtype = _dt.PROMOTE[dtype, d]
    for i in items:
        if not isinstance(i, TensorSpec):
            dtype = _dt.result_type_with_scalar(dtype, i)
    if float_result and not dtype.is_floating_point:
        dtype = _dt.default_float
    return dtype


def normalize_dim(dim: int, ndim: int, op: str | None = None) -> int:
    """``dim`` as a non-negative axis of an ``ndim``-dimensional tensor, or a ShapeError."""
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise ShapeError(
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


def describe(values) -> str:
    """'float32[3, 4] on cpu, 2.0' for a list of tensors and scalars (error messages)."""
    parts = []
    for v in values:
        data = getattr(v, "_data", None)
        if data is None:
            parts.append(repr(v))
        else:
            shape = ", ".join(map(str, data.shape))
            parts.append(f"{_dt.BY_NUMPY.get(data.dtype, data.dtype)!s}[{shape}] on {v._device}"
                         .replace("fw.", ""))
    return ", ".join(parts)
