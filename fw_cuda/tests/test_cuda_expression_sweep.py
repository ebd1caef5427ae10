"""Every op with a formula, rendered by the CUDA fusion generator in every dtype it accepts,
against the CPU kernels.

One group per dtype holds one node per op (all reading the same inputs, all outputs of the
group), so a single generated kernel, compiled once with g++ and run on the host, checks the C
that :mod:`fw_cuda.fusion.render` writes for every formula with NumPy's semantics: NaN and
infinity propagation, integer arithmetic, comparisons, casts, Python-scalar operands.
"""

from __future__ import annotations

import host_cuda
import numpy as np
import pytest
from cuda_fusion_groups import Builder, host_run, tolerance

from fw_core.ops.registry import OPS
from fw_cuda import fusion

needs_gxx = pytest.mark.skipif(not host_cuda.HAS_GXX, reason="g++ is not installed")

#: op -> (positional arguments by name, attrs); "x" may be any sign, "p" is positive
CALLS = {
    "add": (("x", "y"), {}), "sub": (("x", "y"), {}), "mul": (("x", "y"), {}),
    "div": (("x", "p"), {}), "neg": (("x",), {}), "exp": (("x",), {}), "log": (("p",), {}),
    "tanh": (("x",), {}), "sqrt": (("p",), {}), "erf": (("x",), {}), "sin": (("x",), {}),
    "cos": (("x",), {}), "abs": (("x",), {}), "log1p": (("p",), {}), "expm1": (("x",), {}),
    "rsqrt": (("p",), {}), "reciprocal": (("p",), {}), "square": (("x",), {}),
    "sigmoid": (("x",), {}), "silu": (("x",), {}), "relu": (("x",), {}),
    "leaky_relu": (("x",), {"negative_slope": 0.05}),
    "gelu": (("x",), {"approximate": "none"}), "pow": (("p", "y"), {}),
    "maximum": (("x", "y"), {}), "minimum": (("x", "y"), {}),
    "eq": (("x", "r"), {}), "ne": (("x", "r"), {}), "lt": (("x", "y"), {}),
    "le": (("x", "r"), {}), "gt": (("x", "y"), {}), "ge": (("x", "r"), {}),
    "logical_not": (("m",), {}), "where": (("w", "x", "y"), {}),
    "cast": (("x",), {"dtype": np.dtype("float64")}), "clone": (("x",), {}),
    "clamp": (("x",), {"min": -0.5, "max": 0.75}), "sign": (("x",), {}),
    "floor": (("x",), {}), "ceil": (("x",), {}), "isnan": (("x",), {}), "isinf": (("x",), {}),
    "logical_and": (("m", "x"), {}), "logical_or": (("w", "y"), {}), "mish": (("x",), {}),
    "softplus": (("x",), {"beta": 2.0, "threshold": 3.0}), "elu": (("x",), {"alpha": 0.5}),
    "hardtanh": (("x",), {"min_val": -0.25, "max_val": 2.0}), "tan": (("x",), {}),
    "log2": (("p",), {}), "log10": (("p",), {}), "trunc": (("x",), {}), "frac": (("x",), {}),
    "sinh": (("x",), {}), "cosh": (("x",), {}), "exp2": (("x",), {}),
}

SPECIAL = {"gelu": [{"approximate": "tanh"}], "clamp": [{"min": 0.1, "max": None}],
           "add": [{"scalar": 1.5}], "mul": [{"scalar": 3}]}


def test_every_formula_has_a_call():
    assert set(CALLS) == {name for name, op in OPS.items() if op.expr is not None}


def _inputs(b: Builder, dtype):
    """x (any sign, with NaN, +-inf and -0.0), y, p (positive), r (x in some rows: ties for
    eq/le/ge), m (a bool mask) and w (a bool column, broadcast)."""
    floats = np.dtype(dtype).kind == "f"
    x = b.input((3, 16), dtype, low=-3.0, high=3.0)
    if floats:
        b.arrays[x.index][0, :4] = (np.nan, np.inf, -np.inf, -0.0)
    y = b.input((3, 16), dtype, low=-3.0 if floats else 0.0, high=3.0)  # int ** -1 raises
    p = b.input((3, 16), dtype, low=0.25, high=2.0)
    r = b.input((3, 16), dtype)
    b.arrays[r.index][...] = b.arrays[x.index]
    b.arrays[r.index][1] = b.arrays[y.index][1]  # half the rows tie, half differ
    m = b.input((3, 16), "bool")
    w = b.input((3, 1), "bool")  # broadcast over columns
    return {"x": x, "y": y, "p": p, "r": r, "m": m, "w": w}


def _sweep(dtype):
    """(builder, group) with one node per op the generator accepts for ``dtype``."""
    b = Builder(seed=3)
    args = _inputs(b, dtype)
    outputs = []
    for name, (names, attrs) in CALLS.items():
        values = [args[n] for n in names]
        for variant in [attrs, *SPECIAL.get(name, [])]:
            variant = dict(variant)
            call = list(values)
            if "scalar" in variant:
                call[-1] = variant.pop("scalar")  # a Python scalar operand (weak typing)
            out = b.op(name, *call, **variant)
            if fusion.supports(b.nodes[-1]):
                outputs.append(out)
            else:
                b.nodes.pop()
    return b, b.group(*outputs)


@needs_gxx
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32"])
def test_every_op_matches_the_cpu_kernels(tmp_path, dtype):
    b, group = _sweep(dtype)
    kernel = fusion.generate(group)
    assert kernel is not None
    floats = np.dtype(dtype).kind == "f"
    assert len(group.outputs) >= (40 if floats else 17)
    got = host_run(tmp_path, kernel, group, [b.arrays[v.index] for v in group.inputs])
    for node, value, array in zip(b.nodes, group.outputs, got):
        want = b.arrays[value.index]
        assert array.dtype == want.dtype, node.op.name
        if array.dtype.kind == "f":
            np.testing.assert_allclose(array, want, equal_nan=True, err_msg=node.op.name,
                                       **tolerance(array.dtype))
        else:
            np.testing.assert_array_equal(array, want, err_msg=node.op.name)
