"""explain_dispatch (eager and compiled functions) and describe (an op's contract)."""

from __future__ import annotations

import pytest

import fw_core as fw
import fw_debugger
from fw_core.compile.ir import Group

describe, explain_dispatch = fw_debugger.describe, fw_debugger.explain_dispatch


@pytest.fixture
def eager_compile():
    """Compile on the first call and always fuse, then back to the defaults."""
    fw.scheduler.configure(compile_after=0, fusion="always")
    yield
    fw.scheduler.reset()


def test_explain_dispatch_names_device_kernel_plugin_and_why_for_each_op():
    fw.manual_seed(0)
    model = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU())
    text = explain_dispatch(model, fw.randn(2, 4))
    lines = text.splitlines()
    assert lines[0].startswith("explain_dispatch(Sequential): 2 events")
    # a 2x4 linear: fw_cpu's kernel runs it, whether or not a guarded kernel (fw_onednn's, for
    # large products) sits above it, and the line says which
    linear = next(line for line in lines if "#0 forward linear in '0' on cpu" in line)
    assert linear.startswith("  #0 forward linear in '0' on cpu: kernel from fw_cpu (")
    assert ("only kernel registered)" in linear) != ("guard refused it" in linear)
    assert "#1 forward relu in '1' on cpu: kernel from fw_cpu" in text
    assert "FALLBACK" not in text and "compiled" not in text


def test_explain_dispatch_covers_backward():
    x = fw.randn(3, requires_grad=True)
    text = explain_dispatch(lambda: fw.exp(x).sum().backward())
    assert "backward: gradient rule of exp done" in text
    assert "backward mul on cpu" in text  # the op exp's gradient rule ran


def test_explain_dispatch_shows_the_fused_groups_of_a_compiled_function(eager_compile):
    @fw.compile
    def f(a):
        return fw.exp(fw.relu(a * 2.0 + 1.0))

    x = fw.randn(3, 4)
    assert "no plan yet" in explain_dispatch(f, x)  # calls under a recording run eagerly
    f(x)  # compiles
    text = explain_dispatch(f, x)
    group = next(s for s in f.plans()[0].graph.steps if s.__class__ is Group)
    assert "#0 forward mul on cpu" in text  # the eager run, op by op
    assert "plan 0 on cpu: 1 steps, 1 fused groups" in text
    assert (f"fused forward: [mul + add + relu + exp] -> one kernel by rule {group.rule.name}"
            in text)


def test_explain_dispatch_lists_ops_left_alone_and_host_steps(eager_compile):
    fw.manual_seed(0)
    model = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
    opt = fw.optim.SGD(model.parameters(), lr=0.1)

    @fw.compile
    def train_step(x):
        opt.zero_grad()
        loss = fw.tanh(model(x)).sum()
        loss.backward()
        opt.step()
        return loss

    x = fw.randn(3, 4)
    train_step(x)
    text = explain_dispatch(train_step, x)
    assert "alone forward: sum (reduction) by fw_cpu" in text
    assert "host step (call): SGD.zero_grad()" in text
    assert "host step (update): SGD.step()" in text  # its step counters and learning rates
    assert text.count("alone update: sgd_update (opaque) by fw_cpu") == 4  # one per parameter
    assert "fused backward" in text


def test_describe_relu_states_its_contract_in_plain_words():
    text = describe("relu")
    lines = text.splitlines()
    assert lines[0] == "relu(x: Tensor) -> Tensor"
    assert "max(x, 0)." in lines[1]
    assert "Jacobian: elementwise" in text
    assert "anchor (kink): gradient is exactly 0 for x < 0" in text
    assert "fw_debugger can measure where it bites" in text
    assert "backward keeps: inputs" in text
    row = next(r for r in fw.plugins.dispatch_table() if (r["op"], r["device"]) == ("relu", "cpu"))
    assert f"kernel on cpu: from {row['plugin']} ({row['why']})" in text  # fw_onednn may serve it


def test_describe_says_when_an_op_is_not_differentiable_and_rejects_unknown_ops():
    assert "not differentiable" in describe("gt")
    with pytest.raises(KeyError, match="relu"):
        describe("rellu")
