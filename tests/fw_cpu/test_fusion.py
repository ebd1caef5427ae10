"""The CPU fusion code generator: every op it fuses against its unfused kernel, broadcasting,
reductions, contraction epilogues, ``out=`` buffers and the kernel caches."""

import glob
import os
import sys

import numpy as np
import pytest

from fw_core.compile import epilogue
from fw_core.compile.ir import Group
from fw_core.compile.passes import fuse as fuse_pass
from fw_cpu.fusion import codegen, loader, rules
from tests.fw_core.compile.test_passes import Build

UNARY = [("neg", {}), ("abs", {}), ("sign", {}), ("exp", {}), ("log", {}), ("log1p", {}),
         ("expm1", {}), ("sqrt", {}), ("rsqrt", {}), ("square", {}), ("reciprocal", {}),
         ("sin", {}), ("cos", {}), ("tanh", {}), ("sigmoid", {}), ("erf", {}), ("relu", {}),
         ("silu", {}), ("mish", {}), ("floor", {}), ("ceil", {}), ("isnan", {}), ("isinf", {}),
         ("logical_not", {}), ("clone", {}), ("gelu", {"approximate": "none"}),
         ("gelu", {"approximate": "tanh"}), ("softplus", {"beta": 2.0, "threshold": 5.0}),
         ("leaky_relu", {"negative_slope": 0.1}), ("elu", {"alpha": 1.5}),
         ("hardtanh", {"min_val": -1.0, "max_val": 0.5}), ("clamp", {"min": -0.5, "max": None}),
         ("tan", {}), ("log2", {}), ("log10", {}), ("trunc", {}), ("frac", {})]
RULES = {rule.name: rule for rule in rules.rules()}
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "eq", "ne", "lt", "le", "gt",
          "ge", "logical_and", "logical_or"]


def data(shape, dtype, seed=0):
    """Random values with the awkward ones mixed in: 0, +-inf, nan, negatives."""
    values = np.random.default_rng(seed).standard_normal(shape) * 3
    flat = values.reshape(-1)
    flat[:4] = [0.0, np.inf, -np.inf, np.nan][: flat.size]
    return values.astype(dtype)


def finite(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def tolerance(dtype):
    return {"rtol": 1e-5, "atol": 1e-6} if np.dtype(dtype) == np.float32 else \
        {"rtol": 1e-10, "atol": 1e-12}


def group_of(b, nodes, outputs):
    """A Group of ``nodes`` (steps of builder ``b``) with these outputs."""
    steps = [s for s in b.graph.steps if s.out in nodes]
    defined = {s.out.index for s in steps}
    inputs = list(dict.fromkeys(v for s in steps for v in s.reads if v.index not in defined))
    return Group(steps, inputs, list(outputs))


def check(b, group, dtype, out=None):
    """Run the generated kernel on the builder's samples and compare with the unfused ones."""
    kernel = RULES["cpu.blas_epilogue" if epilogue.heads(group.nodes[0], "cpu")
                   else "cpu.numba_pointwise"].generate(group)
    assert kernel is not None, [n.op.name for n in group.nodes]
    results = kernel(*[b.graph.samples[v.index] for v in group.inputs], out=out)
    assert len(results) == len(group.outputs)
    for got, value in zip(results, group.outputs):
        want = b.graph.samples[value.index]
        assert got.shape == want.shape and got.dtype == want.dtype, value
        np.testing.assert_allclose(got, want, **tolerance(dtype), equal_nan=True,
                                   err_msg=repr(value.producer))
    return kernel, results


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_unary_op_matches_its_kernel(dtype):
    b = Build()
    x = b.leaf(data((6, 7), dtype))
    outs = [b.node(name, x, **attrs) for name, attrs in UNARY]
    check(b, group_of(b, outs, outs), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_binary_op_matches_its_kernel_under_broadcasting(dtype):
    b = Build()
    x = b.leaf(data((3, 4, 5), dtype))
    row, column = b.leaf(data((5,), dtype, 1)), b.leaf(data((3, 1, 1), dtype, 2))
    outs = [b.node(name, x, row) for name in BINARY] + \
        [b.node(name, column, x) for name in BINARY] + [b.node(name, x, 0.5) for name in BINARY]
    base = b.leaf(finite((3, 4, 5), 3).astype(dtype))
    # (NumPy's float32 pow(-inf, 0.5) is nan where C's powf, which Numba calls, says inf)
    outs += [b.node("pow", base, row), b.node("pow", base, 2.0), b.node("pow", 2.0, base)]
    mask = b.node("gt", x, 0.0)
    outs += [mask, b.node("where", mask, x, 0.0), b.node("where", mask, row, column)]
    check(b, group_of(b, outs, outs), dtype)


def test_integer_and_bool_chains():
    b = Build()
    x, y = b.leaf(np.arange(-6, 6, dtype=np.int32).reshape(3, 4)), b.leaf(np.int32([2, -3, 0, 7]))
    s = b.node("mul", b.node("add", x, y), 3)
    outs = [s, b.node("maximum", s, x), b.node("neg", b.node("abs", s)), b.node("ge", s, y),
            b.node("logical_not", b.node("eq", x, 0))]
    check(b, group_of(b, [s, *outs], outs), np.int32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduce", [
    ("sum", {"dim": None, "keepdim": False}), ("sum", {"dim": (2,), "keepdim": True}),
    ("mean", {"dim": (0, 1), "keepdim": False}), ("mean", {"dim": (1,), "keepdim": True}),
    ("sum_to", {"shape": (5,)}), ("sum_to", {"shape": (4, 1)})])
def test_a_trailing_reduction_matches_numpy(dtype, reduce):
    b = Build()
    x, bias = b.leaf(data((3, 4, 5), dtype)[..., ::-1] * 1e-3 + 1), b.leaf(data((5,), dtype, 1))
    h = b.node("mul", b.node("add", x, bias), x)
    total = b.node(reduce[0], h, **reduce[1])
    check(b, group_of(b, [h.producer.inputs[0], h, total], [h, total]), dtype)


def test_layer_norm_and_adam_style_chains():
    b = Build()
    x = b.leaf(data((8, 16), np.float32)[:, ::-1])  # a non-contiguous input
    mean, rstd = b.leaf(data((8, 1), np.float32, 1)), b.leaf(np.abs(data((8, 1), np.float32, 2)))
    weight, shift = b.leaf(data((16,), np.float32, 3)), b.leaf(data((16,), np.float32, 4))
    norm = b.node("add", b.node("mul", b.node("mul", b.node("sub", x, mean), rstd), weight), shift)
    check(b, group_of(b, [s.out for s in b.graph.steps], [norm]), np.float32)
    a = Build()
    p, g = a.leaf(data((40,), np.float32)), a.leaf(data((40,), np.float32, 1))
    m, v = a.leaf(data((40,), np.float32, 2)), a.leaf(np.abs(data((40,), np.float32, 3)))
    m2 = a.node("add", a.node("mul", m, 0.9), a.node("mul", g, 0.1))
    v2 = a.node("add", a.node("mul", v, 0.999), a.node("mul", a.node("square", g), 0.001))
    step = a.node("div", m2, a.node("add", a.node("sqrt", v2), 1e-8))
    p2 = a.node("sub", p, a.node("mul", step, 1e-3))
    check(a, group_of(a, [s.out for s in a.graph.steps], [m2, v2, p2]), np.float32)


def _linear_gelu(batch=4):
    b = Build()
    x, w, bias = b.leaf(finite((batch, 6))), b.leaf(finite((5, 6), 1)), b.leaf(finite((5,), 2))
    product = b.node("linear", x, w)
    out = b.node("gelu", b.node("add", product, bias), approximate="tanh")
    return b, product, out


def test_a_linear_epilogue_runs_in_place_on_the_product():
    b, product, out = _linear_gelu()
    kernel, (result,) = check(b, group_of(b, [s.out for s in b.graph.steps], [out]), np.float32)
    assert kernel.in_place and result.flags.c_contiguous


def test_a_product_used_outside_stays_intact():
    b, product, out = _linear_gelu()
    kernel, (first, second) = check(
        b, group_of(b, [s.out for s in b.graph.steps], [product, out]), np.float32)
    assert not kernel.in_place and not np.shares_memory(first, second)


def test_a_conv_with_bias_and_relu():
    b = Build()
    x, w = b.leaf(finite((2, 3, 6, 6))), b.leaf(finite((4, 3, 3, 3), 1))
    bias = b.leaf(finite((4, 1, 1), 2))
    conv = b.node("conv2d", x, w, None, stride=(1, 1), padding=((1, 1), (1, 1)), dilation=(1, 1),
                  groups=1)
    out = b.node("relu", b.node("add", conv, bias))
    check(b, group_of(b, [s.out for s in b.graph.steps], [out]), np.float32)


def test_out_buffers_are_written_and_returned():
    b = Build()
    x, y = b.leaf(data((5, 3), np.float32)), b.leaf(data((3,), np.float32, 1))
    h = b.node("mul", x, y)
    total = b.node("sum", h, dim=(1,), keepdim=False)
    buffers = (np.empty((5, 3), np.float32), np.empty((5,), np.float32))
    _, results = check(b, group_of(b, [h, total], [h, total]), np.float32, out=buffers)
    assert all(r is buf for r, buf in zip(results, buffers))


def test_the_parallel_variant_agrees(monkeypatch):
    b = Build()
    x, y = b.leaf(data((64, 33), np.float32)), b.leaf(data((33,), np.float32, 1))
    h = b.node("exp", b.node("mul", x, y))
    total = b.node("mean", h, dim=(1,), keepdim=False)
    group = group_of(b, [h.producer.inputs[0], h, total], [h, total])
    module = sys.modules[codegen.generate(group).__module__]
    monkeypatch.setattr(module, "PARALLEL_MIN", 1)
    monkeypatch.setattr(module, "PARALLEL_OK", True)
    check(b, group, np.float32)


def test_unsupported_groups_are_declined():
    b = Build()
    x = b.leaf(data((4, 4), np.float16))
    h = b.node("exp", b.node("neg", x))
    assert codegen.generate(group_of(b, [h.producer.inputs[0], h], [h])) is None
    c = Build()
    y = c.leaf(data((4, 4), np.float32))
    r = c.node("remainder", c.node("neg", y), 2.0)
    assert not RULES["cpu.numba_pointwise"].supports(r.producer)


def test_kernels_are_reused_across_sizes_and_cached_on_disk():
    kernels = []
    for batch in (4, 9):
        b, _, out = _linear_gelu(batch)
        b.graph.outputs = [out]
        before = fuse_pass.kernel_cache_info()
        [group] = fuse_pass.fuse(b.graph, rules.rules(), lambda *a: True)
        kernels.append(group.kernel)
        after = fuse_pass.kernel_cache_info()
    assert after["misses"] == before["misses"] and after["hits"] == before["hits"] + 1
    assert kernels[0] is kernels[1]
    source = sys.modules[kernels[0].loop.__module__].__file__
    assert os.path.dirname(source) == str(loader.cache_dir()) and os.path.exists(source)
    name = os.path.basename(source)[:-3]
    root = os.environ.get("NUMBA_CACHE_DIR") or os.path.dirname(source)
    assert glob.glob(os.path.join(root, "**", f"{name}*.nbi"), recursive=True)
