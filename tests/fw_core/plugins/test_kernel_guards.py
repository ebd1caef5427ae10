"""Guarded kernels: a plugin's kernel takes the calls its guard accepts; the next kernel of the
(op, device) takes the others, decided by the guard, never by catching an exception."""

import numpy as np
import pytest

import fw_core as fw
from fw_core import hookimpl
from fw_core.errors import UnsupportedError
from fw_core.ops import anchors
from fw_core.ops.dispatch import apply
from fw_core.records import KernelSpec, Structure, TensorSpec


class Float64Relu:
    """A relu for float64 only, above fw_cpu's (and fw_onednn's, where installed), counting the
    calls it serves."""

    def __init__(self):
        self.served = []

    @hookimpl
    def fw_register_kernels(self):
        def relu(x):
            self.served.append(x.dtype.name)
            return np.maximum(x, 0)

        return [KernelSpec(op="relu", device="cpu", fn=relu, priority=20,
                           guard=lambda x: x.dtype == np.float64, takes="float64 arrays")]


@pytest.fixture
def float64_relu():
    plugin = Float64Relu()
    fw.plugins.register(plugin, "fw_float64relu")
    yield plugin
    fw.plugins.unregister("fw_float64relu")


def test_the_guard_splits_calls_between_the_plugin_and_fw_cpu(float64_relu):
    x = fw.tensor([-1.0, 2.0], dtype=fw.float64)
    assert fw.relu(x).tolist() == [0.0, 2.0]
    assert fw.relu(x.float()).tolist() == [0.0, 2.0]
    assert fw.relu(fw.tensor([-3, 4])).tolist() == [0, 4]
    assert float64_relu.served == ["float64"]


def test_the_dispatch_table_says_who_serves_which_calls(float64_relu):
    row = next(r for r in fw.plugins.dispatch_table() if (r["op"], r["device"]) == ("relu", "cpu"))
    assert row["plugin"] == "fw_float64relu"
    # fw_onednn, where installed, has its own guarded relu between the two
    assert row["why"].startswith("priority 20 beats ")
    assert "; fw_float64relu when it takes the call (float64 arrays), " in row["why"]
    assert row["why"].endswith(", else fw_cpu")


def test_gradients_through_a_guarded_kernel_match_fw_cpu(float64_relu):
    x = fw.tensor([-1.0, 0.5, 3.0], dtype=fw.float64, requires_grad=True)
    (fw.relu(x) * x).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 6.0]


class GuardedOnly:
    """A custom op whose only kernel is guarded: calls it refuses have nowhere to go."""

    op = fw.define_op(
        "halve_for_guard_test", family="elementwise", doc="x / 2.",
        signature="halve(x: Tensor) -> Tensor",
        meta=lambda x: TensorSpec(tuple(x.shape), x.dtype),
        vjp=lambda ctx, g: (g * 0.5,), structure=Structure.ELEMENTWISE, anchor=anchors.smooth())

    @hookimpl
    def fw_register_ops(self):
        return [self.op]

    @hookimpl
    def fw_register_kernels(self):
        return [KernelSpec(op=self.op.name, device="cpu", fn=lambda x: x / 2,
                           guard=lambda x: x.ndim == 1, takes="1-d arrays")]


def test_a_call_no_kernel_takes_is_refused_with_what_each_takes():
    plugin = GuardedOnly()
    fw.plugins.register(plugin, "fw_guardedonly")
    try:
        assert apply(plugin.op, (fw.tensor([2.0, 4.0]),)).tolist() == [1.0, 2.0]
        with pytest.raises(UnsupportedError, match="fw_guardedonly takes 1-d arrays"):
            apply(plugin.op, (fw.ones(2, 2),))
    finally:
        fw.plugins.unregister("fw_guardedonly")


def test_serving_asks_the_guards_which_kernel_runs_a_call(float64_relu):
    import fw_core.plugins as plugins

    owner, why = plugins.serving("relu", "cpu", (np.ones(2),), {})
    assert owner == "fw_float64relu" and "guard takes it (float64 arrays)" in why
    owner, why = plugins.serving("relu", "cpu", (np.ones(2, np.float32),), {})
    assert owner == "fw_cpu"  # fw_onednn's guard, where installed, refuses two elements too
    assert why.startswith("fw_float64relu's guard refused it (fw_float64relu takes float64 "
                          "arrays); ")
    assert why.endswith("; fw_cpu runs what the guards above refuse; it runs "
                        "fw_cpu.kernels.elementwise.relu")
    assert plugins.serving("relu", "nowhere", (), {}) is None
    assert float64_relu.served == []  # asking runs no kernel


class CachingRelu:
    """A relu whose guard returns the function that runs the call (as a library plugin hands
    over the primitive it looked up), or None for the calls it leaves to the next kernel."""

    def __init__(self):
        self.ran = []

    @hookimpl
    def fw_register_kernels(self):
        def found(x):
            self.ran.append("found")
            return np.maximum(x, 0)

        def relu(x):
            raise AssertionError("the chain runs what the guard returned, not fn")

        return [KernelSpec(op="relu", device="cpu", fn=relu, priority=20, takes="float64",
                           guard=lambda x: found if x.dtype == np.float64 else None)]


def test_a_guard_may_return_the_function_that_runs_the_call():
    plugin = CachingRelu()
    fw.plugins.register(plugin, "fw_cachingrelu")
    try:
        assert fw.relu(fw.tensor([-1.0, 2.0], dtype=fw.float64)).tolist() == [0.0, 2.0]
        assert fw.relu(fw.tensor([-1.0, 2.0])).tolist() == [0.0, 2.0]  # float32: fw_cpu's
        assert plugin.ran == ["found"]
        import fw_core.plugins as plugins

        assert plugins.serving("relu", "cpu", (np.ones(2),), {})[0] == "fw_cachingrelu"
    finally:
        fw.plugins.unregister("fw_cachingrelu")
