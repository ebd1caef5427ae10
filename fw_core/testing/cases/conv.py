"""Convolution, pooling and resampling cases, with loop-based NumPy references.

The references follow the definitions directly (one output position at a time); the adjoint
(``*_backward``) ops are checked against the transpose of their forward reference, built
column by column.
"""

import math

import numpy as np

from fw_core.testing.conformance import OpCase, arg, index

_F = ("float32", "float64")
_F16 = ("float32", "float64", "float16")


# -- references -----------------------------------------------------------------------------------
def _pairs(padding, n):
    if isinstance(padding, int):
        return ((padding, padding),) * n
    return tuple(p if isinstance(p, tuple) else (p, p) for p in padding)


def _tup(value, n):
    return (value,) * n if isinstance(value, (int, float)) else tuple(value)


def conv_ref(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Direct N-d correlation; ``padding`` may be ints or (before, after) pairs."""
    n = w.ndim - 2
    unbatched = x.ndim == n + 1
    x = x[None] if unbatched else x
    stride, dilation, pads = _tup(stride, n), _tup(dilation, n), _pairs(padding, n)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0)) + pads)
    kernel = w.shape[2:]
    out = [(xp.shape[2 + i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1
           for i in range(n)]
    o_ch, per_group = w.shape[:2]
    result = np.zeros((x.shape[0], o_ch, *out))
    for pos in np.ndindex(*out):
        window = tuple(slice(p * s, p * s + d * (k - 1) + 1, d)
                       for p, s, d, k in zip(pos, stride, dilation, kernel))
        patch = xp[(slice(None), slice(None)) + window]  # (N, C, *kernel)
        for o in range(o_ch):
            g = o // (o_ch // groups)
            part = patch[:, g * per_group:(g + 1) * per_group]
            result[(slice(None), o) + pos] = (part * w[o]).sum(axis=tuple(range(1, n + 2)))
    if b is not None:
        result += b.reshape((-1,) + (1,) * n)
    result = result.astype(x.dtype)
    return result[0] if unbatched else result


def conv_transpose_ref(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1,
                       dilation=1):
    """Direct scatter: out[i * stride + k * dilation - padding] += x[i] * w[k]."""
    n = w.ndim - 2
    unbatched = x.ndim == n + 1
    x = x[None] if unbatched else x
    stride, dilation = _tup(stride, n), _tup(dilation, n)
    padding, extra = _tup(padding, n), _tup(output_padding, n)
    in_ch, per_group, kernel = w.shape[0], w.shape[1], w.shape[2:]
    sizes = x.shape[2:]
    out = [(sizes[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel[i] - 1) + 1
           + extra[i] for i in range(n)]
    full = np.zeros((x.shape[0], per_group * groups) +
                    tuple(o + 2 * p + s * k for o, p, s, k in zip(out, padding, stride, kernel)))
    for c in range(in_ch):
        g = c // (in_ch // groups)
        for pos in np.ndindex(*sizes):
            for tap in np.ndindex(*kernel):
                where = tuple(p * s + t * d for p, s, t, d in zip(pos, stride, tap, dilation))
                full[(slice(None), slice(g * per_group, (g + 1) * per_group)) + where] += \
                    x[(slice(None), c) + pos][:, None] * w[(c, slice(None)) + tap]
    result = full[(slice(None), slice(None)) + tuple(slice(p, p + o) for p, o in
                                                     zip(padding, out))]
    if b is not None:
        result = result + b.reshape((-1,) + (1,) * n)
    result = result.astype(x.dtype)
    return result[0] if unbatched else result


def weight_grad_ref(x, g, kernel_size, stride=1, padding=0, dilation=1, groups=1):
    """d(sum(conv(x, w) * g)) / dw, from the conv reference's linearity in w."""
    n = len(kernel_size)
    o_ch = g.shape[-n - 1]
    c_ch = x.shape[-n - 1] // groups
    shape = (o_ch, c_ch) + tuple(kernel_size)
    columns = []
    for i in range(math.prod(shape)):
        e = np.zeros(math.prod(shape))
        e[i] = 1
        out = conv_ref(x.astype(np.float64), e.reshape(shape), None, stride, padding, dilation,
                       groups)
        columns.append((out * g).sum())
    return np.array(columns).reshape(shape).astype(x.dtype)


def max_pool_ref(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    kernel = _tup(kernel_size, 2)
    stride = kernel if stride is None else _tup(stride, 2)
    padding, dilation = _tup(padding, 2), _tup(dilation, 2)
    out = _pool_out(x.shape[-2:], kernel, stride, padding, dilation, ceil_mode)
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    big = np.full(x.shape[:-2] + tuple(s + 2 * p + st * k for s, p, st, k in
                                       zip(x.shape[-2:], padding, stride, kernel)), low, x.dtype)
    big[..., padding[0]:padding[0] + x.shape[-2], padding[1]:padding[1] + x.shape[-1]] = x
    result = np.empty(x.shape[:-2] + out, x.dtype)
    for i, j in np.ndindex(*out):
        window = big[..., i * stride[0]:i * stride[0] + dilation[0] * (kernel[0] - 1) + 1:
                     dilation[0], j * stride[1]:j * stride[1] + dilation[1] * (kernel[1] - 1) + 1:
                     dilation[1]]
        result[..., i, j] = window.max(axis=(-2, -1))
    return result


def max_index_ref(x, kernel, stride, padding, dilation, ceil_mode=False):
    """Flat index h * W + w of the first maximum inside the input, per window (PyTorch's)."""
    kernel, stride, padding = _tup(kernel, 2), _tup(stride, 2), _tup(padding, 2)
    out = _pool_out(x.shape[-2:], kernel, stride, padding, dilation, ceil_mode)
    h, w = x.shape[-2:]
    result = np.empty(x.shape[:-2] + out, np.int64)
    for lead in np.ndindex(*x.shape[:-2]):
        for i, j in np.ndindex(*out):
            best = None
            for a, b in np.ndindex(*kernel):
                r = i * stride[0] - padding[0] + a * dilation[0]
                c = j * stride[1] - padding[1] + b * dilation[1]
                if 0 <= r < h and 0 <= c < w and (best is None or x[lead + (r, c)] > best[0]):
                    best = (x[lead + (r, c)], r * w + c)
            result[lead + (i, j)] = best[1]
    return result


def _pool_out(sizes, kernel, stride, padding, dilation, ceil_mode):
    out = []
    for n, k, s, p, d in zip(sizes, kernel, stride, padding, dilation):
        span = (n + 2 * p - d * (k - 1) - 1) / s
        length = (math.ceil(span) if ceil_mode else math.floor(span)) + 1
        if ceil_mode and (length - 1) * s >= n + p:
            length -= 1
        out.append(length)
    return tuple(out)


def avg_pool_ref(x, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
    kernel = _tup(kernel_size, 2)
    stride = kernel if stride is None else _tup(stride, 2)
    padding = _tup(padding, 2)
    out = _pool_out(x.shape[-2:], kernel, stride, padding, (1, 1), ceil_mode)
    result = np.empty(x.shape[:-2] + out)
    h, w = x.shape[-2:]
    for i, j in np.ndindex(*out):
        h0, w0 = i * stride[0] - padding[0], j * stride[1] - padding[1]
        h1, w1 = min(h0 + kernel[0], h + padding[0]), min(w0 + kernel[1], w + padding[1])
        pool = (h1 - h0) * (w1 - w0)
        h0, w0, h1, w1 = max(h0, 0), max(w0, 0), min(h1, h), min(w1, w)
        total = x[..., h0:h1, w0:w1].astype(np.float64).sum(axis=(-2, -1))
        divisor = divisor_override or (pool if count_include_pad else (h1 - h0) * (w1 - w0))
        result[..., i, j] = total / divisor
    return result.astype(x.dtype)


def adaptive_ref(x, output_size):
    h, w = x.shape[-2:]
    oh, ow = _tup(output_size, 2)
    result = np.empty(x.shape[:-2] + (oh, ow))
    for i, j in np.ndindex(oh, ow):
        rows = slice(i * h // oh, -(-(i + 1) * h // oh))
        cols = slice(j * w // ow, -(-(j + 1) * w // ow))
        result[..., i, j] = x[..., rows, cols].astype(np.float64).mean(axis=(-2, -1))
    return result.astype(x.dtype)


def nearest_ref(x, size, scales=(None, None)):
    index = []
    for n, o, s in zip(x.shape[-2:], size, scales):
        step = (1 / s) if s else n / o
        index.append([min(int(math.floor(i * step)), n - 1) for i in range(o)])
    return x[..., np.array(index[0])[:, None], np.array(index[1])[None, :]]


def bilinear_ref(x, size, align_corners=False, scales=(None, None)):
    def source(n, o, s):
        points = []
        for i in range(o):
            if align_corners:
                src = i * (n - 1) / (o - 1) if o > 1 else 0.0
            else:
                step = (1 / s) if s else n / o
                src = max((i + 0.5) * step - 0.5, 0.0)
            first = min(int(math.floor(src)), n - 1)
            points.append((first, min(first + 1, n - 1), src - first))
        return points

    rows = source(x.shape[-2], size[0], scales[0])
    cols = source(x.shape[-1], size[1], scales[1])
    xd = x.astype(np.float64)
    result = np.empty(x.shape[:-2] + tuple(size))
    for (i, (r0, r1, a)), (j, (c0, c1, b)) in ((ri, cj) for ri in enumerate(rows)
                                               for cj in enumerate(cols)):
        result[..., i, j] = ((1 - a) * ((1 - b) * xd[..., r0, c0] + b * xd[..., r0, c1])
                             + a * ((1 - b) * xd[..., r1, c0] + b * xd[..., r1, c1]))
    return result.astype(x.dtype)


def adjoint_ref(forward, input_shape):
    """The reference of a linear op's adjoint: the transpose of ``forward``'s matrix, applied."""

    def reference(g):
        columns = []
        for i in range(math.prod(input_shape)):
            e = np.zeros(math.prod(input_shape))
            e[i] = 1
            columns.append(forward(e.reshape(input_shape)).ravel())
        return (np.stack(columns) @ g.astype(np.float64).ravel()).reshape(
            input_shape).astype(g.dtype)

    return reference


# -- cases ----------------------------------------------------------------------------------------
def _conv2d(name, x, w, bias=False, dtypes=_F, **kw):
    inputs = [arg(*x), arg(*w)] + ([arg(w[0])] if bias else [])
    return OpCase("conv2d", name, inputs,
                  lambda fw, *t: fw.conv2d(*t, **kw),
                  lambda *a: conv_ref(*a, **{**kw, "padding": _same(kw, w)}),
                  torch=lambda torch, *t: torch.nn.functional.conv2d(*t, **kw), dtypes=dtypes)


def _same(kw, w):
    padding = kw.get("padding", 0)
    if padding == "valid":
        return 0
    if padding == "same":
        dilation = _tup(kw.get("dilation", 1), len(w) - 2)
        return tuple((d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2)
                     for k, d in zip(w[2:], dilation))
    return padding


def _conv1d(name, x, w, bias=False, **kw):
    inputs = [arg(*x), arg(*w)] + ([arg(w[0])] if bias else [])
    return OpCase("conv1d", name, inputs, lambda fw, *t: fw.conv1d(*t, **kw),
                  lambda *a: conv_ref(*a, **{**kw, "padding": _same(kw, w)}),
                  torch=lambda torch, *t: torch.nn.functional.conv1d(*t, **kw))


def _transposed(n, name, x, w, bias=False, **kw):
    inputs = [arg(*x), arg(*w)] + ([arg(w[1] * kw.get("groups", 1))] if bias else [])
    return OpCase(f"conv_transpose{n}d", name, inputs,
                  lambda fw, *t: getattr(fw, f"conv_transpose{n}d")(*t, **kw),
                  lambda *a: conv_transpose_ref(*a, **kw),
                  torch=lambda torch, *t: getattr(torch.nn.functional, f"conv_transpose{n}d")(
                      *t, **kw))


def _weight_grad(n, name, x, g, kernel_size, **kw):
    attrs = {"kernel_size": kernel_size, "stride": _tup(kw.get("stride", 1), n),
             "padding": _pairs(kw.get("padding", 0), n),
             "dilation": _tup(kw.get("dilation", 1), n), "groups": kw.get("groups", 1)}
    return OpCase(f"conv{n}d_weight_grad", name, [arg(*x), arg(*g)],
                  lambda fw, a, b: fw.ops.apply(fw.ops.get(f"conv{n}d_weight_grad"), (a, b),
                                                attrs),
                  lambda a, b: weight_grad_ref(a, b, kernel_size, **kw),
                  torch=lambda torch, a, b: getattr(torch.nn.grad, f"conv{n}d_weight")(
                      a, (b.shape[1], a.shape[1] // kw.get("groups", 1)) + kernel_size, b, **kw))


def _pool(op, name, shape, reference, dtypes=_F, **kw):
    return OpCase(op, name, [arg(*shape)], lambda fw, x: getattr(fw, op)(x, **kw),
                  lambda x: reference(x, **kw),
                  torch=lambda torch, x: getattr(torch.nn.functional, op)(x, **kw),
                  dtypes=dtypes)


def _resample(name, shape, size=None, scale_factor=None, mode="nearest", **kw):
    out = size if size is not None else tuple(
        math.floor(n * f) for n, f in zip(shape[-2:], _tup(scale_factor, 2)))
    out = _tup(out, 2)
    scales = (None, None) if scale_factor is None else tuple(float(s) for s in _tup(
        scale_factor, 2))
    reference = (lambda x: nearest_ref(x, out, scales)) if mode == "nearest" else \
        (lambda x: bilinear_ref(x, out, kw.get("align_corners", False), scales))
    call = {"size": size, "scale_factor": scale_factor, "mode": mode, **kw}
    return OpCase(f"upsample_{mode}2d", name, [arg(*shape)],
                  lambda fw, x: fw.interpolate(x, **call), reference,
                  torch=lambda torch, x: torch.nn.functional.interpolate(x, **call))


def _adjoint(op, name, g_shape, input_shape, forward, attrs):
    """A case for ``{op}_backward``: its torch counterpart is the VJP of the forward op."""
    def torch_call(torch, g):
        x = torch.zeros(input_shape, dtype=g.dtype, requires_grad=True)
        out = getattr(torch.nn.functional, op)(x, **attrs["torch"])
        return torch.autograd.grad(out, x, g, create_graph=True)[0]

    fw_attrs = {**attrs["fw"], "input_size": input_shape[-2:]}
    return OpCase(f"{op}_backward" if op != "interpolate" else attrs["name"], name,
                  [arg(*g_shape)],
                  lambda fw, g: fw.ops.apply(fw.ops.get(
                      f"{op}_backward" if op != "interpolate" else attrs["name"]), (g,), fw_attrs),
                  adjoint_ref(forward, input_shape), torch=torch_call)


CASES = [
    # conv2d: options and edge shapes
    _conv2d("bias", (2, 3, 5, 5), (4, 3, 3, 3), bias=True, dtypes=_F16),
    _conv2d("stride_padding", (2, 2, 5, 5), (3, 2, 3, 3), stride=2, padding=1),
    _conv2d("dilation", (2, 2, 6, 5), (2, 2, 2, 3), dilation=2, padding=(2, 1)),
    _conv2d("groups", (2, 4, 5, 4), (4, 2, 3, 2), bias=True, groups=2),
    _conv2d("depthwise", (2, 3, 5, 5), (3, 1, 3, 3), groups=3, padding=1),
    _conv2d("same_even_kernel", (2, 2, 5, 6), (2, 2, 2, 4), padding="same"),
    _conv2d("same_dilated", (1, 2, 5, 5), (2, 2, 3, 2), padding="same", dilation=2),
    _conv2d("valid", (2, 2, 4, 5), (3, 2, 3, 3), padding="valid"),
    _conv2d("anisotropic", (2, 2, 6, 5), (3, 2, 3, 2), stride=(2, 1), padding=(0, 1),
            dilation=(1, 2)),
    _conv2d("pointwise", (2, 3, 4, 4), (2, 3, 1, 1), bias=True),
    _conv2d("strided_pointwise", (2, 3, 5, 5), (2, 3, 1, 1), stride=2),
    _conv2d("unbatched", (2, 5, 5), (3, 2, 3, 3), bias=True, padding=1),
    _conv2d("empty_batch", (0, 2, 5, 5), (3, 2, 3, 3), bias=True),
    _conv2d("kernel_covers_input", (2, 2, 3, 3), (2, 2, 3, 3)),
    # conv1d
    _conv1d("bias", (2, 3, 7), (4, 3, 3), bias=True),
    _conv1d("stride_dilation_groups", (2, 4, 9), (6, 2, 3), stride=2, padding=2, dilation=2,
            groups=2),
    _conv1d("same_even_kernel", (2, 2, 6), (3, 2, 4), padding="same"),
    _conv1d("unbatched", (3, 6), (2, 3, 2)),
    # transposed convolutions
    _transposed(2, "bias", (2, 3, 4, 4), (3, 2, 3, 3), bias=True),
    _transposed(2, "stride_padding_output_padding", (2, 2, 3, 4), (2, 3, 3, 3), stride=2,
                padding=1, output_padding=1),
    _transposed(2, "groups_dilation", (2, 4, 3, 3), (4, 1, 2, 3), bias=True, groups=2,
                dilation=2, stride=(1, 2)),
    _transposed(2, "output_padding_from_dilation", (1, 2, 3, 3), (2, 2, 2, 2), stride=2,
                dilation=3, output_padding=2),
    _transposed(2, "unbatched", (2, 3, 3), (2, 2, 2, 2), stride=2),
    _transposed(1, "stride_padding", (2, 3, 5), (3, 2, 3), bias=True, stride=2, padding=1,
                output_padding=1),
    # the weight-gradient ops (conv's adjoint in the weight)
    _weight_grad(2, "stride_padding", (2, 2, 5, 5), (2, 3, 3, 3), (3, 3), stride=2, padding=1),
    _weight_grad(2, "groups_dilation", (2, 4, 5, 5), (2, 2, 3, 1), (2, 3), dilation=(2, 2),
                 groups=2),
    _weight_grad(1, "plain", (2, 3, 6), (2, 2, 4), (3,)),
    # max pooling
    _pool("max_pool2d", "kernel2", (2, 3, 6, 6), max_pool_ref,
          dtypes=("float32", "float64", "float16", "int64", "int32"), kernel_size=2),
    _pool("max_pool2d", "stride_padding", (2, 2, 5, 5), max_pool_ref, kernel_size=3, stride=2,
          padding=1),
    _pool("max_pool2d", "ceil_mode", (2, 2, 6, 5), max_pool_ref, kernel_size=3, stride=2,
          ceil_mode=True),
    _pool("max_pool2d", "dilation", (2, 2, 6, 6), max_pool_ref, kernel_size=2, dilation=2,
          padding=1),
    _pool("max_pool2d", "rectangular_overlapping", (2, 2, 5, 6), max_pool_ref,
          kernel_size=(2, 3), stride=(1, 2)),
    _pool("max_pool2d", "unbatched", (2, 5, 5), max_pool_ref, kernel_size=2, stride=1),
    # average pooling
    _pool("avg_pool2d", "kernel2", (2, 3, 6, 6), avg_pool_ref, dtypes=_F16, kernel_size=2),
    _pool("avg_pool2d", "stride_padding", (2, 2, 5, 5), avg_pool_ref, kernel_size=3, stride=2,
          padding=1),
    _pool("avg_pool2d", "exclude_pad", (2, 2, 5, 5), avg_pool_ref, kernel_size=3, stride=2,
          padding=1, count_include_pad=False),
    _pool("avg_pool2d", "ceil_mode", (2, 2, 6, 5), avg_pool_ref, kernel_size=3, stride=2,
          padding=1, ceil_mode=True),
    _pool("avg_pool2d", "ceil_mode_exclude_pad", (1, 2, 6, 5), avg_pool_ref, kernel_size=2,
          stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    _pool("avg_pool2d", "divisor_override", (2, 2, 4, 4), avg_pool_ref, kernel_size=2,
          divisor_override=3),
    _pool("avg_pool2d", "unbatched", (2, 5, 5), avg_pool_ref, kernel_size=(2, 3), stride=1),
    # adaptive average pooling
    _pool("adaptive_avg_pool2d", "global", (2, 3, 5, 4), adaptive_ref, dtypes=_F16,
          output_size=(1, 1)),
    _pool("adaptive_avg_pool2d", "uneven_bins", (2, 2, 5, 7), adaptive_ref, output_size=(3, 4)),
    _pool("adaptive_avg_pool2d", "divisible", (2, 2, 6, 4), adaptive_ref, output_size=(3, 2)),
    _pool("adaptive_avg_pool2d", "upsampling_bins", (1, 2, 3, 2), adaptive_ref,
          output_size=(5, 3)),
    _pool("adaptive_avg_pool2d", "unbatched", (2, 5, 5), adaptive_ref, output_size=2),
    # resampling
    _resample("size", (2, 2, 4, 5), size=(7, 9)),
    _resample("scale2", (2, 2, 3, 4), scale_factor=2),
    _resample("downsample", (2, 2, 6, 5), scale_factor=0.5),
    _resample("fractional_scale", (1, 2, 4, 3), scale_factor=(1.5, 2.5)),
    _resample("size", (2, 2, 4, 5), size=(7, 9), mode="bilinear"),
    _resample("align_corners", (2, 2, 4, 5), size=(6, 3), mode="bilinear", align_corners=True),
    _resample("scale2", (2, 2, 3, 4), scale_factor=2, mode="bilinear"),
    _resample("fractional_scale", (1, 2, 4, 3), scale_factor=(1.5, 0.7), mode="bilinear"),
    # the adjoint ops, against the transpose of their forward reference
    _adjoint("avg_pool2d", "padding_ceil", (2, 2, 3, 3), (2, 2, 5, 5),
             lambda x: avg_pool_ref(x, 3, 2, 1, True, False),
             {"fw": {"kernel_size": (3, 3), "stride": (2, 2), "padding": (1, 1),
                     "ceil_mode": True, "count_include_pad": False, "divisor_override": None},
              "torch": {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
                        "count_include_pad": False}}),
    _adjoint("adaptive_avg_pool2d", "uneven", (2, 2, 3, 2), (2, 2, 5, 5),
             lambda x: adaptive_ref(x, (3, 2)),
             {"fw": {"output_size": (3, 2)}, "torch": {"output_size": (3, 2)}}),
    _adjoint("interpolate", "nearest", (1, 2, 7, 4), (1, 2, 3, 5),
             lambda x: nearest_ref(x, (7, 4)),
             {"name": "upsample_nearest2d_backward", "fw": {"size": (7, 4), "scales": (None, None)},
              "torch": {"size": (7, 4)}}),
    _adjoint("interpolate", "bilinear", (1, 2, 5, 6), (1, 2, 3, 4),
             lambda x: bilinear_ref(x, (5, 6), True),
             {"name": "upsample_bilinear2d_backward",
              "fw": {"size": (5, 6), "align_corners": True, "scales": (None, None)},
              "torch": {"size": (5, 6), "mode": "bilinear", "align_corners": True}}),
    OpCase("max_pool2d_indices", "padding_dilation", [arg(2, 2, 6, 5)],
           lambda fw, x: fw.max_pool2d(x, 3, 2, 1, dilation=(1, 2), return_indices=True)[1],
           lambda x: max_index_ref(x, 3, 2, 1, (1, 2)),
           torch=lambda torch, x: torch.nn.functional.max_pool2d(
               x, 3, 2, 1, dilation=(1, 2), return_indices=True)[1], grad=False),
    OpCase("max_pool2d_indices", "ceil_mode_ties", [index(1, 2, 5, 5, high=2)],
           lambda fw, x: fw.max_pool2d(x, 2, ceil_mode=True, return_indices=True)[1],
           lambda x: max_index_ref(x, 2, 2, 0, (1, 1), ceil_mode=True),
           torch=lambda torch, x: torch.nn.functional.max_pool2d(
               x, 2, ceil_mode=True, return_indices=True)[1], dtypes=("int64",), grad=False),
    OpCase("max_pool2d_backward", "overlapping_indices", [arg(2, 2, 3, 3), index(2, 2, 3, 3,
                                                                                high=20)],
           lambda fw, g, i: fw.ops.apply(fw.ops.get("max_pool2d_backward"), (g, i),
                                         {"input_size": (4, 5)}),
           lambda g, i: _scatter_ref(g, i, (4, 5)),
           torch=lambda torch, g, i: torch.zeros(2, 2, 20, dtype=g.dtype).scatter_add(
               2, i.reshape(2, 2, 9), g.reshape(2, 2, 9)).reshape(2, 2, 4, 5)),
    OpCase("max_pool2d_select", "gather", [arg(2, 2, 4, 5), index(2, 2, 3, 3, high=20)],
           lambda fw, x, i: fw.ops.apply(fw.ops.get("max_pool2d_select"), (x, i)),
           lambda x, i: np.take_along_axis(x.reshape(2, 2, 20), i.reshape(2, 2, 9), 2).reshape(
               i.shape),
           torch=lambda torch, x, i: x.reshape(2, 2, 20).gather(2, i.reshape(2, 2, 9)).reshape(
               i.shape)),
]


def _scatter_ref(g, indices, size):
    out = np.zeros(g.shape[:-2] + (size[0] * size[1],))
    for lead in np.ndindex(*g.shape[:-2]):
        for pos in np.ndindex(*g.shape[-2:]):
            out[lead + (indices[lead + pos],)] += g[lead + pos]
    return out.reshape(g.shape[:-2] + size).astype(g.dtype)
