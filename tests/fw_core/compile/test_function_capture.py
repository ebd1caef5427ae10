"""autograd.Function under fw.compile: captured when forward and backward are fw ops, a
graph break (with the reason and line) when forward reads values on the host."""

import numpy as np

import fw_core as fw


class Cube(fw.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * grad


class HostCube(fw.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return fw.tensor(x.numpy() ** 3)

    @staticmethod
    def backward(ctx, grad):
        return grad


def test_function_of_fw_ops_is_captured_in_inference():
    f = fw.compile(lambda x: Cube.apply(x) + 1)
    with fw.no_grad():
        for _ in range(3):
            x = fw.randn(5)
            np.testing.assert_allclose(f(x).numpy(), x.numpy() ** 3 + 1, rtol=1e-6)
    assert f.counts["plan_calls"] == 2, f.explain()
    assert "autograd.Function Cube" in f.explain()


def test_function_backward_is_captured_in_a_training_step():
    w = fw.nn.Parameter(fw.tensor([0.5, -1.0, 2.0]))
    opt = fw.optim.SGD([w], lr=0.0)

    def step(x):
        opt.zero_grad()
        loss = (Cube.apply(w) * x).sum()
        loss.backward()
        opt.step()
        return loss

    f = fw.compile(step)
    for _ in range(3):
        x = fw.randn(3)
        loss = f(x)
        np.testing.assert_allclose(loss.item(), (w.detach().numpy() ** 3 * x.numpy()).sum(),
                                   rtol=1e-5)
        np.testing.assert_allclose(w.grad.numpy(), 3 * w.detach().numpy() ** 2 * x.numpy(),
                                   rtol=1e-6)
    assert f.counts["plan_calls"] == 2, f.explain()


def test_function_reading_the_host_is_a_logged_graph_break():
    f = fw.compile(lambda x: HostCube.apply(x) * 2)
    with fw.no_grad():
        for _ in range(3):
            x = fw.randn(4)
            np.testing.assert_allclose(f(x).numpy(), x.numpy() ** 3 * 2, rtol=1e-6)
    assert f.counts["plan_calls"] == 0
    assert ".numpy()" in f.explain() and "test_function_capture.py" in f.explain()
