"""Backward, accumulation, retain/create graph, grad(), grad modes, hooks, version counters."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import AutogradError


def leaf(values, dtype=fw.float64):
    return fw.tensor(values, dtype=dtype, requires_grad=True)


def test_backward_accumulates_into_leaves():
    x = leaf([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])
    (x * 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 7.0, 9.0])


def test_shared_gradient_is_not_aliased_between_leaves():
    a, b = leaf([1.0]), leaf([2.0])
    (a + b).sum().backward()
    assert a.grad._data is not b.grad._data
    with fw.no_grad():
        a.grad.mul_(10.0)
    assert b.grad.item() == 1.0


def test_diamond_graph_sums_both_paths():
    x = leaf([2.0])
    y = x * x
    z = y + y * 3.0  # dz/dx = 4 * 2x = 16
    z.backward(fw.ones_like(z))
    assert x.grad.item() == pytest.approx(16.0)


def test_second_backward_without_retain_graph_raises():
    x = leaf([1.0, 2.0])
    y = fw.exp(x).sum()
    y.backward()
    with pytest.raises(AutogradError, match="retain_graph=True"):
        y.backward()


def test_retain_graph_allows_a_second_backward():
    x = leaf([1.0, 2.0])
    y = fw.exp(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]))


def test_create_graph_gives_second_derivative():
    x = leaf([0.5, 1.5])
    y = (x * x * x).sum()  # dy/dx = 3x^2, d2y/dx2 = 6x
    (g,) = fw.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * np.array([0.5, 1.5]) ** 2)
    (h,) = fw.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * np.array([0.5, 1.5]))


def test_third_derivative_of_tanh():
    x = leaf([0.3])
    (g,) = fw.autograd.grad(fw.tanh(x).sum(), x, create_graph=True)
    (h,) = fw.autograd.grad(g.sum(), x, create_graph=True)
    (k,) = fw.autograd.grad(h.sum(), x)
    t = np.tanh(0.3)
    expected = -2 * (1 - t * t) * (1 - 3 * t * t)  # d3/dx3 tanh
    assert k.item() == pytest.approx(expected, rel=1e-9)


def test_grad_does_not_touch_dot_grad_and_reports_unused():
    x, unused = leaf([1.0]), leaf([1.0])
    y = (x * 2.0).sum()
    with pytest.raises(AutogradError, match="allow_unused"):
        fw.autograd.grad(y, [x, unused], retain_graph=True)
    gx, gu = fw.autograd.grad(y, [x, unused], allow_unused=True)
    assert gx.item() == 2.0 and gu is None
    assert x.grad is None


def test_grad_of_intermediate_tensor():
    x = leaf([3.0])
    y = x * x
    z = (y * 2.0).sum()
    (gy,) = fw.autograd.grad(z, y)
    assert gy.item() == 2.0


def test_backward_on_non_scalar_needs_gradient():
    x = leaf([1.0, 2.0])
    with pytest.raises(AutogradError, match="scalar outputs"):
        (x * 2.0).backward()


def test_backward_on_tensor_without_grad_says_why():
    with pytest.raises(AutogradError, match="does not require grad"):
        fw.tensor([1.0]).sum().backward()


def test_no_grad_and_enable_grad():
    x = leaf([1.0])
    with fw.no_grad():
        y = x * 2.0
        with fw.enable_grad():
            z = x * 2.0
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and z.grad_fn is not None


def test_no_grad_as_decorator_and_inference_mode():
    x = leaf([1.0])

    @fw.no_grad()
    def f(t):
        return t * 2.0

    assert not f(x).requires_grad
    with fw.inference_mode():
        assert not (x * 2.0).requires_grad
    assert fw.is_grad_enabled()


def test_set_grad_enabled_as_call_and_context():
    with fw.set_grad_enabled(False):
        assert not fw.is_grad_enabled()
    assert fw.is_grad_enabled()


def test_detach_cuts_the_graph_and_shares_storage():
    x = leaf([1.0, 2.0])
    d = (x * 2.0).detach()
    assert not d.requires_grad and d.grad_fn is None
    y = x * 2.0
    assert np.shares_memory(y.detach()._data, y._data)


def test_tensor_hooks_see_and_replace_gradients():
    x = leaf([1.0, 2.0])
    seen = []
    x.register_hook(lambda g: seen.append(g.numpy().copy()))
    y = x * 3.0
    handle = y.register_hook(lambda g: g * 10.0)
    y.sum().backward()
    np.testing.assert_allclose(seen[0], [30.0, 30.0])
    np.testing.assert_allclose(x.grad.numpy(), [30.0, 30.0])
    handle.remove()
    x.grad = None
    (x * 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_retain_grad_on_intermediate():
    x = leaf([2.0])
    y = x * x
    y.retain_grad()
    (y * 5.0).sum().backward()
    assert y.grad.item() == 5.0


def test_modifying_a_saved_tensor_in_place_raises_clearly():
    x = leaf([1.0, 2.0])
    y = x * 1.0
    z = fw.exp(y)  # exp saves its output
    with fw.no_grad():
        z.add_(1.0)
    with pytest.raises(AutogradError, match="modified in place") as info:
        z.sum().backward()
    assert "exp" in str(info.value)


def test_modifying_a_saved_input_in_place_raises():
    w = fw.tensor([1.0, 2.0], dtype=fw.float64)
    x = leaf([3.0, 4.0])
    y = x * w  # mul saves both inputs
    with fw.no_grad():
        w.mul_(2.0)
    with pytest.raises(AutogradError, match="version"):
        y.sum().backward()


def test_in_place_on_tensor_requiring_grad_is_refused_with_fix():
    x = leaf([1.0])
    with pytest.raises(AutogradError, match="no_grad"):
        x.add_(1.0)
    with fw.no_grad():
        x.add_(1.0)
    assert x.item() == 2.0


def test_nodes_record_op_and_module_path():
    from fw_core._state import state

    x = leaf([1.0])
    state.module_path = "encoder.layers.0.fc1"
    try:
        y = fw.tanh(x)
    finally:
        state.module_path = ""
    assert y.grad_fn.op.name == "tanh"
    assert y.grad_fn.module == "encoder.layers.0.fc1"
    assert y.op == "tanh" and y.module == "encoder.layers.0.fc1"
    assert "encoder.layers.0.fc1" in repr(y.grad_fn)


def test_provenance_is_kept_without_grad():
    x = fw.tensor([1.0])
    assert fw.exp(x).op == "exp"
    assert x.op is None


def test_integer_results_do_not_require_grad():
    x = leaf([1.5, 2.5])
    assert not (x > 2.0).requires_grad
    assert not x.long().requires_grad


def test_backward_inputs_restricts_accumulation():
    a, b = leaf([1.0]), leaf([2.0])
    (a * b).sum().backward(inputs=[a])
    assert a.grad.item() == 2.0 and b.grad is None


def test_gradcheck_catches_a_wrong_vjp(monkeypatch):
    from fw_core.ops.dispatch import apply
    from fw_core.ops.registry import define_op
    from fw_core.records import Structure

    wrong = define_op("wrong_square_for_test", family="elementwise", doc="x*x with a wrong vjp",
                      signature="wrong(x)", meta=fw.ops.get("square").meta,
                      vjp=lambda ctx, g: (g * ctx.inputs[0],),  # missing the factor 2
                      structure=Structure.ELEMENTWISE, anchor=fw.ops.get("square").anchor,
                      saves=("inputs",))
    from fw_core.device import registry

    monkeypatch.setitem(registry.kernels["cpu"], wrong, np.square)
    x = leaf([1.0, 2.0])
    with pytest.raises(AutogradError, match="Jacobian mismatch"):
        fw.autograd.gradcheck(lambda t: apply(wrong, (t,)), [x])
    assert fw.autograd.gradcheck(fw.square, [x])
