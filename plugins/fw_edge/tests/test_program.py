"""Calling a program: inputs by position and name, the checks and their messages, output
forms, and the memory plan (buffers reused, views keeping what they alias alive)."""

from __future__ import annotations

import numpy as np
import pytest
from fwm_writer import Builder

import fw_edge
from fw_edge import EdgeError


def _relu_chain(n_layers=4, width=8):
    """x -> (linear, relu) * n_layers with a dynamic batch: many dead intermediates."""
    rng = np.random.default_rng(1)
    b = Builder({"batch": 2})
    h = b.input("x", "float32", ["batch", width])
    weights = []
    for i in range(n_layers):
        w = rng.standard_normal((width, width)).astype(np.float32) / 3
        weights.append(w)
        h = b.node("linear", [h, b.weight(w, f"l{i}.weight"), None], "float32",
                   ["batch", width], module=f"l{i}", weight_layout="out_in")
        h = b.pointwise([h], [["maximum", ["arg", 0], ["const", 0.0]]], ["step", 0], "float32",
                        ["batch", width], module=f"act{i}")
    b.output(h, "output")
    return b, weights


def _chain_ref(x, weights):
    for w in weights:
        x = np.maximum(x @ w.T, 0)
    return x


def test_buffers_are_reused_and_a_second_call_allocates_none(run, rng):
    builder, weights = _relu_chain()
    prog = run(builder)
    x = rng.standard_normal((3, 8)).astype(np.float32)
    plan = prog.plan_for(x)
    assert plan.intermediates == 7 and len(plan.buffers) == 2  # 7 values in 2 buffers
    ids = [id(buf) for buf in plan.buffers]
    first, second = prog(x), prog(x * 2)
    assert prog.plan_for(x) is plan and [id(buf) for buf in plan.buffers] == ids
    np.testing.assert_allclose(first, _chain_ref(x, weights), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(second, _chain_ref(x * 2, weights), rtol=1e-6, atol=1e-6)
    assert not np.shares_memory(first, second)
    assert not any(np.shares_memory(first, buf) for buf in plan.buffers)


def test_each_shape_gets_its_plan(run, rng):
    builder, weights = _relu_chain()
    prog = run(builder)
    for n in (1, 5, 1):
        x = rng.standard_normal((n, 8)).astype(np.float32)
        np.testing.assert_allclose(prog(x), _chain_ref(x, weights), rtol=1e-6, atol=1e-6)
    assert len(prog._plans) == 2


@pytest.mark.parametrize("view_is_output", [False, True])
def test_a_view_keeps_its_buffer_alive(run, rng, view_is_output):
    """y = relu(x); v = y.T (a view of y's buffer); z = exp(x) would overwrite y's buffer if
    y were freed when its last direct use (the permute) ran; out = v + z."""
    b = Builder()
    x = b.input("x", "float32", [3, 3])
    y = b.pointwise([x], [["maximum", ["arg", 0], ["const", 0.0]]], ["step", 0], "float32",
                    [3, 3])
    v = b.node("permute", [y], "float32", [3, 3], dims=(1, 0))
    z = b.pointwise([x], [["exp", ["arg", 0]]], ["step", 0], "float32", [3, 3])
    out = b.pointwise([v, z], [["add", ["arg", 0], ["arg", 1]]], ["step", 0], "float32", [3, 3])
    b.output(out, "output")
    if view_is_output:
        b.output(v, "view")
    prog = run(b)
    x_ = rng.standard_normal((3, 3)).astype(np.float32)
    result = prog(x_)
    total = result["output"] if view_is_output else result
    np.testing.assert_allclose(total, np.maximum(x_, 0).T + np.exp(x_), rtol=1e-6)
    plan = prog.plan_for(x_)
    assert len(plan.buffers) == 2  # y's buffer is not lent to z while v is alive
    if not view_is_output:
        return
    assert not any(np.shares_memory(result["view"], buf) for buf in plan.buffers)
    np.testing.assert_array_equal(result["view"], np.maximum(x_, 0).T)


def test_reshape_of_a_strided_view_copies(run, rng):
    b = Builder()
    x = b.input("x", "float32", [2, 3, 4])
    y = b.pointwise([x], [["neg", ["arg", 0]]], ["step", 0], "float32", [2, 3, 4])
    p = b.node("permute", [y], "float32", [3, 2, 4], dims=(1, 0, 2))
    b.output(b.node("reshape", [p], "float32", [3, 8], shape=(3, 8)), "output")
    x_ = rng.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(run(b)(x_), (-x_).transpose(1, 0, 2).reshape(3, 8))


def _two_inputs():
    b = Builder({"batch": 2, "seq": 3})
    ids = b.input("input_ids", "int64", ["batch", "seq"])
    mask = b.input("attention_mask", "float32", ["batch", "seq"])
    b.output(b.pointwise([ids, mask], [["mul", ["arg", 0], ["arg", 1]]], ["step", 0],
                         "float32", ["batch", "seq"]), "output")
    return b


def test_inputs_by_position_and_name(run):
    prog = run(_two_inputs())
    ids, mask = np.arange(6).reshape(2, 3), np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(prog(ids, mask), prog(input_ids=ids, attention_mask=mask))
    np.testing.assert_array_equal(prog(ids, attention_mask=mask), ids.astype(np.float32))
    assert [p.name for p in prog.inputs] == ["input_ids", "attention_mask"]
    assert prog.inputs[0].shape == ("batch", "seq") and prog.outputs[0].dtype == np.float32


@pytest.mark.parametrize("call, message", [
    (lambda p, i, m: p(i), "'attention_mask' missing"),
    (lambda p, i, m: p(i, m, m), "takes 2 input(s)"),
    (lambda p, i, m: p(i, mask=m), "no input named 'mask'"),
    (lambda p, i, m: p(i.astype(np.int32), m), "'input_ids' is int32, the program expects int64"),
    (lambda p, i, m: p(i.tolist(), m), "'input_ids' is a list"),
    (lambda p, i, m: p(i[None], m), "expects 2-d (batch, seq)"),
    (lambda p, i, m: p(i, m[:, :2]), "'seq' = 2, but input 'input_ids' set 'seq' = 3"),
])
def test_call_errors_name_the_input_and_the_expectation(run, call, message):
    prog = run(_two_inputs())
    ids, mask = np.arange(6).reshape(2, 3), np.ones((2, 3), np.float32)
    with pytest.raises(EdgeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call(prog, ids, mask)


def test_fixed_sizes_are_checked(run):
    builder, _ = _relu_chain(1)
    prog = run(builder)
    with pytest.raises(EdgeError, match="dimension 1 must be 8"):
        prog(np.ones((2, 7), np.float32))


def test_outputs_as_tuple_when_unnamed(run):
    b = Builder()
    x = b.input("x", "float32", [2])
    b.output(b.pointwise([x], [["neg", ["arg", 0]]], ["step", 0], "float32", [2]))
    b.output(x)
    neg, same = run(b)(np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(neg, [-1, -2])
    np.testing.assert_array_equal(same, [1, 2])


def test_a_failing_kernel_is_named(run):
    b = Builder()
    idx = b.input("idx", "int64", [2])
    w = b.weight(np.ones((3, 2), np.float32), "emb.weight")
    b.output(b.node("embedding", [idx, w], "float32", [2, 2], module="emb", padding_idx=None))
    prog = run(b)
    with pytest.raises(EdgeError, match="embedding at emb failed"):
        prog(np.array([0, 7]))


def test_program_class_is_exported():
    assert fw_edge.Program.__name__ == "Program"
