"""A third-party elementwise op declared with a formula (``expr=``) and nothing else fuses: the
cpu fusion pass puts it in a Numba loop with its neighbours, and fw_cuda renders CUDA C for the
same group that g++ runs on the host with the kernel's results, and that nvcc compiles."""

import sys
from pathlib import Path

import numpy as np
import pytest

import fw_core as fw
from fw_core import hookimpl
from fw_core.compile.ir import Group
from fw_core.compile.passes import fuse as fuse_pass
from fw_core.ops import anchors, scalar
from fw_core.ops.registry import define_op
from fw_core.records import KernelSpec, Structure, TensorSpec
from fw_cuda import fusion as cuda_fusion
from fw_cuda import nvcc

from .test_passes import Build, run

sys.path.insert(0, str(Path(__file__).parents[3] / "fw_cuda" / "tests"))
import host_cuda  # noqa: E402  (fw_cuda's host runner of CUDA C)
from cuda_fusion_groups import host_run  # noqa: E402


def _softsign(x):
    return x / (1 + np.abs(x))


class Softsign:
    """An in-process plugin with one op, ``softsign``: a contract, a NumPy kernel, a formula."""

    op = define_op("softsign", family="custom", doc="x / (1 + |x|).",
                   signature="softsign(x: Tensor) -> Tensor",
                   meta=lambda x: TensorSpec(tuple(x.shape), x.dtype), vjp=None,
                   structure=Structure.ELEMENTWISE, anchor=anchors.smooth("saturates slowly"),
                   expr=lambda x: x / (1.0 + scalar.abs(x)))

    @hookimpl
    def fw_register_ops(self):
        return [self.op]

    @hookimpl
    def fw_register_kernels(self):
        return [KernelSpec(op="softsign", device="cpu", fn=_softsign)]


@pytest.fixture
def graph():
    """x -> + bias -> softsign -> * 3, built on the cpu kernels."""
    fw.plugins.register(Softsign(), "fw_softsign")
    b = Build()
    rng = np.random.default_rng(0)
    x = b.leaf((rng.standard_normal((8, 16)) * 4).astype(np.float32))
    bias = b.leaf(rng.standard_normal(16).astype(np.float32), "external")
    b.graph.outputs = [b.node("mul", b.node("softsign", b.node("add", x, bias)), 3.0)]
    yield b
    fw.plugins.unregister("fw_softsign")


def test_the_op_fuses_with_its_neighbours_on_cpu(graph):
    expected = run(graph.graph)
    [group] = fuse_pass.fuse(graph.graph, fw.plugins.fusion_rules("cpu"),
                             lambda group, fused, unfused: True)
    assert [n.op.name for n in group.nodes] == ["add", "softsign", "mul"]
    assert group.rule.name == "cpu.numba_pointwise"
    np.testing.assert_allclose(run(graph.graph)[0], expected[0], rtol=1e-6)


def _group(b):
    nodes = list(b.graph.steps)
    return Group(nodes, [nodes[0].inputs[0], nodes[0].inputs[1]], [nodes[-1].out])


@pytest.mark.skipif(not host_cuda.HAS_GXX, reason="g++ is not installed")
def test_fw_cuda_renders_it_and_the_c_computes_the_kernels_result(graph, tmp_path):
    group = _group(graph)
    kernel = cuda_fusion.generate(group)
    assert kernel is not None and "fabsf(" in kernel.source
    arrays = [graph.graph.samples[v.index] for v in group.inputs]
    (got,) = host_run(tmp_path, kernel, group, arrays)
    np.testing.assert_allclose(got, graph.graph.samples[group.outputs[0].index], rtol=1e-6)


@pytest.mark.skipif(nvcc.nvcc_path() is None, reason="nvcc is not installed")
def test_nvcc_compiles_the_rendered_kernel(graph):
    report = nvcc.compile_cubin(cuda_fusion.source(_group(graph)))
    assert report[cuda_fusion.NAME]["registers"] > 0
