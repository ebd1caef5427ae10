"""fw.export: programs fw-edge runs give fw's outputs, at sizes other than the example's along
the dynamic dimensions; what cannot be a program is refused at export with the op and module."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import ExportError
from fw_core.io import safetensors_format as fmt

fw_edge = pytest.importorskip("fw_edge")

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))  # the repository, for the benchmarks package

from benchmarks.workloads import WORKLOADS  # noqa: E402
from benchmarks.workloads.common import build_model, fw_lib, initial_weights  # noqa: E402

#: the axis of each workload's input that holds the batch
BATCH_AXIS = {"mlp": 0, "cnn": 0, "transformer": 0, "lstm_cell": 1, "lstm": 1}


def _run_both(model, inputs: dict, path):
    with fw.no_grad():
        want = model(*(fw.tensor(a) for a in inputs.values()))
    got = fw_edge.load(path)(**inputs)
    return got, want.numpy()


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_benchmark_workloads_round_trip_at_another_batch(tmp_path, name):
    workload = WORKLOADS[name]
    model = build_model(workload, fw_lib(), initial_weights(workload))
    rng = np.random.default_rng(0)
    x, _ = workload.data(3, rng)
    path = tmp_path / f"{name}.fwm"
    result = fw.export(model, (fw.tensor(x),), path,
                       dynamic_dims={"x" if name != "transformer" else "tokens":
                                     {BATCH_AXIS[name]: "batch"}})
    assert result.max_abs_error <= 1e-6 * max(1.0, float(np.abs(x).max()))
    x5, _ = workload.data(5, rng)
    name_in = fw_edge.load(path).inputs[0].name
    got, want = _run_both(model, {name_in: x5}, path)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_nn_lstm_round_trips_with_dynamic_batch_and_sequence(tmp_path):
    fw.manual_seed(0)
    model = fw.nn.LSTM(8, 16, num_layers=2, batch_first=True)
    x = fw.randn(3, 7, 8)
    path = tmp_path / "lstm.fwm"
    fw.export(lambda x: model(x)[0], (x,), path,
              dynamic_dims={"x": {0: "batch", 1: "sequence"}})
    program = fw_edge.load(path)
    assert [d for d in program.inputs[0].shape[:2]] == ["batch", "sequence"]
    x2 = np.random.default_rng(1).standard_normal((2, 11, 8)).astype(np.float32)
    with fw.no_grad():
        want = model(fw.tensor(x2))[0].numpy()
    np.testing.assert_allclose(program(x2), want, rtol=1e-6, atol=1e-6)


class _ConvBN(fw.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = fw.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = fw.nn.BatchNorm2d(8)
        self.fc = fw.nn.Linear(8, 4)
        self.bn1d = fw.nn.BatchNorm1d(4)

    def forward(self, x):
        y = fw.relu(self.bn(self.conv(x))).mean(dim=(2, 3))
        return self.bn1d(self.fc(y))


def test_batch_norm_folds_into_the_layer_before_it(tmp_path):
    fw.manual_seed(0)
    model = _ConvBN()
    model.train()
    with fw.no_grad():  # give the running statistics values that are not 0 and 1
        for _ in range(3):
            model(fw.randn(6, 3, 5, 5) * 2 + 1)
    x = fw.randn(2, 3, 5, 5)
    result = fw.export(model, (x,), tmp_path / "bn.fwm")
    assert "batch_norm" not in result.ops
    assert sum("folded batch_norm" in line for line in result.log) == 2
    assert model.training  # the export put the model back in the mode it was in
    got, want = _run_both(model.eval(), {"x": x.numpy()}, tmp_path / "bn.fwm")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_the_file_is_checked_safetensors_with_the_program(tmp_path):
    model = fw.nn.Sequential(fw.nn.Linear(16, 32), fw.nn.ReLU(), fw.nn.Linear(32, 4))
    fw.export(model, (fw.randn(2, 16),), tmp_path / "mlp.fwm", dynamic_dims={"x": [
        "batch", None]})
    arrays, metadata, checksum = fmt.read(tmp_path / "mlp.fwm")
    assert checksum is not None and metadata["__fwm_format__"] == "1"
    assert sorted(arrays) == ["0.bias", "0.weight", "2.bias", "2.weight"]
    assert arrays["0.weight"].shape == (16, 32)  # stored pre-transposed, [in, out]
    program = fw_edge.load(tmp_path / "mlp.fwm")
    assert program.inputs[0].shape[0] == "batch"


def test_keyword_inputs_keep_their_names(tmp_path):
    def fn(query, key):
        return fw.softmax(query @ key.transpose(-1, -2), dim=-1)

    q, k = fw.randn(2, 4, 8), fw.randn(2, 6, 8)
    fw.export(fn, {"query": q, "key": k}, tmp_path / "attn.fwm",
              dynamic_dims={"query": {1: "queries"}, "key": {1: "keys"}})
    program = fw_edge.load(tmp_path / "attn.fwm")
    assert [i.name for i in program.inputs] == ["query", "key"]
    q2, k2 = fw.randn(2, 5, 8), fw.randn(2, 9, 8)
    np.testing.assert_allclose(program(query=q2.numpy(), key=k2.numpy()),
                               fn(q2, k2).numpy(), rtol=1e-6, atol=1e-7)


class _Inner(fw.nn.Module):
    def forward(self, x):
        return fw.cumsum(x, dim=1)


class _Outer(fw.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = fw.nn.Sequential(fw.nn.Linear(4, 4), _Inner())

    def forward(self, x):
        return self.block(x)


def test_an_op_fw_edge_cannot_run_is_refused_with_its_module_path(tmp_path):
    assert "cumsum" not in fw_edge.supported_ops()
    with pytest.raises(ExportError) as caught:
        fw.export(_Outer(), (fw.randn(2, 4),), tmp_path / "x.fwm")
    text = str(caught.value)
    assert "cumsum" in text and "block.1" in text and "fw_edge.kernels" in text
    assert not (tmp_path / "x.fwm").exists()


def test_host_reads_and_size_loops_are_refused(tmp_path):
    def reads(x):
        return x * float(x.sum())

    with pytest.raises(ExportError, match="host"):
        fw.export(reads, (fw.randn(3),), tmp_path / "a.fwm")

    def loops(x):
        out = x[:, 0]
        for t in range(1, x.shape[1]):
            out = out + x[:, t]
        return out

    with pytest.raises(ExportError, match="loop"):
        fw.export(loops, (fw.randn(2, 5),), tmp_path / "b.fwm", dynamic_dims={"x": {1: "time"}})
    with pytest.raises(ExportError, match="size 2 or more"):
        fw.export(loops, (fw.randn(2, 1),), tmp_path / "c.fwm", dynamic_dims={"x": {1: "time"}})
    with pytest.raises(ExportError, match="not inputs"):
        fw.export(loops, (fw.randn(2, 3),), tmp_path / "d.fwm", dynamic_dims={"y": {0: "b"}})


def test_int8_weights_stay_close_and_shrink_the_file(tmp_path):
    fw.manual_seed(0)
    model = fw.nn.Sequential(fw.nn.Linear(64, 256), fw.nn.GELU(), fw.nn.Linear(256, 32))
    x = fw.randn(8, 64)
    full = fw.export(model, (x,), tmp_path / "f.fwm")
    small = fw.export(model, (x,), tmp_path / "q.fwm", quantize="int8")
    assert small.quantized == ["0.weight", "2.weight"]
    assert small.bytes < full.bytes / 3
    assert small.cosine >= 0.999 and full.cosine > 0.9999999
    assert 0 < small.max_abs_error < 0.05
    assert "int8" in str(small)
