"""register_post_accumulate_grad_hook: called once per backward pass, after the leaf's last
gradient of that pass is in ``.grad``, however many paths reach the leaf."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.autograd import register_post_accumulate_grad_hook
from fw_core.errors import AutogradError


def test_called_once_after_every_path_has_accumulated():
    w = fw.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    register_post_accumulate_grad_hook(w, lambda t: seen.append(t.grad.numpy().copy()))
    (w * 3 + w * w).sum().backward()  # three edges reach w
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], [5.0, 7.0])
    (w * 2).sum().backward()  # a second pass adds to .grad and calls again
    assert len(seen) == 2
    np.testing.assert_allclose(seen[1], [7.0, 9.0])


def test_a_leaf_root_and_grad_and_remove():
    w = fw.tensor([1.0], requires_grad=True)
    calls = []
    handle = register_post_accumulate_grad_hook(w, calls.append)
    w.backward(fw.ones(1))
    assert calls == [w]
    fw.autograd.grad((w * 2).sum(), [w])  # grad() accumulates nothing: no call
    assert len(calls) == 1
    handle.remove()
    (w * 2).sum().backward()
    assert len(calls) == 1


def test_called_for_the_leaves_of_one_module_in_backward_order():
    fw.manual_seed(0)
    net = fw.nn.Sequential(fw.nn.Linear(3, 4), fw.nn.ReLU(), fw.nn.Linear(4, 1))
    order = []
    for name, p in net.named_parameters():
        register_post_accumulate_grad_hook(p, lambda t, name=name: order.append(name))
    net(fw.ones(2, 3)).sum().backward()
    assert sorted(order) == sorted(n for n, _ in net.named_parameters())
    assert order.index("2.weight") < order.index("0.weight")


def test_refused_on_a_non_leaf():
    w = fw.tensor([1.0], requires_grad=True)
    with pytest.raises(AutogradError, match="leaf"):
        register_post_accumulate_grad_hook(w * 2, print)


def test_the_tensor_method_is_the_same_hook():
    w = fw.tensor([2.0], requires_grad=True)
    calls = []
    handle = w.register_post_accumulate_grad_hook(lambda t: calls.append(t.grad.item()))
    (w * w).sum().backward()
    assert calls == [4.0]
    handle.remove()
    (w * w).sum().backward()
    assert calls == [4.0]
