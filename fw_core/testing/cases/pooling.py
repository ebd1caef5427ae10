"""Cases for the 1-d and 3-d pools, adaptive max pooling, unpooling and 3-d convolution, with
loop-based N-d NumPy references (one output position at a time). The 2-d pools' cases, with
their 2-d references, are in :mod:`fw_core.testing.cases.conv`."""

import math

import numpy as np

from fw_core.testing.cases.conv import (
    _pool_out,
    _transposed,
    _tup,
    _weight_grad,
    adjoint_ref,
    conv_ref,
)
from fw_core.testing.conformance import OpCase, arg, index, value

_F = ("float32", "float64")


def _window(x, n, kernel, stride, padding, dilation, ceil_mode, fill):
    """The padded input and, per output position, its window's slices and the taps' input
    positions."""
    sizes = x.shape[-n:]
    out = _pool_out(sizes, kernel, stride, padding, dilation, ceil_mode)
    big = np.full(x.shape[:-n] + tuple(s + 2 * p + st * k for s, p, st, k in zip(
        sizes, padding, stride, kernel)), fill, dtype=np.float64)
    big[(Ellipsis,) + tuple(slice(p, p + s) for p, s in zip(padding, sizes))] = x
    for pos in np.ndindex(*out):
        yield pos, big[(Ellipsis,) + tuple(slice(o * s, o * s + d * (k - 1) + 1, d) for o, s, d, k
                                           in zip(pos, stride, dilation, kernel))], out


def max_pool_ref(x, n, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    kernel = _tup(kernel_size, n)
    stride, padding = (kernel if stride is None else _tup(stride, n)), _tup(padding, n)
    result = None
    for pos, window, out in _window(x, n, kernel, stride, padding, _tup(dilation, n), ceil_mode,
                                    -np.inf):
        result = np.empty(x.shape[:-n] + out) if result is None else result
        result[(Ellipsis,) + pos] = window.max(axis=tuple(range(-n, 0)))
    return result.astype(x.dtype)


def avg_pool_ref(x, n, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
    kernel = _tup(kernel_size, n)
    stride, padding = (kernel if stride is None else _tup(stride, n)), _tup(padding, n)
    sizes = x.shape[-n:]
    result = None
    for pos, window, out in _window(x, n, kernel, stride, padding, (1,) * n, ceil_mode, 0.0):
        result = np.empty(x.shape[:-n] + out) if result is None else result
        starts = [o * s - p for o, s, p in zip(pos, stride, padding)]
        padded = math.prod(min(b + k, size + p) - b for b, k, size, p in zip(
            starts, kernel, sizes, padding))
        inside = math.prod(min(b + k, size) - max(b, 0) for b, k, size in zip(
            starts, kernel, sizes))
        divisor = divisor_override or (padded if count_include_pad else inside)
        result[(Ellipsis,) + pos] = window.sum(axis=tuple(range(-n, 0))) / divisor
    return result.astype(x.dtype)


def _bins(size, out):
    return [slice(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]


def adaptive_ref(x, n, output_size, reduce="mean"):
    out = _tup(output_size, n)
    bins = [_bins(s, o) for s, o in zip(x.shape[-n:], out)]
    result = np.empty(x.shape[:-n] + out)
    for pos in np.ndindex(*out):
        window = x[(Ellipsis,) + tuple(b[i] for b, i in zip(bins, pos))].astype(np.float64)
        result[(Ellipsis,) + pos] = getattr(window, reduce)(axis=tuple(range(-n, 0)))
    return result.astype(x.dtype)


def adaptive_index_ref(x, n, output_size):
    """Flat index of the first maximum of each bin (the values are drawn without ties)."""
    out = _tup(output_size, n)
    sizes = x.shape[-n:]
    bins = [_bins(s, o) for s, o in zip(sizes, out)]
    result = np.empty(x.shape[:-n] + out, np.int64)
    for lead in np.ndindex(*x.shape[:-n]):
        for pos in np.ndindex(*out):
            window = x[lead + tuple(b[i] for b, i in zip(bins, pos))]
            where = np.unravel_index(np.argmax(window), window.shape)
            result[lead + pos] = np.ravel_multi_index(
                tuple(b[i].start + w for b, i, w in zip(bins, pos, where)), sizes)
    return result


def unpool_ref(x, indices, n, size):
    result = np.zeros(x.shape[:-n] + (math.prod(size),), x.dtype)
    for lead in np.ndindex(*x.shape[:-n]):
        result[lead][indices[lead].ravel()] = x[lead].ravel()
    return result.reshape(x.shape[:-n] + tuple(size))


# -- cases ----------------------------------------------------------------------------------------
def _pool(op, name, shape, reference, dtypes=_F, **kw):
    n = int(op[-2])
    return OpCase(op, name, [arg(*shape)], lambda fw, x: getattr(fw, op)(x, **kw),
                  lambda x: reference(x, n, **kw),
                  torch=lambda torch, x: getattr(torch.nn.functional, op)(x, **kw), dtypes=dtypes)


def _indices(n, name, shape, **kw):
    op = f"max_pool{n}d"
    return OpCase(f"{op}_indices", name, [arg(*shape)],
                  lambda fw, x: getattr(fw, op)(x, return_indices=True, **kw)[1],
                  lambda x: _max_index_ref(x, n, **kw),
                  torch=lambda torch, x: getattr(torch.nn.functional, op)(
                      x, return_indices=True, **kw)[1], grad=False)


def _max_index_ref(x, n, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    kernel = _tup(kernel_size, n)
    stride, padding, dilation = (kernel if stride is None else _tup(stride, n),
                                 _tup(padding, n), _tup(dilation, n))
    sizes = x.shape[-n:]
    out = _pool_out(sizes, kernel, stride, padding, dilation, ceil_mode)
    result = np.empty(x.shape[:-n] + out, np.int64)
    for lead in np.ndindex(*x.shape[:-n]):
        for pos in np.ndindex(*out):
            best = None
            for tap in np.ndindex(*kernel):
                at = tuple(o * s - p + t * d for o, s, p, t, d in zip(pos, stride, padding, tap,
                                                                      dilation))
                if all(0 <= a < size for a, size in zip(at, sizes)) and (
                        best is None or x[lead + at] > best[0]):
                    best = (x[lead + at], np.ravel_multi_index(at, sizes))
            result[lead + pos] = best[1]
    return result


def _adjoint(op, name, g_shape, input_shape, forward, attrs, torch_attrs):
    n = len(input_shape) - 2

    def torch_call(torch, g):
        x = torch.zeros(input_shape, dtype=g.dtype, requires_grad=True)
        out = getattr(torch.nn.functional, op)(x, **torch_attrs)
        return torch.autograd.grad(out, x, g, create_graph=True)[0]

    return OpCase(f"{op}_backward", name, [arg(*g_shape)],
                  lambda fw, g: fw.ops.apply(fw.ops.get(f"{op}_backward"), (g,), {
                      **attrs, "input_size": input_shape[-n:]}),
                  adjoint_ref(forward, input_shape), torch=torch_call)


def _scatter(n, name, g_shape, size, high):
    op = f"max_pool{n}d_backward"
    lead = g_shape[:-n]
    flat = (*lead, math.prod(g_shape[-n:]))
    return OpCase(op, name, [arg(*g_shape), index(*g_shape, high=high)],
                  lambda fw, g, i: fw.ops.apply(fw.ops.get(op), (g, i), {"input_size": size}),
                  lambda g, i: _scatter_ref(g, i, n, size),
                  torch=lambda torch, g, i: torch.zeros(*lead, high, dtype=g.dtype).scatter_add(
                      -1, i.reshape(flat), g.reshape(flat)).reshape(*lead, *size))


def _scatter_ref(g, indices, n, size):
    out = np.zeros(g.shape[:-n] + (math.prod(size),))
    for lead in np.ndindex(*g.shape[:-n]):
        np.add.at(out[lead], indices[lead].ravel(), g[lead].ravel())
    return out.reshape(g.shape[:-n] + tuple(size)).astype(g.dtype)


def _select(n, name, x_shape, i_shape):
    op = f"max_pool{n}d_select"
    lead, high = x_shape[:-n], math.prod(x_shape[-n:])
    return OpCase(op, name, [arg(*x_shape), index(*i_shape, high=high)],
                  lambda fw, x, i: fw.ops.apply(fw.ops.get(op), (x, i)),
                  lambda x, i: np.take_along_axis(x.reshape(*lead, high), i.reshape(
                      *lead, -1), -1).reshape(i.shape),
                  torch=lambda torch, x, i: x.reshape(*lead, high).gather(
                      -1, i.reshape(*lead, -1)).reshape(i.shape))


def _adaptive_max(n, name, shape, output_size, values=False):
    op = f"adaptive_max_pool{n}d"
    pick = 0 if values else 1
    return OpCase(f"{op}_indices", name, [arg(*shape)],
                  lambda fw, x: getattr(fw, op)(x, output_size, return_indices=True)[pick],
                  (lambda x: adaptive_ref(x, n, output_size, "max")) if values else
                  (lambda x: adaptive_index_ref(x, n, output_size)),
                  torch=lambda torch, x: getattr(torch.nn.functional, op)(
                      x, output_size, return_indices=True)[pick], grad=values)


def _unpool(n, name, shape, dtypes=_F, **kw):
    """max_unpool of a max pool's own output and indices (drawn without ties)."""
    op, pool = f"max_unpool{n}d", f"max_pool{n}d"
    output_size = kw.pop("output_size", None)

    def run(module, x, functional):
        values, indices = getattr(functional, pool)(x, return_indices=True, **kw)
        return getattr(functional, op)(values, indices, output_size=output_size, **kw)

    def reference(x):
        values = max_pool_ref(x, n, **kw)
        indices = _max_index_ref(x, n, **kw)
        size = output_size[-n:] if output_size else tuple(
            (s - 1) * st - 2 * p + k for s, k, st, p in zip(
                values.shape[-n:], _tup(kw["kernel_size"], n),
                _tup(kw.get("stride") or kw["kernel_size"], n), _tup(kw.get("padding", 0), n)))
        return unpool_ref(values, indices, n, size)

    return OpCase(op, name, [arg(*shape)], lambda fw, x: run(fw, x, fw), reference,
                  torch=lambda torch, x: run(torch, x, torch.nn.functional), dtypes=dtypes)


_INF_DATA = np.array([[[[np.inf, -np.inf, np.nan], [1.0, 2.0, 3.0]]]])

CASES = [
    # 3-d convolution and its adjoints
    OpCase("conv3d", "stride_padding_bias", [arg(2, 2, 4, 5, 4), arg(3, 2, 2, 3, 2), arg(3)],
           lambda fw, x, w, b: fw.conv3d(x, w, b, stride=(1, 2, 1), padding=1),
           lambda x, w, b: conv_ref(x, w, b, stride=(1, 2, 1), padding=1),
           torch=lambda torch, x, w, b: torch.nn.functional.conv3d(x, w, b, stride=(1, 2, 1),
                                                                   padding=1)),
    OpCase("conv3d", "groups_dilation_unbatched", [arg(4, 5, 4, 4), arg(2, 2, 2, 2, 2)],
           lambda fw, x, w: fw.conv3d(x, w, groups=2, dilation=(2, 1, 1)),
           lambda x, w: conv_ref(x, w, groups=2, dilation=(2, 1, 1)),
           torch=lambda torch, x, w: torch.nn.functional.conv3d(x, w, groups=2,
                                                                dilation=(2, 1, 1))),
    _transposed(3, "stride_padding_output_padding", (1, 2, 3, 2, 3), (2, 2, 2, 2, 2),
                bias=True, stride=2, padding=1, output_padding=1),
    _transposed(1, "groups_dilation", (2, 4, 5), (4, 1, 3), bias=True, groups=2, dilation=2),
    _weight_grad(3, "stride_padding", (2, 2, 4, 4, 3), (2, 2, 3, 3, 2), (2, 2, 2), stride=2,
                 padding=1),
    # 1-d and 3-d pools
    _pool("max_pool1d", "stride_padding_ceil", (2, 3, 9), max_pool_ref, kernel_size=3, stride=2,
          padding=1, ceil_mode=True),
    _pool("max_pool1d", "dilation_unbatched", (3, 9), max_pool_ref, kernel_size=2, dilation=3),
    _pool("max_pool3d", "stride_padding", (1, 2, 5, 4, 5), max_pool_ref, kernel_size=(3, 2, 3),
          stride=2, padding=1),
    _pool("max_pool3d", "dilation_ceil", (2, 1, 5, 5, 4), max_pool_ref, kernel_size=2,
          dilation=(1, 2, 1), stride=2, ceil_mode=True),
    _indices(1, "stride_padding", (2, 2, 9), kernel_size=3, stride=2, padding=1),
    _indices(3, "padding_dilation", (1, 2, 5, 4, 5), kernel_size=2, stride=(2, 1, 2),
             padding=1, dilation=(1, 2, 1)),
    _scatter(1, "overlapping", (2, 2, 4), (7,), 7),
    _scatter(3, "overlapping", (2, 2, 2, 3), (3, 2, 3), 18),
    _select(1, "gather", (2, 2, 7), (2, 2, 4)),
    _select(3, "gather", (1, 2, 3, 2, 3), (1, 2, 2, 1, 3)),
    _pool("avg_pool1d", "stride_padding_exclude", (2, 3, 9), avg_pool_ref, kernel_size=3,
          stride=2, padding=1, count_include_pad=False),
    _pool("avg_pool1d", "ceil_mode", (2, 3, 8), avg_pool_ref, kernel_size=3, stride=2,
          padding=1, ceil_mode=True),
    _pool("avg_pool3d", "stride_padding", (1, 2, 5, 4, 5), avg_pool_ref, kernel_size=(3, 2, 3),
          stride=2, padding=1, dtypes=("float32", "float64", "float16")),
    _pool("avg_pool3d", "exclude_pad_ceil", (1, 1, 6, 5, 4), avg_pool_ref, kernel_size=3,
          stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    _pool("avg_pool3d", "divisor_override", (2, 1, 4, 4, 4), avg_pool_ref, kernel_size=2,
          divisor_override=3),
    _adjoint("avg_pool1d", "padding_ceil", (2, 2, 4), (2, 2, 6),
             lambda x: avg_pool_ref(x, 1, 3, 2, 1, True, False),
             {"kernel_size": (3,), "stride": (2,), "padding": (1,), "ceil_mode": True,
              "count_include_pad": False, "divisor_override": None},
             {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
              "count_include_pad": False}),
    _adjoint("avg_pool3d", "padding", (1, 1, 2, 3, 2), (1, 1, 3, 4, 3),
             lambda x: avg_pool_ref(x, 3, 2, 2, 1),
             {"kernel_size": (2, 2, 2), "stride": (2, 2, 2), "padding": (1, 1, 1),
              "ceil_mode": False, "count_include_pad": True, "divisor_override": None},
             {"kernel_size": 2, "stride": 2, "padding": 1}),
    # adaptive pools
    _pool("adaptive_avg_pool1d", "uneven_bins", (2, 3, 7), adaptive_ref, output_size=3),
    _pool("adaptive_avg_pool1d", "divisible", (2, 3, 8), adaptive_ref, output_size=4),
    _pool("adaptive_avg_pool3d", "uneven_bins", (1, 2, 5, 4, 3), adaptive_ref,
          output_size=(2, 3, 2)),
    _adjoint("adaptive_avg_pool1d", "uneven", (2, 2, 3), (2, 2, 7),
             lambda x: adaptive_ref(x, 1, 3), {"output_size": (3,)}, {"output_size": 3}),
    _adjoint("adaptive_avg_pool3d", "uneven", (1, 1, 2, 3, 2), (1, 1, 3, 4, 3),
             lambda x: adaptive_ref(x, 3, (2, 3, 2)), {"output_size": (2, 3, 2)},
             {"output_size": (2, 3, 2)}),
    _adaptive_max(1, "indices", (2, 3, 7), 3),
    _adaptive_max(2, "indices", (2, 2, 5, 7), (3, 4)),
    _adaptive_max(2, "values_carry_gradients", (2, 2, 5, 7), (3, 4), values=True),
    _adaptive_max(3, "indices_unbatched", (2, 4, 3, 5), (3, 2, 2)),
    _adaptive_max(3, "values_carry_gradients", (1, 2, 4, 3, 5), (3, 2, 2), values=True),
    # unpooling
    _unpool(1, "stride", (2, 2, 9), kernel_size=2, stride=3),
    _unpool(2, "padding_output_size", (2, 2, 7, 6), kernel_size=3, stride=3, padding=1,
            output_size=(2, 2, 7, 6)),
    _unpool(3, "kernel2", (1, 2, 4, 4, 4), kernel_size=2),
    OpCase("max_unpool2d", "inf_and_nan", [value(_INF_DATA)],
           lambda fw, x: fw.max_unpool2d(*fw.max_pool2d(fw.tensor(x), 2, return_indices=True),
                                         2),
           lambda x: np.array([[[[np.inf, 0.0], [0.0, 0.0]]]], x.dtype),
           torch=lambda torch, x: torch.nn.functional.max_unpool2d(
               *torch.nn.functional.max_pool2d(x, 2, return_indices=True), 2),
           dtypes=("float64",), grad=False),
]
