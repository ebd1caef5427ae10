"""The graph passes of compiled mode (dce, cse, constfold, remat, memplan) on hand-built graphs,
each run before and after through a tiny interpreter of the cpu kernels."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.compile.ir import Effect, Graph, Group, Node, Value
from fw_core.compile.passes.constfold import fold_constants
from fw_core.compile.passes.cse import eliminate_common_subexpressions
from fw_core.compile.passes.dce import eliminate_dead_code
from fw_core.compile.passes.memplan import estimate_peak, plan_memory
from fw_core.compile.passes.remat import rematerialize

BN = {"training": True, "momentum": 0.1, "eps": 1e-5, "has_running": True,
      "has_weight": False, "has_bias": False}


class Build:
    """A graph written by hand; every node runs its cpu kernel on the samples as it is added.

    Leaves of every source keep their array as payload (the tracer keeps an argument number,
    a tensor or a callable there), which is all :func:`run` needs.
    """

    def __init__(self):
        self.graph = Graph()
        self.graph.samples = {}
        self.phase = "forward"

    def leaf(self, array, source="input"):
        array = np.asarray(array)
        v = self.graph.value(array.shape, array.dtype, source, array)
        self.graph.samples[v.index] = array
        return v

    def node(self, name, *inputs, **attrs):
        op = fw.ops.get(name)
        args = [self.graph.samples[v.index] if v.__class__ is Value else v for v in inputs]
        sample = np.asarray(fw.ops.kernel(op, "cpu")(*args, **attrs))
        out = self.graph.value(sample.shape, sample.dtype, "node")
        out.producer = Node(op, inputs, attrs, out, "m", self.phase)
        self.graph.steps.append(out.producer)
        self.graph.samples[out.index] = sample
        return out

    def effect(self, kind, *reads, run=lambda arrays: None):
        self.graph.steps.append(Effect(kind, reads, run, kind))

    def fuse(self, start, stop):
        """Make steps[start:stop] one Group (call once the graph is complete)."""
        steps = self.graph.steps
        nodes = steps[start:stop]
        inside = {n.out.index for n in nodes}
        inputs = list(dict.fromkeys(v for n in nodes for v in n.reads if v.index not in inside))
        later = {v.index for s in steps[stop:] for v in s.reads} | \
            {v.index for v in self.graph.outputs}
        group = Group(nodes, inputs, [n.out for n in nodes if n.out.index in later])
        group.kernel = _group_kernel(group)
        steps[start:stop] = [group]
        return group


def _group_kernel(group):
    """The calling convention of generated kernels: reads every input before writing `out`."""
    def kernel(*arrays, out=None):
        env = {v.index: a for v, a in zip(group.inputs, arrays)}
        for n in group.nodes:
            env[n.out.index] = fw.ops.kernel(n.op, "cpu")(
                *[env[v.index] if v.__class__ is Value else v for v in n.inputs], **n.attrs)
        results = [env[v.index] for v in group.outputs]
        out = out or (None,) * len(results)
        return tuple(r if b is None else np.copyto(b, r) or b for r, b in zip(results, out))
    return kernel


def run(graph, plan=None, buffers=None):
    """Run the graph's steps (honouring a memory plan when given); return the outputs."""
    env, freed = {}, set()

    def get(v):
        assert v.index not in freed, f"{v!r} read after the plan freed it"
        if v.source == "node":
            return env[v.index]
        return v.payload

    for k, step in enumerate(graph.steps):
        if step.__class__ is Node:
            env[step.out.index] = fw.ops.kernel(step.op, "cpu")(
                *[get(v) if v.__class__ is Value else v for v in step.inputs], **step.attrs)
        elif step.__class__ is Group:
            out = None
            if plan is not None:
                out = tuple(None if b is None else buffers[b].reshape(v.shape)
                            for b, v in zip(plan.out_buffers[k], step.outputs))
            env.update((v.index, a) for v, a in zip(step.outputs, step.kernel(
                *[get(v) for v in step.inputs], out=out)))
        else:
            step.run([get(v) for v in step.reads])
        if plan is not None:
            for index in plan.free_after[k]:
                env.pop(index, None)
                freed.add(index)
    return [get(v) for v in graph.outputs]


def ops_of(graph):
    return [s.op.name if s.__class__ is Node else s.__class__.__name__ for s in graph.steps]


def assert_same(before, after):
    for a, b in zip(before, after, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.fixture
def x():
    return np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)


# -- dead code ------------------------------------------------------------------------------
def test_dce_removes_dead_chains_but_keeps_effects_and_batch_norm(x):
    b = Build()
    xv = b.leaf(x)
    stats = b.leaf(np.zeros(3, np.float32), "external"), b.leaf(np.ones(3, np.float32), "external")
    b.node("neg", b.node("exp", xv))  # dead chain
    b.node("batch_norm", xv, *stats, **BN)  # output unused, updates the running stats
    b.effect("call")
    b.effect("set_grad", b.node("mul", xv, 2.0))
    b.graph.outputs = [b.node("relu", xv)]
    before = run(b.graph)
    assert eliminate_dead_code(b.graph) == 2
    assert ops_of(b.graph) == ["batch_norm", "Effect", "mul", "Effect", "relu"]
    assert b.graph.log[-1] == "dce: removed 2 nodes (neg, exp)"
    mean = stats[0].payload.copy()
    assert_same(before, run(b.graph))
    assert not np.array_equal(stats[0].payload, mean)  # batch_norm still ran


# -- common subexpressions ------------------------------------------------------------------
def test_cse_merges_repeated_nodes_and_their_dependents(x):
    b = Build()
    xv = b.leaf(x)
    e1, e2 = b.node("exp", b.node("mul", xv, 2.0)), b.node("exp", b.node("mul", xv, 2.0))
    other = b.node("mul", xv, 2)  # an int scalar is another key
    b.graph.outputs = [b.node("add", b.node("add", e1, e2), other)]
    before = run(b.graph)
    assert eliminate_common_subexpressions(b.graph) == 2
    assert ops_of(b.graph) == ["mul", "exp", "mul", "add", "add"]
    assert b.graph.steps[3].inputs == (e1, e1)
    assert b.graph.log[-1] == "cse: merged 2 nodes (mul, exp)"
    assert_same(before, run(b.graph))


def test_cse_never_merges_across_a_call_effect_or_batch_norm_or_escaping_values(x):
    b = Build()
    w = b.leaf(x.copy(), "external")
    first = b.node("mul", w, 2.0)
    b.effect("call", run=lambda arrays: np.multiply(w.payload, 3.0, out=w.payload))
    second = b.node("mul", w, 2.0)
    stats = b.leaf(np.zeros(3, np.float32), "external"), b.leaf(np.ones(3, np.float32), "external")
    norms = [b.node("batch_norm", w, *stats, **BN) for _ in range(2)]
    grads = [b.node("sum", w, dim=None, keepdim=False) for _ in range(2)]
    for g in grads:
        b.effect("set_grad", g)
    b.graph.outputs = [b.node("add", first, second), *norms]
    w.payload[...] = x
    before = run(b.graph)
    assert eliminate_common_subexpressions(b.graph) == 0
    w.payload[...] = x
    stats[0].payload[...], stats[1].payload[...] = 0, 1
    assert_same(before, run(b.graph))


# -- constant folding -----------------------------------------------------------------------
def test_constfold_folds_constant_chains_once(x):
    b = Build()
    xv, host = b.leaf(x), b.leaf(np.ones((4, 3), np.float32), "host")
    c = b.node("mul", b.node("add", b.leaf(np.ones(3, np.float32), "const"), 1.0), 3.0)
    zeros = b.node("zeros", (4, 3), np.float32)
    empty = b.node("empty", (4, 3), np.float32)
    masked = b.node("mul", host, 2.0)
    stats = b.leaf(np.zeros(3, np.float32), "const"), b.leaf(np.ones(3, np.float32), "const")
    norm = b.node("batch_norm", b.leaf(x, "const"), *stats, **BN)
    b.graph.outputs = [b.node("add", b.node("add", xv, c), zeros), masked, norm, empty]
    before = run(b.graph)
    assert fold_constants(b.graph, lambda node: fw.ops.kernel(node.op, "cpu")) == 4
    assert ops_of(b.graph) == ["mul", "batch_norm", "add", "add"]  # empty: any values will do
    assert c.source == "const" and c.producer is None
    np.testing.assert_array_equal(c.payload, np.full(3, 6.0, np.float32))
    assert b.graph.samples[c.index] is c.payload
    assert b.graph.log[-1] == "constfold: folded 4 nodes (add, mul, zeros, empty)"
    assert_same(before[:2], run(b.graph)[:2])


def test_constfold_leaves_large_results_to_each_run():
    b = Build()
    b.graph.outputs = [b.node("ones", (64, 64), np.float32)]
    assert fold_constants(b.graph, lambda node: fw.ops.kernel(node.op, "cpu"), max_bytes=1024) == 0
    assert "1 left unfolded" in b.graph.log[-1]


# -- rematerialisation ----------------------------------------------------------------------
def _training_step(obstacle=None, op="square"):
    """op(x) read by the forward and again by the backward, with big values in between."""
    rng = np.random.default_rng(1)
    b = Build()
    xv = b.leaf(rng.standard_normal((32, 32)).astype(np.float32),
                "external" if obstacle == "effect_between" else "input")
    w = b.leaf(rng.standard_normal((32, 32)).astype(np.float32) / 8, "external")
    a = b.node(op, b.node("neg", xv) if obstacle == "input_dies" else xv)
    h = b.node("relu", b.node("matmul", a, w))
    if obstacle == "effect_between":
        b.effect("call")  # may write into the external x: exp(x) cannot be recomputed after it
    d = b.node("matmul", h, w)
    b.phase = "backward"
    g = b.node("matmul", b.node("mul", d, 2.0), w)
    g = b.node("mul", b.node("mul", g, h), a)
    b.graph.outputs = [b.node("sum", g, dim=None, keepdim=False)]
    return b, a


def test_remat_recomputes_a_forward_value_before_its_backward_reader():
    b, a = _training_step()
    before, peak = run(b.graph), estimate_peak(b.graph.steps, b.graph.outputs)
    assert rematerialize(b.graph) == 1
    assert estimate_peak(b.graph.steps, b.graph.outputs) < peak
    clones = [s for s in b.graph.steps if s.__class__ is Node and s.op.name == "square"]
    assert [c.phase for c in clones] == ["forward", "backward"]
    late = b.graph.steps[b.graph.steps.index(clones[1]) + 1]
    assert late.inputs[1] is clones[1].out and clones[1].out.index in b.graph.samples
    assert "estimated peak" in b.graph.log[-1]
    assert_same(before, run(b.graph))


@pytest.mark.parametrize("obstacle", ["input_dies", "effect_between"])
def test_remat_skips_values_it_cannot_recompute_for_free(obstacle):
    b, _ = _training_step(obstacle)
    assert rematerialize(b.graph) == 0


def test_remat_keeps_transcendental_values_rather_than_recompute_them():
    b, _ = _training_step(op="exp")
    assert rematerialize(b.graph) == 0


# -- memory planning ------------------------------------------------------------------------
def test_memplan_writes_an_elementwise_chain_in_place_in_one_buffer(x):
    b = Build()
    t = b.node("exp", b.leaf(x))
    t = b.node("relu", b.node("add", t, 1.0))
    t = b.node("neg", b.node("mul", t, 2.0))
    b.graph.outputs = [b.node("sum", t, dim=None, keepdim=False)]
    for start in range(4):
        b.fuse(start, start + 2 if start == 1 else start + 1)
    before = run(b.graph)
    plan = plan_memory(b.graph)
    assert list(plan.out_buffers.values()) == [(0,), (0,), (0,), (0,)]
    assert len(plan.in_place) == 3 and plan.peak_bytes < plan.unplanned_peak_bytes
    buffers = [np.empty(shape, dtype) for shape, dtype in plan.buffers]
    for _ in range(2):  # the buffers carry over from run to run
        assert_same(before, run(b.graph, plan, buffers))
    assert "memory plan" in plan.describe() and b.graph.log[-1].startswith("memplan:")


def test_memplan_keeps_views_and_escaping_values_out_of_shared_buffers(x):
    b = Build()
    xv = b.leaf(x)
    kept = b.node("exp", xv)  # read only through a view that lives on
    view = b.node("reshape", kept, shape=(3, 4))
    given = b.node("sin", xv)  # handed to the user through an effect's view
    b.effect("set_grad", b.node("reshape", given, shape=(12,)))
    later = b.node("cos", xv)  # same size, defined while `view` lives: no sharing
    last = b.node("add", b.node("reshape", later, shape=(3, 4)), view)
    after_view = b.node("tanh", xv)  # defined once `view` is dead: may share
    b.graph.outputs = [last, b.node("mul", after_view, 1.0)]
    for name in ("tanh", "cos", "sin", "exp"):
        b.fuse(ops_of(b.graph).index(name), ops_of(b.graph).index(name) + 1)
    before = run(b.graph)
    default = plan_memory(b.graph)  # buffers held all run would raise this graph's peak
    assert default.peak_bytes <= default.unplanned_peak_bytes and len(default.buffers) < 2
    plan = plan_memory(b.graph, budget_bytes=2**30)
    ids = {b.graph.steps[k].outputs[0].index: ids[0] for k, ids in plan.out_buffers.items()}
    assert ids[given.index] is None
    assert ids[kept.index] != ids[later.index] and ids[after_view.index] in (
        ids[kept.index], ids[later.index])
    assert plan.in_place == []
    for freed in plan.free_after:
        assert all(b.graph.values[i].source == "node" for i in freed)
        assert given.index not in freed
    buffers = [np.empty(shape, dtype) for shape, dtype in plan.buffers]
    after = run(b.graph, plan, buffers)
    assert_same(before, after)
    assert not any(np.shares_memory(a, buffer) for a in after for buffer in buffers)


@pytest.mark.parametrize("reads_elsewhere", ["matmul", "view"])
def test_memplan_never_writes_over_an_input_read_at_other_elements(reads_elsewhere):
    b = Build()
    square = b.node("exp", b.leaf(np.arange(9, dtype=np.float32).reshape(3, 3) / 9))
    if reads_elsewhere == "matmul":
        b.node("relu", b.node("matmul", square, b.leaf(np.ones((3, 3), np.float32))))
    else:
        b.node("add", square, b.node("permute", square, dims=(1, 0)))
    b.graph.outputs = [b.node("neg", b.graph.steps[-1].out)]
    b.fuse(0, 1)
    b.fuse(ops_of(b.graph).index("matmul" if reads_elsewhere == "matmul" else "add"),
           len(b.graph.steps) - 1)
    before = run(b.graph)
    plan = plan_memory(b.graph, budget_bytes=2**30)
    assert plan.in_place == [] and [ids for ids in plan.out_buffers.values()] == [(0,), (1,)]
    buffers = [np.empty(shape, dtype) for shape, dtype in plan.buffers]
    assert_same(before, run(b.graph, plan, buffers))
