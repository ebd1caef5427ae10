"""fw_onnx.load: ONNX models as trainable fw modules; fw_onnx.backend against ONNX's own node
suite; what cannot be imported is refused with the node, op type, domain and opset."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import fw_core as fw
from fw_core.errors import UnsupportedError

fw_onnx = pytest.importorskip("fw_onnx")

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))  # the repository, for the benchmarks package

from benchmarks.workloads import WORKLOADS  # noqa: E402
from benchmarks.workloads.common import build_model, fw_lib, initial_weights  # noqa: E402

#: the node suite's pass count may only go up (docs/onnx_node_suite.md has every op type)
NODE_CASES_PASSING = 1360


def test_the_onnx_node_suite_passes_at_least_the_target():
    from fw_onnx import node_suite

    found = node_suite.results()
    assert len(found) == 1884
    passed = [name for name, why in found.items() if why is None]
    assert len(passed) >= NODE_CASES_PASSING, sorted(found.items())[:20]
    for name in ("test_conv_with_strides_padding", "test_lstm_defaults", "test_attention_4d",
                 "test_layer_normalization_2d_axis0", "test_gru_defaults", "test_relu",
                 "test_if", "test_loop11", "test_scan9_sum", "test_convtranspose",
                 "test_resize_upsample_scales_linear"):
        assert found[name] is None, (name, found[name])
    assert all(isinstance(why, str) and why for why in found.values() if why is not None)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_fw_to_onnx_to_fw_gives_the_same_outputs(tmp_path, name):
    workload = WORKLOADS[name]
    model = build_model(workload, fw_lib(), initial_weights(workload))
    x, _ = workload.data(3, np.random.default_rng(0))
    argument = "tokens" if name == "transformer" else "x"
    path = tmp_path / "m.onnx"
    fw_onnx.export(model, (fw.tensor(x),), path)
    imported = fw_onnx.load(path)
    assert imported.input_names == [argument]
    with fw.no_grad():
        np.testing.assert_allclose(imported(fw.tensor(x)).numpy(),
                                   model(fw.tensor(x)).numpy(), rtol=1e-5, atol=1e-5)


def _mlp_onnx(w1, b1, w2, b2) -> onnx.ModelProto:
    """A 2-layer MLP written directly as ONNX (Gemm, Relu, MatMul, Add)."""
    inits = [onnx.numpy_helper.from_array(a, n) for a, n in
             ((w1, "layer1.weight"), (b1, "layer1.bias"), (w2, "head/w"), (b2, "head/b"))]
    nodes = [helper.make_node("Gemm", ["x", "layer1.weight", "layer1.bias"], ["h"], transB=1),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("MatMul", ["r", "head/w"], ["m"]),
             helper.make_node("Add", ["m", "head/b"], ["y"])]
    graph = helper.make_graph(nodes, "mlp",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 3])],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_an_imported_model_trains_as_the_same_model_written_in_fw():
    rng = np.random.default_rng(0)
    w1, b1 = rng.standard_normal((8, 4), np.float32), rng.standard_normal(8, np.float32)
    w2, b2 = rng.standard_normal((8, 3), np.float32), rng.standard_normal(3, np.float32)
    imported = fw_onnx.load(_mlp_onnx(w1, b1, w2, b2).SerializeToString())
    assert imported.onnx_names == {"layer1_weight": "layer1.weight", "layer1_bias": "layer1.bias",
                                   "head_w": "head/w", "head_b": "head/b"}
    assert imported.initializer("head/w") is imported.head_w
    written = [fw.nn.Parameter(fw.tensor(a.copy())) for a in (w1, b1, w2, b2)]
    x = fw.tensor(rng.standard_normal((5, 4), np.float32))
    y = fw.tensor(np.array([0, 2, 1, 1, 0]))
    loss_fn = fw.nn.CrossEntropyLoss()
    loss_fn(imported(x), y).backward()
    a, b, c, d = written
    loss_fn(fw.relu(x @ a.T + b) @ c + d, y).backward()
    for p, q in zip(imported.parameters(), written):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-6)
    optimizer = fw.optim.Adam(imported.parameters(), lr=0.05)
    losses = []
    for _ in range(20):
        optimizer.zero_grad()
        loss = loss_fn(imported(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


def test_an_imported_model_compiles():
    rng = np.random.default_rng(1)
    arrays = (rng.standard_normal((8, 4), np.float32), rng.standard_normal(8, np.float32),
              rng.standard_normal((8, 3), np.float32), rng.standard_normal(3, np.float32))
    imported = fw_onnx.load(_mlp_onnx(*arrays))
    fw.scheduler.configure(compile_after=0)
    try:
        compiled = fw.compile(imported)
        x = fw.tensor(rng.standard_normal((6, 4), np.float32))
        with fw.no_grad():
            want = imported(x).numpy()
            for _ in range(3):
                got = compiled(x).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
        assert compiled.counts["plan_calls"] >= 2
    finally:
        fw.scheduler.reset()


def test_an_exported_lstm_imports_as_onnx_lstm_nodes(tmp_path):
    fw.manual_seed(0)
    model = fw.nn.LSTM(4, 6, batch_first=True)
    x = fw.randn(2, 5, 4)
    fw_onnx.export(lambda x: model(x)[0], (x,), tmp_path / "l.onnx")
    imported = fw_onnx.load(tmp_path / "l.onnx")
    with fw.no_grad():
        np.testing.assert_allclose(imported(x).numpy(), model(x)[0].numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_unknown_ops_and_opsets_are_refused_with_what_to_do():
    node = helper.make_node("Frobnicate", ["x"], ["y"], name="mystery", domain="com.example")
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(UnsupportedError) as error:
        fw_onnx.load(model)
    text = str(error.value)
    assert "mystery" in text and "com.example:Frobnicate" in text and "opset 18" in text
    assert "fix:" in text
    old = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                                              graph.input, graph.output),
                            opset_imports=[helper.make_opsetid("", 5)])
    with pytest.raises(UnsupportedError, match="opset 5"):
        fw_onnx.load(old)


def test_the_backend_runs_a_model_and_a_node():
    from fw_onnx.backend import FwBackend

    rng = np.random.default_rng(2)
    arrays = (rng.standard_normal((8, 4), np.float32), rng.standard_normal(8, np.float32),
              rng.standard_normal((8, 3), np.float32), rng.standard_normal(3, np.float32))
    x = rng.standard_normal((2, 4), np.float32)
    (y,) = FwBackend.run_model(_mlp_onnx(*arrays), [x])
    w1, b1, w2, b2 = arrays
    np.testing.assert_allclose(y, np.maximum(x @ w1.T + b1, 0) @ w2 + b2, rtol=1e-5,
                               atol=1e-5)
    assert FwBackend.supports_device("CPU") and not FwBackend.supports_device("CUDA")


def _torch_minilm_onnx(path: Path) -> Path:
    """all-MiniLM-L6-v2 exported by torch.onnx (the legacy exporter, opset 17) from the
    hand-written PyTorch reference of fw_zoo's tests, batch and sequence dynamic."""
    pytest.importorskip("torch")
    pytest.importorskip("fw_zoo")
    sys.path.insert(0, str(ROOT / "plugins" / "fw_zoo" / "tests"))
    from zoo_torch_bert import TorchSentenceBert

    from benchmarks import edge_models
    from fw_zoo import minilm as card
    from fw_zoo.package_files import model_folder

    reference = TorchSentenceBert(model_folder(card.PACKAGE, card.DISTRIBUTION, card.FILES))
    module = edge_models._torch_bert_module()(reference).eval()
    axes = {0: "batch", 1: "sequence"}
    edge_models._onnx_export(module, edge_models.minilm_inputs(16), path,
                             dynamic_axes={"input_ids": axes, "attention_mask": axes})
    return path


def test_minilm_exported_by_torch_imports_and_runs_on_fw_edge(tmp_path):
    import fw_edge
    import fw_zoo

    path = _torch_minilm_onnx(tmp_path / "torch_minilm.onnx")
    imported = fw_onnx.load(path)
    encoder = fw_zoo.load("all-minilm-l6-v2")
    ids, mask = encoder.tokenize(["a sentence longer than the sixteen tokens it was exported "
                                  "with, to change the sequence length", "short", "three"])
    with fw.no_grad():
        want = encoder.model(ids, mask).numpy()
        np.testing.assert_allclose(imported(ids, mask).numpy(), want, rtol=1e-5, atol=1e-5)
    result = fw_onnx.to_edge(path, tmp_path / "torch_minilm.fwm")
    assert result.max_abs_error < 1e-5
    program = fw_edge.load(result.path)
    assert [i.shape for i in program.inputs] == [("batch", "sequence")] * 2
    got = program(input_ids=ids.numpy(), attention_mask=mask.numpy())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_to_edge_traces_given_examples_and_keeps_the_models_dynamic_sizes(tmp_path):
    import fw_edge

    rng = np.random.default_rng(3)
    arrays = (rng.standard_normal((8, 4), np.float32), rng.standard_normal(8, np.float32),
              rng.standard_normal((8, 3), np.float32), rng.standard_normal(3, np.float32))
    x = rng.standard_normal((4, 4), np.float32)
    result = fw_onnx.to_edge(_mlp_onnx(*arrays), tmp_path / "mlp.fwm", {"x": x})
    program = fw_edge.load(result.path)
    assert program.inputs[0].shape == ("x_0", 4)  # the model's unnamed dynamic dimension
    w1, b1, w2, b2 = arrays
    for rows in (x, x[:2]):
        np.testing.assert_allclose(program(rows), np.maximum(rows @ w1.T + b1, 0) @ w2 + b2,
                                   rtol=1e-5, atol=1e-5)


def test_an_imported_model_is_debugged_and_visualised_like_any_other():
    fw_debugger = pytest.importorskip("fw_debugger")
    fw_viz = pytest.importorskip("fw_viz")
    rng = np.random.default_rng(4)
    arrays = (rng.standard_normal((8, 4), np.float32), rng.standard_normal(8, np.float32),
              rng.standard_normal((8, 3), np.float32), rng.standard_normal(3, np.float32))
    imported = fw_onnx.load(_mlp_onnx(*arrays))
    x = fw.tensor(rng.standard_normal((2, 4), np.float32))
    with fw_debugger.record() as trace:
        imported(x).sum().backward()
    ops = [e.op for e in trace.find()]
    assert {"relu", "matmul"} <= {getattr(op, "name", op) for op in ops}
    graph = fw_viz.capture(imported, x)
    assert any(node.get("op") == "relu" for node in graph.data["nodes"]), graph.data["nodes"][:3]


def test_minilm_round_trips_through_onnx_back_into_fw(tmp_path):
    fw_zoo = pytest.importorskip("fw_zoo")
    encoder = fw_zoo.load("all-minilm-l6-v2")
    ids, mask = encoder.tokenize(["fw writes ONNX and reads it back", "a second sentence"])
    dims = {0: "batch", 1: "sequence"}
    path = tmp_path / "minilm.onnx"
    fw_onnx.export(encoder.model, (ids, mask), path,
                   dynamic_axes={"input_ids": dims, "attention_mask": dims})
    imported = fw_onnx.load(path)
    ids, mask = encoder.tokenize(["another length now", "short", "three sentences"])
    with fw.no_grad():
        np.testing.assert_allclose(imported(ids, mask).numpy(),
                                   encoder.model(ids, mask).numpy(), rtol=1e-5, atol=1e-5)
