"""fw_onednn's convolutions for ``cpu``: conv1d/conv2d, conv_transpose1d/conv_transpose2d and
conv1d_weight_grad/conv2d_weight_grad on float32, through cached oneDNN programs.

The three ops of a dimensionality are each other's VJPs (``fw_core/ops/conv.py``), so training a
convolution runs all three, each on one oneDNN primitive:

- ``conv{n}d``: convolution forward, the bias added inside the primitive;
- ``conv_transpose{n}d``: deconvolution forward (oneDNN's transposed convolution, the bias inside
  too); it is also ``conv{n}d``'s gradient in its input;
- ``conv{n}d_weight_grad``: convolution backward-weights; it is also the weight gradient of all
  three ops.

Every operand goes through the layout oneDNN chooses for it (:mod:`fw_onednn.program`): the
input, the weights and the result are reordered per call, in eager mode as in PyTorch. Measured
(``benchmarks/conv.py``, one thread) at the cnn workload's shapes and two larger ones, the
blocked layouts with their reorders are 1.3–2.4x faster than oneDNN's plain-layout convolution
(im2col + GEMM), batch 1 included, so no shape takes the plain path. The weights are reordered
per call too, rather than cached per parameter version: a kernel sees only the raw array, which
an optimizer updates in place, and their reorder costs under 1% of a convolution at training
batch sizes (1–2 µs, up to a quarter of the 7 µs of the first layer at batch 1).

The guard takes a call when every operand is float32 (the bias too), none is empty, oneDNN can
describe each operand's strides (positive whole elements, each dimension's stride at least the
extent of the next: any transpose of a dense array, not a view that skips rows), the shapes and
attributes are ones fw's meta rule accepts, and oneDNN has more than its reference loops for
them; fw_cpu runs every other call (float64, so ``gradcheck``; float16; broadcast views). The
answer is cached with the program, so after the first call of a layout the guard costs one
dictionary lookup. Results match fw_cpu's to float32 rounding: oneDNN accumulates in float32, in
its own order.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from . import capi, capi_conv, spatial
from .cache import PRIMITIVES
from .catalog import TAKES
from .layouts import contiguous
from .primitive import Refusal
from .program import Builder

F32 = np.dtype(np.float32)


# .entry: the program the guard just found, for its kernel (see fw_onednn.kernels)
_found = threading.local()
_lookup, _add, _empty = PRIMITIVES.lookup, PRIMITIVES.add, np.empty
_contiguous = np.ascontiguousarray
_NO_REORDER = "oneDNN has no reorder between these layouts"


@dataclass(frozen=True)
class Geometry:
    """A convolution as oneDNN's primitive descriptors take it (dims of src, weights and dst,
    with a group dimension first in the weights when ``groups > 1``), and the shape of the
    result fw expects of a batched call."""

    src: tuple[int, ...]
    weights: tuple[int, ...]
    dst: tuple[int, ...]
    strides: tuple[int, ...]
    dilates: tuple[int, ...]  # oneDNN's: 0 is no dilation
    pad_l: tuple[int, ...]
    pad_r: tuple[int, ...]
    out_shape: tuple[int, ...]

    def steps(self) -> tuple:
        """strides, dilates, padding_l, padding_r as ``dnnl_dims_t``."""
        return tuple(capi.Dims(*v) for v in (self.strides, self.dilates, self.pad_l, self.pad_r))


def _attributes(n: int, stride, padding, dilation) -> bool:
    """Whether fw's normalised attributes fit ``n`` spatial dimensions and are in range."""
    return (len(stride) == n and len(dilation) == n and len(padding) == n
            and all(s >= 1 for s in stride) and all(d >= 1 for d in dilation)
            and all(len(p) == 2 and min(p) >= 0 for p in padding))


def _lengths(sizes, kernel, stride, padding, dilation) -> tuple[int, ...] | None:
    """A convolution's output lengths, or None when a window does not fit or a kernel is
    empty."""
    out = []
    for size, k, s, (lo, hi), d in zip(sizes, kernel, stride, padding, dilation):
        span = d * (k - 1) + 1
        if k < 1 or size + lo + hi < span:
            return None
        out.append((size + lo + hi - span) // s + 1)
    return tuple(out)


def _grouped(dims, groups: int, channels: int) -> tuple[int, ...]:
    """Weights dims as oneDNN takes them: (groups, dims[0] / groups, ...) when grouped."""
    if groups == 1:
        return tuple(dims)
    return (groups, dims[0] // groups, *dims[1:])


def _conv_weights(shape, steps, groups: int):
    """fw's conv weight (O, C / groups, *kernel) as oneDNN's weights: dims, element strides."""
    if groups == 1:
        return tuple(shape), steps
    return (groups, shape[0] // groups, *shape[1:]), (shape[0] // groups * steps[0], *steps)


def _deconv_weights(shape, steps, groups: int):
    """fw's transposed-convolution weight (C_in, C_out / groups, *kernel) as oneDNN's
    deconvolution weights ((groups,) C_out / groups, C_in / groups, *kernel), read in place."""
    dims, order = (shape[1], shape[0] // groups, *shape[2:]), (steps[1], steps[0], *steps[2:])
    if groups == 1:
        return dims, order
    return (groups, *dims), (shape[0] // groups * steps[0], *order)


# -- plans: a call's shapes and attributes as a Geometry, or why oneDNN cannot take it ----------
def _forward_plan(x, w_shape, bias_shape, stride, padding, dilation, groups) -> Geometry | str:
    batch, channels, *sizes = x
    out_channels, per_group, *kernel = w_shape
    if groups < 1 or out_channels % groups or channels != per_group * groups:
        return "the channels do not match the weight and groups"
    if bias_shape is not None and tuple(bias_shape) != (out_channels,):
        return "the bias does not have one value per output channel"
    out = _lengths(sizes, kernel, stride, padding, dilation)
    if out is None:
        return "the kernel does not fit the padded input"
    dst = (batch, out_channels, *out)
    return Geometry(x, _grouped(w_shape, groups, out_channels), dst, stride,
                    tuple(d - 1 for d in dilation), *zip(*padding), dst)


def _transpose_plan(x, w_shape, bias_shape, stride, padding, output_padding, dilation,
                    groups) -> Geometry | str:
    batch, channels, *sizes = x
    in_channels, per_group, *kernel = w_shape
    if groups < 1 or channels != in_channels or in_channels % groups:
        return "the channels do not match the weight and groups"
    out_channels = per_group * groups
    if bias_shape is not None and tuple(bias_shape) != (out_channels,):
        return "the bias does not have one value per output channel"
    if len(output_padding) != len(stride) or any(
            not 0 <= e < max(s, d) for e, s, d in zip(output_padding, stride, dilation)):
        return "output_padding is not smaller than the stride or the dilation"
    out = tuple((i - 1) * s - lo - hi + d * (k - 1) + 1 + e for i, k, s, (lo, hi), e, d
                in zip(sizes, kernel, stride, padding, output_padding, dilation))
    if min(kernel) < 1 or min(out) < 1:
        return "the output would be empty"
    # oneDNN checks (out + pad_l + pad_r - span) // stride + 1 == input: output_padding folds
    # into pad_r, the part of it a whole stride long as a negative padding
    pad_r = tuple(hi - (e - e % s) for (_, hi), e, s in zip(padding, output_padding, stride))
    weights = (out_channels, in_channels, *kernel) if groups == 1 else \
        (groups, per_group, in_channels // groups, *kernel)
    dst = (batch, out_channels, *out)
    return Geometry(x, weights, dst, stride, tuple(d - 1 for d in dilation),
                    tuple(lo for lo, _ in padding), pad_r, dst)


def _weight_grad_plan(x, g, kernel_size, stride, padding, dilation, groups) -> Geometry | str:
    batch, channels, *sizes = x
    out_channels = g[1]
    if groups < 1 or channels % groups or out_channels % groups:
        return "the channels are not divisible by groups"
    if len(kernel_size) != len(stride) or \
            _lengths(sizes, kernel_size, stride, padding, dilation) != tuple(g[2:]) or \
            g[0] != batch:
        return "grad does not have the shape of this convolution's output"
    shape = (out_channels, channels // groups, *kernel_size)
    return Geometry(x, _grouped(shape, groups, out_channels), tuple(g), stride,
                    tuple(d - 1 for d in dilation), *zip(*padding), shape)


# -- builders: the program of a plan, or a Refusal ----------------------------------------------
def _forward(create, algorithm: int, what: str, plan, src, weights, with_bias: bool,
             unbatched: bool):
    """The program of a convolution or deconvolution forward: ``src`` and ``weights``
    (``(dims, element strides)`` of fw's arrays) and the result through oneDNN's layouts, the
    bias read as it is."""
    if isinstance(plan, str):
        return Refusal(plan)
    with Builder() as b:
        given = (b.plain(*src), b.plain(*weights), b.plain(plan.dst, contiguous(plan.dst)))
        chosen = (b.chosen(plan.src), b.chosen(plan.weights), b.chosen(plan.dst))
        bias = b.plain(plan.dst[1:2], (1,)) if with_bias else None
        if None in given or None in chosen or (with_bias and bias is None):
            return Refusal("oneDNN cannot describe these layouts")
        pd = b.primitive_desc(create, capi_conv.FORWARD_TRAINING, algorithm, chosen[0],
                              chosen[1], bias, chosen[2], *plan.steps(), None)
        refusal = b.unserved(pd, what)
        if refusal:
            return refusal
        inputs = [(capi.ARG_SRC, 0, given[0], capi_conv.QUERY_SRC_MD, "src"),
                  (capi.ARG_WEIGHTS, 1, given[1], capi_conv.QUERY_WEIGHTS_MD, "weights")]
        if with_bias:
            inputs.append((capi.ARG_BIAS, 2, bias, None, "bias"))
        output = (capi.ARG_DST, len(inputs), given[2], capi_conv.QUERY_DST_MD, "dst")
        out_shape = plan.out_shape[1:] if unbatched else plan.out_shape
        return b.assemble(pd, inputs, output, out_shape) or Refusal(_NO_REORDER)


def _layouts(x_shape, x_strides, w_shape, w_strides, n: int):
    """``(dims, element strides)`` of x (batched) and of the weight, or why not."""
    x = spatial.batched(x_shape, x_strides, n + 2)
    # rank n + 2 on an (n + 2)-d weight: its strides are only made canonical
    w = spatial.batched(w_shape, w_strides, n + 2) if len(w_shape) == n + 2 else None
    if x is None or w is None:
        return "an operand's rank or strides do not fit (negative, zero or not whole elements)"
    return x, w


def _build_conv(x_shape, x_strides, w_shape, w_strides, bias_shape, stride, padding, dilation,
                groups):
    n = len(stride)
    layouts = _layouts(x_shape, x_strides, w_shape, w_strides, n)
    if isinstance(layouts, str) or not _attributes(n, stride, padding, dilation):
        return Refusal(layouts if isinstance(layouts, str) else "attributes out of range")
    x, w = layouts
    plan = _forward_plan(x[0], w_shape, bias_shape, stride, padding, dilation, groups)
    return _forward(capi_conv.convolution_forward_primitive_desc_create,
                    capi_conv.CONVOLUTION_DIRECT, "convolution", plan, x,
                    _conv_weights(*w, groups), bias_shape is not None, len(x_shape) == n + 1)


def _build_transpose(x_shape, x_strides, w_shape, w_strides, bias_shape, stride, padding,
                     output_padding, dilation, groups):
    n = len(stride)
    layouts = _layouts(x_shape, x_strides, w_shape, w_strides, n)
    if isinstance(layouts, str) or not _attributes(n, stride, padding, dilation):
        return Refusal(layouts if isinstance(layouts, str) else "attributes out of range")
    x, w = layouts
    plan = _transpose_plan(x[0], w_shape, bias_shape, stride, padding, output_padding, dilation,
                           groups)
    return _forward(capi_conv.deconvolution_forward_primitive_desc_create,
                    capi_conv.DECONVOLUTION_DIRECT, "transposed convolution", plan, x,
                    _deconv_weights(*w, groups), bias_shape is not None, len(x_shape) == n + 1)


def _build_weight_grad(x_shape, x_strides, g_shape, g_strides, kernel_size, stride, padding,
                       dilation, groups):
    n = len(stride)
    x = spatial.batched(x_shape, x_strides, n + 2)
    g = spatial.batched(g_shape, g_strides, n + 2) if len(g_shape) == len(x_shape) else None
    if x is None or g is None or not _attributes(n, stride, padding, dilation):
        return Refusal("an operand's rank or strides, or an attribute, do not fit")
    plan = _weight_grad_plan(x[0], g[0], kernel_size, stride, padding, dilation, groups)
    if isinstance(plan, str):
        return Refusal(plan)
    with Builder() as b:
        given = (b.plain(*x), b.plain(*g), b.plain(plan.weights, contiguous(plan.weights)))
        chosen = (b.chosen(plan.src), b.chosen(plan.weights), b.chosen(plan.dst))
        if None in given or None in chosen:
            return Refusal("oneDNN cannot describe these layouts")
        hint = b.primitive_desc(capi_conv.convolution_forward_primitive_desc_create,
                                capi_conv.FORWARD_TRAINING, capi_conv.CONVOLUTION_DIRECT,
                                chosen[0], chosen[1], None, chosen[2], *plan.steps(), None)
        pd = hint and b.primitive_desc(
            capi_conv.convolution_backward_weights_primitive_desc_create,
            capi_conv.CONVOLUTION_DIRECT, chosen[0], chosen[1], None, chosen[2], *plan.steps(),
            hint, None)
        refusal = b.unserved(pd, "convolution weight gradient")
        if refusal:
            return refusal
        inputs = [(capi.ARG_SRC, 0, given[0], capi_conv.QUERY_SRC_MD, "src"),
                  (capi_conv.ARG_DIFF_DST, 1, given[1], capi_conv.QUERY_DIFF_DST_MD, "diff_dst")]
        output = (capi_conv.ARG_DIFF_WEIGHTS, 2, given[2], capi_conv.QUERY_DIFF_WEIGHTS_MD,
                  "diff_weights")
        return b.assemble(pd, inputs, output, plan.out_shape) or Refusal(_NO_REORDER)


# -- guards: each leaves the program it found in _found.entry for the kernel the chain runs next
def _f32(*arrays) -> bool:
    return all(a is None or (a.dtype is F32 and a.size) for a in arrays)


def _takes_conv(n: int, transposed: bool):
    """The guard of ``conv{n}d`` or ``conv_transpose{n}d``."""
    op = f"conv_transpose{n}d" if transposed else f"conv{n}d"
    kinds = (f"{op}:f32", f"{op}+bias:f32")
    build = _build_transpose if transposed else _build_conv

    def takes(x, weight, bias=None, *, stride, padding, dilation, groups,
              output_padding=None) -> bool:
        if not _f32(x, weight, bias):
            return False
        with_bias = bias is not None
        bias_shape = bias.shape if with_bias else None
        attrs = (stride, padding, output_padding, dilation, groups) if transposed else \
            (stride, padding, dilation, groups)
        key = (kinds[with_bias], x.shape, x.strides, weight.shape, weight.strides, bias_shape,
               *attrs)
        entry = _lookup(key) or _add(key, build, x.shape, x.strides, weight.shape,
                                     weight.strides, bias_shape, *attrs)
        _found.entry = entry
        return entry.serves

    takes.__name__ = takes.__qualname__ = f"takes_{op}"
    takes.__doc__ = f"Whether fw_onednn's {op} takes the call."
    return takes


def _takes_weight_grad(n: int):
    """The guard of ``conv{n}d_weight_grad``."""
    kind = f"conv{n}d_weight_grad:f32"

    def takes(x, grad, *, kernel_size, stride, padding, dilation, groups) -> bool:
        if not _f32(x, grad):
            return False
        key = (kind, x.shape, x.strides, grad.shape, grad.strides, kernel_size, stride, padding,
               dilation, groups)
        entry = _lookup(key) or _add(key, _build_weight_grad, x.shape, x.strides, grad.shape,
                                     grad.strides, kernel_size, stride, padding, dilation,
                                     groups)
        _found.entry = entry
        return entry.serves

    takes.__name__ = takes.__qualname__ = f"takes_conv{n}d_weight_grad"
    takes.__doc__ = f"Whether fw_onednn's conv{n}d_weight_grad takes the call."
    return takes


takes_conv1d, takes_conv2d = _takes_conv(1, False), _takes_conv(2, False)
takes_conv_transpose1d, takes_conv_transpose2d = _takes_conv(1, True), _takes_conv(2, True)
takes_conv1d_weight_grad, takes_conv2d_weight_grad = _takes_weight_grad(1), _takes_weight_grad(2)


# -- kernels: run only right after their guard took the call, in the same thread --------------
def run_conv(x, weight, bias=None, **_attrs):
    """A convolution or transposed convolution (its attributes are in the program the guard
    just found), the bias added by the primitive."""
    program = _found.entry
    out = _empty(program.out_shape, F32)
    if bias is None:
        program(x, weight, out)
    else:  # the primitive reads the bias as a plain vector
        program(x, weight, _contiguous(bias), out)
    return out


def run_weight_grad(x, grad, **_attrs):
    """A convolution's weight gradient (O, C / groups, *kernel_size)."""
    program = _found.entry
    out = _empty(program.out_shape, F32)
    program(x, grad, out)
    return out


#: (op, guard, kernel, what the guard takes) for every op this module serves
KERNELS = tuple((op, guard, kernel, TAKES[op]) for op, guard, kernel in (
    ("conv1d", takes_conv1d, run_conv),
    ("conv2d", takes_conv2d, run_conv),
    ("conv_transpose1d", takes_conv_transpose1d, run_conv),
    ("conv_transpose2d", takes_conv_transpose2d, run_conv),
    ("conv1d_weight_grad", takes_conv1d_weight_grad, run_weight_grad),
    ("conv2d_weight_grad", takes_conv2d_weight_grad, run_weight_grad),
))
