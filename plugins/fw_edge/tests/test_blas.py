"""NumPy's BLAS threads: finding OpenBLAS's controls, the one-thread wrapper restoring the
count, which plans ask for one thread, and a planned program running that way."""

from __future__ import annotations

import numpy as np
import pytest
from fwm_writer import Builder

from fw_edge import blas
from fw_edge.program_spec import Node


def _numpy_uses_openblas() -> bool:
    config = getattr(np, "__config__", None)
    blas_info = getattr(config, "CONFIG", {}).get("Build Dependencies", {}).get("blas", {})
    return "openblas" in str(blas_info.get("name", "")).lower()


@pytest.fixture
def controls():
    found = blas.controls()
    if found is None:
        pytest.skip("NumPy's BLAS here is not an OpenBLAS fw-edge can steer")
    get, set_ = found
    before = get()
    yield found
    set_(before)


@pytest.mark.skipif(not _numpy_uses_openblas(), reason="NumPy is not built on OpenBLAS")
def test_controls_are_found_for_numpys_openblas():
    found = blas.controls()
    assert found is not None
    get, _ = found
    assert get() >= 1


def test_one_thread_sets_one_and_restores_the_count_even_on_error(controls):
    get, set_ = controls
    set_(2)
    seen = []

    def run(args):
        seen.append(get())
        if args == "fail":
            raise ValueError("boom")
        return args

    single = blas.one_thread(run, get, set_)
    assert single("ok") == "ok"
    assert get() == 2
    with pytest.raises(ValueError, match="boom"):
        single("fail")
    assert get() == 2 and seen == [1, 1]


def test_overlapping_one_thread_calls_restore_the_count_once_the_last_ends(controls):
    get, set_ = controls
    set_(2)
    seen = []
    inner = blas.one_thread(lambda args: seen.append(("inner", get())), get, set_)

    def outer_run(args):
        inner(None)
        seen.append(("outer, after inner", get()))

    blas.one_thread(outer_run, get, set_)(None)
    assert seen == [("inner", 1), ("outer, after inner", 1)]
    assert get() == 2


def _linear_node(rows, inner, cols, layout="in_out"):
    shapes = {0: (1, rows, inner), 1: (inner, cols) if layout == "in_out" else (cols, inner),
              2: (1, rows, cols)}
    return Node("linear", (0, 1, None), (2,), {"weight_layout": layout}, "fc"), shapes


@pytest.mark.parametrize(("rows", "inner", "cols", "layout", "expected"), [
    (16, 384, 384, "in_out", True),     # BERT at sequence 16: OpenBLAS would thread it
    (32, 384, 1536, "out_in", True),
    (33, 384, 384, "in_out", False),    # more rows than FEW_ROWS: threads pay
    (1, 16, 32, "in_out", False),       # a tiny GEMV OpenBLAS runs on one thread anyway
    (1, 784, 512, "out_in", True),      # a GEMV OpenBLAS threads
    (8, 16, 16, "in_out", False),       # a GEMM below OpenBLAS's threading threshold
])
def test_which_linears_prefer_one_thread(rows, inner, cols, layout, expected):
    node, shapes = _linear_node(rows, inner, cols, layout)
    assert blas.prefers_one_thread([node], shapes) is expected


def test_a_conv_or_a_large_product_keeps_the_threads():
    node, shapes = _linear_node(16, 384, 384)
    conv = Node("conv2d", (2,), (3,), {}, "conv")
    assert not blas.prefers_one_thread([node, conv], shapes)
    big = Node("matmul", (4, 5), (6,), {}, "mm")
    shapes |= {4: (12, 64, 32), 5: (12, 32, 64), 6: (12, 64, 64)}
    assert not blas.prefers_one_thread([node, big], shapes)


def test_a_recurrent_layer_counts_its_input_projection_and_its_steps():
    lstm = Node("lstm_layer", (0, 1, 2, 3, 4), (5,), {}, "lstm")
    shapes = {0: (32, 1, 64), 5: (33, 1, 128)}
    assert blas.prefers_one_thread([lstm], shapes)  # the (1, 128, 128) steps are threaded
    shapes[0] = (64, 1, 64)  # a 64-row input projection
    assert not blas.prefers_one_thread([lstm], shapes)


def _linear_program(rows):
    rng = np.random.default_rng(3)
    w = rng.standard_normal((384, 384)).astype(np.float32) / 20
    bias = rng.standard_normal(384).astype(np.float32)
    b = Builder({"sequence": rows})
    x = b.input("x", "float32", [1, "sequence", 384])
    y = b.node("linear", [x, b.weight(w, "fc.weight"), b.weight(bias, "fc.bias")], "float32",
               [1, "sequence", 384], module="fc", weight_layout="in_out")
    b.output(y, "output")
    return b, w, bias


def test_a_few_row_plan_chooses_its_threads_and_restores_the_count(run, rng, controls):
    get, set_ = controls
    set_(2)
    builder, w, bias = _linear_program(16)
    prog = run(builder)
    for rows, chooses in ((16, True), (64, False)):
        x = rng.standard_normal((1, rows, 384)).astype(np.float32)
        assert (prog.plan_for(x).thread_choice is not None) is chooses
        for _ in range(12):  # the first calls run on one thread, then probe the other mode
            np.testing.assert_allclose(prog(x), x @ w + bias, rtol=1e-5, atol=1e-5)
            assert get() == 2
    choice = prog.plan_for(rng.standard_normal((1, 16, 384)).astype(np.float32)).thread_choice
    assert all(choice.times) and choice.mode in (0, 1)
    x = rng.standard_normal((1, 16, 384)).astype(np.float32)
    # the same products; OpenBLAS may round some elements differently on other thread counts
    np.testing.assert_allclose(choice.runs[0]((x,)), choice.runs[1]((x,)), rtol=1e-5, atol=1e-5)
