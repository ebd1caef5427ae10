"""Convolution, pooling and resampling over the trailing spatial dimensions of (N, C, ...) inputs.

Convolution is three ops, for 1-d and 2-d, that are each other's VJPs: ``conv{n}d`` (a
correlation, as in every framework), ``conv_transpose{n}d`` (its adjoint in the input) and
``conv{n}d_weight_grad`` (its adjoint in the weight); so convolutions differentiate any number
of times. Pools and resamplings are linear maps (max pool is, once its argmax is fixed) whose
VJP is their adjoint op, whose VJP is the op itself again.

Attributes are normalised once, at the boundary: kernel sizes, strides and dilations become
tuples of ints, and a convolution's padding becomes one (before, after) pair per spatial
dimension ('same' pads an even kernel more after than before, as PyTorch does). Every op also
takes an unbatched input (C, ...), as PyTorch does.
"""

from __future__ import annotations

__all__ = ["adaptive_avg_pool2d", "avg_pool2d", "conv1d", "conv2d", "conv_transpose1d",
           "conv_transpose2d", "interpolate", "max_pool2d"]

import math
import operator
from typing import NamedTuple

from .. import dtypes as _dt
from ..errors import DTypeError, FwError, ShapeError, UnsupportedError
from ..records import Structure, TensorSpec
from ..tensor import Tensor
from . import anchors
from .dispatch import apply, check_tensors
from .meta import located
from .reduction import sum as _sum
from .registry import define_op

_LINEAR = anchors.smooth("linear in the input: the gradient does not depend on the input's values")
_CONV_ANCHOR = anchors.smooth("bilinear in input and weight: the gradient w.r.t. one is the "
                              "other correlated with the output's gradient, so it scales with "
                              "the other's magnitude")


# -- attributes, normalised at the boundary -------------------------------------------------------
def _ints(value, n: int, what: str, op: str) -> tuple[int, ...]:
    """An int or a sequence of n ints (or of 1, repeated) as a tuple of n ints."""
    try:
        values = (operator.index(value),) if not hasattr(value, "__iter__") else tuple(
            operator.index(v) for v in value)
    except (TypeError, ValueError):
        raise ShapeError(f"{what} must be an int or {n} ints, got {value!r}", op=op,
                         hint=f"e.g. {what}=2 or {what}={(2,) * n}") from None
    if len(values) == 1:
        values *= n
    if len(values) != n:
        raise ShapeError(f"{what} must be an int or {n} ints, got {value!r}", op=op,
                         hint=f"give one value per spatial dimension, e.g. {(2,) * n}")
    return values


def _positive(values, what: str, op: str, least: int = 1) -> None:
    if any(v < least for v in values):
        raise ShapeError(f"{what} must be >= {least}, got {values}", op=op,
                         hint=f"use {what} values of at least {least}")


def _check_steps(op: str, stride, dilation) -> None:
    _positive(stride, "stride", op)
    _positive(dilation, "dilation", op)


def _check_output_padding(op: str, output_padding, stride, dilation) -> None:
    if any(not 0 <= extra < max(s, d) for extra, s, d in zip(output_padding, stride, dilation)):
        raise ShapeError(f"output_padding {output_padding} must be >= 0 and smaller than the "
                         f"stride {stride} or the dilation {dilation}", op=op,
                         hint="output_padding only picks among the sizes a stride allows")


def _check_window(op: str, kernel_size, stride, padding, dilation) -> None:
    """A pooling window's attributes: positive sizes, padding at most half the window."""
    _positive(kernel_size, "kernel_size", op)
    _check_steps(op, stride, dilation)
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


def check_conv_geometry(op: str, n: int, kernel_size, stride, dilation, padding,
                        output_padding=None) -> tuple:
    """(kernel_size, stride, dilation, padding, output_padding) as tuples of ``n`` ints, checked
    as the convolution ops check them (padding may stay 'valid'/'same'; output_padding None
    when not given): for a layer to refuse bad arguments when it is built, under its name."""
    kernel = _ints(kernel_size, n, "kernel_size", op)
    _positive(kernel, "kernel_size", op)
    stride = _ints(stride, n, "stride", op)
    dilation = _ints(dilation, n, "dilation", op)
    _check_steps(op, stride, dilation)
    if not isinstance(padding, str):
        padding = _ints(padding, n, "padding", op)
        _positive(padding, "padding", op, least=0)
    if output_padding is not None:
        output_padding = _ints(output_padding, n, "output_padding", op)
        _check_output_padding(op, output_padding, stride, dilation)
    return kernel, stride, dilation, padding, output_padding


def check_groups(op: str, groups, in_channels: int, out_channels: int) -> None:
    """Both channel counts divisible by ``groups`` (>= 1), or a ShapeError naming ``op``."""
    _check_groups(op, groups, in_channels, "in_channels")
    _check_groups(op, groups, out_channels, "out_channels")


def _conv_padding(padding, n, kernel, stride, dilation, op) -> tuple[tuple[int, int], ...]:
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * n
        if padding != "same":
            raise ShapeError(f"padding must be an int, {n} ints, 'valid' or 'same', got "
                             f"{padding!r}", op=op, hint="e.g. padding=1 or padding='same'")
        if any(s != 1 for s in stride):
            raise UnsupportedError(f"padding='same' needs stride 1, got stride {stride}", op=op,
                                   hint="give the padding explicitly, e.g. padding=k // 2")
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)
    values = _ints(padding, n, "padding", op)
    _positive(values, "padding", op, least=0)
    return tuple((p, p) for p in values)


# -- meta-rule pieces -----------------------------------------------------------------------------
def _shape_text(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ")"


def _floats(op: str, x, *others) -> None:
    """x is floating point and the other tensors (weight, bias) share its dtype."""
    if not x.dtype.is_floating_point:
        raise DTypeError(f"expects a floating-point input, got {x.dtype.name}", op=op,
                         hint="convert with .float() first")
    for other, what in others:
        if other is not None and other.dtype is not x.dtype:
            raise DTypeError(f"the input is {x.dtype.name} but the {what} is {other.dtype.name}",
                             op=op, hint=f"give both one dtype, e.g. {what}.to(x.dtype)")


def _batched(op: str, x, n: int) -> bool:
    """Whether x is (N, C, *spatial) rather than unbatched (C, *spatial); else a ShapeError."""
    ndim = len(x.shape)
    if ndim not in (n + 1, n + 2):
        dims = {1: "L", 2: "H, W"}.get(n, "...")
        raise ShapeError(f"expects a {n + 2}-d input (N, C, {dims}) or an unbatched {n + 1}-d one "
                         f"(C, {dims}), got shape {_shape_text(x.shape)}", op=op,
                         hint="reshape the input, or add a batch dimension with unsqueeze(0)")
    return ndim == n + 2


def _conv_lengths(op, sizes, kernel, stride, padding, dilation) -> tuple[int, ...]:
    """Output lengths of a convolution (floor of the window count) per spatial dimension."""
    _check_steps(op, stride, dilation)
    out = []
    for size, k, s, (lo, hi), d in zip(sizes, kernel, stride, padding, dilation):
        span = d * (k - 1) + 1
        if lo < 0 or size + lo + hi < span:
            raise ShapeError(
                f"the input's spatial size {_shape_text(sizes)} (padded by {padding}) is smaller "
                f"than the kernel {_shape_text(kernel)} (dilation {dilation})", op=op,
                hint="use a larger input, more padding, or a smaller kernel or dilation")
        out.append((size + lo + hi - span) // s + 1)
    return tuple(out)


def _check_groups(op: str, groups: int, count: int, what: str) -> None:
    if groups < 1:
        raise ShapeError(f"groups must be >= 1, got {groups}", op=op, hint="use groups=1")
    if count % groups:
        raise ShapeError(f"{what} ({count}) must be divisible by groups ({groups})", op=op,
                         hint="pick groups that divide both the input and output channels")


def _check_bias(op: str, bias, channels: int) -> None:
    if bias is not None and tuple(bias.shape) != (channels,):
        raise ShapeError(f"bias must have shape ({channels},) (one per output channel), got "
                         f"{_shape_text(bias.shape)}", op=op,
                         hint="pass a 1-d bias with out_channels values, or bias=None")


def _check_weight(op: str, weight, n: int, layout: str) -> tuple[int, ...]:
    shape = tuple(weight.shape)
    if len(shape) != n + 2 or 0 in shape[2:]:
        raise ShapeError(f"weight must be {n + 2}-d ({layout}, *kernel_size) with a non-empty "
                         f"kernel, got shape {_shape_text(shape)}", op=op,
                         hint=f"a {n}-d convolution's weight has {n} kernel dimensions, each of "
                         "size >= 1")
    return shape


def _conv_meta(n: int):
    name = f"conv{n}d"

    def meta(x, weight, bias=None, *, stride, padding, dilation, groups):
        _floats(name, x, (weight, "weight"), (bias, "bias"))
        batched = _batched(name, x, n)
        w = _check_weight(name, weight, n, "out_channels, in_channels / groups")
        channels = x.shape[1 if batched else 0]
        _check_groups(name, groups, w[0], "out_channels (weight.shape[0])")
        if channels != w[1] * groups:
            raise ShapeError(
                f"the input has {channels} channels but the weight {_shape_text(w)} expects "
                f"in_channels = weight.shape[1] * groups = {w[1]} * {groups} = {w[1] * groups}",
                op=name, hint="check the layer's in_channels (and groups) against the input's "
                "channel dimension (dim 1 of (N, C, ...))")
        _check_bias(name, bias, w[0])
        out = _conv_lengths(name, x.shape[-n:], w[2:], stride, padding, dilation)
        return TensorSpec(tuple(x.shape[:-n - 1]) + (w[0],) + out, x.dtype)

    return meta


def _transposed_lengths(op, sizes, kernel, stride, padding, output_padding, dilation):
    _check_steps(op, stride, dilation)
    _check_output_padding(op, output_padding, stride, dilation)
    out = []
    for size, k, s, (lo, hi), extra, d in zip(sizes, kernel, stride, padding, output_padding,
                                              dilation):
        length = (size - 1) * s - lo - hi + d * (k - 1) + 1 + extra
        if length < 1:
            raise ShapeError(f"the output would be empty: input size {_shape_text(sizes)} with "
                             f"padding {padding} gives length {length}", op=op,
                             hint="use less padding or a larger kernel")
        out.append(length)
    return tuple(out)


def _transpose_meta(n: int):
    name = f"conv_transpose{n}d"

    def meta(x, weight, bias=None, *, stride, padding, output_padding, dilation, groups):
        _floats(name, x, (weight, "weight"), (bias, "bias"))
        batched = _batched(name, x, n)
        w = _check_weight(name, weight, n, "in_channels, out_channels / groups")
        channels = x.shape[1 if batched else 0]
        if channels != w[0]:
            raise ShapeError(f"the input has {channels} channels but the weight {_shape_text(w)} "
                             f"expects in_channels = weight.shape[0] = {w[0]}", op=name,
                             hint="a transposed convolution's weight is (in_channels, "
                             "out_channels / groups, *kernel_size)")
        _check_groups(name, groups, w[0], "in_channels (weight.shape[0])")
        _check_bias(name, bias, w[1] * groups)
        out = _transposed_lengths(name, x.shape[-n:], w[2:], stride, padding, output_padding,
                                  dilation)
        return TensorSpec(tuple(x.shape[:-n - 1]) + (w[1] * groups,) + out, x.dtype)

    return meta


def _weight_grad_meta(n: int):
    name = f"conv{n}d_weight_grad"

    def meta(x, grad, *, kernel_size, stride, padding, dilation, groups):
        _floats(name, x, (grad, "grad"))
        batched = _batched(name, x, n)
        out = _conv_lengths(name, x.shape[-n:], kernel_size, stride, padding, dilation)
        channel = grad.shape[1 if batched else 0] if len(grad.shape) == len(x.shape) else -1
        expected = tuple(x.shape[:-n - 1]) + (channel,) + out
        if tuple(grad.shape) != expected:
            raise ShapeError(f"grad has shape {_shape_text(grad.shape)} but the convolution of "
                             f"an input {_shape_text(x.shape)} gives {_shape_text(expected)}",
                             op=name, hint="pass the gradient of this convolution's output")
        channels = x.shape[1 if batched else 0]
        _check_groups(name, groups, channels, "in_channels")
        _check_groups(name, groups, expected[-n - 1], "out_channels")
        return TensorSpec((expected[-n - 1], channels // groups) + tuple(kernel_size), x.dtype)

    return meta


# -- convolution: three ops per dimensionality, each other's VJPs ---------------------------------
class _ConvOps(NamedTuple):
    conv: object
    transpose: object
    weight_grad: object


def _fit(sizes, grad_sizes, kernel, attrs) -> tuple[int, ...]:
    """The output_padding that makes a transposed convolution of ``grad_sizes`` give ``sizes``."""
    return tuple(size - ((g - 1) * s - lo - hi + d * (k - 1) + 1) for size, g, k, s, (lo, hi), d
                 in zip(sizes, grad_sizes, kernel, attrs["stride"], attrs["padding"],
                        attrs["dilation"]))


def _bias_grad(g, n: int):
    """Sum of the output's gradient over every dimension but the channels."""
    channel = g._data.ndim - n - 1
    return _sum(g, dim=tuple(i for i in range(g._data.ndim) if i != channel))


def _conv_attrs(attrs) -> dict:
    return {"stride": attrs["stride"], "padding": attrs["padding"],
            "dilation": attrs["dilation"], "groups": attrs["groups"]}


def _grads(ctx, g, n: int, data, weight) -> tuple:
    """(d input, d weight[, d bias]) of an op on (x, weight[, bias]): ``data()`` and
    ``weight()`` compute the first two, only when needed."""
    grads = [data() if ctx.next[0] is not None else None,
             weight() if ctx.next[1] is not None else None]
    if len(ctx.inputs) == 3:
        grads.append(_bias_grad(g, n) if ctx.next[2] is not None else None)
    return tuple(grads)


def _conv_vjp(n: int):
    def vjp(ctx, g):
        ops, (x, weight), attrs = _CONV[n], ctx.inputs[:2], ctx.attrs
        kernel = ctx.input_shapes[1][2:]
        extra = lambda: _fit(ctx.input_shapes[0][-n:], g.shape[-n:], kernel, attrs)
        return _grads(ctx, g, n,
                      lambda: apply(ops.transpose, (g, weight),
                                    {**attrs, "output_padding": extra()}),
                      lambda: apply(ops.weight_grad, (x, g), {**attrs, "kernel_size": kernel}))

    return vjp


def _transpose_vjp(n: int):
    def vjp(ctx, g):
        ops, (x, weight), attrs = _CONV[n], ctx.inputs[:2], ctx.attrs
        # the convolution this op is the adjoint of maps g's size back to x's size exactly
        conv = {**_conv_attrs(attrs), "padding": tuple(
            (lo, hi - extra) for (lo, hi), extra in zip(attrs["padding"],
                                                        attrs["output_padding"]))}
        return _grads(ctx, g, n, lambda: apply(ops.conv, (g, weight), conv),
                      lambda: apply(ops.weight_grad, (g, x),
                                    {**conv, "kernel_size": ctx.input_shapes[1][2:]}))

    return vjp


def _weight_grad_vjp(n: int):
    def vjp(ctx, h):
        ops, (x, grad), attrs = _CONV[n], ctx.inputs, _conv_attrs(ctx.attrs)
        extra = lambda: _fit(ctx.input_shapes[0][-n:], grad.shape[-n:], h.shape[2:], attrs)
        return _grads(ctx, h, n,
                      lambda: apply(ops.transpose, (grad, h),
                                    {**attrs, "output_padding": extra()}),
                      lambda: apply(ops.conv, (x, h), attrs))

    return vjp


def _contraction(name, doc, signature, meta, vjp):
    return define_op(name, family="conv", builtin=True, doc=doc, signature=signature, meta=meta,
                     vjp=vjp, structure=Structure.CONTRACTION, anchor=_CONV_ANCHOR,
                     saves=("inputs",))


def _define_conv(n: int) -> _ConvOps:
    attrs = "stride, padding, dilation, groups"
    return _ConvOps(
        _contraction(f"conv{n}d",
                     f"{n}-d cross-correlation: out[n, o] = bias[o] + sum over the input channels "
                     "c of group(o) and kernel offsets k of weight[o, c, k] * "
                     "x_padded[n, c, stride * position + dilation * k].",
                     f"conv{n}d(x: Tensor, weight: Tensor, bias: Tensor | None, {attrs}) -> Tensor",
                     _conv_meta(n), _conv_vjp(n)),
        _contraction(f"conv_transpose{n}d",
                     f"The adjoint of conv{n}d in its input (a 'deconvolution'): each input "
                     "element adds weight * value to a window of the output.",
                     f"conv_transpose{n}d(x: Tensor, weight: Tensor, bias: Tensor | None, "
                     "stride, padding, output_padding, dilation, groups) -> Tensor",
                     _transpose_meta(n), _transpose_vjp(n)),
        _contraction(f"conv{n}d_weight_grad",
                     f"The adjoint of conv{n}d in its weight: the correlation of the input with "
                     "the output's gradient, summed over the batch.",
                     f"conv{n}d_weight_grad(x: Tensor, grad: Tensor, kernel_size, {attrs}) -> "
                     "Tensor", _weight_grad_meta(n), _weight_grad_vjp(n)),
    )


_CONV = {n: _define_conv(n) for n in (1, 2)}


# -- pooling --------------------------------------------------------------------------------------
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


def _pool_meta(op: str, x, kernel_size, stride, padding, dilation=(1, 1), ceil_mode=False):
    _batched(op, x, 2)
    _check_window(op, kernel_size, stride, padding, dilation)
    out = tuple(_pool_length(op, size, k, s, p, d, ceil_mode) for size, k, s, p, d in zip(
        x.shape[-2:], kernel_size, stride, padding, dilation))
    return tuple(x.shape[:-2]) + out


def _max_pool_meta(x, *, kernel_size, stride, padding, dilation, ceil_mode):
    if x.dtype is _dt.bool_:
        raise DTypeError("expects a numeric input, got bool", op="max_pool2d",
                         hint="convert with .float() first")
    return TensorSpec(_pool_meta("max_pool2d", x, kernel_size, stride, padding, dilation,
                                 ceil_mode), x.dtype)


def _indices_meta(x, **attrs):
    return TensorSpec(_max_pool_meta(x, **attrs).shape, _dt.int64)


def _scatter_meta(g, indices, *, input_size):
    if tuple(indices.shape) != tuple(g.shape) or indices.dtype is not _dt.int64:
        raise ShapeError(f"indices {indices} must be int64 with the gradient's shape "
                         f"{_shape_text(g.shape)}", op="max_pool2d_backward",
                         hint="pass the indices max_pool2d(..., return_indices=True) returned")
    return TensorSpec(tuple(g.shape[:-2]) + tuple(input_size), g.dtype)


def _select_meta(x, indices):
    if len(x.shape) < 2 or tuple(indices.shape[:-2]) != tuple(x.shape[:-2]) or \
            indices.dtype is not _dt.int64:
        raise ShapeError(f"indices {indices} must be int64 with the leading dimensions of "
                         f"x {_shape_text(x.shape)}", op="max_pool2d_select",
                         hint="pass the indices of a max_pool2d of x")
    return TensorSpec(tuple(indices.shape), x.dtype)


def _max_pool_vjp(ctx, g):
    x = ctx.inputs[0]
    indices = apply(MAX_POOL2D_INDICES, (x,), ctx.attrs)
    return (apply(MAX_POOL2D_BACKWARD, (g, indices), {"input_size": ctx.input_shapes[0][-2:]}),)


MAX_POOL2D = define_op(
    "max_pool2d", family="conv", builtin=True,
    doc="The largest element of each (dilated) window over H and W; padding counts as -inf.",
    signature="max_pool2d(x: Tensor, kernel_size, stride, padding, dilation, ceil_mode) -> Tensor",
    meta=_max_pool_meta, vjp=_max_pool_vjp, structure=Structure.REDUCTION,
    anchor=anchors.kink("only the largest element of each window gets gradient (the first one "
                        "among ties); the others get exactly 0, and the gradient jumps to "
                        "another element when the largest changes"),
    saves=("inputs",))
MAX_POOL2D_INDICES = define_op(
    "max_pool2d_indices", family="conv", builtin=True,
    doc="Where max_pool2d found each maximum, as a flat index h * W + w into the input's plane.",
    signature="max_pool2d_indices(x: Tensor, kernel_size, stride, padding, dilation, "
              "ceil_mode) -> Tensor[int64]",
    meta=_indices_meta, vjp=None, structure=Structure.NONE,
    anchor=anchors.flat("integer positions: nothing to differentiate"))
MAX_POOL2D_BACKWARD = define_op(
    "max_pool2d_backward", family="conv", builtin=True,
    doc="Scatter-add g into zeros of the input's size at max_pool2d's indices (its VJP).",
    signature="max_pool2d_backward(g: Tensor, indices: Tensor[int64], input_size) -> Tensor",
    meta=_scatter_meta,
    vjp=lambda ctx, h: (apply(MAX_POOL2D_SELECT, (h, ctx.inputs[1])), None),
    structure=Structure.OPAQUE, anchor=_LINEAR, saves=("inputs",))
MAX_POOL2D_SELECT = define_op(
    "max_pool2d_select", family="conv", builtin=True,
    doc="x's elements at max_pool2d's indices (the VJP of max_pool2d_backward).",
    signature="max_pool2d_select(x: Tensor, indices: Tensor[int64]) -> Tensor",
    meta=_select_meta,
    vjp=lambda ctx, g: (apply(MAX_POOL2D_BACKWARD, (g, ctx.inputs[1]),
                              {"input_size": ctx.input_shapes[0][-2:]}), None),
    structure=Structure.INJECTIVE, anchor=_LINEAR, saves=("inputs",))


def _linear_pair(name, doc, signature, meta, structure, back_structure):
    """A linear op on the last two dimensions and its adjoint ``{name}_backward``, each the
    other's VJP. The adjoint takes the forward's attributes plus ``input_size``."""

    def back_meta(g, *, input_size, **attrs):
        spec = TensorSpec(tuple(g.shape[:-2]) + tuple(input_size), g.dtype)
        if tuple(meta(spec, **attrs).shape) != tuple(g.shape):
            raise ShapeError(f"a gradient of shape {_shape_text(g.shape)} does not fit an input "
                             f"of spatial size {_shape_text(input_size)}", op=name + "_backward",
                             hint=f"pass the gradient of {name}'s output")
        return spec

    forward = define_op(
        name, family="conv", builtin=True, doc=doc, signature=signature, meta=meta,
        vjp=lambda ctx, g: (apply(backward, (g,), {**ctx.attrs,
                                                   "input_size": ctx.input_shapes[0][-2:]}),),
        structure=structure, anchor=_LINEAR)
    backward = define_op(
        name + "_backward", family="conv", builtin=True,
        doc=f"The adjoint of {name} (its VJP): spreads each output gradient back over the "
            "inputs it was computed from, with the same weights.",
        signature=f"{name}_backward(g: Tensor, input_size, <{name}'s attributes>) -> Tensor",
        meta=back_meta,
        vjp=lambda ctx, h: (apply(forward, (h,), {k: v for k, v in ctx.attrs.items()
                                                  if k != "input_size"}),),
        structure=back_structure, anchor=_LINEAR)
    return forward, backward


def _avg_pool_meta(x, *, kernel_size, stride, padding, ceil_mode, count_include_pad,
                   divisor_override):
    _floats("avg_pool2d", x)
    check_divisor(divisor_override)
    return TensorSpec(_pool_meta("avg_pool2d", x, kernel_size, stride, padding,
                                 ceil_mode=ceil_mode), x.dtype)


def _adaptive_meta(x, *, output_size):
    _floats("adaptive_avg_pool2d", x)
    _batched("adaptive_avg_pool2d", x, 2)
    _positive(output_size, "output_size", "adaptive_avg_pool2d")
    if 0 in tuple(x.shape[-2:]):
        raise ShapeError(f"the input's spatial size {_shape_text(x.shape[-2:])} is empty",
                         op="adaptive_avg_pool2d", hint="pool a non-empty input")
    return TensorSpec(tuple(x.shape[:-2]) + tuple(output_size), x.dtype)


def _resample_meta(op: str, floating: bool):
    def meta(x, *, size, scales, **_):
        if len(x.shape) != 4:
            raise ShapeError(f"expects a 4-d input (N, C, H, W), got shape "
                             f"{_shape_text(x.shape)}", op=op,
                             hint="add a batch dimension with unsqueeze(0) for (C, H, W)")
        if floating:
            _floats(op, x)
        _positive(size, "size", op)
        if 0 in tuple(x.shape[-2:]):
            raise ShapeError("the input's spatial size is empty", op=op,
                             hint="resample a non-empty input")
        return TensorSpec(tuple(x.shape[:2]) + tuple(size), x.dtype)

    return meta


AVG_POOL2D, AVG_POOL2D_BACKWARD = _linear_pair(
    "avg_pool2d", "The mean of each window over H and W; the divisor counts padding unless "
    "count_include_pad=False, never the overhang of ceil_mode, and is divisor_override if given.",
    "avg_pool2d(x: Tensor, kernel_size, stride, padding, ceil_mode, count_include_pad, "
    "divisor_override) -> Tensor", _avg_pool_meta, Structure.REDUCTION, Structure.OPAQUE)
ADAPTIVE_AVG_POOL2D, ADAPTIVE_AVG_POOL2D_BACKWARD = _linear_pair(
    "adaptive_avg_pool2d", "The mean over output_size bins of H and W; bin i of n over a length L "
    "spans [floor(i L / n), ceil((i + 1) L / n)).",
    "adaptive_avg_pool2d(x: Tensor, output_size) -> Tensor", _adaptive_meta,
    Structure.REDUCTION, Structure.OPAQUE)
UPSAMPLE_NEAREST2D, UPSAMPLE_NEAREST2D_BACKWARD = _linear_pair(
    "upsample_nearest2d", "Resample H and W to size by copying the nearest source pixel: "
    "src = min(floor(dst * scale), L - 1), scale = 1 / scale_factor or L_in / L_out.",
    "upsample_nearest2d(x: Tensor, size, scales) -> Tensor",
    _resample_meta("upsample_nearest2d", floating=False), Structure.INJECTIVE,
    Structure.REDUCTION)
UPSAMPLE_BILINEAR2D, UPSAMPLE_BILINEAR2D_BACKWARD = _linear_pair(
    "upsample_bilinear2d", "Resample H and W to size by bilinear interpolation of the 2 x 2 "
    "nearest source pixels; align_corners=True maps corner pixel centres onto each other.",
    "upsample_bilinear2d(x: Tensor, size, align_corners, scales) -> Tensor",
    _resample_meta("upsample_bilinear2d", floating=True), Structure.CONTRACTION,
    Structure.CONTRACTION)


# -- the public functions -------------------------------------------------------------------------
def _convolve(n, x, weight, bias, stride, padding, dilation, groups):
    op = _CONV[n].conv
    try:
        check_tensors(op, x, weight, bias, allow_none=True)
        # an empty kernel runs without complaint (a result of zeros): refuse it up front
        _check_weight(op.name, weight, n, "out_channels, in_channels / groups")
        strides = _ints(stride, n, "stride", op.name)
        dilations = _ints(dilation, n, "dilation", op.name)
        _check_steps(op.name, strides, dilations)
        attrs = {"stride": strides, "dilation": dilations, "groups": int(groups),
                 "padding": _conv_padding(padding, n, weight.shape[2:], strides, dilations,
                                          op.name)}
        return apply(op, (x, weight) if bias is None else (x, weight, bias), attrs)
    except FwError as err:
        raise located(err, op.name, (x, weight, bias), stride=stride, padding=padding,
                      dilation=dilation, groups=groups) from None


def _convolve_transposed(n, x, weight, bias, stride, padding, output_padding, groups, dilation):
    op = _CONV[n].transpose
    try:
        check_tensors(op, x, weight, bias, allow_none=True)
        _check_weight(op.name, weight, n, "in_channels, out_channels / groups")
        pads = _ints(padding, n, "padding", op.name)
        _positive(pads, "padding", op.name, least=0)
        attrs = {"stride": _ints(stride, n, "stride", op.name),
                 "padding": tuple((p, p) for p in pads),
                 "output_padding": _ints(output_padding, n, "output_padding", op.name),
                 "dilation": _ints(dilation, n, "dilation", op.name), "groups": int(groups)}
        _check_steps(op.name, attrs["stride"], attrs["dilation"])
        _check_output_padding(op.name, attrs["output_padding"], attrs["stride"],
                              attrs["dilation"])
        return apply(op, (x, weight) if bias is None else (x, weight, bias), attrs)
    except FwError as err:
        raise located(err, op.name, (x, weight, bias), stride=stride, padding=padding,
                      output_padding=output_padding) from None


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """1-d convolution (cross-correlation) of (N, C_in, L) with (C_out, C_in / groups, k).

    Same arguments as :func:`conv2d`, with one int per argument. Returns (N, C_out, L_out).
    """
    return _convolve(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """2-d convolution (cross-correlation) of (N, C_in, H, W) with (C_out, C_in / groups, kH, kW).

    Args:
        stride, dilation: an int or (h, w).
        padding: an int, (h, w), 'valid' (none) or 'same' (output size = input size; stride 1
            only; an even kernel pads one more after than before, as PyTorch).
        groups: split the channels into groups convolved separately (C_in and C_out must be
            divisible by it; groups = C_in is a depthwise convolution).
        bias: (C_out,) or None.

    Returns (N, C_out, H_out, W_out) with H_out = (H + 2 padding - dilation (kH - 1) - 1) //
    stride + 1. Raises ShapeError when channels do not match the weight or groups does not
    divide them.
    """
    return _convolve(2, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """1-d transposed convolution; same arguments as :func:`conv_transpose2d`."""
    return _convolve_transposed(1, input, weight, bias, stride, padding, output_padding, groups,
                                dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """2-d transposed convolution ("deconvolution"): the gradient of conv2d w.r.t. its input.

    The weight is (C_in, C_out / groups, kH, kW). The output is (N, C_out, H_out, W_out) with
    H_out = (H - 1) stride - 2 padding + dilation (kH - 1) + output_padding + 1; output_padding
    (smaller than the stride or the dilation) picks among the input sizes a strided conv2d maps
    to the same output size.
    """
    return _convolve_transposed(2, input, weight, bias, stride, padding, output_padding, groups,
                                dilation)


def check_window(op: str, kernel_size, stride, padding, dilation=1) -> dict:
    """A 2-d pooling window's kernel_size, stride (None: the kernel size), padding and
    dilation as pairs of ints, checked (sizes >= 1, padding at most half the window)."""
    kernel = _ints(kernel_size, 2, "kernel_size", op)
    stride = kernel if stride is None or (hasattr(stride, "__len__") and len(stride) == 0) \
        else _ints(stride, 2, "stride", op)
    window = {"kernel_size": kernel, "stride": stride, "padding": _ints(padding, 2, "padding", op),
              "dilation": _ints(dilation, 2, "dilation", op)}
    _check_window(op, kernel, stride, window["padding"], window["dilation"])
    return window


def _pool_attrs(op, kernel_size, stride, padding, dilation=1):
    attrs = check_window(op, kernel_size, stride, padding, dilation)
    if op != "max_pool2d":  # only max pooling has a dilation
        del attrs["dilation"]
    return attrs


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """The maximum of each window of (N, C, H, W) or (C, H, W).

    ``stride`` defaults to ``kernel_size``; ``padding`` (at most half the window) counts as
    -inf; ``ceil_mode`` keeps a last, partial window. With ``return_indices=True`` also returns
    where each maximum was, as int64 flat indices h * W + w into the input plane (the first
    maximum among ties, as PyTorch). Only the maxima receive gradient.
    """
    try:
        check_tensors(MAX_POOL2D, input)
        attrs = _pool_attrs("max_pool2d", kernel_size, stride, padding, dilation)
        attrs["ceil_mode"] = bool(ceil_mode)
        out = apply(MAX_POOL2D, (input,), attrs)
        if return_indices:
            return out, apply(MAX_POOL2D_INDICES, (input,), attrs)
        return out
    except FwError as err:
        raise located(err, "max_pool2d", (input,), kernel_size=kernel_size, stride=stride,
                      padding=padding, dilation=dilation, ceil_mode=ceil_mode,
                      return_indices=return_indices) from None


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """The mean of each window of (N, C, H, W) or (C, H, W).

    ``stride`` defaults to ``kernel_size``; zero ``padding`` (at most half the window) is
    counted in the divisor unless ``count_include_pad=False``; ``ceil_mode`` keeps a last,
    partial window (its overhang is never counted); ``divisor_override`` replaces the divisor.
    """
    try:
        check_tensors(AVG_POOL2D, input)
        attrs = _pool_attrs("avg_pool2d", kernel_size, stride, padding)
        check_divisor(divisor_override)
        attrs.update(ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
                     divisor_override=None if divisor_override is None else int(divisor_override))
        return apply(AVG_POOL2D, (input,), attrs)
    except FwError as err:
        raise located(err, "avg_pool2d", (input,), kernel_size=kernel_size, stride=stride,
                      padding=padding, ceil_mode=ceil_mode, count_include_pad=count_include_pad,
                      divisor_override=divisor_override) from None


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average (N, C, H, W) or (C, H, W) over an ``output_size`` grid of bins (int or (h, w);
    None keeps that dimension), whatever the input size: the pooling before a classifier."""
    try:
        check_tensors(ADAPTIVE_AVG_POOL2D, input)
        if isinstance(output_size, (tuple, list)) and len(output_size) == 2:
            output_size = tuple(input.shape[-2 + i] if s is None else s
                                for i, s in enumerate(output_size))
        size = _ints(output_size, 2, "output_size", "adaptive_avg_pool2d")
        _positive(size, "output_size", "adaptive_avg_pool2d")
        return apply(ADAPTIVE_AVG_POOL2D, (input,), {"output_size": size})
    except FwError as err:
        raise located(err, "adaptive_avg_pool2d", (input,), output_size=output_size) from None


def _scales(scale_factor, op) -> tuple[float, float]:
    try:
        values = (float(scale_factor),) * 2 if isinstance(scale_factor, (int, float)) else \
            tuple(float(s) for s in scale_factor)
    except (TypeError, ValueError):
        values = ()
    if len(values) != 2 or any(not v > 0 for v in values):
        raise ShapeError(f"scale_factor must be a positive number or 2 of them, got "
                         f"{scale_factor!r}", op=op, hint="e.g. scale_factor=2 or (2, 1.5)")
    return values


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None) -> Tensor:
    """Resize the H and W of a 4-d (N, C, H, W) input, as ``torch.nn.functional.interpolate``.

    Args:
        size: the output (H, W) (or one int for both); or give ``scale_factor`` instead
            (output = floor(input * scale_factor)).
        mode: 'nearest' (copy the nearest pixel) or 'bilinear'.
        align_corners: bilinear only: True maps the corner pixels' centres onto each other,
            False (default) their outer edges.
        recompute_scale_factor: True derives the sampling scale from the sizes rather than
            using ``1 / scale_factor`` (they differ when the product is not whole).
    """
    try:
        op = "interpolate"
        check_tensors(UPSAMPLE_NEAREST2D, input)
        if mode not in ("nearest", "bilinear"):
            raise UnsupportedError(f"mode {mode!r} is not implemented", op=op,
                                   hint="use mode='nearest' or mode='bilinear'")
        if input._data.ndim != 4:
            raise ShapeError(f"expects a 4-d input (N, C, H, W), got shape "
                             f"{_shape_text(input.shape)}", op=op,
                             hint="add a batch dimension with unsqueeze(0) for (C, H, W)")
        if (size is None) == (scale_factor is None):
            raise ShapeError("give exactly one of size and scale_factor", op=op,
                             hint="e.g. interpolate(x, scale_factor=2) or interpolate(x, size=(64, "
                                  "64))")
        if align_corners is not None and mode == "nearest":
            raise ShapeError("align_corners only applies to mode='bilinear'", op=op,
                             hint="leave align_corners=None with mode='nearest'")
        if size is not None:
            out = _ints(size, 2, "size", op)
            scales = (None, None)
        else:
            factors = _scales(scale_factor, op)
            out = tuple(math.floor(n * f) for n, f in zip(input.shape[-2:], factors))
            scales = (None, None) if recompute_scale_factor else factors
        _positive(out, "size", op)
        if mode == "nearest":
            return apply(UPSAMPLE_NEAREST2D, (input,), {"size": out, "scales": scales})
        return apply(UPSAMPLE_BILINEAR2D, (input,),
                     {"size": out, "align_corners": bool(align_corners), "scales": scales})
    except FwError as err:
        raise located(err, "interpolate", (input,), size=size, scale_factor=scale_factor, mode=mode,
                      align_corners=align_corners,
                      recompute_scale_factor=recompute_scale_factor) from None


#: Tensor methods this family provides (none: convolutions and pools are functions)
METHODS: dict = {}
