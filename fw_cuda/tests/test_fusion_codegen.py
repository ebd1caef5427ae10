"""The CUDA fusion code generator, checked without a GPU.

For hand-built groups (ir.Value / Node / Group over real fw ops, see ``cuda_fusion_groups``),
float32 / float64 / float16 alike:

- the generated source compiles with ``nvcc -arch=sm_90 -cubin``; ptxas's registers and spills
  are printed and written to ``test-artifacts/fw_cuda/ptxas.json``;
- the very same kernel source runs on the host: compiled with ``g++ -x c++`` under a few macros
  (``__global__`` empty, one block of one thread, ``__syncthreads()`` a no-op, ``__half`` as
  ``_Float16``) so its loops walk every element serially, and its outputs are compared with the
  ops' CPU kernels run node by node. That checks each op's C expression, the broadcasting
  offsets, the reduction indexing and the half roundings with the text the GPU would compile,
  not a Python re-implementation of it. The reduction groups run again as a block of eight host
  threads, so the shared-memory tree runs with its barriers and real interleaving.
"""

from __future__ import annotations

import json
import pathlib
import sys

import host_cuda
import numpy as np
import pytest
from cuda_fusion_groups import EXACT, GROUPS, Builder, build, host_run, tolerance

import fw_core as fw
from fw_core.compile.ir import Graph
from fw_core.compile.passes.fuse import fuse
from fw_cuda import fusion, nvcc
from fw_cuda.fusion import codegen


def kept_unmeasured(group) -> bool:
    """A fusion decision taken before: the pass keeps the group without timing it (there is no
    GPU here to run the unfused kernels on)."""
    return True

ARTIFACTS = pathlib.Path(__file__).resolve().parents[2] / "test-artifacts" / "fw_cuda"


@pytest.mark.skipif(not host_cuda.HAS_GXX, reason="g++ is not installed")
@pytest.mark.parametrize("name", sorted(GROUPS))
def test_kernel_source_matches_cpu_kernels_on_the_host(name, tmp_path):
    b, group = build(name)
    arrays = [b.arrays[v.index] for v in group.inputs]
    got = host_run(tmp_path, fusion.generate(group), group, arrays)
    for value, array in zip(group.outputs, got):
        want = b.arrays[value.index]
        assert array.shape == want.shape and array.dtype == want.dtype
        np.testing.assert_allclose(array, want, **tolerance(value.dtype, name in EXACT),
                                   equal_nan=True, err_msg=repr(value.producer))


@pytest.mark.skipif(not host_cuda.HAS_GXX, reason="g++ is not installed")
@pytest.mark.parametrize("name", ["exp_rowsum_f64", "half_mean", "half_rowsum", "where_sum_to"])
def test_reduction_trees_agree_when_the_block_has_eight_threads(name, tmp_path):
    b, group = build(name)
    arrays = [b.arrays[v.index] for v in group.inputs]
    got = host_run(tmp_path, fusion.generate(group), group, arrays, threads=8)
    for value, array in zip(group.outputs, got):
        np.testing.assert_allclose(array, b.arrays[value.index], **tolerance(value.dtype))


@pytest.mark.skipif(nvcc.nvcc_path() is None, reason="nvcc is not installed")
def test_sources_compile_for_sm90_and_ptxas_figures_are_recorded():
    figures = {}
    for name in sorted(GROUPS):
        _, group = build(name)
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
    codegen._cache.clear()
    _, small = build("gelu_bias")
    kernel = fusion.generate(small)
    b = Builder()
    x, w = b.input((64, 33)), b.input((33,))
    larger = b.group(b.op("gelu", b.op("add", x, w), approximate="none"))
    assert fusion.generate(larger) is kernel  # sizes are not part of the signature
    assert kernel.shapes([(64, 33), (33,)]) == ((64, 33), [(64, 33)])
    with pytest.raises(ImportError):
        kernel(b.arrays[x.index], b.arrays[w.index])


def test_output_shapes_follow_the_reduction():
    _, group = build("tanh_mul_mean")
    assert fusion.generate(group).shapes([(10, 9), (10, 1)]) == ((10, 9), [(10,)])
    _, group = build("exp_rowsum_f64")
    assert fusion.generate(group).shapes([(2, 7)]) == ((2, 7), [(2, 7), (2, 1)])
    _, group = build("where_sum_to")
    assert fusion.generate(group).shapes([(9, 4, 8), (9, 4, 8)])[1] == [(8,)]


def test_unsupported_groups_are_left_unfused():
    b = Builder()
    z = b.input((4, 4), "complex64")
    assert fusion.generate(b.group(b.op("exp", b.op("neg", z)))) is None  # no complex C type
    b = Builder()
    i = b.input((4,), "int32")
    assert fusion.generate(b.group(b.op("exp", b.op("neg", i)))) is None  # float-only op
    assert not fusion.supports(b.nodes[1])


def test_literals_are_typed_c():
    assert fusion.literal(0.5, "float") == "0.5f" and fusion.literal(2, "double") == "2.0"
    assert fusion.literal(float("-inf"), "float") == "(-1.0f / 0.0f)"
    assert fusion.literal(3, "long long") == "((long long)3LL)"
    assert fusion.literal(1, "bool") == "true"


def test_rules_records():
    epilogue, pointwise = fusion.RULES
    assert epilogue.name == "cuda.cublas_epilogue" and epilogue.priority > pointwise.priority
    assert pointwise.device == epilogue.device == "cuda" and pointwise.generate is fusion.generate
    assert fw.records.Structure.REDUCTION in pointwise.structures
    assert fw.records.Structure.CONTRACTION in epilogue.structures


def test_core_fusion_pass_groups_and_generates_with_the_registered_rule():
    b = Builder()
    x, w = b.input((8, 16)), b.input((16,))
    h = b.op("relu", b.op("add", x, w))
    total = b.op("sum", b.op("mul", h, h), dim=(1,), keepdim=False)
    graph = Graph()
    graph.values, graph.inputs, graph.steps = [], [x, w], list(b.nodes)
    graph.outputs = [h, total]
    rules = fw.plugins.fusion_rules("cuda") or fusion.RULES
    (group,) = fuse(graph, rules, known=kept_unmeasured)  # nothing runs on a GPU
    assert group.rule.name == "cuda.rawkernel_pointwise"
    assert isinstance(group.kernel, fusion.CudaKernel)
    assert [v.index for v in group.outputs] == [h.index, total.index]
    assert graph.steps == [group]
