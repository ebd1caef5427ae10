"""fw_core.ops.scalar: formulas as data, their NumPy meaning and what renderers read of them."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.ops import scalar
from fw_core.records import Structure

x, y = scalar.arg(0), scalar.arg(1)


def test_operators_build_primitives_and_numbers_become_constants():
    e = 1.0 - x * 2
    assert e == scalar.Expr("sub", (scalar.lift(1.0), scalar.Expr(
        "mul", (x, scalar.Expr("const", value=2)))))
    assert repr(scalar.where(scalar.gt(x, 0.0), x, -x)) == "where(gt(x0, 0.0), x0, neg(x0))"
    with pytest.raises(TypeError, match="formulas and Python numbers"):
        scalar.lift("0.5")


def test_schedule_computes_a_repeated_subformula_once():
    s = x * 0.5
    e = scalar.exp(s) + s * s
    steps = scalar.schedule(e)
    assert steps.count(s) == 1 and steps[0] == s and steps[-1] == e
    assert len(steps) == 4  # x * 0.5, exp, s * s, +
    assert scalar.schedule(x) == []


def test_integer_exactness_reads_primitives_and_constants():
    assert scalar.integer_exact(scalar.maximum(x, 0.0))
    assert scalar.integer_exact(scalar.where(scalar.lt(x, y), x * 3, -y))
    assert not scalar.integer_exact(x * 0.01)  # leaky_relu's slope on integers
    assert not scalar.integer_exact(x / y)
    assert not scalar.integer_exact(scalar.floor(x))


def test_boolean_and_transcendental():
    assert scalar.boolean(scalar.isnan(x)) and scalar.boolean(scalar.logical_and(x, y))
    assert scalar.boolean(scalar.where(y, scalar.lt(x, 1), scalar.gt(x, 2)))
    assert not scalar.boolean(scalar.where(y, x, 0.0)) and not scalar.boolean(x)
    assert scalar.transcendental(x * scalar.erfc(x)) and not scalar.transcendental(x / y)


def test_evaluate_keeps_the_compute_dtype_with_weak_constants():
    a = np.float32([0.1, -2.0, np.nan])
    got = scalar.evaluate(scalar.maximum(x * 0.1, 0.0), [a], np.float32)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.maximum(a * np.float32(0.1), np.float32(0)))
    erf = scalar.evaluate(scalar.erf(x), [np.float32([0.5])], np.float32)
    assert erf.dtype == np.float32 and abs(float(erf[0]) - 0.5204998778) < 1e-7
    ints = scalar.evaluate(x * 3 - y, [np.int32([7]), 2], np.int32)
    assert ints.dtype == np.int32 and ints.tolist() == [19]


def test_compute_dtype_of_bool_results_is_the_tested_values():
    f32, b = np.dtype(np.float32), np.dtype(bool)
    assert scalar.compute_dtype([f32], b) == f32  # isnan, gt
    assert scalar.compute_dtype([b, f32, f32], f32) == f32  # where
    assert scalar.compute_dtype([], b) == b


def test_formula_passes_attributes_as_keywords():
    leaky = scalar.formula(fw.ops.get("leaky_relu"), {"negative_slope": 0.2}, 1)
    assert leaky == scalar.where(scalar.gt(x, 0.0), x, x * 0.2)
    clamp = scalar.formula(fw.ops.get("clamp"), {"min": None, "max": 1.5}, 1)
    assert clamp == scalar.minimum(x, 1.5)
    assert scalar.formula(fw.ops.get("matmul"), {}, 2) is None


def test_only_elementwise_ops_declare_formulas():
    with_formula = [op for op in fw.OPS.values() if op.expr is not None]
    assert len(with_formula) >= 48
    assert all(op.structure in (Structure.ELEMENTWISE, Structure.BROADCAST)
               for op in with_formula)


def test_match_binds_holes_to_the_constants_of_a_formula():
    x = scalar.arg(0)
    leaky = scalar.where(scalar.gt(x, 0.0), x, x * scalar.hole("slope"))
    assert scalar.match(leaky, scalar.where(scalar.gt(x, 0.0), x, x * 0.1)) == {"slope": 0.1}
    assert scalar.match(leaky, scalar.where(scalar.gt(x, 0.0), x, x * x)) is None
    same = scalar.hole("c") * x + scalar.hole("c")
    assert scalar.match(same, 2.0 * x + 2.0) == {"c": 2.0}
    assert scalar.match(same, 2.0 * x + 3.0) is None  # one hole, one number
    assert scalar.match(scalar.exp(x), scalar.exp(x)) == {}
    assert scalar.calls(scalar.exp(x) + 1.0, "exp") and not scalar.calls(x + 1.0, "exp")
