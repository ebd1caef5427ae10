"""linalg, conv and pool kernels against NumPy references written here."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

F32 = {"rtol": 1e-6, "atol": 1e-6}


def f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("layout", ["out_in", "in_out"])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_both_layouts(one, rng, layout, bias):
    x, w, b = f32(rng, 2, 3, 5), f32(rng, 4, 5), f32(rng, 4)
    stored = w if layout == "out_in" else np.ascontiguousarray(w.T)
    out = one("linear", [x, stored, b if bias else None], [2, 3, 4], weights=(1, 2),
              weight_layout=layout)
    np.testing.assert_allclose(out, x @ w.T + (b if bias else 0), **F32)


@pytest.mark.parametrize("op", ["matmul", "bmm"])
def test_matmul_and_bmm(one, rng, op):
    a, b = f32(rng, 3, 2, 5), f32(rng, 3, 5, 4)
    np.testing.assert_allclose(one(op, [a, b], [3, 2, 4]), a @ b, **F32)


def _conv_ref(x, w, b, stride, padding, dilation, groups):
    """Direct n-d cross-correlation, one output element at a time."""
    n = w.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + [tuple(p) for p in padding]).astype(np.float64)
    cout, cg = w.shape[:2]
    kernel = w.shape[2:]
    out_len = [(x.shape[2 + i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1
               for i in range(n)]
    out = np.zeros((x.shape[0], cout, *out_len))
    for o in range(cout):
        g = o // (cout // groups)
        for pos in itertools.product(*map(range, out_len)):
            idx = tuple(slice(p * s, p * s + d * (k - 1) + 1, d)
                        for p, s, d, k in zip(pos, stride, dilation, kernel))
            patch = x[(slice(None), slice(g * cg, (g + 1) * cg)) + idx]
            out[(slice(None), o) + pos] = (patch * w[o]).reshape(x.shape[0], -1).sum(1)
    return out + (0 if b is None else b.reshape((cout,) + (1,) * n))


@pytest.mark.parametrize("case", [
    dict(n=2, stride=(1, 1), padding=((1, 1), (1, 1)), dilation=(1, 1), groups=1),
    dict(n=2, stride=(2, 1), padding=((0, 2), (1, 0)), dilation=(1, 2), groups=2),
    dict(n=1, stride=(2,), padding=((1, 0),), dilation=(2,), groups=1),
    dict(n=1, stride=(1,), padding=((0, 0),), dilation=(1,), groups=4),
])
def test_conv(one, rng, case):
    n, groups = case["n"], case["groups"]
    x = f32(rng, 2, 4, *(7,) * n)
    w, b = f32(rng, 4, 4 // groups, *(3,) * n), f32(rng, 4)
    ref = _conv_ref(x, w, b, case["stride"], case["padding"], case["dilation"], groups)
    out = one(f"conv{n}d", [x, w, b], list(ref.shape), weights=(1, 2),
              stride=case["stride"], padding=case["padding"], dilation=case["dilation"],
              groups=groups)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def _windows(x, kernel, stride, padding, dilation, ceil_mode, fill):
    """(positions, taps) per output: the values of each window, padding as ``fill``."""
    n = len(kernel)
    sizes = x.shape[-n:]
    outs = []
    for size, k, s, p, d in zip(sizes, kernel, stride, padding, dilation):
        length = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (length - 1) * s >= size + p:
            length -= 1
        outs.append(length)
    result = {}
    for pos in itertools.product(*map(range, outs)):
        taps = []
        for tap in itertools.product(*map(range, kernel)):
            idx = [o * s - p + t * d for o, s, p, t, d in zip(pos, stride, padding, tap,
                                                                 dilation)]
            inside = all(0 <= i < m for i, m in zip(idx, sizes))
            taps.append(x[(Ellipsis, *idx)] if inside else np.full(x.shape[:-n], fill))
        result[pos] = np.stack(taps, -1)
    return outs, result


def test_max_pool2d_with_padding_dilation_ceil(one, rng):
    x = f32(rng, 2, 3, 7, 6)
    outs, wins = _windows(x, (3, 2), (2, 2), (1, 1), (1, 2), True, -np.inf)
    ref = np.zeros(x.shape[:2] + tuple(outs), np.float32)
    for pos, w in wins.items():
        ref[(Ellipsis, *pos)] = w.max(-1)
    out = one("max_pool2d", [x], list(ref.shape), kernel_size=(3, 2), stride=(2, 2),
              padding=(1, 1), dilation=(1, 2), ceil_mode=True)
    np.testing.assert_array_equal(out, ref)


def test_max_pool1d(one, rng):
    x = f32(rng, 2, 3, 9)
    ref = x.reshape(2, 3, 3, 3).max(-1)
    out = one("max_pool1d", [x], [2, 3, 3], kernel_size=(3,), stride=(3,), padding=(0,),
              dilation=(1,), ceil_mode=False)
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("include", [True, False])
def test_avg_pool2d_divisors(one, rng, include):
    x = f32(rng, 1, 2, 5, 5)
    outs, wins = _windows(x, (3, 3), (2, 2), (1, 1), (1, 1), True, np.nan)
    ref = np.zeros((1, 2) + tuple(outs))
    for pos, w in wins.items():
        # with padding counted: the window clipped to the padded input (5 + 2 * 1), not beyond
        spans = [min(o * 2 - 1 + 3, 5 + 1) - (o * 2 - 1) for o in pos]
        divisor = spans[0] * spans[1] if include else np.sum(~np.isnan(w[0, 0]))
        ref[(Ellipsis, *pos)] = np.nansum(w, -1) / divisor
    out = one("avg_pool2d", [x], list(ref.shape), kernel_size=(3, 3), stride=(2, 2),
              padding=(1, 1), ceil_mode=True, count_include_pad=include, divisor_override=None)
    np.testing.assert_allclose(out, ref, **F32)


def test_avg_pool1d(one, rng):
    x = f32(rng, 2, 3, 8)
    out = one("avg_pool1d", [x], [2, 3, 4], kernel_size=(2,), stride=(2,), padding=(0,),
              ceil_mode=False, count_include_pad=True, divisor_override=None)
    np.testing.assert_allclose(out, x.reshape(2, 3, 4, 2).mean(-1), **F32)


def _adaptive_ref(x, outs):
    n = len(outs)
    sizes = x.shape[-n:]
    ref = np.zeros(x.shape[:-n] + tuple(outs))
    for pos in itertools.product(*map(range, outs)):
        idx = tuple(slice(i * s // o, -(-(i + 1) * s // o)) for i, s, o in zip(pos, sizes, outs))
        ref[(Ellipsis, *pos)] = x[(Ellipsis, *idx)].mean(axis=tuple(range(-n, 0)))
    return ref


def test_adaptive_avg_pools(one, rng):
    x = f32(rng, 2, 3, 7, 5)
    out = one("adaptive_avg_pool2d", [x], [2, 3, 3, 2], output_size=(3, 2))
    np.testing.assert_allclose(out, _adaptive_ref(x, (3, 2)), **F32)
    y = f32(rng, 2, 3, 10)
    out = one("adaptive_avg_pool1d", [y], [2, 3, 4], output_size=(4,))
    np.testing.assert_allclose(out, _adaptive_ref(y, (4,)), **F32)
