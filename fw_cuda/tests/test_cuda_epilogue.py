"""``cuda.cublas_epilogue``: a contraction by the op's own cuda kernel, then ONE generated CUDA
kernel for its whole elementwise epilogue, checked without a GPU.

- the core fusion pass picks the rule for a linear + bias + gelu group;
- for linear / conv2d / bmm / matmul epilogues (float32, float64, float16) the epilogue
  subgroup's source compiles with nvcc (figures in ``test-artifacts/fw_cuda/ptxas_epilogue.json``)
  and, run on the host on the CPU kernel's product, matches the CPU kernels node by node;
- the in-place decision, and what is left unfused (a head op with no cuda kernel, a reduction
  after the product).
"""

from __future__ import annotations

import json
import pathlib

import host_cuda
import numpy as np
import pytest
from cuda_fusion_groups import Builder, host_run, tolerance

import fw_core as fw
from fw_core.compile import epilogue
from fw_core.compile.ir import Graph, Node
from fw_core.compile.passes import fuse as fuse_pass
from fw_core.device import registry as device_registry
from fw_cuda import fusion, nvcc
from fw_cuda.fusion import rules


def kept_unmeasured(group) -> bool:
    """A fusion decision taken before: the pass keeps the group without timing it (there is no
    GPU here to run the unfused kernels on)."""
    return True

ARTIFACTS = pathlib.Path(__file__).resolve().parents[2] / "test-artifacts" / "fw_cuda"
pytestmark = pytest.mark.skipif(fw.ops.kernel("linear", "cuda") is None,
                                reason="fw_cuda's kernels are not registered (no CuPy)")


def _linear_bias_gelu(b, dtype="float32"):
    x, w, bias = b.input((4, 6), dtype), b.input((5, 6), dtype), b.input((5,), dtype)
    product = b.op("linear", x, w)
    return product, b.op("gelu", b.op("add", product, bias), approximate="tanh")


def _linear(b):
    return b.group(_linear_bias_gelu(b)[1])


def _conv_bias_relu_residual(b):
    x, w = b.input((2, 3, 6, 6)), b.input((4, 3, 3, 3))
    bias, skip = b.input((4, 1, 1)), b.input((2, 4, 6, 6))
    conv = b.op("conv2d", x, w, None, stride=(1, 1), padding=((1, 1), (1, 1)),
                dilation=(1, 1), groups=1)
    return b.group(b.op("add", b.op("relu", b.op("add", conv, bias)), skip))


def _bmm_tanh_scale(b):
    a, c = b.input((3, 4, 5), "float64"), b.input((3, 5, 7), "float64")
    return b.group(b.op("mul", b.op("tanh", b.op("bmm", a, c)), 0.5))


def _half_matmul_bias_silu(b):
    a, c, bias = b.input((8, 16), "float16"), b.input((16, 12), "float16"), \
        b.input((12,), "float16")
    return b.group(b.op("silu", b.op("add", b.op("matmul", a, c), bias)))


EPILOGUES = {"linear_bias_gelu": _linear, "conv2d_bias_relu_residual": _conv_bias_relu_residual,
             "bmm_tanh_scale_f64": _bmm_tanh_scale, "half_matmul_bias_silu": _half_matmul_bias_silu}


def _graph(b, outputs) -> Graph:
    graph = Graph()
    graph.values, graph.inputs, graph.steps = [], list(b.inputs), list(b.nodes)
    graph.outputs = list(outputs)
    return graph


def test_the_fusion_pass_picks_the_cublas_epilogue_for_linear_bias_gelu():
    b = Builder()
    _, out = _linear_bias_gelu(b)
    graph = _graph(b, [out])
    (group,) = fuse_pass.fuse(graph, fw.plugins.fusion_rules("cuda") or fusion.RULES,
                              known=kept_unmeasured)
    assert group.rule.name == "cuda.cublas_epilogue"
    assert group.structure == "contraction+epilogue" and graph.steps == [group]
    kernel = group.kernel
    assert isinstance(kernel, epilogue.EpilogueKernel)
    assert kernel.contract is fw.ops.kernel("linear", "cuda")
    assert isinstance(kernel.loop, fusion.CudaKernel) and kernel.in_place


@pytest.mark.skipif(not host_cuda.HAS_GXX, reason="g++ is not installed")
@pytest.mark.parametrize("name", sorted(EPILOGUES))
def test_the_epilogue_kernel_matches_the_cpu_kernels_on_the_cpu_product(name, tmp_path):
    b = Builder()
    group = EPILOGUES[name](b)
    kernel = rules.EPILOGUE.generate(group)
    parts = epilogue.split(group, "cuda")
    assert kernel.loop is fusion.generate(parts.epilogue)
    assert parts.epilogue.inputs[0] is group.nodes[0].out  # the product comes first
    arrays = [b.arrays[v.index] for v in parts.epilogue.inputs]  # product by the CPU kernel
    got = host_run(tmp_path, kernel.loop, parts.epilogue, arrays)
    for value, array in zip(parts.epilogue.outputs, got):
        want = b.arrays[value.index]
        assert array.shape == want.shape and array.dtype == want.dtype
        np.testing.assert_allclose(array, want, **tolerance(value.dtype), err_msg=name)


@pytest.mark.skipif(nvcc.nvcc_path() is None, reason="nvcc is not installed")
def test_epilogue_sources_compile_for_sm90_and_ptxas_figures_are_recorded():
    figures = {}
    for name in sorted(EPILOGUES):
        kernel = rules.EPILOGUE.generate(EPILOGUES[name](Builder()))
        figures[name] = nvcc.compile_cubin(kernel.loop.source)[fusion.NAME]
        assert figures[name]["arch"] == "sm_90" and figures[name]["registers"] > 0
        print(f"{name}: {figures[name]['registers']} registers")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "ptxas_epilogue.json").write_text(
        json.dumps(figures, indent=2, sort_keys=True) + "\n")
    assert all(f["spill_stores"] == 0 and f["spill_loads"] == 0 for f in figures.values())


def test_the_result_reuses_the_product_buffer_only_when_nothing_else_reads_it():
    b = Builder()
    product, out = _linear_bias_gelu(b)
    alone = rules.EPILOGUE.generate(b.group(out))
    assert alone.in_place and alone.product_at is None
    shared = rules.EPILOGUE.generate(b.group(product, out))
    assert not shared.in_place and shared.product_at == 0 and shared.result_at == [1]
    b = Builder()
    _, out = _linear_bias_gelu(b)
    narrowed = b.op("cast", out, dtype=np.dtype("float16"))  # another dtype: a new buffer
    assert not rules.EPILOGUE.generate(b.group(narrowed)).in_place
    b = Builder()
    a, c, x = b.input((4, 5)), b.input((5, 5)), b.input((3, 4, 5))
    wider = b.op("add", b.op("matmul", a, c), x)  # broadcast up to (3, 4, 5): a new buffer
    assert not rules.EPILOGUE.generate(b.group(wider)).in_place


def test_a_head_op_without_a_cuda_kernel_is_left_to_the_pointwise_rule(monkeypatch):
    monkeypatch.delitem(device_registry.kernels["cuda"], fw.ops.get("linear"))
    fuse_pass.clear_kernel_cache()
    b = Builder()
    product, out = _linear_bias_gelu(b)
    assert not rules.EPILOGUE.supports(b.nodes[0])
    assert rules.EPILOGUE.generate(b.group(out)) is None
    graph = _graph(b, [out])
    (group,) = fuse_pass.fuse(graph, fusion.RULES, known=kept_unmeasured)
    assert group.rule.name == "cuda.rawkernel_pointwise"
    assert [n.op.name for n in group.nodes] == ["add", "gelu"]
    assert graph.steps[0].__class__ is Node and graph.steps[0].op.name == "linear"
    fuse_pass.clear_kernel_cache()


def test_a_reduction_after_the_product_stays_out_of_the_epilogue():
    fuse_pass.clear_kernel_cache()
    b = Builder()
    x, w, bias = b.input((4, 6)), b.input((5, 6)), b.input((5,))
    total = b.op("sum", b.op("add", b.op("linear", x, w), bias), dim=(1,), keepdim=False)
    assert not rules.EPILOGUE.supports(b.nodes[-1])
    graph = _graph(b, [total])
    (group,) = fuse_pass.fuse(graph, fusion.RULES, known=kept_unmeasured)
    assert group.rule.name == "cuda.cublas_epilogue"
    assert [n.op.name for n in group.nodes] == ["linear", "add"]
    assert graph.steps[-1].__class__ is Node and graph.steps[-1].op.name == "sum"
