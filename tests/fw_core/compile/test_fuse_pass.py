"""The fusion pass: which nodes it groups, where groups go, and who decides (fw_core's side;
the CPU code generator is tested in tests/fw_cpu/test_fusion.py)."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.compile.ir import Group, Node, Value
from fw_core.compile.passes import fuse as fuse_pass
from fw_core.records import FusionRule, Structure

from .test_passes import Build, ops_of, run


def always(group, fused_seconds, unfused_seconds):
    return True


def cpu_rules():
    return fw.plugins.fusion_rules("cpu")


def rows(n=4, features=8):
    return np.random.default_rng(0).standard_normal((n, features)).astype(np.float32)


def bias_relu_scale(b, x, bias):
    return b.node("mul", b.node("relu", b.node("add", x, bias)), 2.0)


def test_an_elementwise_chain_becomes_one_group_with_the_same_results():
    b = Build()
    x, bias = b.leaf(rows()), b.leaf(np.ones(8, np.float32), "external")
    out = bias_relu_scale(b, x, bias)
    b.graph.outputs = [out]
    expected = run(b.graph)
    groups = fuse_pass.fuse(b.graph, cpu_rules(), always)
    assert len(groups) == 1 and ops_of(b.graph) == ["Group"]
    group = groups[0]
    assert [n.op.name for n in group.nodes] == ["add", "relu", "mul"]
    assert group.inputs == [x, bias] and group.outputs == [out]
    assert group.structure == "elementwise" and group.rule.name == "cpu.numba_pointwise"
    np.testing.assert_allclose(run(b.graph)[0], expected[0], rtol=1e-6)
    assert b.graph.log[-1].startswith("fuse: 1 groups (add+relu+mul")


def test_a_trailing_reduction_closes_the_group():
    b = Build()
    x = b.leaf(rows())
    total = b.node("sum", b.node("exp", x), dim=(1,), keepdim=False)
    after = b.node("neg", total)
    b.graph.outputs = [after]
    groups = fuse_pass.fuse(b.graph, cpu_rules(), always)
    assert [[n.op.name for n in g.nodes] for g in groups] == [["exp", "sum"]]
    assert groups[0].structure == "elementwise+reduction"
    assert ops_of(b.graph) == ["Group", "neg"]


def test_effects_are_barriers():
    b = Build()
    x = b.leaf(rows())
    first = b.node("relu", b.node("neg", x))
    b.effect("call")
    second = b.node("exp", b.node("mul", first, 3.0))
    b.graph.outputs = [second]
    groups = fuse_pass.fuse(b.graph, cpu_rules(), always)
    assert [[n.op.name for n in g.nodes] for g in groups] == [["neg", "relu"], ["mul", "exp"]]
    assert ops_of(b.graph) == ["Group", "Effect", "Group"]
    assert groups[0].outputs == [first]  # read across the effect: an output


def test_values_used_outside_become_outputs_in_member_order():
    b = Build()
    x, w = b.leaf(rows()), b.leaf(rows(8, 8), "external")
    h = b.node("add", x, 1.0)
    a = b.node("tanh", h)
    c = b.node("mul", a, h)
    used_by_matmul = b.node("matmul", a, w)
    b.graph.outputs = [c, used_by_matmul]
    expected = run(b.graph)
    [group] = fuse_pass.fuse(b.graph, cpu_rules(), always)
    assert group.outputs == [a, c]  # h is only read inside
    assert ops_of(b.graph) == ["Group", "matmul"]
    for got, want in zip(run(b.graph), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_group_reaches_past_unrelated_nodes_but_never_past_a_reader():
    b = Build()
    x, w = b.leaf(rows()), b.leaf(rows(8, 8), "external")
    h = b.node("add", x, 1.0)
    other = b.node("sum", x, dim=None, keepdim=False)  # reads nothing of the group: passed
    y = b.node("relu", h)
    z = b.node("matmul", y, w)  # reads the group: it closes the group
    late = b.node("neg", y)
    b.graph.outputs = [other, z, late]
    expected = run(b.graph)
    groups = fuse_pass.fuse(b.graph, cpu_rules(), always)
    assert [[n.op.name for n in g.nodes] for g in groups] == [["add", "relu"]]
    assert ops_of(b.graph) == ["sum", "Group", "matmul", "neg"]
    for got, want in zip(run(b.graph), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_contraction_takes_its_elementwise_epilogue():
    b = Build()
    x, w, bias = b.leaf(rows()), b.leaf(rows(16, 8), "external"), b.leaf(np.ones(16, np.float32))
    out = b.node("gelu", b.node("add", b.node("linear", x, w), bias), approximate="none")
    b.graph.outputs = [out]
    expected = run(b.graph)
    fw_cpus = [r for r in cpu_rules() if r.name.startswith("cpu.")]  # whatever else is loaded
    [group] = fuse_pass.fuse(b.graph, fw_cpus, always)
    assert [n.op.name for n in group.nodes] == ["linear", "add", "gelu"]
    assert group.structure == "contraction+epilogue" and group.rule.name == "cpu.blas_epilogue"
    np.testing.assert_allclose(run(b.graph)[0], expected[0], rtol=1e-5, atol=1e-6)


def test_decide_sees_both_times_and_can_keep_nodes_unfused():
    b = Build()
    out = bias_relu_scale(b, b.leaf(rows()), b.leaf(np.ones(8, np.float32)))
    b.graph.outputs = [out]
    seen = []

    def reject(group, fused_seconds, unfused_seconds):
        seen.append((group, fused_seconds, unfused_seconds))
        return False

    assert fuse_pass.fuse(b.graph, cpu_rules(), reject) == []
    assert ops_of(b.graph) == ["add", "relu", "mul"]
    [(group, fused_seconds, unfused_seconds)] = seen
    assert isinstance(group, Group) and fused_seconds > 0 and unfused_seconds > 0
    assert "not chosen" in b.graph.log[-1]


def test_measurement_waits_for_the_device_after_each_timed_batch():
    b = Build()
    b.graph.outputs = [bias_relu_scale(b, b.leaf(rows()), b.leaf(np.ones(8, np.float32)))]
    waits = []
    fuse_pass.fuse(b.graph, cpu_rules(), always, sync=lambda: waits.append(1))
    assert len(waits) == 2 * 4  # fused and unfused: the first call, then 3 timed batches


def test_groups_without_samples_are_measured_on_stand_ins_moved_to_the_device():
    b = Build()
    x = b.leaf(rows(5, 8))
    bias = b.leaf(np.full(8, 7, np.float32), "const")
    b.graph.outputs = [bias_relu_scale(b, x, bias)]
    b.graph.samples = {}  # as a trace leaves it: no array it saw is kept
    moved, asked = [], []

    def to_device(array):
        moved.append(array)
        return array

    [group] = fuse_pass.fuse(b.graph, cpu_rules(), lambda *a: asked.append(a) or True,
                             to_device=to_device)
    assert len(asked) == 1 and asked[0][0] is group
    # the input without an array gets a stand-in of its shape and dtype; the constant is its own
    assert [(a.shape, a.dtype) for a in moved] == [((5, 8), np.float32)]
    assert (moved[0] < 0).any() and (moved[0] > 0).any()


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.uint8, np.bool_,
                                   np.complex64])
def test_stand_ins_are_valid_operands_of_their_dtype(dtype):
    a = fuse_pass.stand_in((3, 4), dtype)
    assert a.shape == (3, 4) and a.dtype == dtype
    assert np.array_equal(a, fuse_pass.stand_in((3, 4), dtype))  # seeded: measurements repeat
    if np.dtype(dtype).kind in "iu":
        assert a.min() >= 1  # a valid divisor
    if np.dtype(dtype).kind == "f":
        assert np.all(np.isfinite(a)) and np.abs(a).max() <= 2


@pytest.mark.parametrize("view", [lambda a: a.T, lambda a: a[::-2, 1:],
                                  lambda a: np.broadcast_to(a[:, :1], (6, 5))],
                         ids=["transposed", "reversed-and-sliced", "expanded"])
def test_stand_ins_keep_the_traced_strides(view):
    traced = view(np.zeros((6, 5), np.float32))
    a = fuse_pass.stand_in(traced.shape, traced.dtype, traced.strides)
    assert a.shape == traced.shape and a.strides == traced.strides
    assert np.all(np.abs(a) <= 2)


def test_a_new_batch_size_reuses_the_cached_kernel():
    kernels = []
    for n in (4, 12):
        b = Build()
        b.graph.outputs = [bias_relu_scale(b, b.leaf(rows(n)), b.leaf(np.ones(8, np.float32)))]
        before = fuse_pass.kernel_cache_info()
        [group] = fuse_pass.fuse(b.graph, cpu_rules(), always)
        after = fuse_pass.kernel_cache_info()
        kernels.append(group.kernel)
    assert kernels[0] is kernels[1]
    assert after["misses"] == before["misses"] and after["hits"] > before["hits"]


class _PythonKernel:
    """A third-party generator: runs the members' own kernels (enough to see it was used)."""

    def __init__(self, group):
        self.group = group

    def __call__(self, *arrays, out=None):
        env = {v.index: a for v, a in zip(self.group.inputs, arrays)}
        for n in self.group.nodes:
            env[n.out.index] = fw.ops.kernel(n.op, "cpu")(
                *[env[v.index] if v.__class__ is Value else v for v in n.inputs], **n.attrs)
        return tuple(env[v.index] for v in self.group.outputs)


class _AddMulPlugin:
    generated: list = []

    @fw.hookimpl
    def fw_register_fusion_rules(self):
        def generate(group):
            self.generated.append(group)
            return _PythonKernel(group)

        return [FusionRule(name="test.add_mul", device="cpu",
                           structures=frozenset({Structure.BROADCAST}), generate=generate,
                           priority=100, supports=lambda n: n.op.name in ("add", "mul"))]


@pytest.fixture
def add_mul_plugin():
    plugin = _AddMulPlugin()
    fw.plugins.register(plugin, "test_fusion_plugin")
    try:
        yield plugin
    finally:
        fw.plugins.unregister("test_fusion_plugin")


def test_a_third_party_rule_is_used_with_no_change_to_fw_core(add_mul_plugin):
    assert cpu_rules()[0].name == "test.add_mul"
    b = Build()
    x = b.leaf(rows())
    out = b.node("mul", b.node("add", x, x), 0.5)
    b.graph.outputs = [out]
    expected = run(b.graph)
    [group] = fuse_pass.fuse(b.graph, cpu_rules(), always)
    assert group.rule.name == "test.add_mul" and add_mul_plugin.generated
    assert isinstance(group.kernel, _PythonKernel)
    np.testing.assert_allclose(run(b.graph)[0], expected[0])
    assert isinstance(b.graph.steps[0], Group) and not isinstance(b.graph.steps[0], Node)


def test_measured_results_compare_within_a_few_ulps_of_their_dtype():
    want = np.linspace(0.5, 4.0, 64)
    for dtype, ulps_ok in ((np.float16, 2), (np.float32, 8), (np.float64, 64)):
        w = want.astype(dtype)
        near = w + ulps_ok * np.spacing(w)
        far = w * dtype(1.01)
        assert fuse_pass._close(near, w, np.dtype(dtype), summed=False), dtype
        assert not fuse_pass._close(far, w, np.dtype(dtype), summed=False), dtype
