"""Indexing ops: ``x[index]``, gather/scatter, index_select and masked_fill.

Indexing follows PyTorch: integers, slices (positive steps), None, Ellipsis, bool masks and
integer arrays/tensors/lists. Integers are applied before array indices, so ``x[0, :, idx]``
has shape ``(x.shape[1], len(idx))`` (NumPy would put the array dimension first). The
accumulating backward ops (``index_backward``, ``scatter_add``) are OPAQUE; the rest INJECTIVE.
"""

from __future__ import annotations

__all__ = ["gather", "getitem", "index_select", "masked_fill", "normalize_index", "scatter",
           "scatter_add"]

import numbers
import operator

import numpy as np

from .. import dtypes as _dt
from .._state import state
from ..errors import (
    ArgumentError,
    DTypeError,
    FwError,
    IndexOutOfRangeError,
    ShapeError,
    UnsupportedError,
)
from ..records import Structure, SumBatching, TensorSpec
from ..tensor import Tensor
from . import anchors
from ._elementwise_support import inplace_method
from ._shape_support import (
    _SUMS,
    _VOID,
    _checked,
    _op,
    _require_integer,
    _reshape,
    _share,
)
from .creation import full, zeros
from .dispatch import apply
from .elementwise import where
from .meta import broadcast_shapes, located, normalize_dim, spec_of


# -- indexing -------------------------------------------------------------------------------------
def _is_array(entry) -> bool:
    return getattr(entry, "ndim", None) is not None


def _walk(index, ndim):
    """(entry, the dimension it indexes or None) for each entry of a normalised index."""
    consumed = sum(1 for e in index if e is not None and e is not Ellipsis)
    dim = 0
    for e in index:
        if e is None or e is Ellipsis:
            yield e, None
            dim += ndim - consumed if e is Ellipsis else 0
        else:
            yield e, dim
            dim += 1


def _check_range(array, dim: int, size: int, op: str) -> None:
    """ShapeError unless every value of an integer index array is in [-size, size)."""
    if array.size:
        low, high = int(array.min()), int(array.max())
        if low < -size or high >= size:
            raise IndexOutOfRangeError(
                f"index {high if high >= size else low} is out of range for dimension {dim} of "
                f"size {size}", op=op, hint=f"indices must be in [{-size}, {size - 1}]")


def _index_shape(shape, index, op="getitem") -> tuple[int, ...]:
    """The shape ``x[index]`` has for ``x`` of ``shape`` (NumPy rules on a normalised index)."""
    stand_in = []
    for e, dim in _walk(index, len(shape)):
        if dim is not None and dim < len(shape):
            if _is_array(e):
                _check_range(e, dim, shape[dim], op)
                e = np.zeros(e.shape, np.intp)
            elif e.__class__ is int and not -shape[dim] <= e < shape[dim]:
                _out_of_range(e, dim, shape[dim], op)
        stand_in.append(e)
    try:
        return np.empty(shape, _VOID)[tuple(stand_in)].shape
    except IndexError as exc:
        raise IndexOutOfRangeError(f"cannot index shape {tuple(shape)}: {exc}", op=op,
                         hint="check the number of indices and their ranges") from None


def _getitem_meta(x, index):
    return TensorSpec(_index_shape(tuple(x.shape), index), x.dtype)


def _index_backward_meta(g, shape, index):
    expected = _index_shape(tuple(shape), index, "index_backward")
    if tuple(g.shape) != expected:
        raise ShapeError(f"gradient of shape {tuple(g.shape)} for an index selecting {expected} "
                         f"of shape {tuple(shape)}", op="index_backward",
                         hint="pass the gradient of x[index]")
    return TensorSpec(tuple(shape), g.dtype)


def _tiled_pieces(attrs: list[dict], shapes: list[tuple]) -> SumBatching | None:
    """Scatters into zeros whose indexes are slices tiling one axis (the gradient of ``chunk``
    or ``split``): their sum is the concatenation of the pieces, exactly."""
    shape = attrs[0]["shape"]
    indexes = [a["index"] for a in attrs]
    if any(a["shape"] != shape or len(ix) != len(indexes[0]) for a, ix in zip(attrs, indexes)):
        return None
    differing = [i for i in range(len(indexes[0])) if len({repr(ix[i]) for ix in indexes}) > 1]
    if len(differing) != 1 or differing[0] >= len(shape):
        return None
    axis = differing[0]
    if any(ix[i] != slice(None) for ix in indexes for i in range(axis)):
        return None  # an integer or slice index before the axis changes the piece's layout
    spans = []
    for k, (ix, (piece,)) in enumerate(zip(indexes, shapes)):
        s = ix[axis]
        if not isinstance(s, slice) or s.step not in (None, 1):
            return None
        start, stop, _ = s.indices(shape[axis])
        if piece[axis] != stop - start:
            return None
        spans.append((start, stop, k))
    spans.sort()
    position = 0
    for start, stop, _ in spans:
        if start != position:
            return None
        position = stop
    if position != shape[axis]:
        return None
    return SumBatching(axes=(axis,), order=tuple(k for _, _, k in spans), call=False)


GETITEM = _op("getitem", "``x[index]``: elements picked by integers, slices, None, Ellipsis and "
              "integer arrays (bool masks become their nonzero positions).",
              "getitem(x: Tensor, index: tuple) -> Tensor", _getitem_meta,
              lambda ctx, g: (_index_backward(g, ctx.input_shapes[0], ctx.attrs["index"]),))
INDEX_BACKWARD = _op(
    "index_backward", "Zeros of ``shape`` with ``g`` added at ``index`` (repeated positions "
    "accumulate): the gradient of ``x[index]``.",
    "index_backward(g: Tensor, shape: tuple[int, ...], index: tuple) -> Tensor",
    _index_backward_meta, lambda ctx, g: (apply(GETITEM, (g,), {"index": ctx.attrs["index"]}),),
    structure=Structure.OPAQUE, anchor=_SUMS, batched_sum=_tiled_pieces)


def _index_backward(g: Tensor, shape, index) -> Tensor:
    return apply(INDEX_BACKWARD, (g,), {"shape": tuple(shape), "index": index})


def _basic(x: Tensor, index: tuple) -> Tensor:
    """``x[index]`` for an already normalised index without arrays: a view."""
    return _share(x, apply(GETITEM, (x,), {"index": index}))


class _Mask:
    __slots__ = ("data",)

    def __init__(self, data):
        self.data = data


def _entry(item, x: Tensor):
    """One index entry as an int, slice, None, Ellipsis, _Mask or raw integer array."""
    cls = item.__class__
    if cls is int or cls is slice or item is None or item is Ellipsis:
        return _check_slice(item) if cls is slice else item
    if cls is bool or cls is np.bool_:
        if item:
            return None  # x[True] adds a dimension of size 1, like x[None]
        raise UnsupportedError("indexing with False (an empty selection) is not supported",
                               op="getitem", hint="use x[None][:0] for an empty result")
    if isinstance(item, numbers.Integral):
        return operator.index(item)
    device = x._device
    if isinstance(item, Tensor):
        data = item._data if item._device is device else item.to(device)._data
    elif isinstance(item, (list, tuple, np.ndarray)):
        host = np.asarray(item)
        if host.size == 0 and not isinstance(item, np.ndarray):
            host = host.astype(np.int64)
        data = device.spec.from_numpy(host, device.index)
    else:
        raise UnsupportedError(f"cannot index with a {type(item).__name__}", op="getitem",
                               hint="use ints, slices, None, ..., bool masks or integer tensors")
    kind = data.dtype.kind
    if kind == "b":
        return _entry(bool(data), x) if data.ndim == 0 else _Mask(data)
    if kind not in "iu":
        raise DTypeError(f"index tensors must be integer or bool, got {data.dtype}",
                         op="getitem", hint="convert the index with .long()")
    return int(data) if data.ndim == 0 else data


def _check_slice(s: slice) -> slice:
    start, stop, step = s.start, s.stop, s.step
    if step is not None:
        step = operator.index(step)
        if step <= 0:
            raise UnsupportedError(f"slice step must be positive, got {step}", op="getitem",
                                   hint="for a reversed order use fw.flip(x, dims)")
    if start.__class__ not in (int, type(None)) or stop.__class__ not in (int, type(None)):
        return slice(None if start is None else operator.index(start),
                     None if stop is None else operator.index(stop), step)
    return s


def _plan(index, x: Tensor, check_arrays: bool) -> list[tuple[tuple, bool]]:
    """``index`` as NumPy-ready stages ``[(index, is_view)]`` with PyTorch's semantics.

    One stage unless integers and arrays mix in a way where NumPy and PyTorch place the
    array dimensions differently; then the integers (and slices) are applied first.
    ``check_arrays`` is set for ``x[index] = value`` (setitem), which writes without a meta
    rule to explain failures.
    """
    op = "setitem" if check_arrays else "getitem"
    shape = x._data.shape
    ndim = len(shape)
    cls = index.__class__
    if cls is int and ndim:  # the common x[i]
        if not -shape[0] <= index < shape[0]:
            _out_of_range(index, 0, shape[0], op)
        return [((index, Ellipsis), True)]
    if cls is tuple and _is_basic(index):  # ints and plain slices: NumPy checks the rest
        index = index if Ellipsis in index else index + (Ellipsis,)
        if check_arrays:
            _index_shape(shape, index, op)
        return [(index, True)]
    entries = [_entry(i, x) for i in (index if cls is tuple else (index,))]
    consumed = sum(e.data.ndim if e.__class__ is _Mask else 1 for e in entries
                   if e is not None and e is not Ellipsis)
    if sum(e is Ellipsis for e in entries) > 1:
        raise ShapeError("an index can have only one ellipsis (...)", op=op,
                         hint="remove the extra ...")
    if consumed > ndim:
        raise IndexOutOfRangeError(f"too many indices ({consumed}) for a tensor of shape "
                                   f"{tuple(shape)}", op=op,
                                   hint=f"use at most {ndim} indices (None adds dimensions)")
    out, dim, arrays, ints = [], 0, False, False
    for e in entries:
        if e is Ellipsis:
            out += [slice(None)] * (ndim - consumed)
            dim += ndim - consumed
        elif e is None:
            out.append(None)
        elif e.__class__ is int:
            if not -shape[dim] <= e < shape[dim]:
                _out_of_range(e, dim, shape[dim], op)
            out.append(e)
            dim, ints = dim + 1, True
        elif e.__class__ is slice:
            out.append(e)
            dim += 1
        elif e.__class__ is _Mask:
            mask = e.data
            if mask.shape != shape[dim:dim + mask.ndim]:
                raise IndexOutOfRangeError(
                    f"the mask of shape {mask.shape} does not match the indexed shape "
                    f"{shape[dim:dim + mask.ndim]} at dimension {dim} of {tuple(shape)}", op=op,
                    hint="a bool mask must have the shape of the dims it selects")
            out += x._device.xp.nonzero(mask)
            dim, arrays = dim + mask.ndim, True
        else:
            if check_arrays:
                _check_range(e, dim, shape[dim], op)
            out.append(e)
            dim, arrays = dim + 1, True
    if not (arrays and ints and _placement_differs(out)):
        return [(tuple(out) + (Ellipsis,), not arrays)]
    first = tuple(slice(None) if _is_array(e) else e for e in out)
    second = tuple(e if _is_array(e) else slice(None) for e in out if e.__class__ is not int)
    return [(first + (Ellipsis,), True), (second + (Ellipsis,), False)]


def _is_basic(index: tuple) -> bool:
    for i in index:
        cls = i.__class__
        if cls is slice:
            if i.step is not None or i.start.__class__ not in _PLAIN or \
                    i.stop.__class__ not in _PLAIN:
                return False
        elif cls is not int and i is not None and i is not Ellipsis:
            return False
    return sum(i is Ellipsis for i in index) <= 1


_PLAIN = (int, type(None))


def _placement_differs(out) -> bool:
    """Whether NumPy and PyTorch put the array dimensions of ``x[out]`` in different places.

    NumPy counts integers among the advanced indices (so ``x[0, :, idx]`` has non-adjacent
    advanced indices and their dimensions go first); PyTorch applies integers before arrays.
    """
    kinds = "".join("a" if _is_array(e) else "i" if e.__class__ is int else "b" for e in out)
    arrays_only = kinds.replace("i", "")
    numpy_adjacent = "b" not in kinds.strip("b")
    torch_adjacent = "b" not in arrays_only.strip("b")
    return not numpy_adjacent and torch_adjacent and arrays_only.index("a") > 0


def _out_of_range(i, dim, size, op="getitem"):
    raise IndexOutOfRangeError(f"index {i} is out of range for dimension {dim} of size {size}",
                               op=op, hint=f"use an index in [{-size}, {size - 1}]")


def normalize_index(index, x: Tensor) -> tuple:
    """``index`` (ints, slices, None, ..., bool masks, integer tensors/lists/arrays) as a tuple
    usable on ``x._data`` with PyTorch's meaning; raises ShapeError for out-of-range indices or
    mismatched masks (used by ``x[index] = value``)."""
    try:
        stages = _plan(index, x, check_arrays=True)
        if len(stages) > 1:
            raise UnsupportedError(
                "assigning through integers and arrays separated by a slice is ambiguous "
                "(NumPy and PyTorch place the array dimensions differently)", op="setitem",
                hint="split it: x[0][:, idx] = value instead of x[0, :, idx] = value")
        return stages[0][0]
    except FwError as err:
        raise located(err, "setitem", (x,), index=index) from None


def getitem(x: Tensor, index) -> Tensor:
    """``x[index]``: a view for ints, slices, None and ...; a copy when arrays or masks are
    involved. Integer tensors, lists and bool masks index as in PyTorch."""
    try:
        out = x
        for idx, is_view in _plan(index, x, check_arrays=False):
            result = apply(GETITEM, (out,), {"index": idx})
            out = _share(out, result) if is_view else result
        return out
    except FwError as err:
        raise located(err, "getitem", (x,), index=index) from None


def _gather_meta(x, index, dim):
    _require_integer(index, "index", "gather")
    d = normalize_dim(dim, len(x.shape), "gather")
    _index_fits(x, index, d, "gather")
    return TensorSpec(tuple(index.shape), x.dtype)


def _index_fits(x, index, dim, op):
    if len(index.shape) != len(x.shape):
        raise ShapeError(f"index has {len(index.shape)} dimensions but the input has "
                         f"{len(x.shape)}", op=op, hint="give index one dimension per input dim")
    for d, (a, b) in enumerate(zip(index.shape, x.shape)):
        if d != dim and a > b:
            raise ShapeError(f"index of shape {tuple(index.shape)} is larger than the input "
                             f"{tuple(x.shape)} in dimension {d}", op=op,
                             hint=f"index.shape[d] <= input.shape[d] for every d except {dim}")


def _gather_vjp(ctx, g):
    index = ctx.inputs[1]
    base = zeros(ctx.input_shapes[0], dtype=g.dtype, device=g.device)
    return scatter_add(base, ctx.attrs["dim"], index, g), None


GATHER = _op("gather", "out[i][j] = x[index[i][j]][j] for dim=0 (the index replaces the "
             "position along ``dim``).", "gather(x: Tensor, dim: int, index: Tensor) -> Tensor",
             _gather_meta, _gather_vjp, saves=("inputs",))


def _scatter_meta(x, index, src, dim):
    op = "scatter"
    _require_integer(index, "index", op)
    if src.dtype is not x.dtype:
        raise DTypeError(f"src is {src.dtype.name} but the input is {x.dtype.name}", op=op,
                         hint="convert src with .to(x.dtype)")
    d = normalize_dim(dim, len(x.shape), op)
    _index_fits(x, index, d, op)
    if len(src.shape) != len(index.shape) or any(
            a > b for a, b in zip(index.shape, src.shape)):
        raise ShapeError(f"src of shape {tuple(src.shape)} is smaller than the index "
                         f"{tuple(index.shape)}", op=op, hint="src needs a value per index entry")
    return TensorSpec(tuple(x.shape), x.dtype)


def _embed(t: Tensor, shape) -> Tensor:
    """``t`` in the leading corner of zeros of ``shape`` (gradients of src larger than index)."""
    if tuple(t.shape) == tuple(shape):
        return t
    return _index_backward(t, shape, tuple(slice(0, s) for s in t.shape) + (Ellipsis,))


def _scatter_vjp(ctx, g):
    index, dim = ctx.inputs[1], ctx.attrs["dim"]
    gx = None if ctx.next[0] is None else scatter(g, dim, index, 0)
    gs = None if ctx.next[2] is None else _embed(gather(g, dim, index), ctx.input_shapes[2])
    return gx, None, gs


def _scatter_add_vjp(ctx, g):
    index, dim = ctx.inputs[1], ctx.attrs["dim"]
    gs = None if ctx.next[2] is None else _embed(gather(g, dim, index), ctx.input_shapes[2])
    return g, None, gs


SCATTER = _op("scatter", "A copy of x with src written where index points along ``dim`` "
              "(out[index[i][j]][j] = src[i][j] for dim=0); which write wins at a repeated "
              "position is unspecified.",
              "scatter(x: Tensor, dim: int, index: Tensor, src: Tensor | number) -> Tensor",
              _scatter_meta, _scatter_vjp, saves=("inputs",))
SCATTER_ADD = _op("scatter_add", "A copy of x with src added where index points along ``dim`` "
                  "(repeated positions accumulate).",
                  "scatter_add(x: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor",
                  lambda x, index, src, dim: _scatter_meta(x, index, src, dim),
                  _scatter_add_vjp, saves=("inputs",), structure=Structure.OPAQUE, anchor=_SUMS)


def gather(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """Values of ``x`` picked along ``dim`` by ``index`` (an integer tensor with x's number of
    dimensions, no larger than x except along ``dim``); the result has index's shape.
    Negative indices count from the end; out-of-range ones raise ShapeError."""
    try:
        return _checked(GATHER, (x, index), {"dim": normalize_dim(dim, x._data.ndim, "gather")})
    except FwError as err:
        raise located(err, "gather", (x, index), dim=dim) from None


def _src(x: Tensor, index: Tensor, src) -> Tensor:
    if isinstance(src, Tensor):
        return src
    return full(index.shape, src, dtype=x.dtype, device=x.device)


def scatter(x: Tensor, dim: int, index: Tensor, src=None, *, value=None,
            reduce: str | None = None) -> Tensor:
    """A copy of ``x`` with ``src`` (a tensor, or one number; or the number ``value``) written
    at ``index`` along ``dim``: for dim=0, ``out[index[i][j]][j] = src[i][j]``. Out of place
    (see ``scatter_``).

    ``reduce="add"`` adds instead of writing (``scatter_add``); ``reduce="multiply"``
    multiplies by a number once per time ``index`` names an element (PyTorch's older form of
    ``scatter_reduce``; a tensor ``src`` is not supported for it)."""
    if (src is None) == (value is None):
        raise located(ArgumentError("give src or value (exactly one)", op="scatter",
                                    hint="x.scatter(dim, index, src) or "
                                    "x.scatter(dim, index, value=1.0)"), None, (x, index))
    src = value if src is None else src
    if reduce is not None:
        return _scatter_reduced(x, dim, index, src, reduce)
    try:
        dim = normalize_dim(dim, x._data.ndim, "scatter")
        return _checked(SCATTER, (x, index, _src(x, index, src)), {"dim": dim})
    except FwError as err:
        raise located(err, "scatter", (x, index, src), dim=dim) from None


def _scatter_reduced(x, dim, index, src, reduce):
    if reduce == "add":
        if not isinstance(src, Tensor):
            src = full(tuple(index.shape), src, dtype=x.dtype, device=x.device)
        return scatter_add(x, dim, index, src)
    if reduce == "multiply" and not isinstance(src, Tensor):
        ones = full(tuple(index.shape), 1, dtype=x.dtype, device=x.device)
        times = scatter_add(zeros(*x.shape, dtype=x.dtype, device=x.device), dim, index, ones)
        return x * src ** times
    if reduce == "multiply":
        raise located(UnsupportedError(
            "scatter with reduce='multiply' and a tensor src is not supported", op="scatter",
            hint="multiply by a number (value=...), or compute the products per target first"),
            None, (x, index, src))
    raise located(ArgumentError(f"reduce must be 'add' or 'multiply', got {reduce!r}",
                                op="scatter", hint="pass reduce='add' or reduce='multiply'"),
                  None, (x, index))


def scatter_add(x: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """A copy of ``x`` with ``src`` added at ``index`` along ``dim``; repeats accumulate."""
    try:
        dim = normalize_dim(dim, x._data.ndim, "scatter_add")
        return _checked(SCATTER_ADD, (x, index, src), {"dim": dim})
    except FwError as err:
        raise located(err, "scatter_add", (x, index, src), dim=dim) from None


def _index_select_meta(x, index, dim):
    _require_integer(index, "index", "index_select")
    if len(index.shape) != 1 or not x.shape:
        raise ShapeError(f"index_select needs a 1-d index and an input with dimensions, got "
                         f"index {tuple(index.shape)} and input {tuple(x.shape)}",
                         op="index_select", hint="flatten the index (index.reshape(-1))")
    d = normalize_dim(dim, len(x.shape), "index_select")
    return TensorSpec(tuple(x.shape[:d]) + (index.shape[0],) + tuple(x.shape[d + 1:]), x.dtype)


INDEX_SELECT = _op(
    "index_select", "The entries of ``x`` at positions ``index`` (1-d) along ``dim``.",
    "index_select(x: Tensor, dim: int, index: Tensor) -> Tensor", _index_select_meta,
    lambda ctx, g: (_index_backward(g, ctx.input_shapes[0], (slice(None),) * ctx.attrs["dim"]
                                    + (ctx.inputs[1]._data, Ellipsis)), None),
    saves=("inputs",))


def index_select(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """The entries of ``x`` at positions ``index`` (a 1-d or 0-d integer tensor) along ``dim``."""
    try:
        if index._data.ndim == 0:
            index = _reshape(index, (1,))
        return _checked(INDEX_SELECT, (x, index),
                        {"dim": normalize_dim(dim, x._data.ndim, "index_select")})
    except FwError as err:
        raise located(err, "index_select", (x, index), dim=dim) from None


def _masked_fill_meta(x, mask, value):
    if mask.dtype is not _dt.bool_:
        raise DTypeError(f"mask must be bool, got {mask.dtype.name}", op="masked_fill",
                         hint="compare first, e.g. x > 0")
    if broadcast_shapes(tuple(x.shape), tuple(mask.shape), op="masked_fill") != tuple(x.shape):
        raise ShapeError(f"mask of shape {tuple(mask.shape)} does not broadcast to the input's "
                         f"shape {tuple(x.shape)}", op="masked_fill",
                         hint="the mask may not add or grow dimensions")
    return TensorSpec(tuple(x.shape), x.dtype)


def _masked_fill_vjp(ctx, g):
    return where(ctx.inputs[1], 0.0, g), None


MASKED_FILL = _op("masked_fill", "x with ``value`` where the (broadcast) mask is True.",
                  "masked_fill(x: Tensor, mask: Tensor[bool], value: number) -> Tensor",
                  _masked_fill_meta, _masked_fill_vjp, saves=("inputs",),
                  anchor=anchors.flat("masked positions are constants: their gradient is 0",
                                      region=lambda x, mask: mask))


def masked_fill(x: Tensor, mask: Tensor, value) -> Tensor:
    """``x`` with ``value`` (a number, or a 0-d tensor that may require grad) where ``mask``
    (bool, broadcastable to x) is True."""
    try:
        if isinstance(value, Tensor):
            if value._data.ndim:
                raise ShapeError(f"value must be a number or a 0-d tensor, got shape "
                                 f"{tuple(value.shape)}", op="masked_fill", hint="use fw.where")
            if value.requires_grad and state.grad_enabled:
                _masked_fill_meta(spec_of(x), spec_of(mask), None)
                return where(mask, value.to(x.dtype), x)
            value = value.item()
        if mask._data.shape != x._data.shape or mask._data.dtype.kind != "b":
            return _checked(MASKED_FILL, (x, mask), {"value": value})
        return apply(MASKED_FILL, (x, mask), {"value": value})
    except FwError as err:
        raise located(err, "masked_fill", (x, mask), value=value) from None


#: Tensor methods this family provides (bound by fw_core.tensor_methods)
METHODS = {name: globals()[name] for name in ("gather", "index_select", "masked_fill", "scatter",
                                              "scatter_add")}
METHODS["__getitem__"] = getitem
for _name in ("masked_fill", "scatter", "scatter_add"):
    METHODS[_name + "_"] = inplace_method(globals()[_name])
