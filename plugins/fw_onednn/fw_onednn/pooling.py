"""fw_onednn's pooling kernels for ``cpu``: max_pool2d, max_pool2d_indices, avg_pool2d,
avg_pool2d_backward, adaptive_avg_pool2d and adaptive_avg_pool2d_backward on float32, through
cached oneDNN pooling programs.

A pooling descriptor takes its input's layout as given (only the result's may be left to
oneDNN), and every operand is read and written in place, on plain (N, C, H, W): oneDNN's JIT
pooling in its blocked layout, reorders in and out counted, is ~1.4x faster at the cnn's shapes
(``benchmarks/conv.py``), but its workspace would be blocked too, and the plain one is what
``max_pool2d_indices`` reads.

Max pooling is exact, and both libraries keep the first strict maximum of a window scanned row
by row, so ties pick the same element. They part on NaN and -inf: oneDNN skips NaN (fw_cpu
propagates it) and starts from the lowest finite float (a window of -inf gives -3.4e38, fw_cpu
-inf). So the max guards take an input only when its minimum is above -inf (a NaN makes the
minimum NaN): one pass over the input per call, which the same benchmark measures.
``max_pool2d_indices`` (what max pooling's VJP asks for) runs the training primitive, whose
workspace says which tap of its window each maximum came from, and a compiled loop turns that
into fw's flat index ``h * W + w``; a window whose elements inside the input are all the lowest
finite float points at the first of them, as in fw_cpu (oneDNN leaves its first tap, which may be
padding). ``max_pool2d_backward`` and ``max_pool2d_select`` stay with fw_cpu: they scatter and
gather by flat index, without the window oneDNN's backward needs.

Average pooling matches fw_cpu to float32 rounding. oneDNN's divisors are PyTorch's except two
cases its guard refuses: ``divisor_override``, and ``count_include_pad`` with a ``ceil_mode``
window reaching past the padding (oneDNN counts that overhang). ``adaptive_avg_pool2d`` is an
average pooling when the output size divides the input's; other sizes stay with fw_cpu.
"""

from __future__ import annotations

import threading

import numpy as np

from . import capi, capi_conv, spatial
from .cache import PRIMITIVES
from .catalog import TAKES
from .layouts import contiguous
from .primitive import Refusal
from .program import Builder

F32 = np.dtype(np.float32)
MAX, INDICES = "max_pool2d:f32", "max_pool2d_indices:f32"
AVG, AVG_BACKWARD = "avg_pool2d:f32", "avg_pool2d_backward:f32"
ADAPTIVE, ADAPTIVE_BACKWARD = "adaptive_avg_pool2d:f32", "adaptive_avg_pool2d_backward:f32"


# .entry: the program the guard just found, for its kernel (see fw_onednn.kernels)
_found = threading.local()
_lookup, _add, _empty = PRIMITIVES.lookup, PRIMITIVES.add, np.empty
_LOWEST, _NEGATIVE_INFINITY = np.finfo(np.float32).min, np.float32(-np.inf)
_compiled = []


# -- windows: fw's attributes as oneDNN's -------------------------------------------------------
def _window(sizes, kernel, stride, padding, dilation, ceil_mode):
    """``(output sizes, padding_r)`` of a pooling window over ``sizes``, with fw's output
    lengths (``ceil_mode`` keeps a last window that starts inside the input or the left
    padding), or None for attributes fw's meta rule refuses."""
    if not len(kernel) == len(stride) == len(padding) == len(dilation) == len(sizes) == 2:
        return None
    out, pad_r = [], []
    for n, k, s, p, d in zip(sizes, kernel, stride, padding, dilation):
        span = d * (k - 1) + 1
        if min(k, s, d) < 1 or p < 0 or 2 * p > span:
            return None
        length = (n + 2 * p - span + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (length - 1) * s >= n + p:
            length -= 1
        if length < 1:
            return None
        out.append(length)
        # oneDNN checks (n + pad_l + pad_r - span) // s + 1 == length: ceil_mode's last window
        # reaches further right than the symmetric padding
        pad_r.append(max(p, (length - 1) * s + span - n - p))
    return tuple(out), tuple(pad_r)


_OVERHANG = ("ceil_mode's last window reaches past the padding: oneDNN would count the "
             "overhang in the divisor, fw does not")


def _overhang_counted(algorithm: int, padding, pad_r) -> bool:
    """Whether oneDNN's divisor would count a ceil_mode window's overhang, which fw's does not
    (``count_include_pad`` counts the padding only)."""
    return algorithm == capi_conv.POOLING_AVG_INCLUDE_PADDING and tuple(pad_r) != tuple(padding)


def _steps(kernel, stride, padding, dilation, pad_r) -> tuple:
    """strides, kernel, dilation, padding_l, padding_r as ``dnnl_dims_t``, oneDNN's order."""
    return tuple(capi.Dims(*v) for v in (stride, kernel, tuple(d - 1 for d in dilation), padding,
                                         pad_r))


# -- builders: the program of a pooling, or a Refusal ------------------------------------------
def _build_forward(algorithm, x_shape, x_strides, kernel, stride, padding, dilation, ceil_mode,
                   workspace: bool = False):
    """A pooling forward of x into a plain result (and, with ``workspace``, the training
    primitive's argmax workspace as the third operand)."""
    x = spatial.batched(x_shape, x_strides, 4)
    window = x and _window(x[0][2:], kernel, stride, padding, dilation, ceil_mode)
    if not window:
        return Refusal("the input's rank or strides, or the window, do not fit")
    out, pad_r = window
    if _overhang_counted(algorithm, padding, pad_r):
        return Refusal(_OVERHANG)
    dst = (*x[0][:2], *out)
    prop = capi_conv.FORWARD_TRAINING if workspace else capi_conv.FORWARD_INFERENCE
    with Builder() as b:
        src, result = b.plain(*x), b.plain(dst, contiguous(dst))
        argmax = b.plain(dst, contiguous(dst), capi_conv.U8)
        if None in (src, result, argmax):
            return Refusal("oneDNN cannot describe these layouts")
        pd = b.primitive_desc(capi_conv.pooling_forward_primitive_desc_create, prop, algorithm,
                              src, result, *_steps(kernel, stride, padding, dilation, pad_r),
                              None)
        refusal = b.unserved(pd, "pooling")
        if refusal:
            return refusal
        extra = ()
        if workspace:
            chosen = capi_conv.primitive_desc_query_md(pd, capi_conv.QUERY_WORKSPACE_MD, 0)
            if not capi_conv.memory_desc_equal(chosen, argmax):
                return Refusal("oneDNN keeps this pooling's argmax in a layout of its own")
            extra = ((capi_conv.ARG_WORKSPACE, b.operand(2, argmax)),)
        program = b.assemble(pd, [(capi.ARG_SRC, 0, src, capi_conv.QUERY_SRC_MD, "src")],
                             (capi.ARG_DST, 1, result, capi_conv.QUERY_DST_MD, "dst"),
                             dst if len(x_shape) == 4 else dst[1:], extra)
    return program or Refusal("oneDNN has no reorder between these layouts")


def _build_backward(algorithm, g_shape, g_strides, input_size, kernel, stride, padding,
                    ceil_mode):
    """An average pooling's backward: g spread over a plain result of ``input_size``."""
    g = spatial.batched(g_shape, g_strides, 4)
    dilation = (1, 1)
    window = g and _window(tuple(input_size), kernel, stride, padding, dilation, ceil_mode)
    if not window or window[0] != g[0][2:]:
        return Refusal("the gradient's rank or strides, or the window, do not fit")
    out, pad_r = window
    if _overhang_counted(algorithm, padding, pad_r):
        return Refusal(_OVERHANG)
    src = (*g[0][:2], *input_size)
    steps = _steps(kernel, stride, padding, dilation, pad_r)
    with Builder() as b:
        grad, result = b.plain(*g), b.plain(src, contiguous(src))
        dst = b.plain(g[0], contiguous(g[0]))
        if None in (grad, result, dst):
            return Refusal("oneDNN cannot describe these layouts")
        hint = b.primitive_desc(capi_conv.pooling_forward_primitive_desc_create,
                                capi_conv.FORWARD_TRAINING, algorithm, result, dst, *steps, None)
        pd = hint and b.primitive_desc(capi_conv.pooling_backward_primitive_desc_create,
                                       algorithm, result, grad, *steps, hint, None)
        refusal = b.unserved(pd, "pooling backward")
        if refusal:
            return refusal
        program = b.assemble(
            pd, [(capi_conv.ARG_DIFF_DST, 0, grad, capi_conv.QUERY_DIFF_DST_MD, "diff_dst")],
            (capi_conv.ARG_DIFF_SRC, 1, result, capi_conv.QUERY_DIFF_SRC_MD, "diff_src"),
            src if len(g_shape) == 4 else src[1:])
    return program or Refusal("oneDNN has no reorder between these layouts")


class Argmax:
    """``max_pool2d_indices``'s cache entry: the training program, and the tables that turn
    its workspace (the tap t = i * kW + j of each maximum in its window) into fw's flat index
    ``base[position] + offset[t]`` (``first[position]`` for a window of lowest floats)."""

    serves = True
    __slots__ = ("program", "taps", "base", "offset", "first", "used")

    def __init__(self, program, width, kernel, stride, padding, dilation):
        self.program = program
        *_, out_h, out_w = program.out_shape
        self.taps = (*program.out_shape[:-2], out_h * out_w)  # the workspace: a byte a maximum
        top = np.arange(out_h)[:, None] * stride[0] - padding[0]
        left = np.arange(out_w)[None, :] * stride[1] - padding[1]
        self.base = (top * width + left).reshape(-1)
        i, j = np.divmod(np.arange(kernel[0] * kernel[1]), kernel[1])
        self.offset = i * dilation[0] * width + j * dilation[1]
        (dh, dw) = dilation  # the first tap inside the input, as fw_cpu's max_pool2d_indices
        self.first = ((top + -(-np.maximum(-top, 0) // dh) * dh) * width
                      + left + -(-np.maximum(-left, 0) // dw) * dw).reshape(-1)


def _build_argmax(x_shape, x_strides, kernel, stride, padding, dilation, ceil_mode):
    program = _build_forward(capi_conv.POOLING_MAX, x_shape, x_strides, kernel, stride, padding,
                             dilation, ceil_mode, workspace=True)
    if not program.serves:
        return program
    return Argmax(program, x_shape[-1], kernel, stride, padding, dilation)


def _flat_indices(taps, values, base, offset, first, out):
    """fw's flat indices (planes, positions) from oneDNN's workspace taps."""
    planes, positions = taps.shape
    for p in range(planes):
        for o in range(positions):
            if values[p, o] == _LOWEST:
                out[p, o] = first[o]
            else:
                out[p, o] = base[o] + offset[taps[p, o]]


def _converter():
    """:func:`_flat_indices`, compiled on first use."""
    if not _compiled:
        import numba

        _compiled.append(numba.njit(_flat_indices))
    return _compiled[0]


# -- guards: each leaves the entry it found in _found.entry for the kernel the chain runs next --
def _taken(key, build, *args) -> bool:
    entry = _lookup(key) or _add(key, build, *args)
    _found.entry = entry
    return entry.serves


def _no_nan_or_minus_infinity(x) -> bool:
    """Whether oneDNN's max pooling of x is fw_cpu's: its minimum is above -inf (and so not
    NaN)."""
    return bool(x.min() > _NEGATIVE_INFINITY)


def takes_max_pool2d(x, *, kernel_size, stride, padding, dilation, ceil_mode) -> bool:
    """Whether fw_onednn's max_pool2d takes the call (checking x for NaN and -inf)."""
    if x.dtype is not F32 or not x.size:
        return False
    key = (MAX, x.shape, x.strides, kernel_size, stride, padding, dilation, ceil_mode)
    return _taken(key, _build_forward, capi_conv.POOLING_MAX, x.shape, x.strides, kernel_size,
                  stride, padding, dilation, ceil_mode) and _no_nan_or_minus_infinity(x)


def takes_max_pool2d_indices(x, *, kernel_size, stride, padding, dilation, ceil_mode) -> bool:
    """Whether fw_onednn's max_pool2d_indices takes the call (checking x for NaN and -inf)."""
    if x.dtype is not F32 or not x.size:
        return False
    key = (INDICES, x.shape, x.strides, kernel_size, stride, padding, dilation, ceil_mode)
    return _taken(key, _build_argmax, x.shape, x.strides, kernel_size, stride, padding,
                  dilation, ceil_mode) and _no_nan_or_minus_infinity(x)


def _average(count_include_pad: bool) -> int:
    return capi_conv.POOLING_AVG_INCLUDE_PADDING if count_include_pad else \
        capi_conv.POOLING_AVG_EXCLUDE_PADDING


def takes_avg_pool2d(x, *, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override) -> bool:
    """Whether fw_onednn's avg_pool2d takes the call."""
    if x.dtype is not F32 or not x.size or divisor_override is not None:
        return False
    key = (AVG, x.shape, x.strides, kernel_size, stride, padding, ceil_mode, count_include_pad)
    return _taken(key, _build_forward, _average(count_include_pad), x.shape, x.strides,
                  kernel_size, stride, padding, (1, 1), ceil_mode)


def takes_avg_pool2d_backward(g, *, input_size, kernel_size, stride, padding, ceil_mode,
                              count_include_pad, divisor_override) -> bool:
    """Whether fw_onednn's avg_pool2d_backward takes the call."""
    if g.dtype is not F32 or not g.size or divisor_override is not None:
        return False
    key = (AVG_BACKWARD, g.shape, g.strides, input_size, kernel_size, stride, padding,
           ceil_mode, count_include_pad)
    return _taken(key, _build_backward, _average(count_include_pad), g.shape, g.strides,
                  input_size, kernel_size, stride, padding, ceil_mode)


def _bins(input_size, output_size):
    """The window of an adaptive average pooling whose output size divides the input's, or
    None."""
    if len(input_size) != 2 or len(output_size) != 2 or min(output_size) < 1 or \
            any(n % o for n, o in zip(input_size, output_size)):
        return None
    return tuple(n // o for n, o in zip(input_size, output_size))


def takes_adaptive_avg_pool2d(x, *, output_size) -> bool:
    """Whether fw_onednn's adaptive_avg_pool2d takes the call."""
    if x.dtype is not F32 or not x.size or x.ndim not in (3, 4):
        return False
    bins = _bins(x.shape[-2:], output_size)
    if bins is None:
        return False
    key = (ADAPTIVE, x.shape, x.strides, output_size)
    return _taken(key, _build_forward, capi_conv.POOLING_AVG_EXCLUDE_PADDING, x.shape,
                  x.strides, bins, bins, (0, 0), (1, 1), False)


def takes_adaptive_avg_pool2d_backward(g, *, input_size, output_size) -> bool:
    """Whether fw_onednn's adaptive_avg_pool2d_backward takes the call."""
    if g.dtype is not F32 or not g.size:
        return False
    bins = _bins(input_size, output_size)
    if bins is None:
        return False
    key = (ADAPTIVE_BACKWARD, g.shape, g.strides, input_size, output_size)
    return _taken(key, _build_backward, capi_conv.POOLING_AVG_EXCLUDE_PADDING, g.shape,
                  g.strides, input_size, bins, bins, (0, 0), False)


# -- kernels: run only right after their guard took the call, in the same thread --------------
def run_pool(x, **_attrs):
    """A pooling forward, or an average pooling's backward (x is then the gradient), on the
    program the guard just found."""
    program = _found.entry
    out = _empty(program.out_shape, F32)
    program(x, out)
    return out


def run_indices(x, **_attrs):
    """Where max_pool2d found each maximum, as flat indices ``h * W + w`` (int64)."""
    entry = _found.entry
    program = entry.program
    values = _empty(program.out_shape, F32)
    taps = _empty(entry.taps, np.uint8)
    program(x, values, taps)
    out = _empty(program.out_shape, np.int64)
    planes = (-1, entry.taps[-1])
    _converter()(taps.reshape(planes), values.reshape(planes), entry.base, entry.offset,
                 entry.first, out.reshape(planes))
    return out


#: (op, guard, kernel, what the guard takes) for every op this module serves
KERNELS = tuple((op, guard, kernel, TAKES[op]) for op, guard, kernel in (
    ("max_pool2d", takes_max_pool2d, run_pool),
    ("max_pool2d_indices", takes_max_pool2d_indices, run_indices),
    ("avg_pool2d", takes_avg_pool2d, run_pool),
    ("avg_pool2d_backward", takes_avg_pool2d_backward, run_pool),
    ("adaptive_avg_pool2d", takes_adaptive_avg_pool2d, run_pool),
    ("adaptive_avg_pool2d_backward", takes_adaptive_avg_pool2d_backward, run_pool),
))
