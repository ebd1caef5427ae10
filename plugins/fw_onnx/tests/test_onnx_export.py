"""fw_onnx.export: models pass onnx.checker (full shape inference) and onnxruntime, an
independent runtime, gives fw's outputs, also at sizes other than the example's along the
dynamic dimensions; what has no ONNX form is refused with the op and module path."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import ExportError

fw_onnx = pytest.importorskip("fw_onnx")
ort = pytest.importorskip("onnxruntime")

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))  # the repository, for the benchmarks package

from benchmarks.workloads import WORKLOADS  # noqa: E402
from benchmarks.workloads.common import build_model, fw_lib, initial_weights  # noqa: E402

#: the axis of each workload's input that holds the batch
BATCH_AXIS = {"mlp": 0, "cnn": 0, "transformer": 0, "lstm_cell": 1, "lstm": 1}
F = fw.nn.functional


def run_onnx(path, **inputs) -> list[np.ndarray]:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, inputs)


def assert_matches(got, want, tolerance=1e-5):
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_benchmark_workloads_run_on_onnxruntime_at_another_batch(tmp_path, name):
    workload = WORKLOADS[name]
    model = build_model(workload, fw_lib(), initial_weights(workload))
    x, _ = workload.data(3, np.random.default_rng(0))
    argument = "tokens" if name == "transformer" else "x"
    result = fw_onnx.export(model, (fw.tensor(x),), tmp_path / "m.onnx",
                            dynamic_axes={argument: {BATCH_AXIS[name]: "batch"}})
    assert result.opset == 18 and result.bytes > 0
    x5, _ = workload.data(5, np.random.default_rng(1))
    with fw.no_grad():
        want = model(fw.tensor(x5)).numpy()
    assert_matches(run_onnx(result.path, **{argument: x5})[0], want)


@pytest.mark.parametrize("cell", ["LSTM", "GRU", "RNN"])
def test_recurrent_layers_become_onnx_recurrent_nodes(tmp_path, cell):
    fw.manual_seed(0)
    options = {"nonlinearity": "relu"} if cell == "RNN" else {}
    model = getattr(fw.nn, cell)(8, 16, num_layers=2, batch_first=True, **options)
    result = fw_onnx.export(lambda x: model(x)[0], (fw.randn(3, 7, 8),), tmp_path / "r.onnx",
                            dynamic_axes={"x": {0: "batch", 1: "sequence"}})
    assert cell in result.op_types
    x = np.random.default_rng(0).standard_normal((4, 11, 8)).astype(np.float32)
    with fw.no_grad():
        want = model(fw.tensor(x))[0].numpy()
    assert_matches(run_onnx(result.path, x=x)[0], want)


def _x(*shape, seed=0):
    return fw.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


MASK = fw.tensor(np.tril(np.ones((5, 5), bool)) | np.eye(5, k=1, dtype=bool))

#: name -> (function, example inputs): one case per program op family a converter writes
CASES = {
    "softmax": (lambda x: fw.softmax(x, dim=-1) + fw.log_softmax(x, dim=1), (_x(2, 3, 4),)),
    "matmul": (lambda a, b: a @ b + fw.bmm(a[0], b[0]), (_x(2, 3, 4, 5), _x(2, 3, 5, 2, seed=1))),
    "cat_stack": (lambda x: fw.cat([x, x * 2], dim=1)[:, 1:4] + fw.stack([x, -x], dim=-1)[..., 0],
                  (_x(2, 3, 4),)),
    "broadcast_flip": (lambda x: fw.broadcast_to(x, (4, 3, 5)) + fw.flip(x, (0, 2)),
                       (_x(1, 3, 5),)),
    "pad": (lambda x: F.pad(x, (1, 2), value=0.5) + F.pad(x, (0, 3)), (_x(2, 3, 6),)),
    "getitem": (lambda x: x[:, None, 1:3, ::2] + x[:, None, [0, 2], 2:], (_x(2, 4, 5),)),
    "reductions": (lambda x: fw.cat([x.amax(1), x.amin(1), x.prod(1), x.mean(1),
                                     x.var(1), x.std(1, correction=0),
                                     x.norm(p=1, dim=1),
                                     x.max().reshape(1, 1).expand(2, 5),
                                     x.argmax(1).float(), x.argmin(1).float()], dim=1),
                   (_x(2, 3, 5),)),
    "argmax_flat": (lambda x: x.argmax(), (_x(3, 4),)),
    "attention": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=MASK) +
                  F.scaled_dot_product_attention(q, k, v, is_causal=True) +
                  F.scaled_dot_product_attention(q, k, v, attn_mask=MASK.float() * -2.0),
                  (_x(2, 5, 4), _x(2, 5, 4, seed=1), _x(2, 5, 3, seed=2))),
    "arange": (lambda x: x + fw.arange(x.shape[-1]).float(), (_x(2, 5),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_op_family_agrees_with_onnxruntime(tmp_path, name):
    fn, inputs = CASES[name]
    result = fw_onnx.export(fn, inputs, tmp_path / "f.onnx")
    with fw.no_grad():
        want = fn(*inputs).numpy()
    session = ort.InferenceSession(str(result.path), providers=["CPUExecutionProvider"])
    feeds = {i.name: t.numpy() for i, t in zip(session.get_inputs(), inputs)}
    assert_matches(session.run(None, feeds)[0], want)


def _norms():
    fw.manual_seed(0)
    return fw.nn.Sequential(
        fw.nn.BatchNorm1d(4), fw.nn.Conv1d(4, 6, 3, padding=1), fw.nn.GroupNorm(2, 6),
        fw.nn.AvgPool1d(2), fw.nn.MaxPool1d(2, ceil_mode=True), fw.nn.RMSNorm(2),
        fw.nn.LayerNorm(2, elementwise_affine=False), fw.nn.AdaptiveAvgPool1d(1))


def test_norms_and_pools_agree_with_onnxruntime(tmp_path):
    model = _norms()
    model.train()
    with fw.no_grad():
        model(_x(8, 4, 9))  # running statistics other than the initial ones
    model.eval()
    result = fw_onnx.export(model, (_x(3, 4, 9),), tmp_path / "n.onnx",
                            dynamic_axes={"x": {0: "batch"}})
    assert {"BatchNormalization", "Conv", "AveragePool", "MaxPool", "LayerNormalization",
            "GlobalAveragePool"} <= set(result.op_types)
    x = _x(5, 4, 9, seed=3)
    with fw.no_grad():
        want = model(x).numpy()
    assert_matches(run_onnx(result.path, x=x.numpy())[0], want)


def test_minilm_round_trips_at_another_batch_and_length(tmp_path):
    fw_zoo = pytest.importorskip("fw_zoo")
    encoder = fw_zoo.load("all-minilm-l6-v2")
    ids, mask = encoder.tokenize(["fw writes ONNX", "a second sentence"])
    dims = {0: "batch", 1: "sequence"}
    result = fw_onnx.export(encoder.model, (ids, mask), tmp_path / "minilm.onnx",
                            dynamic_axes={"input_ids": dims, "attention_mask": dims})
    ids, mask = encoder.tokenize(["a longer sentence than the ones it was exported with",
                                  "short", "three"])
    with fw.no_grad():
        want = encoder.model(ids, mask).numpy()
    got = run_onnx(result.path, input_ids=ids.numpy(), attention_mask=mask.numpy())[0]
    assert_matches(got, want)


class Cumulative(fw.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = fw.nn.Linear(3, 3)

    def forward(self, x):
        return self.block(x).cumsum(1)


def test_an_op_without_an_onnx_form_is_refused_with_its_module(tmp_path):
    with pytest.raises(ExportError, match="cumsum"):
        fw_onnx.export(Cumulative(), (_x(2, 3),), tmp_path / "c.onnx")
    program = {"inputs": [{"name": "x", "value": 0, "dtype": "float32", "shape": [2]}],
               "outputs": [{"name": "y", "value": 1, "dtype": "float32", "shape": [2]}],
               "values": {"0": {"dtype": "float32", "shape": [2]},
                          "1": {"dtype": "float32", "shape": [2]}},
               "weights": {}, "nodes": [{"op": "fancy", "inputs": [0], "output": 1,
                                         "attrs": {}, "module": "head.act"}]}
    with pytest.raises(ExportError, match="fancy has no ONNX form") as error:
        fw_onnx.to_onnx(program, {})
    assert "head.act" in str(error.value) and "linear" in str(error.value)
    with pytest.raises(ExportError, match="opset 12"):
        fw_onnx.to_onnx(program, {}, opset=12)


def test_the_command_lists_ops_and_describes_a_file(tmp_path, capsys):
    from fw_onnx import cli

    assert cli.main([]) == 0
    listed = capsys.readouterr().out.split()
    assert listed == fw_onnx.supported_ops() and "lstm_layer" in listed
    fw_onnx.export(lambda x: fw.tanh(x) * 2, (_x(2, 3),), tmp_path / "t.onnx")
    assert cli.main([str(tmp_path / "t.onnx")]) == 0
    out = capsys.readouterr().out
    assert "opset ai.onnx 18" in out and "  Tanh" in out.splitlines()


def test_a_model_onnx_reference_disagrees_with_is_refused(tmp_path, monkeypatch):
    export_module = sys.modules["fw_onnx.export"]  # the module: fw_onnx.export is the function

    def wrong(*args, **kwargs):  # a writer bug: Tanh written as Sigmoid
        model = export_module_to_onnx(*args, **kwargs)
        for node in model.graph.node:
            node.op_type = "Sigmoid" if node.op_type == "Tanh" else node.op_type
        return model

    export_module_to_onnx = export_module.to_onnx
    monkeypatch.setattr(export_module, "to_onnx", wrong)
    with pytest.raises(ExportError, match="differ from fw's") as error:
        fw_onnx.export(lambda x: fw.tanh(x), (_x(2, 3),), tmp_path / "t.onnx")
    assert "onnx.reference" in str(error.value)
    assert not (tmp_path / "t.onnx").exists()
    monkeypatch.undo()
    result = fw_onnx.export(lambda x: fw.tanh(x), (_x(2, 3),), tmp_path / "t.onnx")
    assert result.max_abs_error < 1e-6 and "max abs error" in str(result)
