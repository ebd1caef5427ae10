"""Pooling over the trailing 1, 2 or 3 spatial dimensions of (N, C, ...) or (C, ...) inputs.

Per dimensionality n: ``max_pool{n}d`` with its indices (flat into each input plane, as
PyTorch's ``return_indices``), their scatter (``max_pool{n}d_backward``, its VJP) and gather
(``max_pool{n}d_select``), each the other's VJP; ``max_unpool{n}d`` writes values back at such
indices; ``avg_pool{n}d`` and ``adaptive_avg_pool{n}d`` are linear maps paired with their
adjoints; ``adaptive_max_pool{n}d`` is its indices plus the gather. ``lp_pool{n}d`` is composed
from the average pool, as in PyTorch.
"""

# ruff: noqa: A002 - PyTorch's argument name ``input``
from __future__ import annotations

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "avg_pool1d",
           "avg_pool2d", "avg_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_pool1d",
           "max_pool2d", "max_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d"]

import math
from typing import NamedTuple

from .. import dtypes as _dt
from ..errors import DTypeError, FwError, IndexOutOfRangeError, ShapeError
from ..records import Structure, TensorSpec
from ..tensor import Tensor
from . import anchors
from ._spatial import LINEAR, batched, check_steps, floats, ints, linear_pair, nonempty_plane
from ._spatial import positive as _positive
from ._spatial import shape_text as _shape_text
from .dispatch import apply, check_tensors
from .elementwise import relu
from .meta import located
from .registry import define_op


# -- attributes -----------------------------------------------------------------------------------
def _check_window(op: str, kernel_size, stride, padding, dilation) -> None:
    """A pooling window's attributes: positive sizes, padding at most half the window."""
    _positive(kernel_size, "kernel_size", op)
    check_steps(op, stride, dilation)
    _positive(padding, "padding", op, least=0)
    for p, k, d in zip(padding, kernel_size, dilation):
        if 2 * p > d * (k - 1) + 1:
            raise ShapeError(f"padding {padding} must be at most half the window "
                             f"{kernel_size} (dilation {dilation})", op=op,
                             hint="use padding <= kernel_size // 2")


def check_divisor(divisor_override, op: str = "avg_pool2d") -> None:
    if divisor_override is not None and divisor_override < 1:
        raise ShapeError(f"divisor_override must be >= 1, got {divisor_override}",
                         op=op, hint="use divisor_override=None for the window size")


def check_window(op: str, kernel_size, stride, padding, dilation=1, n: int = 2) -> dict:
    """A pooling window's kernel_size, stride (None or empty: the kernel size), padding and
    dilation as tuples of ``n`` ints, checked (sizes >= 1, padding at most half the window)."""
    kernel = ints(kernel_size, n, "kernel_size", op)
    stride = kernel if stride is None or (hasattr(stride, "__len__") and len(stride) == 0) \
        else ints(stride, n, "stride", op)
    window = {"kernel_size": kernel, "stride": stride, "padding": ints(padding, n, "padding", op),
              "dilation": ints(dilation, n, "dilation", op)}
    _check_window(op, kernel, stride, window["padding"], window["dilation"])
    return window


# -- meta rules -----------------------------------------------------------------------------------
def _pool_length(op, size, k, s, p, d, ceil_mode) -> int:
    """PyTorch's pooling output length; with ceil_mode the last window may hang over the end
    but must start inside the input or the left padding."""
    span = d * (k - 1) + 1
    out = (size + 2 * p - span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    if out < 1:
        raise ShapeError(f"the input's spatial size {size} (padding {p}) is smaller than the "
                         f"window {span}: the output would be empty", op=op,
                         hint="use a smaller kernel_size, more padding, or a larger input")
    return out


def _pool_shape(op, x, kernel_size, stride, padding, dilation, ceil_mode) -> tuple:
    n = len(kernel_size)
    batched(op, x, n)
    _check_window(op, kernel_size, stride, padding, dilation)
    return tuple(x.shape[:-n]) + tuple(_pool_length(op, size, k, s, p, d, ceil_mode) for
                                       size, k, s, p, d in zip(x.shape[-n:], kernel_size, stride,
                                                               padding, dilation))


def _numeric(op, x) -> None:
    if x.dtype is _dt.bool_:
        raise DTypeError("expects a numeric input, got bool", op=op,
                         hint="convert with .float() first")


def _max_pool_meta(n):
    op = f"max_pool{n}d"

    def meta(x, *, kernel_size, stride, padding, dilation, ceil_mode):
        _numeric(op, x)
        return TensorSpec(_pool_shape(op, x, kernel_size, stride, padding, dilation, ceil_mode),
                          x.dtype)

    return meta


def _indices_meta(meta):
    return lambda x, **attrs: TensorSpec(meta(x, **attrs).shape, _dt.int64)


def _scatter_meta(n, op):
    def meta(g, indices, *, input_size=None, output_size=None):
        size = input_size if output_size is None else output_size
        if tuple(indices.shape) != tuple(g.shape) or indices.dtype is not _dt.int64 or \
                len(g.shape) < n:
            raise ShapeError(f"indices {indices} must be int64 with the shape of the values "
                             f"{_shape_text(g.shape)}", op=op,
                             hint=f"pass the indices max_pool{n}d(..., return_indices=True) "
                             "returned")
        return TensorSpec(tuple(g.shape[:-n]) + tuple(size), g.dtype)

    return meta


def _select_meta(n):
    def meta(x, indices):
        if len(x.shape) < n or tuple(indices.shape[:-n]) != tuple(x.shape[:-n]) or \
                indices.dtype is not _dt.int64:
            raise ShapeError(f"indices {indices} must be int64 with the leading dimensions of "
                             f"x {_shape_text(x.shape)}", op=f"max_pool{n}d_select",
                             hint=f"pass the indices of a max_pool{n}d of x")
        return TensorSpec(tuple(indices.shape), x.dtype)

    return meta


def _avg_pool_meta(n):
    op = f"avg_pool{n}d"

    def meta(x, *, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
        floats(op, x)
        check_divisor(divisor_override, op)
        return TensorSpec(_pool_shape(op, x, kernel_size, stride, padding, (1,) * n, ceil_mode),
                          x.dtype)

    return meta


def _adaptive_meta(op, n, floating):
    def meta(x, *, output_size):
        (floats if floating else _numeric)(op, x)
        batched(op, x, n)
        _positive(output_size, "output_size", op)
        nonempty_plane(op, x, n)
        return TensorSpec(tuple(x.shape[:-n]) + tuple(output_size), x.dtype)

    return meta


# -- the ops, per dimensionality ------------------------------------------------------------------
class _PoolOps(NamedTuple):
    max: object
    indices: object
    backward: object
    select: object
    unpool: object
    avg: object
    adaptive_avg: object
    adaptive_max_indices: object


_MAX_ANCHOR = anchors.kink("only the largest element of each window gets gradient (the first "
                           "one among ties); the others get exactly 0, and the gradient jumps "
                           "to another element when the largest changes")
_FLAT = anchors.flat("integer positions: nothing to differentiate")


def _define_pools(n: int) -> _PoolOps:
    ops: dict = {}
    name = f"max_pool{n}d"
    window = "kernel_size, stride, padding, dilation, ceil_mode"
    max_meta = _max_pool_meta(n)

    def max_vjp(ctx, g):
        indices = apply(ops["indices"], (ctx.inputs[0],), ctx.attrs)
        return (apply(ops["backward"], (g, indices), {"input_size": ctx.input_shapes[0][-n:]}),)

    def select_vjp(ctx, g):
        return (apply(ops["backward"], (g, ctx.inputs[1]),
                      {"input_size": ctx.input_shapes[0][-n:]}), None)

    def gather_vjp(ctx, h):
        return (apply(ops["select"], (h, ctx.inputs[1])), None)

    ops["max"] = define_op(
        name, family="conv", builtin=True,
        doc=f"The largest element of each (dilated) window over the last {n} dimensions; "
            "padding counts as -inf.",
        signature=f"{name}(x: Tensor, {window}) -> Tensor", meta=max_meta, vjp=max_vjp,
        structure=Structure.REDUCTION, anchor=_MAX_ANCHOR, saves=("inputs",))
    ops["indices"] = define_op(
        f"{name}_indices", family="conv", builtin=True,
        doc=f"Where {name} found each maximum, as a flat index into the input's plane.",
        signature=f"{name}_indices(x: Tensor, {window}) -> Tensor[int64]",
        meta=_indices_meta(max_meta), vjp=None, structure=Structure.REDUCTION,
        anchor=_FLAT)
    ops["backward"] = define_op(
        f"{name}_backward", family="conv", builtin=True,
        doc=f"Scatter-add g into zeros of the input's size at {name}'s indices (its VJP).",
        signature=f"{name}_backward(g: Tensor, indices: Tensor[int64], input_size) -> Tensor",
        meta=_scatter_meta(n, f"{name}_backward"), vjp=gather_vjp, structure=Structure.OPAQUE,
        anchor=LINEAR, saves=("inputs",))
    ops["select"] = define_op(
        f"{name}_select", family="conv", builtin=True,
        doc=f"x's elements at {name}'s indices (the VJP of {name}_backward).",
        signature=f"{name}_select(x: Tensor, indices: Tensor[int64]) -> Tensor",
        meta=_select_meta(n), vjp=select_vjp, structure=Structure.INJECTIVE, anchor=LINEAR,
        saves=("inputs",))
    ops["unpool"] = define_op(
        f"max_unpool{n}d", family="conv", builtin=True,
        doc=f"Zeros of output_size with each value written at its index (the partial inverse of "
            f"{name}); where indices repeat, one of the values is kept.",
        signature=f"max_unpool{n}d(x: Tensor, indices: Tensor[int64], output_size) -> Tensor",
        meta=_scatter_meta(n, f"max_unpool{n}d"), vjp=gather_vjp, structure=Structure.OPAQUE,
        anchor=LINEAR, saves=("inputs",))
    ops["avg"], _ = linear_pair(
        f"avg_pool{n}d", n,
        f"The mean of each window over the last {n} dimensions; the divisor counts padding "
        "unless count_include_pad=False, never the overhang of ceil_mode, and is "
        "divisor_override if given.",
        f"avg_pool{n}d(x: Tensor, kernel_size, stride, padding, ceil_mode, count_include_pad, "
        "divisor_override) -> Tensor", _avg_pool_meta(n), Structure.REDUCTION, Structure.OPAQUE)
    ops["adaptive_avg"], _ = linear_pair(
        f"adaptive_avg_pool{n}d", n,
        f"The mean over an output_size grid of bins of the last {n} dimensions; bin i of m over a "
        "length L spans [floor(i L / m), ceil((i + 1) L / m)).",
        f"adaptive_avg_pool{n}d(x: Tensor, output_size) -> Tensor",
        _adaptive_meta(f"adaptive_avg_pool{n}d", n, True), Structure.REDUCTION, Structure.OPAQUE)
    ops["adaptive_max_indices"] = define_op(
        f"adaptive_max_pool{n}d_indices", family="conv", builtin=True,
        doc=f"Where the maximum of each adaptive bin (as adaptive_avg_pool{n}d's) is, as a flat "
            "index into the input's plane: the first maximum, a NaN taking precedence.",
        signature=f"adaptive_max_pool{n}d_indices(x: Tensor, output_size) -> Tensor[int64]",
        meta=_indices_meta(_adaptive_meta(f"adaptive_max_pool{n}d", n, False)), vjp=None,
        structure=Structure.REDUCTION, anchor=_FLAT)
    return _PoolOps(**ops)


_POOLS = {n: _define_pools(n) for n in (1, 2, 3)}


# -- the public functions -------------------------------------------------------------------------
def _max_pool(n, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    ops, name = _POOLS[n], f"max_pool{n}d"
    try:
        check_tensors(ops.max, input)
        attrs = check_window(name, kernel_size, stride, padding, dilation, n)
        attrs["ceil_mode"] = bool(ceil_mode)
        out = apply(ops.max, (input,), attrs)
        if return_indices:
            return out, apply(ops.indices, (input,), attrs)
        return out
    except FwError as err:
        raise located(err, name, (input,), kernel_size=kernel_size, stride=stride,
                      padding=padding, dilation=dilation, ceil_mode=ceil_mode,
                      return_indices=return_indices) from None


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """The maximum of each window of (N, C, L) or (C, L); arguments as :func:`max_pool2d`."""
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """The maximum of each window of (N, C, H, W) or (C, H, W).

    ``stride`` defaults to ``kernel_size``; ``padding`` (at most half the window) counts as
    -inf; ``ceil_mode`` keeps a last, partial window. With ``return_indices=True`` also returns
    where each maximum was, as int64 flat indices h * W + w into the input plane (the first
    maximum among ties, as PyTorch). Only the maxima receive gradient.
    """
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """The maximum of each window of (N, C, D, H, W) or (C, D, H, W); arguments as
    :func:`max_pool2d`, indices flat d * H * W + h * W + w."""
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def _avg_pool(n, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override):
    name = f"avg_pool{n}d"
    try:
        check_tensors(_POOLS[n].avg, input)
        attrs = check_window(name, kernel_size, stride, padding, 1, n)
        del attrs["dilation"]  # only max pooling has a dilation
        check_divisor(divisor_override, name)
        attrs.update(ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
                     divisor_override=None if divisor_override is None else int(divisor_override))
        return apply(_POOLS[n].avg, (input,), attrs)
    except FwError as err:
        raise located(err, name, (input,), kernel_size=kernel_size, stride=stride,
                      padding=padding, ceil_mode=ceil_mode, count_include_pad=count_include_pad,
                      divisor_override=divisor_override) from None


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """The mean of each window of (N, C, L) or (C, L); arguments as :func:`avg_pool2d` (no
    divisor_override, as in PyTorch)."""
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """The mean of each window of (N, C, H, W) or (C, H, W).

    ``stride`` defaults to ``kernel_size``; zero ``padding`` (at most half the window) is
    counted in the divisor unless ``count_include_pad=False``; ``ceil_mode`` keeps a last,
    partial window (its overhang is never counted); ``divisor_override`` replaces the divisor.
    """
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """The mean of each window of (N, C, D, H, W) or (C, D, H, W); arguments as
    :func:`avg_pool2d`."""
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def _output_size(n, input, output_size, op) -> tuple[int, ...]:
    if isinstance(output_size, (tuple, list)) and len(output_size) == n:
        output_size = tuple(input.shape[-n + i] if s is None else s
                            for i, s in enumerate(output_size))
    size = ints(output_size, n, "output_size", op)
    _positive(size, "output_size", op)
    return size


def _adaptive_avg(n, input, output_size):
    name = f"adaptive_avg_pool{n}d"
    try:
        check_tensors(_POOLS[n].adaptive_avg, input)
        return apply(_POOLS[n].adaptive_avg, (input,),
                     {"output_size": _output_size(n, input, output_size, name)})
    except FwError as err:
        raise located(err, name, (input,), output_size=output_size) from None


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Average (N, C, L) or (C, L) over ``output_size`` bins, whatever L."""
    return _adaptive_avg(1, input, output_size)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average (N, C, H, W) or (C, H, W) over an ``output_size`` grid of bins (int or (h, w);
    None keeps that dimension), whatever the input size: the pooling before a classifier."""
    return _adaptive_avg(2, input, output_size)


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Average (N, C, D, H, W) or (C, D, H, W) over an ``output_size`` grid of bins."""
    return _adaptive_avg(3, input, output_size)


def _adaptive_max(n, input, output_size, return_indices):
    name = f"adaptive_max_pool{n}d"
    try:
        ops = _POOLS[n]
        check_tensors(ops.adaptive_max_indices, input)
        indices = apply(ops.adaptive_max_indices, (input,),
                        {"output_size": _output_size(n, input, output_size, name)})
        values = apply(ops.select, (input, indices))
        return (values, indices) if return_indices else values
    except FwError as err:
        raise located(err, name, (input,), output_size=output_size) from None


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """The maximum of (N, C, L) or (C, L) over ``output_size`` bins (as adaptive_avg_pool1d's);
    with ``return_indices`` also where each was. Only the maxima receive gradient."""
    return _adaptive_max(1, input, output_size, return_indices)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """The maximum of (N, C, H, W) or (C, H, W) over an ``output_size`` grid of bins; with
    ``return_indices`` also where each was (flat h * W + w)."""
    return _adaptive_max(2, input, output_size, return_indices)


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """The maximum of (N, C, D, H, W) or (C, D, H, W) over an ``output_size`` grid of bins."""
    return _adaptive_max(3, input, output_size, return_indices)


def _unpool_size(n, input, window, output_size, op) -> tuple[int, ...]:
    """PyTorch's ``_unpool_output_size``: the default size, or ``output_size`` (its last n
    entries when it also names N and C) within a stride of it."""
    default = tuple((size - 1) * s + k - 2 * p for size, k, s, p in zip(
        input.shape[-n:], window["kernel_size"], window["stride"], window["padding"]))
    if output_size is None:
        return default
    size = tuple(int(s) for s in output_size)
    if len(size) == n + 2:
        size = size[2:]
    if len(size) != n:
        raise ShapeError(f"output_size should be a sequence containing {n} or {n + 2} elements, "
                         f"but it has a length of '{len(size)}'", op=op,
                         hint="give the unpooled spatial size, e.g. the pooled input's")
    for d, (want, base, s) in enumerate(zip(size, default, window["stride"])):
        if not base - s < want < base + s:
            raise ShapeError(f'invalid output_size "{size}" (dim {d} must be between '
                             f"{base - s} and {base + s})", op=op,
                             hint="pass the size of the input that was pooled")
    return size


def _unpool(n, input, indices, kernel_size, stride, padding, output_size):
    name = f"max_unpool{n}d"
    try:
        op = _POOLS[n].unpool
        check_tensors(op, input, indices)
        window = check_window(name, kernel_size, stride, padding, 1, n)
        size = _unpool_size(n, input, window, output_size, name)
        data = indices._data
        if data.size and (int(data.min()) < 0 or int(data.max()) >= math.prod(size)):
            raise IndexOutOfRangeError(
                f"Found an invalid max index: {int(data.max())} (output volumes are of size "
                f"{'x'.join(map(str, size))})", op=name,
                hint="pass the indices of the max pool whose output is unpooled, with its "
                     "kernel_size, stride and padding")
        return apply(op, (input, indices), {"output_size": size})
    except FwError as err:
        raise located(err, name, (input, indices), kernel_size=kernel_size, stride=stride,
                      padding=padding, output_size=output_size) from None


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of max_pool1d: zeros with each value at its index (see
    :func:`max_unpool2d`)."""
    return _unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of max_pool2d: zeros of the pooled input's size with each value at
    the index ``max_pool2d(..., return_indices=True)`` gave it.

    The size is (H - 1) stride - 2 padding + kernel_size per dimension, or ``output_size``
    (within a stride of that; (N, C, H, W) or (H, W)). Raises IndexOutOfRangeError for an
    index outside the output plane.
    """
    return _unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of max_pool3d (see :func:`max_unpool2d`)."""
    return _unpool(3, input, indices, kernel_size, stride, padding, output_size)


def _lp_pool(n, input, norm_type, kernel_size, stride, ceil_mode):
    """PyTorch's composition: (window count * mean of x^p)^(1/p), a negative mean clipped to 0."""
    kernel = ints(kernel_size, n, "kernel_size", f"lp_pool{n}d")
    out = _avg_pool(n, input.pow(norm_type), kernel_size, stride, 0, ceil_mode, True, None)
    return (out.sign() * relu(out.abs())).mul(math.prod(kernel)).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """The p-norm (p = ``norm_type``) of each window of (N, C, L) or (C, L)."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """The p-norm (sum of x^p)^(1/p) of each window of (N, C, H, W) or (C, H, W), p =
    ``norm_type`` (p = inf would be a max pool; use max_pool2d)."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """The p-norm of each window of (N, C, D, H, W) or (C, D, H, W)."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


#: Tensor methods this family provides (none: pools are functions)
METHODS: dict = {}
