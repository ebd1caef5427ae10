"""Writes at positions along one dimension: ``index_add``, ``index_copy``, ``index_fill`` and
``scatter_reduce``, with their in-place forms, as in PyTorch, and ``index_write``: an in-place
``index_copy_`` done by one op, so that a compiled plan replays the write (a preallocated
key/value cache filled one position per step).

The ``index_*`` functions are compositions (an accumulating index, a scatter, a masked_fill),
so their gradients are those ops'. ``scatter_reduce`` is an op: ``src`` is combined into
``x`` at ``index`` by a sum, product, mean, maximum or minimum. Its gradient is PyTorch's:
the mean shares the gradient among the values averaged, the product divides the result by
each factor (an exclusive product where a factor is 0), and a maximum or minimum splits the
gradient evenly among the values equal to the result.
"""

from __future__ import annotations

__all__ = ["index_add", "index_copy", "index_fill", "index_write", "scatter_reduce"]

import numbers

from .. import dtypes as _dt
from ..errors import DTypeError, FwError, InvalidArgumentError, ShapeError
from ..records import Structure, TensorSpec
from ..tensor import Tensor
from . import anchors
from ._elementwise_support import inplace_method
from ._shape_support import _checked, _reshape
from .broadcast import broadcast_to
from .creation import full, ones, zeros
from .dispatch import apply
from .elementwise import where
from .indexing import (
    _embed,
    _index_backward,
    _scatter_meta,
    gather,
    masked_fill,
    scatter,
    scatter_add,
)
from .meta import located, normalize_dim
from .registry import define_op

REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


# -- index_add, index_copy, index_fill ------------------------------------------------------------
def _along(input: Tensor, dim, index, op: str) -> tuple[Tensor, int, Tensor]:
    """(input as at least 1-d, the dimension, the index as 1-d), or the error PyTorch raises."""
    if not isinstance(index, Tensor) or index.dtype.category != _dt.INTEGER:
        got = index.dtype.name if isinstance(index, Tensor) else type(index).__name__
        raise DTypeError(f"index must be an integer tensor, got {got}", op=op,
                         hint="convert it with .long()")
    if index.ndim > 1:
        raise ShapeError(f"index must be 0-d or 1-d, got shape {tuple(index.shape)}", op=op,
                         hint="flatten the index (index.reshape(-1))")
    d = normalize_dim(dim, input.ndim, op) if input.ndim else normalize_dim(dim, 1, op)
    return (input if input.ndim else _reshape(input, (1,))), d, _reshape(index, (-1,))


def _source(input: Tensor, d: int, index: Tensor, source, op: str) -> Tensor:
    """``source`` checked against the shape ``input`` has with ``len(index)`` along ``d``."""
    if not isinstance(source, Tensor) or source.dtype is not input.dtype:
        got = source.dtype.name if isinstance(source, Tensor) else type(source).__name__
        raise DTypeError(f"source is {got} but the input is {input.dtype.name}", op=op,
                         hint="convert source with .to(input.dtype)")
    expected = tuple(input.shape[:d]) + (index.shape[0],) + tuple(input.shape[d + 1:])
    if source.numel() != 0 and tuple(source.shape) != expected and not (
            source.ndim == 0 and expected == (1,)):
        raise ShapeError(f"source of shape {tuple(source.shape)} does not fit an index of "
                         f"length {index.shape[0]} along dim {d} of {tuple(input.shape)}",
                         op=op, hint=f"source needs shape {expected}")
    return _reshape(source, expected)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """``input`` with ``alpha * source`` added along ``dim`` at ``index``: slice i of source
    goes to position ``index[i]``; repeated positions accumulate. ``source`` has input's shape
    with ``len(index)`` along ``dim``."""
    op = "index_add"
    try:
        base, d, idx = _along(input, dim, index, op)
        src = _source(base, d, idx, source, op)
        spread = _index_backward(src, tuple(base.shape), (slice(None),) * d + (idx._data,
                                                                               Ellipsis))
        out = base + (spread if alpha == 1 else alpha * spread)
        return _reshape(out, tuple(input.shape))
    except FwError as err:
        raise located(err, op, (input, index, source), dim=dim) from None


def _spread_index(idx: Tensor, d: int, shape) -> Tensor:
    """The 1-d ``idx`` laid along dimension ``d`` and broadcast to ``shape`` (for scatter)."""
    lined = _reshape(idx, (1,) * d + (idx.shape[0],) + (1,) * (len(shape) - d - 1))
    return broadcast_to(lined, tuple(shape))


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``input`` with slice i of ``source`` written at position ``index[i]`` along ``dim``
    (which write wins at a repeated position is unspecified, as in PyTorch)."""
    op = "index_copy"
    try:
        base, d, idx = _along(input, dim, index, op)
        src = _source(base, d, idx, source, op)
        if idx.shape[0] == 0:
            return input.clone()
        out = scatter(base, d, _spread_index(idx, d, src.shape), src)
        return _reshape(out, tuple(input.shape))
    except FwError as err:
        raise located(err, op, (input, index, source), dim=dim) from None


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """``input`` with ``value`` (a number or a 0-d tensor) at positions ``index`` along
    ``dim``."""
    op = "index_fill"
    try:
        base, d, idx = _along(input, dim, index, op)
        if isinstance(value, Tensor) and value.ndim:
            raise ShapeError(f"value must be a number or a 0-d tensor, got shape "
                             f"{tuple(value.shape)}", op=op, hint="pass value.item()")
        if not isinstance(value, (Tensor, numbers.Number)):
            raise DTypeError(f"value must be a number, got {type(value).__name__}", op=op,
                             hint="pass an int, float or bool")
        size = base.shape[d]
        hit = zeros(size, dtype=_dt.bool_, device=input.device)
        if idx.shape[0]:
            hit = scatter(hit, 0, idx, True)
        mask = _reshape(hit, (size,) + (1,) * (base.ndim - d - 1))
        return _reshape(masked_fill(base, mask, value), tuple(input.shape))
    except FwError as err:
        raise located(err, op, (input, index), dim=dim, value=value) from None


# -- index_write ----------------------------------------------------------------------------------
def _index_write_meta(x, index, source, dim):
    return TensorSpec(tuple(x.shape), x.dtype)


INDEX_WRITE = define_op(
    "index_write", family="index_update", builtin=True,
    doc="Slice i of source written into x at position index[i] along dim, in x's own storage "
        "(the op's declared side effect); returns x.",
    signature="index_write(x: Tensor, index: Tensor[K], source: Tensor, dim: int) -> Tensor",
    meta=_index_write_meta, vjp=None, structure=Structure.OPAQUE,
    anchor=anchors.flat("a copy: the written positions take source's values, the rest keep x's"),
    effects=(0,))


def index_write(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``input.index_copy_(dim, index, source)`` as one op that writes into ``input``'s storage
    and returns ``input``: a compiled function replays the write on every run (an in-place
    method would stop it compiling), so a preallocated cache can be filled at a position given
    as data. Not differentiable (use ``index_copy`` for that).

    Raises:
        DTypeError: ``index`` is not an integer tensor, or ``source``'s dtype is not input's.
        ShapeError: ``index`` is not 1-d or 0-d, or ``source`` does not have input's shape with
            ``len(index)`` along ``dim``.
    """
    op = "index_write"
    try:
        if input.ndim == 0:
            raise ShapeError("cannot write along a dimension of a 0-d tensor", op=op,
                             hint="reshape it to 1-d first")
        base, d, idx = _along(input, dim, index, op)
        src = _source(base, d, idx, source, op)
        from ..capture import kernel_writes
        from ..tensor_methods import bump_version  # binds every family: import it late

        kernel_writes(input)  # a replay runs the kernel again: not an untraced write
        bump_version(input)
        return apply(INDEX_WRITE, (input, idx, src), {"dim": d})
    except FwError as err:
        raise located(err, op, (input, index, source), dim=dim) from None


# -- scatter_reduce -------------------------------------------------------------------------------
def _scatter_reduce_meta(x, index, src, dim, reduce, include_self):
    if reduce not in REDUCTIONS:
        raise InvalidArgumentError(f"reduce argument must be either sum, prod, mean, amax or "
                                   f"amin, got {reduce}", op="scatter_reduce",
                                   hint="pass one of " + ", ".join(map(repr, REDUCTIONS)))
    return _scatter_meta(x, index, src, dim)


def _shared(ctx, g, counts_self: bool):
    """How many values met at each position of the output (1 where none did)."""
    x, index = ctx.inputs[0], ctx.inputs[1]
    start = full(tuple(x.shape), 1 if counts_self else 0, dtype=g.dtype, device=g.device)
    n = scatter_add(start, ctx.attrs["dim"], index, ones(*index.shape, dtype=g.dtype,
                                                         device=g.device))
    return masked_fill(n, n == 0, 1)


def _leading(src: Tensor, index: Tensor) -> Tensor:
    """The part of ``src`` the index reads (src may be larger than index)."""
    if tuple(src.shape) == tuple(index.shape):
        return src
    return src[tuple(slice(0, s) for s in index.shape)]


def _scatter_reduce_vjp(ctx, g):
    x, index, src = ctx.inputs
    out = ctx.out
    dim, reduce, include_self = (ctx.attrs[k] for k in ("dim", "reduce", "include_self"))
    used = _leading(src, index)
    if reduce == "sum":
        gx, gs = g, gather(g, dim, index)
    elif reduce == "mean":
        gx = g / _shared(ctx, g, include_self)
        gs = gather(gx, dim, index)
    elif reduce == "prod":
        kept = masked_fill(x, x == 0, 1)
        gx = g * scatter_reduce(kept, dim, index, src, "prod", include_self=include_self) / kept
        zero = used == 0
        zeros_met = gather(scatter_add(zeros(*x.shape, dtype=g.dtype, device=g.device), dim,
                                       index, zero.to(g.dtype)), dim, index)
        lone_zero = zero & (zeros_met == 1)
        # a lone zero factor's gradient is the product of the others, computed without it
        without = scatter_reduce(x, dim, index, masked_fill(used, lone_zero, 1), "prod",
                                 include_self=include_self)
        gs = where(lone_zero, gather(g * without, dim, index),
                   gather(g * out, dim, index) / masked_fill(used, zero, 1))
    else:  # amax, amin: the gradient is split evenly among the values equal to the result
        x_won = (x == out).to(g.dtype)
        src_won = (used == gather(out, dim, index)).to(g.dtype)
        share = g / scatter_add(x_won, dim, index, src_won)
        gx, gs = x_won * share, src_won * gather(share, dim, index)
    if not include_self:
        gx = scatter(gx, dim, index, 0)
    return (gx if ctx.next[0] is not None else None, None,
            _embed(gs, ctx.input_shapes[2]) if ctx.next[2] is not None else None)


SCATTER_REDUCE = define_op(
    "scatter_reduce", family="index_update", builtin=True,
    doc="A copy of x with src combined in where index points along ``dim`` (out[index[i][j]]"
        "[j] = reduce(out[...], src[i][j]) for dim=0), by sum, prod, mean, amax or amin; "
        "``include_self=False`` leaves x's own value out at the positions written.",
    signature="scatter_reduce(x: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, "
              "include_self: bool = True) -> Tensor",
    meta=_scatter_reduce_meta, vjp=_scatter_reduce_vjp, structure=Structure.OPAQUE,
    anchor=anchors.kink("amax/amin pick one value per position: where values tie the gradient "
                        "is split evenly among them, as in PyTorch; prod's gradient at a zero "
                        "factor is the product of the others"),
    saves=("inputs", "out"))


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """A copy of ``input`` with ``src`` combined in at ``index`` along ``dim``: for dim=0,
    ``out[index[i][j]][j]`` reduces ``src[i][j]`` with what is already there, by ``reduce``
    ("sum", "prod", "mean", "amax", "amin"). With ``include_self=False`` the input's own
    values are left out at the positions written. Integer means floor, as in PyTorch.

    Raises RuntimeError (InvalidArgumentError) for another ``reduce``, DTypeError when src's
    dtype differs from input's."""
    try:
        attrs = {"dim": normalize_dim(dim, input.ndim, "scatter_reduce") if input.ndim else 0,
                 "reduce": reduce, "include_self": bool(include_self)}
        return _checked(SCATTER_REDUCE, (input, index, src), attrs)
    except FwError as err:
        raise located(err, "scatter_reduce", (input, index, src), dim=dim,
                      reduce=reduce) from None


#: Tensor methods this family provides (bound by fw_core.tensor_methods)
METHODS = {name: globals()[name] for name in __all__}
for _name in __all__:
    METHODS[_name + "_"] = inplace_method(globals()[_name])
