"""In-process plugins (fw.plugins.register) and reloads that keep existing tensors usable."""

import numpy as np
import pytest

import fw_core as fw
from fw_core import hookimpl
from fw_core.errors import PluginError
from fw_core.ops import anchors
from fw_core.ops.dispatch import apply
from fw_core.records import KernelSpec, Structure, TensorSpec


class TripleOp:
    """A plugin object (not a module): a custom op with its contract and a cpu kernel."""

    op = fw.define_op(
        "triple_for_register_test", family="elementwise", doc="3 x.",
        signature="triple(x: Tensor) -> Tensor",
        meta=lambda x: TensorSpec(tuple(x.shape), x.dtype),
        vjp=lambda ctx, g: (g * 3.0,), structure=Structure.ELEMENTWISE, anchor=anchors.smooth())

    @hookimpl
    def fw_register_ops(self):
        return [self.op]

    @hookimpl
    def fw_register_kernels(self):
        return [KernelSpec(op=self.op.name, device="cpu", fn=lambda x: x * 3)]


@pytest.fixture
def triple():
    plugin = TripleOp()
    info = fw.plugins.register(plugin, "triple_plugin")
    yield plugin, info
    fw.plugins.unregister("triple_plugin")


def test_registered_plugin_is_loaded_listed_and_differentiable(triple):
    plugin, info = triple
    assert (info.state, info.version, info.provides["ops"]) == (
        "loaded", "in-process", ["triple_for_register_test"])
    x = fw.tensor([1.0, 2.0], requires_grad=True)
    y = apply(plugin.op, (x,))
    assert y.tolist() == [3.0, 6.0]
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_unregister_removes_the_op_and_tensors_from_before_keep_working():
    before = fw.tensor([1.0, 2.0])
    fw.plugins.register(TripleOp(), "triple_plugin")
    during = fw.ones(2)
    fw.plugins.unregister("triple_plugin")
    with pytest.raises(KeyError, match="triple_for_register_test"):
        fw.ops.get("triple_for_register_test")
    after = fw.ones(2)
    # the cpu Device object survives both reloads, so all three combine
    np.testing.assert_array_equal((before + during + after).numpy(), [3.0, 4.0])
    assert before.device is after.device


def test_register_refuses_installed_names_and_unknown_unregister():
    with pytest.raises(PluginError, match="already installed"):
        fw.plugins.register(TripleOp(), "fw_cpu")
    with pytest.raises(PluginError, match="no plugin 'nope'"):
        fw.plugins.unregister("nope")
