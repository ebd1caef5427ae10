"""Ops that copy elements into a new arrangement: pad, flip, roll, the triangles tril/triu and
one_hot. Like the rest of the shape family they are linear, and each VJP moves the gradient back
with fw ops (pad's through ``pad_backward``, which sums what reflect/replicate/circular padding
copied), so double backward works.
"""

from __future__ import annotations

__all__ = ["flip", "one_hot", "pad", "roll", "tril", "triu"]

import operator

from .. import dtypes as _dt
from ..errors import FwError, IndexOutOfRangeError, ShapeError, UnsupportedError
from ..records import Structure, TensorSpec
from ..tensor import Tensor
from . import anchors
from ._elementwise_support import inplace_method
from ._shape_support import (
    _SUMS,
    _checked,
    _ints,
    _op,
    _require_integer,
)
from .dispatch import apply
from .indexing import GETITEM, _basic
from .meta import located, normalize_dim, spec_of
from .registry import define_op

# -- pad, flip, roll, triangles, one_hot ----------------------------------------------------------
_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_meta(x, pad_width, mode, value=0):
    if mode not in _PAD_MODES:
        raise UnsupportedError(f"unknown padding mode {mode!r}", op="pad",
                               hint=f"use one of {', '.join(_PAD_MODES)}")
    shape = tuple(x.shape)
    if len(pad_width) != len(shape):
        raise ShapeError(f"{len(pad_width)} (before, after) pairs for a {len(shape)}-d input",
                         op="pad", hint="give one pair per dimension")
    for d, ((before, after), n) in enumerate(zip(pad_width, shape)):
        most = max(before, after)
        if min(before, after) < 0 or (mode == "reflect" and most >= n and most) or (
                mode == "circular" and most > n) or (mode == "replicate" and most and not n):
            limit = {"reflect": "< the size", "circular": "<= the size",
                     "replicate": "only on non-empty dims"}.get(mode, ">= 0")
            raise ShapeError(f"{mode} padding ({before}, {after}) does not fit dimension {d} "
                             f"of size {n}", op="pad", hint=f"{mode} pads must be {limit}")
    return TensorSpec(tuple(n + b + a for n, (b, a) in zip(shape, pad_width)), x.dtype)


def _pad_vjp(ctx, g):
    pad_width, mode = ctx.attrs["pad_width"], ctx.attrs["mode"]
    if mode == "constant":
        crop = tuple(slice(b, b + n) for (b, _), n in zip(pad_width, ctx.input_shapes[0]))
        return (apply(GETITEM, (g,), {"index": crop + (Ellipsis,)}),)
    return (apply(PAD_BACKWARD, (g,), {"pad_width": pad_width, "mode": mode,
                                       "shape": ctx.input_shapes[0]}),)


def _pad_backward_meta(g, pad_width, mode, shape):
    if _pad_meta(TensorSpec(tuple(shape), g.dtype), pad_width, mode).shape != tuple(g.shape):
        raise ShapeError(f"gradient of shape {tuple(g.shape)} does not match padding {shape} "
                         f"by {pad_width}", op="pad_backward", hint="pass the gradient of pad")
    return TensorSpec(tuple(shape), g.dtype)


PAD = _op("pad", "x surrounded by ``pad_width`` elements per side: a constant, the mirror image "
          "(reflect, edge excluded), the edge value (replicate) or the other end (circular).",
          "pad(x: Tensor, pad_width: tuple[tuple[int, int], ...], mode: str, value: number) "
          "-> Tensor", _pad_meta, _pad_vjp)
PAD_BACKWARD = _op(
    "pad_backward", "The gradient of a reflect/replicate/circular pad: each padded element's "
    "gradient added to the element it copies.",
    "pad_backward(g: Tensor, pad_width: tuple, mode: str, shape: tuple[int, ...]) -> Tensor",
    _pad_backward_meta, lambda ctx, g: (apply(PAD, (g,), {
        "pad_width": ctx.attrs["pad_width"], "mode": ctx.attrs["mode"], "value": 0}),),
    structure=Structure.OPAQUE, anchor=_SUMS)


def pad(x: Tensor, pad, mode: str = "constant", value=None) -> Tensor:
    """Pad ``x`` as ``torch.nn.functional.pad``: ``pad`` lists (before, after) sizes starting
    from the LAST dimension, e.g. ``(1, 1, 2, 0)`` pads the last dim by 1 on each side and the one
    before by 2 at the front. Modes: "constant" (``value``, default 0), "reflect" (pads < the
    size), "replicate", "circular" (pads <= the size); negative pads crop in every mode."""
    try:
        pad = _ints((pad,), "pad", "pad")
        ndim = x._data.ndim
        if len(pad) % 2 or len(pad) > 2 * ndim:
            raise ShapeError(f"pad {pad} must have an even length of at most {2 * ndim} (a pair "
                             f"per dimension, last dimension first)", op="pad",
                             hint="e.g. (1, 1)")
        if value is not None and mode != "constant":
            raise UnsupportedError(f"mode {mode!r} takes no value", op="pad",
                                   hint="drop value, or use mode='constant'")
        pairs = [(0, 0)] * (ndim - len(pad) // 2) + [
            (pad[i], pad[i + 1]) for i in range(len(pad) - 2, -1, -2)]
        if min(pad, default=0) >= 0:
            return _padded(x, pairs, mode, value)
        # negative pads crop: before padding where the pad's values come from the cropped
        # input (constant, circular), after it where they come from the edges (reflect,
        # replicate), as torch
        grow = [(max(b, 0), max(a, 0)) for b, a in pairs]
        if mode in ("constant", "circular"):
            return _padded(_cropped(x, pairs, pad), grow, mode, value)
        return _cropped(_padded(x, grow, mode, value), pairs, pad)
    except FwError as err:
        raise located(err, "pad", (x,), pad=pad, mode=mode, value=value) from None


def _padded(x: Tensor, pairs, mode: str, value) -> Tensor:
    attrs = {"pad_width": tuple(pairs), "mode": mode, "value": 0 if value is None else value}
    return _checked(PAD, (x,), attrs)


def _cropped(x: Tensor, pairs, pad) -> Tensor:
    """x without the elements the negative (before, after) amounts of ``pairs`` remove."""
    if any(max(-b, 0) + max(-a, 0) > n for (b, a), n in zip(pairs, x.shape)):
        raise ShapeError(f"negative pad {pad} crops more than the input {tuple(x.shape)} has",
                         op="pad", hint="crop at most the size of each dimension")
    crop = tuple(slice(max(-b, 0), n - max(-a, 0)) for (b, a), n in zip(pairs, x.shape))
    return _basic(x, crop + (Ellipsis,))


def _dims_meta(op):
    def meta(x, dims, **_):
        for d in dims:
            normalize_dim(d, len(x.shape), op)
        if len(set(dims)) != len(dims):
            raise ShapeError(f"dims {dims} repeat a dimension", op=op, hint="list each once")
        return TensorSpec(tuple(x.shape), x.dtype)

    return meta


FLIP = _op("flip", "x with the order of elements reversed along ``dims`` (a copy).",
           "flip(x: Tensor, dims: tuple[int, ...]) -> Tensor", _dims_meta("flip"),
           lambda ctx, g: (flip(g, ctx.attrs["dims"]),))


def _roll_meta(x, shifts, dims):
    if dims is not None:
        _dims_meta("roll")(x, dims)
    if (dims is None and not isinstance(shifts, int)) or (
            dims is not None and len(shifts) != len(dims)):
        raise ShapeError(f"shifts {shifts} and dims {dims} must pair up", op="roll",
                         hint="one shift per dim, or one shift with dims=None")
    return TensorSpec(tuple(x.shape), x.dtype)


def _roll_vjp(ctx, g):
    shifts, dims = ctx.attrs["shifts"], ctx.attrs["dims"]
    back = -shifts if isinstance(shifts, int) else tuple(-s for s in shifts)
    return (apply(ROLL, (g,), {"shifts": back, "dims": dims}),)


ROLL = _op("roll", "x shifted cyclically by ``shifts`` along ``dims`` (over the flattened tensor "
           "when dims is None).", "roll(x: Tensor, shifts, dims=None) -> Tensor", _roll_meta,
           _roll_vjp)


def flip(x: Tensor, dims) -> Tensor:
    """A copy of ``x`` with the element order reversed along ``dims`` (an int or a sequence)."""
    try:
        ndim = x._data.ndim
        dims = tuple(normalize_dim(d, ndim, "flip") for d in _ints((dims,), "dims", "flip"))
        if len(set(dims)) != len(dims):
            _dims_meta("flip")(spec_of(x), dims)
        return apply(FLIP, (x,), {"dims": dims})
    except FwError as err:
        raise located(err, "flip", (x,), dims=dims) from None


def roll(x: Tensor, shifts, dims=None) -> Tensor:
    """``x`` shifted cyclically: ``roll(x, 1, 0)`` moves row i to row i + 1 (the last wraps to
    the front). With ``dims=None`` the flattened tensor is rolled and the shape restored."""
    try:
        ndim = x._data.ndim
        if dims is None:
            shifts = _ints((shifts,), "shifts", "roll")
            attrs = {"shifts": shifts[0] if len(shifts) == 1 else shifts, "dims": None}
        else:
            attrs = {"shifts": _ints((shifts,), "shifts", "roll"),
                     "dims": tuple(normalize_dim(d, ndim, "roll") for d in _ints((dims,), "dims",
                                                                                  "roll"))}
        return _checked(ROLL, (x,), attrs)
    except FwError as err:
        raise located(err, "roll", (x,), shifts=shifts, dims=dims) from None


def _triangle_meta(op):
    def meta(x, diagonal):
        if len(x.shape) < 2:
            raise ShapeError(f"{op} needs at least 2 dimensions, got shape {tuple(x.shape)}",
                             op=op, hint="it works on the last two dims (a batch of matrices)")
        return TensorSpec(tuple(x.shape), x.dtype)

    return meta


TRIL = _op("tril", "The lower triangle of the last two dims (on and below diagonal k); 0 above.",
           "tril(x: Tensor, diagonal: int = 0) -> Tensor", _triangle_meta("tril"),
           lambda ctx, g: (tril(g, ctx.attrs["diagonal"]),))
TRIU = _op("triu", "The upper triangle of the last two dims (on and above diagonal k); 0 below.",
           "triu(x: Tensor, diagonal: int = 0) -> Tensor", _triangle_meta("triu"),
           lambda ctx, g: (triu(g, ctx.attrs["diagonal"]),))


def _triangle(op, x: Tensor, diagonal: int) -> Tensor:
    try:
        if x._data.ndim < 2:
            op.meta(spec_of(x), diagonal)
        return apply(op, (x,), {"diagonal": operator.index(diagonal)})
    except FwError as err:
        raise located(err, op.name, (x,), diagonal=diagonal) from None


def tril(x: Tensor, diagonal: int = 0) -> Tensor:
    """Zero the elements above diagonal ``diagonal`` of the last two dims."""
    return _triangle(TRIL, x, diagonal)


def triu(x: Tensor, diagonal: int = 0) -> Tensor:
    """Zero the elements below diagonal ``diagonal`` of the last two dims."""
    return _triangle(TRIU, x, diagonal)


def _one_hot_meta(x, num_classes):
    _require_integer(x, "one_hot's input", "one_hot")
    return TensorSpec(tuple(x.shape) + (num_classes,), _dt.int64)


ONE_HOT = define_op(
    "one_hot", family="shape", builtin=True,
    doc="int64 tensor with a trailing dim of ``num_classes``: 1 at each input value, else 0.",
    signature="one_hot(x: Tensor[int], num_classes: int) -> Tensor[int64]", meta=_one_hot_meta,
    vjp=None, structure=Structure.OPAQUE,
    anchor=anchors.flat("integer class labels: not differentiable"))


def one_hot(x: Tensor, num_classes: int = -1) -> Tensor:
    """One-hot encoding of integer labels: shape ``x.shape + (num_classes,)``, int64.
    ``num_classes=-1`` uses ``x.max() + 1``. Labels outside [0, num_classes) raise ShapeError."""
    try:
        _one_hot_meta(spec_of(x), 0)
        data = x._data
        low, high = (int(data.min()), int(data.max())) if data.size else (0, -1)
        if num_classes == -1:
            if not data.size:
                raise ShapeError("cannot infer num_classes from an empty tensor", op="one_hot",
                                 hint="pass num_classes")
            num_classes = high + 1
        if low < 0 or high >= num_classes:
            raise IndexOutOfRangeError(f"labels must be in [0, {num_classes}), got values in "
                                       f"[{low}, {high}]", op="one_hot",
                                       hint="pass a larger num_classes, or fix the labels")
        return apply(ONE_HOT, (x,), {"num_classes": int(num_classes)})
    except FwError as err:
        raise located(err, "one_hot", (x,), num_classes=num_classes) from None


# -- Tensor methods -------------------------------------------------------------------------------
def flip_method(x: Tensor, *dims) -> Tensor:
    """``x.flip(0, 1)`` or ``x.flip((0, 1))``: :func:`flip` with the dims as arguments."""
    return flip(x, _ints(dims, "dims", "flip"))


#: Tensor methods this module provides (bound by fw_core.tensor_methods)
METHODS = {name: globals()[name] for name in ("roll", "tril", "triu")}
METHODS["flip"] = flip_method
for _name in ("tril", "triu"):
    METHODS[_name + "_"] = inplace_method(globals()[_name])
