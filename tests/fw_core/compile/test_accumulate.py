"""Accumulation rewrites: per-step weight gradients of a loop become one product, chunk
gradients become one concatenation, and only overwritten .grad assignments are dropped."""

import numpy as np

import fw_core as fw
from fw_core.compile.ir import Effect
from fw_core.compile.trace import trace


def _loop_model():
    fw.manual_seed(0)
    cell = fw.nn.Linear(6, 8)

    def loss_of(x):  # x: (steps, batch, 6); the same weight at every step, chunked output
        h = fw.zeros(x.shape[1], 2)
        total = 0.0
        for t in range(x.shape[0]):
            a, b, c, d = cell(x[t]).chunk(4, dim=1)
            h = fw.tanh(a) * fw.sigmoid(b) + c * d + h
            total = total + h.sum()
        return total

    return cell, loss_of


def test_loop_gradients_are_batched_and_equal_eager():
    cell, loss_of = _loop_model()

    def step(x):
        cell.zero_grad()
        loss = loss_of(x)
        loss.backward()
        return loss

    compiled = fw.compile(step)
    for _ in range(3):
        x = fw.randn(5, 3, 6)
        compiled(x)
        got = [p.grad.numpy().copy() for p in cell.parameters()]
        step(x)
        for g, p in zip(got, cell.parameters()):
            np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-5, atol=1e-6)
    log = "\n".join(compiled.plans()[0].graph.log)
    assert "dropped 8 superseded .grad assignments" in log, log
    # weight and bias sums (5 terms each) and five chunk gradients (4 pieces each)
    assert "7 sums of 30 per-step terms became 7 batched ops" in log, log
    ops = [n.op.name for n in compiled.plans()[0].graph.nodes()]
    assert "index_backward" not in ops and ops.count("einsum") == 1


def test_a_host_step_between_backwards_keeps_both_grad_assignments():
    w = fw.randn(3, requires_grad=True)

    def step(x):
        (w * x).sum().backward()
        fw.nn.utils.clip_grad_norm_([w], 1.0)
        (w * x * 2).sum().backward()

    tracer, _ = trace(step, (fw.randn(3),))
    from fw_core.compile.passes.accumulate import drop_superseded_grads

    assert drop_superseded_grads(tracer.graph) == 0
    kinds = [s.kind for s in tracer.graph.steps if s.__class__ is Effect]
    assert kinds.count("set_grad") == 2
