"""fw_cpu.vector_math: the vectorised float32 erf / GELU / sigmoid / tanh / exp formulas against a
float64 SciPy reference, over dense samples of the whole float32 range (tails, subnormals,
+-inf, NaN), through the eager kernels and through generated fused loops."""

import math

import numpy as np
import pytest
import scipy.special as sp

from fw_core.ops import registry, scalar
from fw_cpu import plugin, vector_math
from fw_cpu.fusion import render, rules
from tests.fw_core.compile.test_passes import Build
from tests.fw_cpu.test_fusion import group_of

SPECIAL = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, 3.4e38, -3.4e38])


def samples() -> np.ndarray:
    """Every 4099th float32 bit pattern (both signs, all exponents), a dense grid over [-20, 20]
    where the formulas switch pieces, and the special values."""
    bits = np.arange(0, 2**32, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)
    grid = np.linspace(-20, 20, 400_001, dtype=np.float32)
    return np.concatenate([bits[np.isfinite(bits)], grid, SPECIAL])


X = samples()
#: fw_cpu's own kernels (a plugin such as fw_onednn may serve some of these calls before it)
KERNELS = {spec.op: spec.fn for spec in plugin.fw_register_kernels()}


def reference(name: str, x: np.ndarray) -> np.ndarray:
    d = x.astype(np.float64)
    with np.errstate(all="ignore"):
        return {"erf": lambda: sp.erf(d), "sigmoid": lambda: sp.expit(d),
                "tanh": lambda: np.tanh(d), "exp": lambda: np.exp(d),
                "gelu": lambda: d * sp.ndtr(d),
                "gelu_tanh": lambda: d * sp.expit(2 * math.sqrt(2 / math.pi) *
                                                  (d + 0.044715 * d * d * d))}[name]()


def assert_close(got: np.ndarray, x: np.ndarray, name: str):
    """Within 1 float32 ulp of the float64 reference (the formulas round once from float64),
    and NaN exactly where the reference is NaN."""
    want = reference(name, x)
    assert got.dtype == np.float32 and got.shape == x.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
    finite = ~np.isnan(want)
    want32 = want[finite].astype(np.float32)
    assert np.array_equal(np.isinf(got[finite]), np.isinf(want32)), name
    ulp = np.maximum(np.spacing(np.abs(want32)).astype(np.float64), 2.0 ** -149)
    with np.errstate(invalid="ignore"):
        err = np.abs(got[finite].astype(np.float64) - want[finite]) / ulp
    err[np.isinf(want32)] = 0
    worst = int(np.argmax(err))
    assert err[worst] <= 1.0, (name, x[finite][worst], got[finite][worst], want[finite][worst])


EAGER = [("erf", {}), ("sigmoid", {}), ("gelu", {"approximate": "none"}),
         ("gelu", {"approximate": "tanh"})]
OPS = EAGER + [("tanh", {})]  # eager tanh stays NumPy's (SIMD already)


def ref_name(name, attrs):
    return "gelu_tanh" if attrs.get("approximate") == "tanh" else name


@pytest.mark.parametrize("name, attrs", EAGER)
def test_eager_kernel_is_within_an_ulp_everywhere(name, attrs):
    kernel = KERNELS[name]
    got = kernel(X, **attrs)
    assert_close(got, X, ref_name(name, attrs))


@pytest.mark.parametrize("name, attrs", EAGER)
def test_eager_kernel_keeps_shape_and_small_arrays_keep_scipy(name, attrs):
    kernel = KERNELS[name]
    block = X[: 3 * vector_math.MIN_ELEMENTS].reshape(3, 4, -1)[:, ::2]  # strided, 3-d
    assert_close(kernel(block, **attrs), block, ref_name(name, attrs))
    small = np.float32([-1.5, -0.5, 0.0, 0.5, 3.0])  # the float32 SciPy formulas (no tails)
    np.testing.assert_allclose(kernel(small, **attrs), reference(ref_name(name, attrs), small),
                               rtol=2e-6)
    x64 = X[:100_000].astype(np.float64)  # float64 keeps SciPy / NumPy exactly
    if name == "gelu":
        return
    want = {"erf": sp.erf, "sigmoid": sp.expit}[name](x64)
    np.testing.assert_array_equal(kernel(x64), want)


@pytest.mark.parametrize("name, attrs", OPS + [("exp", {})])
def test_fused_loop_is_within_an_ulp_everywhere(name, attrs):
    b = Build()
    x = b.leaf(X)
    node = b.node(name, x, **attrs)
    group = group_of(b, [node], [node])
    kernel = {rule.name: rule for rule in rules.rules()}["cpu.numba_pointwise"].generate(group)
    (got,) = kernel(X)
    assert_close(got, X, ref_name(name, attrs))


def test_fused_gelu_backward_matches_the_unfused_graph():
    """The GELU VJP's chain (erf, exp, muls and adds) as one generated loop."""
    rng = np.random.default_rng(0)
    b = Build()
    x = b.leaf(rng.standard_normal((64, 128)).astype(np.float32) * 4)
    g = b.leaf(rng.standard_normal((64, 128)).astype(np.float32))
    cdf = b.node("mul", b.node("add", b.node("erf", b.node("mul", x, 1 / math.sqrt(2))), 1.0), 0.5)
    pdf = b.node("mul", b.node("exp", b.node("mul", b.node("mul", x, x), -0.5)),
                 1 / math.sqrt(2 * math.pi))
    out = b.node("mul", g, b.node("add", cdf, b.node("mul", x, pdf)))
    nodes = [s.out for s in b.graph.steps]
    kernel = {rule.name: rule for rule in rules.rules()}["cpu.numba_pointwise"].generate(
        group_of(b, nodes, [out]))
    (got,) = kernel(*[b.graph.samples[v.index] for v in (x, g)])
    np.testing.assert_allclose(got, b.graph.samples[out.index], rtol=1e-5, atol=1e-6)


def test_float32_formulas_render_as_plain_vectorisable_text():
    """No libm call in these ops' float32 loops: only arithmetic, comparisons and
    np.abs/copysign, computed in float64."""
    for name, attrs in OPS + [("exp", {})]:
        expr = scalar.formula(registry.get(name), attrs, 1)
        text = "\n".join(render.statements(expr, ["x0"], np.dtype(np.float32), "v"))
        assert "np.float64(x0)" in text, name
        for call in ("math.", "np.exp", "np.tanh", "np.log"):
            assert call not in text, (name, call)
