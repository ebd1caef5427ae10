"""Creation ops (tensors from data, shapes or random streams) and dtype/device conversion."""

from __future__ import annotations

__all__ = ["arange", "as_tensor", "clone", "empty", "empty_like", "eye", "from_numpy", "full",
           "full_like", "linspace", "ones", "ones_like", "rand", "rand_like", "randint", "randn",
           "randn_like", "randperm", "tensor", "zeros", "zeros_like"]

import math
import numbers
import operator
from collections.abc import Callable, Iterable

import numpy as np

from .. import capture
from .. import dtypes as _dt
from .._state import state
from ..autograd.grad_mode import INFERENCE
from ..device import get as get_device
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, FwError, ShapeError
from ..random import default_generator
from ..records import Structure, TensorSpec
from ..tensor import Tensor
from . import anchors
from .allocation import check_allocation, out_of_memory
from .dispatch import apply, finish, missing_kernel, not_a_tensor
from .meta import describe, given, located
from .registry import define_op

_NOT_DIFFERENTIABLE = anchors.flat("creates values from its arguments: no input to "
                                   "differentiate")


def _shape_meta(shape, dtype, **_):
    return TensorSpec(tuple(shape), _dt.from_numpy(np.dtype(dtype)))


def _creation_op(name, doc, signature, meta=_shape_meta):
    return define_op(name, family="creation", builtin=True, doc=doc, signature=signature,
                     meta=meta, vjp=None, structure=Structure.NONE, anchor=_NOT_DIFFERENTIABLE)


ZEROS = _creation_op("zeros", "A tensor of zeros.", "zeros(*shape, dtype=None, device=None)")
ONES = _creation_op("ones", "A tensor of ones.", "ones(*shape, dtype=None, device=None)")
FULL = _creation_op("full", "A tensor filled with one value.",
                    "full(shape, fill_value, dtype=None, device=None)")
EMPTY = _creation_op("empty", "An uninitialised tensor (its values are arbitrary).",
                     "empty(*shape, dtype=None, device=None)")
ARANGE = _creation_op("arange", "Values start, start + step, ... below end.",
                      "arange(start=0, end, step=1, dtype=None, device=None)",
                      meta=lambda start, end, step, dtype: TensorSpec(
                          (max(0, int(np.ceil((end - start) / step))),),
                          _dt.from_numpy(np.dtype(dtype))))
LINSPACE = _creation_op("linspace", "``steps`` evenly spaced values from start to end inclusive.",
                        "linspace(start, end, steps, dtype=None, device=None)",
                        meta=lambda start, end, steps, dtype: TensorSpec(
                            (steps,), _dt.from_numpy(np.dtype(dtype))))
EYE = _creation_op("eye", "An n x m identity matrix.", "eye(n, m=None, dtype=None, device=None)",
                   meta=lambda n, m, dtype: TensorSpec((n, m), _dt.from_numpy(np.dtype(dtype))))


def _cast_meta(x, dtype):
    return TensorSpec(tuple(x.shape), _dt.from_numpy(np.dtype(dtype)))


def _cast_vjp(ctx, g):
    return (g.to(_dt.from_numpy(ctx.attrs["source"])),)


CAST = define_op(
    "cast", family="creation", builtin=True,
    doc="The same values converted to another dtype (``t.to(fw.float64)``, ``t.long()``).",
    signature="cast(x: Tensor, dtype: DType) -> Tensor",
    meta=lambda x, dtype, source=None: _cast_meta(x, dtype), vjp=_cast_vjp,
    structure=Structure.ELEMENTWISE,
    anchor=anchors.smooth("identity on values; lower precision rounds them"), cost="cheap",
    expr=lambda x, dtype, source=None: x)  # the formula's rounding to the result is the cast
CLONE = define_op(
    "clone", family="creation", builtin=True, doc="A copy with its own storage.",
    signature="clone(x: Tensor) -> Tensor", meta=lambda x: TensorSpec(tuple(x.shape), x.dtype),
    vjp=lambda ctx, g: (g,), structure=Structure.ELEMENTWISE, anchor=anchors.smooth("identity"),
    expr=lambda x: x)
TO_DEVICE = define_op(
    "to_device", family="creation", builtin=True,
    doc="The same values on another device (a copy).",
    signature="to_device(x: Tensor, device: str) -> Tensor",
    meta=lambda x, device, source=None: TensorSpec(tuple(x.shape), x.dtype),
    vjp=lambda ctx, g: (to_device(g, ctx.attrs["source"]),),
    # injective: the identity, and on the same device it returns its input itself (a view)
    structure=Structure.INJECTIVE, anchor=anchors.smooth("identity"),
)


# -- helpers ---------------------------------------------------------------------------------------
def _resolve(dtype, device, default=None):
    return (_dt.as_dtype(dtype) if dtype is not None else (default or _dt.default_float),
            get_device("cpu" if device is None else device))


def _shape_args(shape) -> tuple[int, ...]:
    """``f(2, 3)``, ``f((2, 3))`` or ``f([2, 3])`` as a tuple of non-negative ints."""
    if len(shape) == 1 and isinstance(shape[0], Iterable) and not isinstance(shape[0], str) \
            and getattr(shape[0], "ndim", 1) != 0:
        shape = tuple(shape[0])
    try:
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise ArgumentTypeError(
            f"a shape must be integers, got {', '.join(type(s).__name__ for s in shape)}",
            hint="pass whole numbers, e.g. fw.zeros(2, 3) or fw.zeros((2, 3)); "
            "int(n) converts a float that holds one") from None
    if any(s < 0 for s in shape):
        raise ShapeError(f"negative dimension in shape {shape}",
                         hint="sizes must be >= 0; to size one dimension from the others use "
                         "reshape(-1, ...) on an existing tensor")
    return shape


def _count(value, what: str) -> int:
    """``value`` as an int >= 0 (a number of elements, rows or steps)."""
    try:
        value = operator.index(value)
    except TypeError:
        raise ArgumentTypeError(f"{what} must be an integer, got {type(value).__name__} "
                                f"{value!r}", hint=f"pass a whole number of {what}") from None
    if value < 0:
        raise ArgumentError(f"{what} must be >= 0, got {value}",
                            hint=f"pass a non-negative number of {what}")
    return value


def _run_creation(op, device, attrs) -> Tensor:
    kernel = device.kernels.get(op) or missing_kernel(op, device)
    try:
        out = kernel(**attrs)
    except MemoryError:
        raise out_of_memory(op.name, op.meta(**attrs), device, attrs) from None
    return finish(op, (), attrs, out, device)


def _created(op, device, attrs, requires_grad: bool, shape=None) -> Tensor:
    """Run creation ``op`` after checking that its result (of ``shape``, else the meta
    rule's) fits on ``device``."""
    if shape is None:
        shape = op.meta(**attrs).shape
    check_allocation(op.name, shape, attrs["dtype"], device, attrs)
    out = _run_creation(op, device, attrs)
    return out.requires_grad_() if requires_grad else out


def _from_host(array: np.ndarray, device, requires_grad=False) -> Tensor:
    data = device.spec.from_numpy(array, device.index)
    t = Tensor._wrap(data, device, None, state.module_path)
    if state.inference_mode:
        t._vc = INFERENCE
    capture.created(t)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _host_array(data, dtype: _dt.DType | None) -> np.ndarray:
    if isinstance(data, Tensor):
        array = np.asarray(data.__array__())
    elif isinstance(data, (list, tuple)) and any(isinstance(d, Tensor) for d in _flat(data)):
        array = np.array([np.asarray(d.__array__()) if isinstance(d, Tensor) else d
                          for d in data])
    elif dtype is not None:
        array = np.asarray(data, dtype=dtype.numpy)
    else:
        array = np.asarray(data)
        if array.dtype == np.float64 and not isinstance(data, (np.ndarray, np.generic)):
            array = array.astype(_dt.default_float.numpy)  # Python floats -> float32, as torch
    if dtype is not None:
        array = array.astype(dtype.numpy)
    elif array.dtype not in _dt.BY_NUMPY:
        if array.dtype.kind in "iu" and array.dtype.itemsize <= 8:
            array = array.astype(np.int64)
        elif _dt.is_float(array.dtype):
            array = array.astype(np.float32 if array.dtype.itemsize <= 4 else np.float64)
        else:
            _dt.from_numpy(array.dtype)  # raises a DTypeError naming the supported dtypes
    return array


def _converted(op: str, data, dtype, device) -> tuple[np.ndarray, object]:
    """(the host array, the device) for ``tensor``/``as_tensor``, or an error naming ``op``
    and, for ragged nested lists, where the lengths differ."""
    try:
        dtype = None if dtype is None else _dt.as_dtype(dtype)
        device = get_device("cpu" if device is None else device)
        try:
            return _host_array(data, dtype), device
        except FwError:
            raise
        except (ValueError, TypeError) as exc:
            raise _not_an_array(data, exc) from None
    except FwError as err:
        raise located(err, op, data=data, dtype=dtype, device=device) from None


def _not_an_array(data, exc: Exception) -> FwError:
    where = _ragged_at(data) if isinstance(data, (list, tuple)) else None
    if where is not None:
        return ShapeError(f"the nested lists are ragged: {where}",
                          hint="a tensor is rectangular: give every row the same length (pad "
                          "the short ones), or keep ragged data as a list of tensors")
    return DTypeError(f"cannot make a tensor of {type(data).__name__} ({exc})",
                      hint="pass numbers, (nested) lists or tuples of numbers, a NumPy array "
                      "or a tensor")


def _ragged_at(data, path: str = "") -> str | None:
    """Where nested sequence ``data`` stops being rectangular, in words, or None."""
    nested = [isinstance(d, (list, tuple)) for d in data]
    if any(nested) and not all(nested):
        first = nested.index(not nested[0])
        return (f"item {path}[{first}] is {'a list' if nested[first] else 'a number'} but "
                f"item {path}[0] is {'a list' if nested[0] else 'a number'}")
    if not any(nested):
        return None
    lengths = [len(d) for d in data]
    for i, n in enumerate(lengths):
        if n != lengths[0]:
            return (f"item {path}[{i}] has {n} elements but item {path}[0] has "
                    f"{lengths[0]}")
    for i, d in enumerate(data):
        where = _ragged_at(d, f"{path}[{i}]")
        if where is not None:
            return where
    return None


def _flat(data):
    for d in data:
        if isinstance(d, (list, tuple)):
            yield from _flat(d)
        else:
            yield d


# -- public API ------------------------------------------------------------------------------------
def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor (a copy) from a Python number, (nested) list, NumPy array or tensor.

    Python floats give float32 and ints int64 (as PyTorch); NumPy arrays keep their dtype.

    >>> fw.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True).shape
    (2, 2)
    """
    array, device = _converted("tensor", data, dtype, device)
    return _from_host(np.array(array, copy=True), device, requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like :func:`tensor`, but returns ``data`` itself when it is already a matching tensor,
    and shares memory with a NumPy array on the CPU when no conversion is needed."""
    if isinstance(data, Tensor):
        out = data
        if dtype is not None or device is not None:
            out = data.to(device=device, dtype=dtype)
        return out
    array, device = _converted("as_tensor", data, dtype, device)
    return _from_host(array, device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with a NumPy array (same dtype; unsupported dtypes raise)."""
    if not isinstance(array, np.ndarray):
        raise DTypeError(f"from_numpy expects a numpy.ndarray, got {type(array).__name__}",
                         hint="use fw.tensor(data) for lists and numbers")
    _dt.from_numpy(array.dtype)
    return _from_host(array, get_device("cpu"))


def _filled(op, shape, dtype, device, requires_grad, **attrs) -> Tensor:
    """zeros, ones, empty and full: a tensor of ``shape`` made by ``op``'s kernel."""
    try:
        dtype, device = _resolve(dtype, device)
        sizes = _shape_args(shape)
        attrs = {"shape": sizes, **attrs, "dtype": dtype.numpy}
        return _created(op, device, attrs, requires_grad, sizes)
    except FwError as err:
        raise located(err, op.name, shape=given(shape), dtype=dtype, device=device) from None


def zeros(*shape, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros: ``fw.zeros(2, 3)`` or ``fw.zeros((2, 3))``.

    Raises ShapeError for a negative size, ArgumentTypeError for a size that is not an int,
    and OutOfMemoryError (before allocating) for more bytes than the device has.
    """
    return _filled(ZEROS, shape, dtype, device, requires_grad)


def ones(*shape, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones (sizes checked as in :func:`zeros`)."""
    return _filled(ONES, shape, dtype, device, requires_grad)


def empty(*shape, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor (fast; fill it before reading)."""
    return _filled(EMPTY, shape, dtype, device, requires_grad)


def full(shape, fill_value, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value`` (dtype inferred from it if not given)."""
    if isinstance(fill_value, Tensor) and fill_value.ndim == 0:
        fill_value = fill_value.item()
    if isinstance(fill_value, str) or not isinstance(fill_value, numbers.Number):
        raise DTypeError(f"fill_value must be a number, got {type(fill_value).__name__}",
                         op="full", inputs=describe(shape=shape, fill_value=fill_value),
                         hint="pass an int, float or bool, e.g. fw.full((2, 3), 7.0)")
    if dtype is None:
        dtype = _dt.result_type_with_scalar(_dt.bool_, fill_value)
    return _filled(FULL, (shape,), dtype, device, requires_grad, fill_value=fill_value)


def arange(start, end=None, step=1, dtype=None, device=None) -> Tensor:
    """``fw.arange(5)``, ``fw.arange(1, 10, 2)``: int64 for integer arguments, else float32.

    Raises ArgumentError for step 0, a NaN or infinite bound, or a step that points away from
    ``end`` (as PyTorch).
    """
    if end is None:
        start, end = 0, start
    try:
        for name, value in (("start", start), ("end", end), ("step", step)):
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ArgumentTypeError(f"{name} must be a number, got {type(value).__name__}",
                                        hint="pass ints or floats")
            if not math.isfinite(value):
                raise ArgumentError(f"{name} must be finite, got {value}",
                                    hint="pass finite bounds, e.g. fw.arange(0, 10)")
        if step == 0:
            raise ArgumentError("step must be nonzero",
                                hint="pass a positive step to count up, a negative one down")
        if (end - start) * step < 0:
            raise ArgumentError(f"step {step} points away from end: {start} -> {end} never "
                                "arrives", hint=f"use step={-step}, or swap start and end")
        integral = all(isinstance(v, numbers.Integral) for v in (start, end, step))
        default = _dt.default_int if integral else _dt.default_float
        dtype, device = _resolve(dtype, device, default)
        attrs = {"start": start, "end": end, "step": step, "dtype": dtype.numpy}
        return _created(ARANGE, device, attrs, False)
    except FwError as err:
        raise located(err, "arange", start=start, end=end, step=step) from None


def linspace(start, end, steps: int, dtype=None, device=None) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive, computed as
    PyTorch does: integer dtypes truncate each value toward zero; bool is refused."""
    try:
        dtype, device = _resolve(dtype, device)
        if dtype is _dt.bool_:
            raise DTypeError("bool has no evenly spaced values", op="linspace",
                             hint="make floats or integers, then compare: "
                             "fw.linspace(0, 1, n) > 0.5")
        attrs = {"start": start, "end": end, "steps": _count(steps, "steps"),
                 "dtype": dtype.numpy}
        return _created(LINSPACE, device, attrs, False)
    except FwError as err:
        raise located(err, "linspace", start=start, end=end, steps=steps) from None


def eye(n: int, m: int | None = None, dtype=None, device=None) -> Tensor:
    """The n x m identity matrix (square if m is None)."""
    try:
        dtype, device = _resolve(dtype, device)
        rows, cols = _shape_args((n, n if m is None else m))
        return _created(EYE, device, {"n": rows, "m": cols, "dtype": dtype.numpy}, False)
    except FwError as err:
        raise located(err, "eye", n=n, m=m) from None


def _random(op: str, draw, shape, dtype, device, generator, requires_grad):
    try:
        dtype, device = _resolve(dtype, device)
        shape = _shape_args(shape)
        check_allocation(op, shape, dtype, device, {"shape": shape, "dtype": dtype})
    except FwError as err:
        raise located(err, op, shape=given(shape), dtype=dtype, device=device) from None
    generator = generator or default_generator

    def make():
        try:
            drawn = draw(generator.numpy, shape)
            return device.spec.from_numpy(np.asarray(drawn, dtype=dtype.numpy), device.index)
        except MemoryError:
            raise out_of_memory(op, TensorSpec(shape, dtype), device,
                                {"shape": shape, "dtype": dtype}) from None

    return _host_drawn(make, device, requires_grad, "a random tensor")


def _host_drawn(make, device, requires_grad=False, what="a random tensor") -> Tensor:
    """A tensor drawn on the host by ``make()``; a compiled function draws it on every run."""
    t = Tensor._wrap(make(), device, None, state.module_path)
    if state.inference_mode:
        t._vc = INFERENCE
    capture.host_value(t, make, what)
    if requires_grad:
        t.requires_grad_(True)
    return t


def rand(*shape, dtype=None, device=None, generator=None, requires_grad=False) -> Tensor:
    """Uniform samples in [0, 1)."""
    return _random("rand", lambda rng, s: rng.random(s), shape, dtype, device, generator,
                   requires_grad)


def randn(*shape, dtype=None, device=None, generator=None, requires_grad=False) -> Tensor:
    """Standard normal samples."""
    return _random("randn", lambda rng, s: rng.standard_normal(s), shape, dtype, device,
                   generator, requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """Integers uniform in [low, high): ``randint(high, size)`` or ``randint(low, high, size)``
    (int64 unless ``dtype`` says otherwise), as PyTorch.

    Raises ArgumentTypeError without a size, ArgumentError unless low < high (the range must
    hold at least one integer).
    """
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    if size is None:
        raise ArgumentTypeError("randint needs a size: randint(high, size) or randint(low, "
                                "high, size)", op="randint",
                                hint="e.g. fw.randint(10, (3,)) or fw.randint(0, 10, (3,))")
    if not low < high:
        raise ArgumentError(f"the range [{low}, {high}) holds no integer: low must be < high",
                            op="randint", inputs=describe(low=low, high=high, size=size),
                            hint="high is exclusive: randint(0, 10) draws 0..9, randint(5, 6) "
                            "always 5")
    dtype = _dt.default_int if dtype is None else dtype
    size = (size,) if isinstance(size, numbers.Integral) else size
    return _random("randint", lambda rng, s: rng.integers(low, high, s), size, dtype, device,
                   generator, requires_grad)


def randperm(n: int, *, generator=None, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of 0 .. n-1 (int64 unless ``dtype`` says otherwise)."""
    try:
        count = _count(n, "elements")
        dtype = _dt.default_int if dtype is None else _dt.as_dtype(dtype)
        device = get_device("cpu" if device is None else device)
        check_allocation("randperm", (count,), dtype, device, {"n": n})
    except FwError as err:
        raise located(err, "randperm", n=n) from None
    generator = generator or default_generator
    return _host_drawn(lambda: device.spec.from_numpy(
        generator.numpy.permutation(count).astype(dtype.numpy), device.index), device,
        requires_grad, what="a random permutation")


def _like(fn):
    def like(x, dtype=None, device=None, **kwargs):
        if not isinstance(x, Tensor):
            raise not_a_tensor(like.__name__, x)
        return fn(x.shape, dtype=dtype or x.dtype, device=device or x.device, **kwargs)

    like.__name__ = like.__qualname__ = fn.__name__ + "_like"
    like.__doc__ = f"Like ``fw.{fn.__name__}`` with the shape, dtype and device of ``x``."
    return like


zeros_like, ones_like, empty_like, rand_like, randn_like = map(_like, (
    zeros, ones, empty, rand, randn))


def full_like(x, fill_value, dtype=None, device=None) -> Tensor:
    """A tensor like ``x`` filled with ``fill_value``."""
    if not isinstance(x, Tensor):
        raise not_a_tensor("full_like", x)
    return full(x.shape, fill_value, dtype=dtype or x.dtype, device=device or x.device)


def clone(x: Tensor) -> Tensor:
    """A copy with its own storage (recorded for backward)."""
    return apply(CLONE, (x,))


def cast(x: Tensor, dtype) -> Tensor:
    """``x`` converted to ``dtype`` (``x`` itself if it already has it)."""
    dtype = _dt.as_dtype(dtype)
    if x._data.dtype == dtype.numpy:
        return x
    return apply(CAST, (x,), {"dtype": dtype.numpy, "source": x._data.dtype})


def to_device(x: Tensor, device) -> Tensor:
    """``x`` copied to ``device`` (``x`` itself if already there)."""
    target = get_device(device)
    source = x._device
    if target is source:
        return x
    host = source.spec.to_numpy(x._data)
    out = target.spec.from_numpy(np.ascontiguousarray(host), target.index)
    return finish(TO_DEVICE, (x,), {"device": str(target), "source": str(source)}, out, target)


def start_to_device(x: Tensor, device) -> Callable[[], Tensor]:
    """Start copying ``x`` to ``device``; the returned ``ready()`` gives the copy.

    A host tensor bound for a device with a ``stage`` (an asynchronous copy) returns before
    the copy ends, so the caller's work overlaps it; every other copy is made at once. The
    result is the same ``to_device`` op's tensor either way.
    """
    target = get_device(device)
    source = x._device
    stage = target.spec.stage
    if stage is None or source.type != "cpu" or target is source:
        out = to_device(x, target)
        return lambda: out
    ready = stage(np.ascontiguousarray(x._data), target.index)
    attrs = {"device": str(target), "source": str(source)}
    return lambda: finish(TO_DEVICE, (x,), attrs, ready(), target)


def to(x: Tensor, *args, device=None, dtype=None, copy: bool = False, non_blocking=False):
    """Implements ``Tensor.to``: accepts a device, a dtype, a tensor, or keywords."""
    for arg in args:
        if isinstance(arg, Tensor):
            device, dtype = arg.device, arg.dtype
        elif isinstance(arg, _dt.DType) or arg in (float, int, bool) or (
                isinstance(arg, str) and arg in _dt._BY_NAME):
            dtype = arg
        else:
            device = arg
    out = x
    if device is not None:
        out = to_device(out, device)
    if dtype is not None:
        out = cast(out, dtype)
    if copy and out is x:
        out = clone(x)
    return out
