"""The fusion pass's chains (``FusionRule.chains``): runs of nodes a chain rule supports, each
reading the previous member's result, grouped before the structure groups and whatever their
structures; what no chain rule keeps is grouped by structure."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.compile.passes import fuse as fuse_pass
from fw_core.records import FusionRule, Structure

from .test_fuse_pass import _PythonKernel
from .test_passes import Build, ops_of, run

CONV = {"stride": (1, 1), "padding": ((1, 1), (1, 1)), "dilation": (1, 1), "groups": 1}
POOL = {"kernel_size": (2, 2), "stride": (2, 2), "padding": (0, 0), "dilation": (1, 1),
        "ceil_mode": False}
TAKEN = ("conv2d", "relu", "max_pool2d")


@pytest.fixture(autouse=True)
def fresh_kernels():
    """Each test's test.chain generator is asked (kernels are cached by rule name)."""
    fuse_pass.clear_kernel_cache()
    yield
    fuse_pass.clear_kernel_cache()


def always(group, fused_seconds, unfused_seconds):
    return True


def chain_rule(generate=_PythonKernel):
    return FusionRule(name="test.chain", device="cpu", chains=True, generate=generate,
                      structures=frozenset({Structure.CONTRACTION, Structure.REDUCTION,
                                            Structure.ELEMENTWISE}),
                      supports=lambda n: n.op.name in TAKEN)


def fw_cpus():
    return [r for r in fw.plugins.fusion_rules("cpu") if r.name.startswith("cpu.")]


def features(b, pool=True):
    """conv -> relu (-> max pool) on an (N, 2, 6, 6) input: the chain's members."""
    rng = np.random.default_rng(0)
    x = b.leaf(rng.standard_normal((2, 2, 6, 6)).astype(np.float32))
    w = b.leaf(rng.standard_normal((4, 2, 3, 3)).astype(np.float32), "external")
    bias = b.leaf(rng.standard_normal(4).astype(np.float32), "external")
    conv = b.node("conv2d", x, w, bias, **CONV)
    relu = b.node("relu", conv)
    return x, conv, relu, b.node("max_pool2d", relu, **POOL) if pool else None


def test_a_chain_across_structures_becomes_one_group_before_the_structure_groups():
    b = Build()
    x, conv, relu, pooled = features(b)
    out = b.node("exp", pooled)
    b.graph.outputs = [out]
    expected = run(b.graph)
    groups = fuse_pass.fuse(b.graph, [chain_rule(), *fw_cpus()], always)
    chain = groups[0]
    assert [n.op.name for n in chain.nodes] == list(TAKEN)
    assert chain.structure == "chain" and chain.rule.name == "test.chain"
    assert chain.inputs[0] is x and chain.outputs == [pooled]
    assert ops_of(b.graph) == ["Group", "exp"]
    np.testing.assert_allclose(run(b.graph)[0], expected[0], rtol=1e-6)
    assert "conv2d+relu+max_pool2d" in b.graph.log[-1]


def test_a_chain_rule_takes_no_structure_group():
    b = Build()
    x = b.leaf(np.ones((4, 8), np.float32))
    b.graph.outputs = [b.node("neg", b.node("relu", x))]
    rules = [chain_rule(), *fw_cpus()]
    [group] = fuse_pass.fuse(b.graph, rules, always)
    assert group.rule.name == "cpu.numba_pointwise"  # relu alone is no chain: neg is not taken


def test_values_read_after_the_chain_become_its_outputs():
    b = Build()
    x, conv, relu, pooled = features(b)
    b.graph.outputs = [pooled, b.node("neg", conv)]
    [chain, *_] = fuse_pass.fuse(b.graph, [chain_rule()], always)
    assert chain.outputs == [conv, pooled]


def test_a_node_in_between_that_reads_a_member_ends_the_chain():
    b = Build()
    x, conv, relu, _ = features(b, pool=False)
    side = b.node("neg", conv)  # the chain would run where its last member is: after this
    pooled = b.node("max_pool2d", relu, **POOL)
    b.graph.outputs = [pooled, side]
    groups = fuse_pass.fuse(b.graph, [chain_rule()], always)
    assert [[n.op.name for n in g.nodes] for g in groups] == [["conv2d", "relu"]]
    assert ops_of(b.graph) == ["Group", "neg", "max_pool2d"]


def test_a_node_in_between_that_reads_no_member_is_passed():
    b = Build()
    x, conv, relu, _ = features(b, pool=False)
    side = b.node("neg", x)
    pooled = b.node("max_pool2d", relu, **POOL)
    b.graph.outputs = [pooled, side]
    [chain] = fuse_pass.fuse(b.graph, [chain_rule()], always)
    assert [n.op.name for n in chain.nodes] == list(TAKEN)
    assert ops_of(b.graph) == ["neg", "Group"]


def test_an_effect_ends_the_chain():
    b = Build()
    x, conv, relu, _ = features(b, pool=False)
    b.effect("call")
    pooled = b.node("max_pool2d", relu, **POOL)
    b.graph.outputs = [pooled]
    groups = fuse_pass.fuse(b.graph, [chain_rule()], always)
    assert [[n.op.name for n in g.nodes] for g in groups] == [["conv2d", "relu"]]


def test_a_chain_no_rule_generates_is_grouped_by_structure():
    b = Build()
    x, conv, relu, pooled = features(b)
    b.graph.outputs = [pooled]
    expected = run(b.graph)
    groups = fuse_pass.fuse(b.graph, [chain_rule(lambda group: None), *fw_cpus()], always)
    assert [(g.structure, g.rule.name) for g in groups] == [("contraction+epilogue",
                                                             "cpu.blas_epilogue")]
    assert "conv2d+relu+max_pool2d: no rule generates it" in b.graph.log[-1]
    np.testing.assert_allclose(run(b.graph)[0], expected[0], rtol=1e-6)


def test_a_chain_that_loses_the_measurement_is_logged_and_grouped_by_structure():
    def chains_lose(group, fused_seconds, unfused_seconds):
        return group.structure != "chain"

    b = Build()
    features(b)
    b.graph.outputs = [b.graph.steps[-1].out]
    groups = fuse_pass.fuse(b.graph, [chain_rule(), *fw_cpus()], chains_lose)
    assert [g.structure for g in groups] == ["contraction+epilogue"]
    assert "conv2d+relu+max_pool2d: not chosen (fused " in b.graph.log[-1]
