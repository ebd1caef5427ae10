"""RNNCell, LSTMCell and GRUCell against PyTorch: batched and unbatched steps, given and
default states, no bias, relu, a loop of steps, state-dict layout, repr, errors."""

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_core.nn as nn
from fw_core.errors import ShapeError

from .layer_check import check_layer

rng = np.random.default_rng(0)
IN, HID, N = 3, 5, 4
CELLS = ["RNNCell", "LSTMCell", "GRUCell"]


def _pair(cls, **options):
    return getattr(nn, cls)(IN, HID, **options), getattr(torch.nn, cls)(IN, HID, **options)


def _state(cls, batch):
    h = rng.standard_normal((*batch, HID))
    return (h, rng.standard_normal((*batch, HID))) if cls == "LSTMCell" else h


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", [{}, {"bias": False}], ids=str)
@pytest.mark.parametrize("cls", CELLS)
def test_batched_step(cls, options, dtype):
    x = rng.standard_normal((N, IN))
    check_layer(*_pair(cls, **options), [x], dtype=dtype)
    check_layer(*_pair(cls, **options), [x, _state(cls, (N,))], dtype=dtype)


@pytest.mark.parametrize("cls", CELLS)
def test_unbatched_step(cls):
    x = rng.standard_normal(IN)
    check_layer(*_pair(cls), [x], dtype="float64")
    check_layer(*_pair(cls), [x, _state(cls, ())], dtype="float64")


def test_rnn_cell_relu():
    check_layer(*_pair("RNNCell", nonlinearity="relu"),
                [rng.standard_normal((N, IN)), rng.standard_normal((N, HID))], dtype="float64")


@pytest.mark.parametrize("cls", CELLS)
def test_a_loop_of_steps_matches_torch_and_the_full_layer(cls):
    ours, theirs = _pair(cls)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    xs = rng.standard_normal((6, N, IN)).astype(np.float32)
    state_ours = state_theirs = None
    for x in xs:
        state_ours = ours(fw.tensor(x), state_ours)
        state_theirs = theirs(torch.from_numpy(x), state_theirs)
    h_ours = state_ours[0] if cls == "LSTMCell" else state_ours
    h_theirs = state_theirs[0] if cls == "LSTMCell" else state_theirs
    np.testing.assert_allclose(h_ours.detach().numpy(), h_theirs.detach().numpy(), atol=1e-5)
    layer = getattr(nn, cls.removesuffix("Cell"))(IN, HID)
    layer.load_state_dict({k + "_l0": v for k, v in ours.state_dict().items()})
    _, h_n = layer(fw.tensor(xs))
    h_n = h_n[0] if cls == "LSTMCell" else h_n
    np.testing.assert_allclose(h_n.detach().numpy()[0], h_ours.detach().numpy(), atol=1e-6)


def test_state_dict_layout_and_repr_match_torch():
    for cls, options in [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
                         ("LSTMCell", {"bias": False}), ("GRUCell", {})]:
        ours, theirs = _pair(cls, **options)
        assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
            [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
        assert repr(ours) == repr(theirs)


def test_initialisation_bounds():
    cell = nn.LSTMCell(IN, 100)
    w = cell.weight_hh.detach().numpy()
    assert np.abs(w).max() <= 0.1 and np.abs(w).max() > 0.09


def test_errors():
    cell = nn.LSTMCell(IN, HID)
    with pytest.raises(ShapeError, match="1D or 2D, got 3D"):
        cell(fw.randn(2, N, IN))
    with pytest.raises(ShapeError, match="inconsistent input_size: got 4 expected 3"):
        cell(fw.randn(N, IN + 1))
    with pytest.raises(ShapeError, match=r"hidden state 1 of shape \(4, 5\)"):
        cell(fw.randn(N, IN), (fw.zeros(N, HID), fw.zeros(N + 1, HID)))
    with pytest.raises(ShapeError, match="tuple"):
        cell(fw.randn(N, IN), fw.zeros(N, HID))
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNNCell(IN, HID, nonlinearity="sigmoid")
