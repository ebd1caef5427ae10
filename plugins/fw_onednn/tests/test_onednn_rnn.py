"""Recurrent layers through fw_onednn: lstm_layer, gru_layer and rnn_layer (and their backward
ops) on oneDNN's RNN primitives against fw_cpu's kernels and PyTorch; nn.LSTM, nn.GRU and
nn.RNN multi-layer, bidirectional, batch first, with initial states; what the guards refuse;
the workspace kept from forward to backward; and the nn.LSTM benchmark workload training alike
with and without fw_onednn."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.special

import fw_core as fw
import fw_onednn
from fw_cpu.kernels import rnn as cpu_rnn
from fw_onednn import rnn

torch = pytest.importorskip("torch")

T, B, FEATURES, H = 6, 4, 5, 7
CPU = cpu_rnn.kernels(np, scipy.special)
CELLS = {"lstm_layer": (rnn.takes_lstm, 4, 2), "gru_layer": (rnn.takes_gru, 3, 1),
         "rnn_layer": (rnn.takes_rnn, 1, 1)}


def _arrays(rng, op, bias=True, dtype=np.float32):
    _, gates, states = CELLS[op]
    shapes = [(T, B, FEATURES)] + [(B, H)] * states + [(gates * H, FEATURES), (gates * H, H)]
    shapes += [(gates * H,), (gates * H,)] if bias else []
    return [(rng.standard_normal(s) * (0.5 if len(s) == 2 and s[0] != B else 1)).astype(dtype)
            for s in shapes]


def _attrs(op, reverse, nonlinearity="tanh"):
    return {"reverse": reverse, **({"nonlinearity": nonlinearity} if op == "rnn_layer" else {})}


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
@pytest.mark.parametrize("op, nonlinearity", [("lstm_layer", None), ("gru_layer", None),
                                              ("rnn_layer", "tanh"), ("rnn_layer", "relu")])
def test_kernels_match_fw_cpus_forward_and_backward(rng, op, nonlinearity, reverse, bias):
    arrays = _arrays(rng, op, bias)
    attrs = _attrs(op, reverse, nonlinearity)
    takes = CELLS[op][0]
    assert takes(*arrays, **attrs, for_backward=True)
    out = {"lstm_layer": rnn.run_lstm, "gru_layer": rnn.run_gru,
           "rnn_layer": rnn.run_rnn}[op](*arrays, **attrs, for_backward=True)
    wide = [a.astype(np.float64) for a in arrays]
    expected = CPU[op](*wide, **attrs, for_backward=False)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    g = rng.standard_normal(out.shape).astype(np.float32)
    backward = fw.ops.kernel(f"{op}_backward")
    kept = backward(out, g, *arrays, **attrs)  # finds the workspace its forward kept
    recomputed = backward(out.copy(), g, *arrays, **attrs)  # nothing kept for a copy
    reference = CPU[f"{op}_backward"](expected, g.astype(np.float64), *wide, **attrs)
    np.testing.assert_allclose(kept, reference, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(kept, recomputed)
    served = fw.plugins.serving(f"{op}_backward", "cpu", (out, g, *arrays), attrs)
    assert served[0] == "fw_onednn"


def test_the_forward_keeps_its_workspace_only_for_a_backward_and_only_while_its_output_lives(rng):
    arrays = _arrays(rng, "lstm_layer")
    before = len(rnn.KEPT)
    assert rnn.takes_lstm(*arrays, reverse=False, for_backward=False)
    rnn.run_lstm(*arrays, reverse=False, for_backward=False)
    assert len(rnn.KEPT) == before
    assert rnn.takes_lstm(*arrays, reverse=False, for_backward=True)
    out = rnn.run_lstm(*arrays, reverse=False, for_backward=True)
    workspace, h_n = rnn.KEPT.find(out)
    assert workspace.nbytes > out.nbytes and h_n.shape == (B, H)
    np.testing.assert_array_equal(h_n, out[T - 1])
    del out
    assert len(rnn.KEPT) == before


def test_primitives_are_cached_per_cell_shape_direction_and_training(rng):
    fw_onednn.cache_clear()
    arrays = _arrays(rng, "gru_layer")
    for reverse in (False, True, False):
        for training in (False, True):
            assert rnn.takes_gru(*arrays, reverse=reverse, for_backward=training)
    info = fw_onednn.cache_info()
    assert info.by_kind == {"gru": 4} and info.misses == 4 and info.hits == 2


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_other_dtypes_go_to_fw_cpu(rng, dtype):
    arrays = _arrays(rng, "lstm_layer", dtype=dtype)
    assert not rnn.takes_lstm(*arrays, reverse=False, for_backward=True)
    x, h0, c0, *weights = (fw.from_numpy(a) for a in arrays)
    y, _, _ = fw.ops.rnn.lstm_layer(x, h0, c0, *weights)
    assert y.dtype.name == np.dtype(dtype).name


def test_mismatched_shapes_are_refused_and_fw_raises_its_error(rng):
    arrays = _arrays(rng, "lstm_layer")
    arrays[4] = arrays[4][:, :-1]
    assert not rnn.takes_lstm(*arrays, reverse=False, for_backward=False)
    with pytest.raises(fw.errors.ShapeError, match="w_hh must be"):
        fw.ops.rnn.lstm_layer(*(fw.from_numpy(a) for a in arrays))


def test_an_empty_batch_goes_to_fw_cpu(rng):
    arrays = [a[:, :0] if a.ndim == 3 else a[:0] if a.shape[0] == B else a
              for a in _arrays(rng, "gru_layer")]
    assert not rnn.takes_gru(*arrays, reverse=False, for_backward=False)
    y, h_n = fw.ops.rnn.gru_layer(*(fw.from_numpy(np.ascontiguousarray(a)) for a in arrays))
    assert tuple(y.shape) == (T, 0, H)


# -- the layers -----------------------------------------------------------------------------------
OPTIONS = [{"num_layers": 2}, {"bidirectional": True, "batch_first": True},
           {"num_layers": 3, "bidirectional": True, "dropout": 0.0, "bias": False}]


@pytest.mark.parametrize("with_state", [False, True], ids=["zeros", "h0"])
@pytest.mark.parametrize("options", OPTIONS, ids=str)
@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
def test_layers_match_torch_in_float32_with_gradients(rng, cls, options, with_state):
    torch.manual_seed(0)
    theirs = getattr(torch.nn, cls)(FEATURES, 16, **options)
    ours = getattr(fw.nn, cls)(FEATURES, 16, **options)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = rng.standard_normal((B, 9, FEATURES) if options.get("batch_first") else
                            (9, B, FEATURES)).astype(np.float32)
    d = options.get("num_layers", 1) * (2 if options.get("bidirectional") else 1)
    states = [rng.standard_normal((d, B, 16)).astype(np.float32)
              for _ in range(2 if cls == "LSTM" else 1)] if with_state else []
    fx, tx = fw.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    fs = [fw.tensor(s, requires_grad=True) for s in states]
    ts = [torch.tensor(s, requires_grad=True) for s in states]
    hx = (tuple(fs) if cls == "LSTM" else fs[0]) if states else None
    thx = (tuple(ts) if cls == "LSTM" else ts[0]) if states else None
    fy, fh = ours(fx, hx)
    ty, th = theirs(tx, thx)
    fouts = [fy, *(fh if cls == "LSTM" else (fh,))]
    touts = [ty, *(th if cls == "LSTM" else (th,))]
    cotangents = [rng.standard_normal(tuple(o.shape)).astype(np.float32) for o in fouts]
    sum((o * fw.tensor(c)).sum() for o, c in zip(fouts, cotangents)).backward()
    sum((o * torch.tensor(c)).sum() for o, c in zip(touts, cotangents)).backward()
    for f, t in zip(fouts, touts):
        np.testing.assert_allclose(f.detach().numpy(), t.detach().numpy(), rtol=1e-4, atol=1e-5)
    for f, t in [(fx, tx), *zip(fs, ts), *zip(ours.parameters(), theirs.parameters())]:
        np.testing.assert_allclose(f.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-4)
    kind = {"LSTM": "lstm", "GRU": "gru", "RNN": "rnn_tanh"}[cls]
    assert fw_onednn.cache_info().by_kind.get(kind)  # oneDNN ran them


def test_lstm_projection_stays_on_the_loop_of_fw_ops(rng):
    fw_onednn.cache_clear()
    layer = fw.nn.LSTM(FEATURES, 8, proj_size=3)
    y, (h, c) = layer(fw.randn(T, B, FEATURES))
    assert tuple(y.shape) == (T, B, 3) and tuple(c.shape) == (1, B, 8)
    assert "lstm" not in fw_onednn.cache_info().by_kind


# -- the benchmark workload -----------------------------------------------------------------------
_TRAIN = """
import json, sys
sys.path.insert(0, sys.argv[1])
from benchmarks.workloads import WORKLOADS
from benchmarks.workloads.common import initial_weights
from benchmarks.workloads.modes import Session
import fw_core as fw
workload = WORKLOADS["lstm"]
session = Session(workload, sys.argv[2], initial_weights(workload))
losses = [session.train().item() for _ in range(5)]
weights = {k: v.numpy().tolist() for k, v in session.model.state_dict().items()}
print(json.dumps({"losses": losses, "weights": weights,
                  "plugins": [p.name for p in fw.plugins.info() if p.state == "loaded"]}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fw_eager", "fw_compiled"])
def test_the_lstm_workload_trains_alike_with_and_without_fw_onednn(mode):
    root = Path(__file__).resolve().parents[3]
    runs = {}
    for blocked in ("", "fw_onednn"):
        env = {**os.environ, "FW_DISABLE_PLUGINS": blocked}
        done = subprocess.run([sys.executable, "-c", _TRAIN, str(root), mode], env=env,
                              capture_output=True, text=True, timeout=300, check=True)
        runs[blocked] = json.loads(done.stdout.splitlines()[-1])
    assert "fw_onednn" in runs[""]["plugins"] and "fw_onednn" not in runs["fw_onednn"]["plugins"]
    np.testing.assert_allclose(runs[""]["losses"], runs["fw_onednn"]["losses"], rtol=1e-5)
    for name, value in runs[""]["weights"].items():
        np.testing.assert_allclose(value, runs["fw_onednn"]["weights"][name], rtol=1e-4,
                                   atol=1e-5, err_msg=name)
