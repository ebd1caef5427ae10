"""The CUDA fusion code generator, checked without a GPU.

For hand-built groups (ir.Value / Node / Group over real fw ops):

- the generated source compiles with ``nvcc -arch=sm_90 -cubin``; ptxas's registers and spills
  are printed and written to ``test-artifacts/fw_cuda/ptxas.json``;
- the very same kernel source runs on the host: compiled with ``g++ -x c++`` under a few macros
  (``__global__`` empty, one block of one thread, ``__syncthreads()`` a no-op) so its loops walk
  every element serially, and its outputs are compared with the ops' CPU kernels run node by
  node. That checks each op's C expression, the broadcasting offsets and the reduction indexing
  with the text the GPU would compile, not a Python re-implementation of it.
"""

from __future__ import annotations

import json
import pathlib
import sys

import host_cuda
import numpy as np
import pytest

import fw_core as fw
from fw_core.compile.ir import Graph, Group, Node, Value
from fw_core.compile.passes.fuse import fuse

try:
    from fw_cuda import fusion, nvcc
except ImportError:  # fw_cuda not installed yet: use the repository's folder
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from fw_cuda import fusion, nvcc

ARTIFACTS = pathlib.Path(__file__).resolve().parents[2] / "test-artifacts" / "fw_cuda"


class Builder:
    """Builds a graph by running each op's CPU kernel on sample arrays (for shapes, dtypes and
    the reference results)."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.inputs: list[Value] = []
        self.nodes: list[Node] = []
        self.arrays: dict[int, np.ndarray] = {}
        self.count = 0

    def _value(self, array, source, payload=None) -> Value:
        v = Value(self.count, array.shape, array.dtype, source, payload)
        self.count += 1
        self.arrays[v.index] = array
        return v

    def input(self, shape, dtype="float32", low=-2.0, high=2.0) -> Value:
        if np.dtype(dtype) == np.bool_:
            array = self.rng.random(shape) > 0.5
        else:
            array = self.rng.uniform(low, high, shape).astype(dtype)
        v = self._value(np.asarray(array), "input", len(self.inputs))
        self.inputs.append(v)
        return v

    def op(self, name, *args, **attrs) -> Value:
        op = fw.ops.get(name)
        raw = [self.arrays[a.index] if isinstance(a, Value) else a for a in args]
        out = self._value(np.asarray(op.kernels["cpu"](*raw, **attrs)), "node")
        node = Node(op, tuple(args), attrs, out, "test", "forward")
        out.producer = node
        self.nodes.append(node)
        return out

    def group(self, *outputs: Value) -> Group:
        return Group(list(self.nodes), list(self.inputs), list(outputs))


def _gelu_chain(b):
    x, w = b.input((4, 33)), b.input((33,))
    return b.group(b.op("gelu", b.op("add", x, w), approximate="none"))


def _softmaxish(b):
    x = b.input((5, 7), "float64")
    e = b.op("exp", b.op("sub", x, 0.5))
    return b.group(e, b.op("sum", e, dim=(1,), keepdim=True))


def _mean_rows(b):
    x, y = b.input((6, 9)), b.input((6, 1))
    return b.group(b.op("mean", b.op("mul", b.op("tanh", x), y), dim=(1,), keepdim=False))


def _bias_grad(b):
    g, m = b.input((3, 4, 8)), b.input((3, 4, 8), "bool")
    return b.group(b.op("sum_to", b.op("where", m, g, 0.0), shape=(8,)))


def _full_sum(b):
    x = b.input((300,), low=0.1, high=3.0)
    return b.group(b.op("sum", b.op("rsqrt", b.op("sqrt", x)), dim=None, keepdim=False))


def _activations(b):
    x = b.input((2, 3, 5))
    b.arrays[x.index][0, 1, :2] = (np.nan, np.inf)  # maximum / minimum / relu propagate NaN
    s = b.op("sigmoid", x)
    r = b.op("relu", b.op("neg", x))
    t = b.op("gelu", x, approximate="tanh")
    m = b.op("maximum", b.op("minimum", s, r), t)
    high, low = b.op("maximum", x, 0.25), b.op("minimum", 0.25, x)  # one operand NaN
    return b.group(m, b.op("div", b.op("erf", m), 3.0), high, low, r)


def _compare_cast(b):
    x, y = b.input((4, 6)), b.input((4, 6))
    c = b.op("gt", x, y)
    d = b.op("lt", x, 0.25)
    e = b.op("eq", c, d)
    f = b.op("cast", e, dtype=np.dtype("float32"))
    return b.group(b.op("where", c, b.op("pow", b.op("add", f, 2.0), 2.5), b.op("log", y)))


GROUPS = {"gelu_bias": _gelu_chain, "exp_rowsum_f64": _softmaxish, "tanh_mul_mean": _mean_rows,
          "where_sum_to": _bias_grad, "rsqrt_full_sum": _full_sum,
          "activations": _activations, "compare_cast_pow": _compare_cast}


def _build(name):
    b = Builder()
    return b, GROUPS[name](b)


def _host_run(tmp_path, group, arrays):
    """Run the kernel source on the host (one thread) and return its output arrays."""
    kernel = fusion.generate(group)
    full, shapes = kernel.shapes([a.shape for a in arrays])
    n_red = int(np.prod([s for s, r in zip(full, kernel.reduced) if r]))
    n_out = int(np.prod([s for s, r in zip(full, kernel.reduced) if not r]))
    outputs = [(v.dtype, shape) for v, shape in zip(group.outputs, shapes)]
    scalars = [f"{s}LL" for s in full] + [f"{n_out}LL", f"{n_red}LL"]
    return host_cuda.run(tmp_path, kernel.source, fusion.NAME, arrays, outputs, scalars)


@pytest.mark.skipif(not host_cuda.HAS_GXX, reason="g++ is not installed")
@pytest.mark.parametrize("name", sorted(GROUPS))
def test_kernel_source_matches_cpu_kernels_on_the_host(name, tmp_path):
    b, group = _build(name)
    got = _host_run(tmp_path, group, [b.arrays[v.index] for v in group.inputs])
    for value, array in zip(group.outputs, got):
        want = b.arrays[value.index]
        assert array.shape == want.shape and array.dtype == want.dtype
        tol = 1e-5 if value.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(array, want, rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.skipif(nvcc.nvcc_path() is None, reason="nvcc is not installed")
def test_sources_compile_for_sm90_and_ptxas_figures_are_recorded():
    figures = {}
    for name in sorted(GROUPS):
        _, group = _build(name)
        report = nvcc.compile_cubin(fusion.source(group))
        assert list(report) == [fusion.NAME]
        figures[name] = report[fusion.NAME]
        assert figures[name]["arch"] == "sm_90" and figures[name]["registers"] > 0
    for name, f in figures.items():
        print(f"{name}: {f['registers']} registers, spills {f['spill_stores']}/"
              f"{f['spill_loads']} bytes, stack {f['stack_frame']} bytes")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "ptxas.json").write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n")
    assert all(f["spill_stores"] == 0 and f["spill_loads"] == 0 for f in figures.values())


@pytest.mark.skipif(nvcc.nvcc_path() is None, reason="nvcc is not installed")
def test_compile_errors_carry_nvcc_diagnostics():
    with pytest.raises(fw.errors.FwError, match="nvcc failed"):
        nvcc.compile_cubin('extern "C" __global__ void broken() { undefined_name; }')


def test_parse_ptxas_report():
    report = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'fw_fused' for 'sm_90'
ptxas info    : Function properties for fw_fused
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem, 420 bytes cmem[0]
"""
    assert nvcc.parse_ptxas(report) == {"fw_fused": {
        "arch": "sm_90", "registers": 40, "stack_frame": 8, "spill_stores": 4,
        "spill_loads": 12}}


def test_generation_needs_no_cupy_and_caches_by_signature(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` would now fail
    fusion._cache.clear()
    _, small = _build("gelu_bias")
    kernel = fusion.generate(small)
    b = Builder()
    x, w = b.input((64, 33)), b.input((33,))
    larger = b.group(b.op("gelu", b.op("add", x, w), approximate="none"))
    assert fusion.generate(larger) is kernel  # sizes are not part of the signature
    assert kernel.shapes([(64, 33), (33,)]) == ((64, 33), [(64, 33)])
    with pytest.raises(ImportError):
        kernel(b.arrays[x.index], b.arrays[w.index])


def test_output_shapes_follow_the_reduction():
    _, group = _build("tanh_mul_mean")
    assert fusion.generate(group).shapes([(10, 9), (10, 1)]) == ((10, 9), [(10,)])
    _, group = _build("exp_rowsum_f64")
    assert fusion.generate(group).shapes([(2, 7)]) == ((2, 7), [(2, 7), (2, 1)])
    _, group = _build("where_sum_to")
    assert fusion.generate(group).shapes([(9, 4, 8), (9, 4, 8)])[1] == [(8,)]


def test_unsupported_groups_are_left_unfused():
    b = Builder()
    x = b.input((4, 4), "float16")
    assert fusion.generate(b.group(b.op("exp", b.op("neg", x)))) is None
    b = Builder()
    i = b.input((4,), "int32")
    assert fusion.generate(b.group(b.op("exp", b.op("neg", i)))) is None  # float-only op
    assert not fusion.supports(b.nodes[1])


def test_literals_are_typed_c():
    assert fusion.literal(0.5, "float") == "0.5f" and fusion.literal(2, "double") == "2.0"
    assert fusion.literal(float("-inf"), "float") == "(-1.0f / 0.0f)"
    assert fusion.literal(3, "long long") == "((long long)3LL)"
    assert fusion.literal(1, "bool") == "true"


def test_rules_record():
    (rule,) = fusion.RULES
    assert rule.device == "cuda" and rule.generate is fusion.generate
    assert fw.records.Structure.REDUCTION in rule.structures


def test_core_fusion_pass_groups_and_generates_with_the_registered_rule():
    b = Builder()
    x, w = b.input((8, 16)), b.input((16,))
    h = b.op("relu", b.op("add", x, w))
    total = b.op("sum", b.op("mul", h, h), dim=(1,), keepdim=False)
    graph = Graph()
    graph.values, graph.inputs, graph.steps = [], [x, w], list(b.nodes)
    graph.outputs = [h, total]
    rules = fw.plugins.fusion_rules("cuda") or fusion.RULES
    (group,) = fuse(graph, rules)  # no samples: kept unmeasured, nothing runs
    assert group.rule.name == "cuda.rawkernel_pointwise"
    assert isinstance(group.kernel, fusion.CudaKernel)
    assert [v.index for v in group.outputs] == [h.index, total.index]
    assert graph.steps == [group]
