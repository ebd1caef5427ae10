"""RNN, LSTM and GRU against PyTorch: layers, directions, batch_first, initial states,
projections, dropout, unbatched inputs, errors."""

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_core.nn as nn
from fw_core.errors import ShapeError

from .layer_check import check_layer

rng = np.random.default_rng(0)
IN, HID, L, N = 3, 4, 5, 2


def _pair(cls, **options):
    return getattr(nn, cls)(IN, HID, **options), getattr(torch.nn, cls)(IN, HID, **options)


def _input(options, batched=True):
    if not batched:
        return rng.standard_normal((L, IN))
    return rng.standard_normal((N, L, IN) if options.get("batch_first") else (L, N, IN))


def _states(cls, options, batched=True):
    d = (2 if options.get("bidirectional") else 1) * options.get("num_layers", 1)
    out = options.get("proj_size") or HID
    batch = (N,) if batched else ()
    h = rng.standard_normal((d, *batch, out))
    if cls == "LSTM":
        return (h, rng.standard_normal((d, *batch, HID)))
    return h


OPTIONS = [{}, {"num_layers": 2}, {"bidirectional": True}, {"batch_first": True},
           {"num_layers": 2, "bidirectional": True, "batch_first": True}, {"bias": False}]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", OPTIONS, ids=str)
@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_without_initial_state(cls, options, dtype):
    check_layer(*_pair(cls, **options), [_input(options)], dtype=dtype)


@pytest.mark.parametrize("options", OPTIONS[1:3] + OPTIONS[4:5], ids=str)
@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_with_initial_state(cls, options):
    check_layer(*_pair(cls, **options), [_input(options), _states(cls, options)],
                dtype="float64")


def test_rnn_relu():
    options = {"nonlinearity": "relu", "num_layers": 2, "bidirectional": True}
    check_layer(*_pair("RNN", **options), [_input(options), _states("RNN", options)],
                dtype="float64")


@pytest.mark.parametrize("options", [{"proj_size": 2}, {"proj_size": 3, "num_layers": 2,
                                                         "bidirectional": True}], ids=str)
def test_lstm_projection(options):
    check_layer(*_pair("LSTM", **options), [_input(options), _states("LSTM", options)],
                dtype="float64")


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_unbatched(cls):
    options = {"num_layers": 2, "bidirectional": True}
    check_layer(*_pair(cls, **options), [_input(options, False)], dtype="float64")
    check_layer(*_pair(cls, **options), [_input(options, False), _states(cls, options, False)],
                dtype="float64")


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_dropout_between_layers(cls):
    options = {"num_layers": 3, "dropout": 0.5}
    check_layer(*_pair(cls, **options), [_input(options)], modes=("eval",), dtype="float64")
    ours = getattr(nn, cls)(IN, HID, **options)
    x = fw.randn(L, N, IN)
    a, b = ours(x)[0].detach().numpy(), ours(x)[0].detach().numpy()
    assert not np.allclose(a, b)  # training: the masks differ between calls
    ours.eval()
    np.testing.assert_array_equal(ours(x)[0].detach().numpy(), ours(x)[0].detach().numpy())


def test_single_step_and_long_sequences():
    for length in (1, 40):
        x = rng.standard_normal((length, N, IN))
        check_layer(*_pair("LSTM", bidirectional=True), [x], dtype="float64")


def test_state_dict_layout_matches_torch():
    for cls, options in [("RNN", {"num_layers": 2, "bidirectional": True}),
                         ("LSTM", {"num_layers": 2, "proj_size": 2, "bidirectional": True}),
                         ("GRU", {"bias": False, "num_layers": 3})]:
        ours, theirs = _pair(cls, **options)
        assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
            [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]


def test_errors_name_the_module_and_expected_shapes():
    model = nn.Sequential(nn.LSTM(IN, HID, num_layers=2))
    lstm = model[0]
    with pytest.raises(ShapeError, match="input_size=3") as info:
        model(fw.randn(L, N, IN + 1))
    assert "in module: 0" in str(info.value)
    with pytest.raises(ShapeError, match=r"h_0 of shape \(2, 2, 4\)"):
        lstm(fw.randn(L, N, IN), (fw.zeros(1, N, HID), fw.zeros(2, N, HID)))
    with pytest.raises(ShapeError, match=r"c_0 of shape \(2, 2, 4\)"):
        lstm(fw.randn(L, N, IN), (fw.zeros(2, N, HID), fw.zeros(2, N, HID + 1)))
    with pytest.raises(ShapeError, match="tuple"):
        lstm(fw.randn(L, N, IN), fw.zeros(2, N, HID))
    with pytest.raises(ShapeError, match="3-d input"):
        lstm(fw.randn(IN))
    with pytest.raises(ShapeError, match="empty sequence"):
        lstm(fw.randn(0, N, IN))
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(IN, HID, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="proj_size"):
        nn.LSTM(IN, HID, proj_size=HID)


def test_dropout_with_one_layer_warns_like_torch():
    with pytest.warns(UserWarning, match="num_layers=1"):
        nn.GRU(IN, HID, dropout=0.2)


@pytest.mark.parametrize("cls,options", [
    ("RNN", {}), ("RNN", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"batch_first": True, "proj_size": 2}), ("GRU", {"bias": False, "dropout": 0.1,
                                                               "num_layers": 2}),
])
def test_repr(cls, options):
    ours, theirs = _pair(cls, **options)
    assert repr(ours) == repr(theirs)


def test_repr_names_a_relu_nonlinearity():
    # one line more than PyTorch, which leaves the nonlinearity out of RNN's repr
    assert repr(nn.RNN(IN, HID, nonlinearity="relu")) == "RNN(3, 4, nonlinearity='relu')"
