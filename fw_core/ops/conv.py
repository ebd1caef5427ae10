"""Convolution over the trailing spatial dimensions of (N, C, ...) inputs, in 1, 2 and 3 d.

Convolution is three ops per dimensionality that are each other's VJPs: ``conv{n}d`` (a
correlation, as in every framework), ``conv_transpose{n}d`` (its adjoint in the input) and
``conv{n}d_weight_grad`` (its adjoint in the weight); so convolutions differentiate any number
of times. Pooling is :mod:`fw_core.ops.pooling`, resampling :mod:`fw_core.ops.resample`.

Attributes are normalised once, at the boundary: kernel sizes, strides and dilations become
tuples of ints, and a convolution's padding becomes one (before, after) pair per spatial
dimension ('same' pads an even kernel more after than before, as PyTorch does). Every op also
takes an unbatched input (C, ...), as PyTorch does.
"""

from __future__ import annotations

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d"]

from typing import NamedTuple

from ..errors import FwError, ShapeError, UnsupportedError
from ..records import Structure, TensorSpec
from ..tensor import Tensor
from . import anchors
from ._spatial import batched as _batched
from ._spatial import check_steps as _check_steps
from ._spatial import floats as _floats
from ._spatial import ints as _ints
from ._spatial import positive as _positive
from ._spatial import shape_text as _shape_text
from .dispatch import apply, check_tensors
from .meta import located
from .reduction import sum as _sum
from .registry import define_op

_CONV_ANCHOR = anchors.smooth("bilinear in input and weight: the gradient w.r.t. one is the "
                              "other correlated with the output's gradient, so it scales with "
                              "the other's magnitude")


def _check_output_padding(op: str, output_padding, stride, dilation) -> None:
    if any(not 0 <= extra < max(s, d) for extra, s, d in zip(output_padding, stride, dilation)):
        raise ShapeError(f"output_padding {output_padding} must be >= 0 and smaller than the "
                         f"stride {stride} or the dilation {dilation}", op=op,
                         hint="output_padding only picks among the sizes a stride allows")


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


_CONV = {n: _define_conv(n) for n in (1, 2, 3)}


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


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """3-d convolution (cross-correlation) of (N, C_in, D, H, W) with (C_out, C_in / groups,
    kD, kH, kW); same arguments as :func:`conv2d`, with ints or triples."""
    return _convolve(3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """3-d transposed convolution; weight (C_in, C_out / groups, kD, kH, kW), same arguments
    as :func:`conv_transpose2d`."""
    return _convolve_transposed(3, input, weight, bias, stride, padding, output_padding, groups,
                                dilation)


#: Tensor methods this family provides (none: convolutions are functions)
METHODS: dict = {}
