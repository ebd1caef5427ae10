"""fw's dtypes and the one table that says how they combine.

Promotion follows PyTorch: within a category (bool < integer < floating) the wider type wins;
across categories the higher category wins; ``uint8`` with a signed integer gives the signed
one, widened to hold both (``uint8`` with ``int8`` is ``int16``); the two 16-bit floats give
float32 (neither holds the other: float16 has the precision, bfloat16 the range). A Python
scalar never widens a tensor of its own category or a higher one (``float32_tensor * 2.0``
stays float32); an int scalar lifts a bool tensor to int64, a float scalar lifts an integer or
bool tensor to the default float dtype (float32).

bfloat16 is stored as ``ml_dtypes.bfloat16`` (NumPy has no bfloat16 of its own). That type is
of NumPy kind ``"V"``, not ``"f"``: code that asks whether a raw array is floating uses
:data:`FLOAT_KINDS` or :func:`is_float`, never ``kind == "f"``.

======== ===== ===== ===== ===== ===== ===== ===== ===== ===== =====
a \\ b   bool  u8    i8    i16   i32   i64   f16   bf16  f32   f64
======== ===== ===== ===== ===== ===== ===== ===== ===== ===== =====
bool     bool  u8    i8    i16   i32   i64   f16   bf16  f32   f64
u8       u8    u8    i16   i16   i32   i64   f16   bf16  f32   f64
i8       i8    i16   i8    i16   i32   i64   f16   bf16  f32   f64
i16      i16   i16   i16   i16   i32   i64   f16   bf16  f32   f64
i32      i32   i32   i32   i32   i32   i64   f16   bf16  f32   f64
i64      i64   i64   i64   i64   i64   i64   f16   bf16  f32   f64
f16      f16   f16   f16   f16   f16   f16   f16   f32   f32   f64
bf16     bf16  bf16  bf16  bf16  bf16  bf16  f32   bf16  f32   f64
f32      f32   f32   f32   f32   f32   f32   f32   f32   f32   f64
f64      f64   f64   f64   f64   f64   f64   f64   f64   f64   f64
======== ===== ===== ===== ===== ===== ===== ===== ===== ===== =====

(u8 is uint8, i16 int16, f16 float16, bf16 bfloat16, f32 float32, and so on.)
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

BOOL, INTEGER, FLOATING = 0, 1, 2


class DType:
    """A tensor element type: its name, its NumPy equivalent and its promotion category."""

    __slots__ = ("name", "numpy", "itemsize", "category")

    def __init__(self, name: str, numpy_type: type, category: int):
        self.name = name
        self.numpy = np.dtype(numpy_type)
        self.itemsize = self.numpy.itemsize
        self.category = category

    @property
    def is_floating_point(self) -> bool:
        return self.category == FLOATING

    def __repr__(self) -> str:
        return f"fw.{self.name}"

    def __reduce__(self):
        return (from_name, (self.name,))


bool_ = DType("bool", np.bool_, BOOL)
uint8 = DType("uint8", np.uint8, INTEGER)
int8 = DType("int8", np.int8, INTEGER)
int16 = DType("int16", np.int16, INTEGER)
int32 = DType("int32", np.int32, INTEGER)
int64 = DType("int64", np.int64, INTEGER)
float16 = DType("float16", np.float16, FLOATING)
bfloat16 = DType("bfloat16", ml_dtypes.bfloat16, FLOATING)
float32 = DType("float32", np.float32, FLOATING)
float64 = DType("float64", np.float64, FLOATING)

ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
FLOATS = (float16, bfloat16, float32, float64)
INTEGERS = (uint8, int8, int16, int32, int64)
default_float = float32
default_int = int64

_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update(half=float16, float=float32, double=float64, long=int64, int=int32,
                short=int16)
#: NumPy dtype -> DType; the hot path maps raw arrays back to fw dtypes through this.
BY_NUMPY = {d.numpy: d for d in ALL}
#: NumPy kinds of fw's floating dtypes: "f", and "V" for bfloat16. ml_dtypes' types are of the
#: "void" kind; bfloat16 is the only such dtype an fw tensor can hold (BY_NUMPY admits no other).
FLOAT_KINDS = "fV"
#: The 16-bit floats' NumPy dtypes, which kernels compute in float32 and round back (as
#: PyTorch's CPU kernels do). A frozenset: a membership test is one hash, for the hot path.
HALF_NUMPY = frozenset((float16.numpy, bfloat16.numpy))


def is_float(np_dtype: np.dtype) -> bool:
    """Whether a raw array of NumPy dtype ``np_dtype`` holds one of fw's floating dtypes."""
    return np_dtype.kind in FLOAT_KINDS


def finfo(dtype=None):
    """The limits of a floating dtype, as ``torch.finfo``: ``bits``, ``eps``, ``max``,
    ``min``, ``tiny`` (``smallest_normal``), ``resolution`` (``dtype``: default float32).

    Raises:
        DTypeError: ``dtype`` is not floating (use :func:`iinfo`).
    """
    d = default_float if dtype is None else as_dtype(dtype)
    if not d.is_floating_point:
        from .errors import DTypeError

        raise DTypeError(f"finfo takes a floating dtype, got {d!r}", hint=f"iinfo({d!r})")
    return ml_dtypes.finfo(d.numpy)


def iinfo(dtype):
    """The limits of an integer dtype, as ``torch.iinfo``: ``bits``, ``max``, ``min``.

    Raises:
        DTypeError: ``dtype`` is not an integer dtype (use :func:`finfo`).
    """
    d = as_dtype(dtype)
    if d.category != INTEGER:
        from .errors import DTypeError

        raise DTypeError(f"iinfo takes an integer dtype, got {d!r}", hint=f"finfo({d!r})")
    return np.iinfo(d.numpy)


def from_name(name: str) -> DType:
    """The DType called ``name`` ("float32", "bfloat16", "int64", "double", ...)."""
    from .errors import DTypeError

    try:
        return _BY_NAME[name]
    except KeyError:
        raise DTypeError(
            f"unknown dtype {name!r}", hint=f"use one of {', '.join(d.name for d in ALL)}"
        ) from None


def as_dtype(value) -> DType:
    """Accept a DType, its name, a NumPy dtype or a Python type (float, int, bool)."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        return from_name(value)
    if value is float:
        return default_float
    if value is int:
        return default_int
    if value is bool:
        return bool_
    return from_numpy(np.dtype(value))


def from_numpy(np_dtype: np.dtype) -> DType:
    """The DType of a NumPy array, or a DTypeError naming the supported ones."""
    try:
        return BY_NUMPY[np_dtype]
    except KeyError:
        from .errors import DTypeError

        raise DTypeError(
            f"NumPy dtype {np_dtype} has no fw equivalent",
            hint="convert first, e.g. array.astype(np.float32); fw supports "
            + ", ".join(d.name for d in ALL),
        ) from None


def _promote(a: DType, b: DType) -> DType:
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.category == INTEGER and uint8 in (a, b):
        signed = b if a is uint8 else a
        return int16 if signed is int8 else signed  # holds 0..255 and the signed range
    if a.category == FLOATING and a.itemsize == b.itemsize:  # float16, bfloat16: float32 holds both
        return float32
    return a if a.itemsize > b.itemsize else b


#: (DType, DType) -> DType, and the same keyed by NumPy dtypes for the hot path.
PROMOTE = {(a, b): _promote(a, b) for a in ALL for b in ALL}
PROMOTE_NUMPY = {(a.numpy, b.numpy): r.numpy for (a, b), r in PROMOTE.items()}


def promote_types(a, b) -> DType:
    """The dtype two tensors of dtypes ``a`` and ``b`` combine to (see the module table)."""
    return PROMOTE[as_dtype(a), as_dtype(b)]


def scalar_category(value) -> int:
    """Promotion category of a Python scalar."""
    if isinstance(value, (bool, np.bool_)):
        return BOOL
    if isinstance(value, (int, np.integer)):
        return INTEGER
    return FLOATING


def result_type_with_scalar(dtype: DType, value) -> DType:
    """The dtype of ``tensor op scalar`` for a tensor of ``dtype``."""
    category = scalar_category(value)
    if category <= dtype.category:
        return dtype
    return default_int if category == INTEGER else default_float
