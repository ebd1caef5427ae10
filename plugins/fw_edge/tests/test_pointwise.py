"""pointwise formulas and the erf behind GELU, against NumPy and math."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fwm_writer import Builder


def _formula(run, arrays, steps, result, dtype, shape, compute=None):
    b = Builder()
    ids = [b.input(f"x{i}", a.dtype, a.shape) for i, a in enumerate(arrays)]
    b.output(b.pointwise(ids, steps, result, dtype, shape, compute), "output")
    return run(b)(*arrays)


def test_relu_is_maximum_with_zero(run, rng):
    x = rng.standard_normal((3, 5)).astype(np.float32)
    out = _formula(run, [x], [["maximum", ["arg", 0], ["const", 0.0]]], ["step", 0],
                   "float32", [3, 5])
    np.testing.assert_array_equal(out, np.maximum(x, 0))


def test_gelu_formula_matches_math_erf(run, rng):
    x = rng.standard_normal((4, 7)) * 3
    steps = [["mul", ["arg", 0], ["const", 1 / math.sqrt(2)]], ["erf", ["step", 0]],
             ["add", ["step", 1], ["const", 1.0]], ["mul", ["arg", 0], ["step", 2]],
             ["mul", ["step", 3], ["const", 0.5]]]
    out = _formula(run, [x], steps, ["step", 4], "float64", [4, 7])
    ref = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.ravel()])
    np.testing.assert_allclose(out.ravel(), ref, rtol=1e-14, atol=1e-300)


def test_broadcast_where_and_comparison_give_bool_steps(run, rng):
    x = rng.standard_normal((2, 3)).astype(np.float32)
    y = rng.standard_normal(3).astype(np.float32)
    steps = [["gt", ["arg", 0], ["arg", 1]], ["mul", ["arg", 0], ["const", 0.1]],
             ["where", ["step", 0], ["arg", 0], ["step", 1]]]
    out = _formula(run, [x, y], steps, ["step", 2], "float32", [2, 3])
    np.testing.assert_allclose(out, np.where(x > y, x, x * np.float32(0.1)), rtol=1e-6)


def test_comparison_result_is_bool(run):
    x = np.array([1.0, 2.0, 3.0], np.float32)
    out = _formula(run, [x], [["ge", ["arg", 0], ["const", 2.0]]], ["step", 0], "bool", [3],
                   compute="float32")
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, [False, True, True])


def test_inputs_cast_to_compute_dtype_and_result_rounded(run):
    x = np.array([1, 2, 3], np.int64)
    y = np.array([0.5, 0.25, 0.125], np.float32)
    out = _formula(run, [x, y], [["div", ["arg", 0], ["arg", 1]]], ["step", 0], "float16",
                   [3], compute="float32")
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, np.array([2.0, 8.0, 24.0], np.float16))


def test_cast_is_a_formula_without_steps(run):
    x = np.array([1.7, -2.2, 3.9])
    out = _formula(run, [x], [], ["arg", 0], "int32", [3], compute="int32")
    np.testing.assert_array_equal(out, x.astype(np.int32))


@pytest.mark.parametrize("name, ref", [("exp", np.exp), ("tanh", np.tanh), ("sqrt", np.sqrt),
                                       ("log1p", np.log1p), ("neg", np.negative),
                                       ("floor", np.floor), ("sign", np.sign),
                                       ("isnan", np.isnan)])
def test_unary_primitives(run, rng, name, ref):
    x = np.abs(rng.standard_normal(9)).astype(np.float32)
    dtype = "bool" if name == "isnan" else "float32"
    out = _formula(run, [x], [[name, ["arg", 0]]], ["step", 0], dtype, [9], compute="float32")
    np.testing.assert_allclose(out, ref(x), rtol=1e-6)


def test_many_steps_reuse_working_arrays(run, rng):
    x = rng.standard_normal(6).astype(np.float32)
    steps = [["mul", ["arg", 0], ["arg", 0]], ["add", ["step", 0], ["const", 1.0]],
             ["sqrt", ["step", 1]], ["sub", ["step", 2], ["arg", 0]],
             ["pow", ["step", 3], ["const", 2.0]]]
    out = _formula(run, [x], steps, ["step", 4], "float32", [6])
    np.testing.assert_allclose(out, (np.sqrt(x * x + 1) - x) ** 2, rtol=1e-6)


def test_erf_and_erfc_match_math_to_1e_15():
    from fw_edge.kernels.erf import erf, erfc

    x = np.concatenate([np.linspace(-8, 8, 20001), [0.0, -0.0, 0.5, -0.5, 4.0, 26.0, 27.5,
                                                     np.inf, -np.inf, 1e-300]])
    ref = np.array([math.erf(v) for v in x])
    refc = np.array([math.erfc(v) for v in x])
    np.testing.assert_allclose(erf(x), ref, rtol=1e-15, atol=1e-300)
    np.testing.assert_allclose(erfc(x), refc, rtol=2e-15, atol=1e-300)
    assert np.isnan(erf(np.array([np.nan]))[0]) and np.isnan(erfc(np.array([np.nan]))[0])


def test_where_on_a_bool_input_cast_to_the_compute_dtype(run, rng):
    mask = np.array([True, False, True])
    x = rng.standard_normal(3).astype(np.float32)
    out = _formula(run, [mask, x], [["where", ["arg", 0], ["arg", 1], ["const", -1.0]]],
                   ["step", 0], "float32", [3])
    np.testing.assert_array_equal(out, np.where(mask, x, np.float32(-1)))


def test_float32_erf_and_erfc_keep_float32_precision():
    from fw_edge.kernels.erf import erf, erfc

    x = np.concatenate([np.linspace(-9, 9, 40001), [0.0, 1e-30, -1e-7, np.inf, -np.inf]])
    x = x.astype(np.float32)
    ref = np.array([math.erf(float(v)) for v in x])
    refc = np.array([math.erfc(float(v)) for v in x])
    got, gotc = erf(x, np.empty_like(x)), erfc(x, np.empty_like(x))
    assert got.dtype == gotc.dtype == np.float32
    ulp = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    assert (np.abs(got - ref) / ulp).max() <= 3  # the fit is within 2 ulps, plus rounding
    tail = refc > 1e-37
    assert (np.abs(gotc - refc)[tail] / refc[tail]).max() < 3e-7  # relative, deep in the tail
    nan = np.array([np.nan], np.float32)
    assert np.isnan(erf(nan)[0]) and np.isnan(erfc(nan)[0])


@pytest.mark.parametrize("shape, block", [((2, 3, 4), 8), ((5, 4), 8), ((7,), 3), ((3, 1, 50), 16),
                                          ((4, 4), 100), ((2, 0, 3), 4)])
def test_blocks_cover_every_element_once(shape, block):
    from fw_edge.kernels import blocks

    seen = np.zeros(shape, np.int64)
    keys = blocks.cut(shape, block)
    for key in keys:
        assert seen[key].size <= max(block, shape[-1] if shape else 1)
        seen[key] += 1
    assert (seen == 1).all()
    parts = blocks.parts(keys)
    assert [k for part in parts for k in part] == keys and len(parts) <= blocks.THREADS


#: GELU as fw exports it, plus a chain with a broadcast input, a cast, a bool step and where
_CHAINS = [
    ([["mul", ["arg", 0], ["const", -1 / math.sqrt(2)]], ["mul", ["arg", 0], ["const", 0.5]],
      ["erfc", ["step", 0]], ["mul", ["step", 1], ["step", 2]]], ["step", 3]),
    ([["add", ["arg", 0], ["arg", 1]], ["gt", ["step", 0], ["arg", 2]], ["erf", ["step", 0]],
      ["where", ["step", 1], ["step", 2], ["arg", 1]], ["mul", ["step", 3], ["const", 2.0]]],
     ["step", 4]),
]


@pytest.mark.parametrize("chain", range(len(_CHAINS)))
@pytest.mark.parametrize("threads", [1, 2])
def test_blocked_formulas_match_the_whole_array_run(run, rng, monkeypatch, chain, threads):
    from fw_edge.kernels import blocks

    steps, result = _CHAINS[chain]
    x = rng.standard_normal((3, 5, 7)).astype(np.float32) * 3
    arrays = [x, rng.standard_normal(7).astype(np.float32), rng.integers(-1, 2, (5, 1))][
        :1 if chain == 0 else 3]
    whole = _formula(run, arrays, steps, result, "float32", [3, 5, 7])
    monkeypatch.setattr(blocks, "BLOCK", 9)  # blocks of one row of 7, in runs
    monkeypatch.setattr(blocks, "THREADS", threads)
    assert len(blocks.cut(x.shape)) > 1
    np.testing.assert_array_equal(_formula(run, arrays, steps, result, "float32", [3, 5, 7]),
                                  whole)
