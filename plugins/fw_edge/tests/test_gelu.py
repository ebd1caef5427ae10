"""The float32 GELU kernel (accuracy over the float32 range, special values) and the matcher
that sends only GELU formulas to it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fwm_writer import Builder

from fw_edge.kernels import gelu as G

_S = 1 / math.sqrt(2)
#: fw's export: x * 0.5 * erfc(-x / sqrt 2)
_EXPORTED = ([["mul", ["arg", 0], ["const", 0.5]], ["mul", ["arg", 0], ["const", -_S]],
              ["erfc", ["step", 1]], ["mul", ["step", 0], ["step", 2]]], ["step", 3])


def _gelu(x):
    out, work = np.empty_like(x), tuple(np.empty_like(x) for _ in range(G.WORK))
    G.gelu(x, out, work)
    return out


def _reference(x):
    """x * 0.5 * erfc(-x / sqrt 2) in float64 with math.erfc (the formula's exact value)."""
    erfc = np.frompyfunc(lambda v: math.erfc(-v * _S), 1, 1)
    x = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        return x * 0.5 * erfc(x).astype(np.float64)


def test_gelu_within_2e_7_of_math_erfc_over_the_float32_range():
    rng = np.random.default_rng(0)
    magnitudes = 10.0 ** rng.uniform(-45, math.log10(3.4e38), 1_000_000)
    x = np.concatenate([np.linspace(-12, 12, 7_000_001, dtype=np.float32),
                        (rng.standard_normal(1_000_000) * 3).astype(np.float32),
                        (np.where(rng.random(magnitudes.size) < 0.5, -1, 1) * magnitudes)
                        .astype(np.float32),
                        np.nextafter(np.float32(0), np.float32(1)) * np.arange(1, 1001,
                                                                               dtype=np.float32),
                        np.array([np.finfo(np.float32).max, -np.finfo(np.float32).max,
                                  np.finfo(np.float32).tiny, 5.75, -5.75], np.float32)])
    x = x[np.isfinite(x)]
    assert x.size > 9_000_000
    error = np.abs(_gelu(x) - _reference(x)) / np.maximum(1.0, np.abs(x.astype(np.float64)))
    assert error.max() <= 2e-7, (x[error.argmax()], error.max())


def test_gelu_special_values_are_the_formulas():
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 3e38, -3e38, 6.0, -6.0], np.float32)
    with np.errstate(invalid="ignore"):
        got = _gelu(x)
    np.testing.assert_array_equal(got[[0, 3, 5, 7]], x[[0, 3, 5, 7]])  # x itself
    assert np.isnan(got[1]) and np.isnan(got[2])  # -inf * Phi(-inf) = -inf * 0
    assert got[6] == 0 and got[8] == 0
    assert list(np.signbit(got[[3, 4, 6, 8]])) == [False, True, True, True]


@pytest.mark.parametrize("steps, result", [
    _EXPORTED,
    # the erf form, grouped the other way: (1 + erf(x / sqrt 2)) * (0.5 * x)
    ([["div", ["arg", 0], ["const", math.sqrt(2)]], ["erf", ["step", 0]],
      ["add", ["const", 1.0], ["step", 1]], ["mul", ["const", 0.5], ["arg", 0]],
      ["mul", ["step", 2], ["step", 3]]], ["step", 4]),
    # erfc of a negated input, the half taken last
    ([["neg", ["arg", 0]], ["mul", ["step", 0], ["const", _S]], ["erfc", ["step", 1]],
      ["mul", ["arg", 0], ["step", 2]], ["mul", ["step", 3], ["const", 0.5]]], ["step", 4]),
])
def test_matcher_accepts_gelu_formulas(steps, result):
    steps = [(s[0], tuple(tuple(o) for o in s[1:])) for s in steps]
    assert G.matches(steps, tuple(result))


@pytest.mark.parametrize("steps, result", [
    # erfc(+x / sqrt 2): x (1 - Phi(x)), not a GELU
    ([["mul", ["arg", 0], ["const", 0.5]], ["mul", ["arg", 0], ["const", _S]],
      ["erfc", ["step", 1]], ["mul", ["step", 0], ["step", 2]]], ["step", 3]),
    # erf where the formula has erfc
    ([["mul", ["arg", 0], ["const", 0.5]], ["mul", ["arg", 0], ["const", -_S]],
      ["erf", ["step", 1]], ["mul", ["step", 0], ["step", 2]]], ["step", 3]),
    # another scale
    ([["mul", ["arg", 0], ["const", 0.25]], ["mul", ["arg", 0], ["const", -_S]],
      ["erfc", ["step", 1]], ["mul", ["step", 0], ["step", 2]]], ["step", 3]),
    # 1 - erf, and x squared in front
    ([["mul", ["arg", 0], ["const", _S]], ["erf", ["step", 0]],
      ["sub", ["const", 1.0], ["step", 1]], ["mul", ["arg", 0], ["step", 2]],
      ["mul", ["step", 3], ["const", 0.5]]], ["step", 4]),
    ([["mul", ["arg", 0], ["const", 0.5]], ["mul", ["arg", 0], ["const", -_S]],
      ["erfc", ["step", 1]], ["mul", ["step", 0], ["step", 2]],
      ["mul", ["step", 3], ["arg", 0]]], ["step", 4]),
    # the tanh approximation, and a plain product
    ([["mul", ["arg", 0], ["const", 0.7978845608]], ["tanh", ["step", 0]],
      ["add", ["step", 1], ["const", 1.0]], ["mul", ["arg", 0], ["step", 2]],
      ["mul", ["step", 3], ["const", 0.5]]], ["step", 4]),
    ([["mul", ["arg", 0], ["const", 0.5]]], ["step", 0]),
    ([], ["arg", 0]),
])
def test_matcher_refuses_other_formulas(steps, result):
    steps = [(s[0], tuple(tuple(o) for o in s[1:])) for s in steps]
    assert not G.matches(steps, tuple(result))


def _program(run, steps, result, dtype="float32", shape=(64, 3000)):
    b = Builder()
    x = b.input("x", dtype, list(shape))
    b.output(b.pointwise([x], steps, result, dtype, list(shape), None), "output")
    return run(b)


@pytest.mark.parametrize("shape", [(5, 7), (64, 3000)])  # small and large outputs
def test_pointwise_runs_exported_gelu_through_the_kernel(run, rng, monkeypatch, shape):
    from fw_edge.kernels import pointwise

    calls, kernel = [], G.gelu
    monkeypatch.setattr(pointwise._gelu, "gelu", lambda *a: calls.append(1) or kernel(*a))
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    out = _program(run, *_EXPORTED, shape=shape)(x)
    assert calls
    error = np.abs(out - _reference(x)) / np.maximum(1.0, np.abs(x))
    assert error.max() <= 2e-7


def test_float64_gelu_keeps_the_generic_chain(run, rng, monkeypatch):
    from fw_edge.kernels import pointwise

    monkeypatch.setattr(pointwise._gelu, "gelu", lambda *a: pytest.fail("float32 kernel ran"))
    x = rng.standard_normal((4, 9)) * 3
    out = _program(run, *_EXPORTED, dtype="float64", shape=(4, 9))(x)
    np.testing.assert_allclose(out, _reference(x), rtol=1e-14, atol=1e-300)
