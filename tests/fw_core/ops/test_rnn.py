"""The recurrent layer ops beyond the conformance cases: contracts, the errors their meta rules
raise, the packed output and its views, what ``for_backward`` keeps, double backward refused.
Compiled training steps through nn.LSTM and nn.GRU: tests/fw_core/compile/test_compile.py."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import ArgumentError, DTypeError, ShapeError, UnsupportedError
from fw_core.ops import rnn
from fw_core.ops.meta import spec_of
from fw_core.records import Structure
from fw_cpu.kernels.rnn import KEPT

T, B, FEATURES, H = 4, 2, 3, 5


def _lstm_inputs(dtype="float32", grad=False):
    rng = np.random.default_rng(0)
    shapes = [(T, B, FEATURES), (B, H), (B, H), (4 * H, FEATURES), (4 * H, H), (4 * H,), (4 * H,)]
    return [fw.tensor(rng.standard_normal(s).astype(dtype), requires_grad=grad) for s in shapes]


# -- contracts ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["lstm_layer", "gru_layer", "rnn_layer"])
def test_contracts_are_opaque_once_differentiable_with_a_saturation_anchor(name):
    forward, backward = fw.ops.get(name), fw.ops.get(f"{name}_backward")
    for op in (forward, backward):
        assert op.family == "rnn" and op.structure is Structure.OPAQUE
        assert op.anchor.kind == "saturation"
    assert not forward.twice_differentiable
    assert forward.saves == {"inputs", "out"}


# -- meta rules -----------------------------------------------------------------------------------
@pytest.mark.parametrize("index, shape, match", [
    (0, (B, FEATURES), r"time-major sequence \(T, B, input_size\)"),
    (0, (0, B, FEATURES), "T >= 1"),
    (1, (B + 1, H), r"h0 must be \(batch, hidden_size\) with batch = 2"),
    (2, (B, H + 1), r"c0 must be \(batch, hidden_size\) = \(2, 5\), got \(2, 6\)"),
    (3, (4 * H, FEATURES + 1), r"w_ih must be \(4 \* hidden_size, input_size\) = \(20, 3\)"),
    (4, (3 * H, H), r"w_hh must be \(4 \* hidden_size, hidden_size\) = \(20, 5\)"),
    (6, (H,), r"b_hh must be \(4 \* hidden_size,\) = \(20,\)"),
])
def test_lstm_meta_names_the_input_that_does_not_fit(index, shape, match):
    inputs = _lstm_inputs()
    inputs[index] = fw.zeros(*shape)
    with pytest.raises(ShapeError, match=match) as info:
        rnn.lstm_layer(*inputs)
    assert info.value.op == "lstm_layer"


def test_a_dtype_mismatch_and_a_lone_bias_are_refused():
    inputs = _lstm_inputs()
    inputs[4] = inputs[4].double()
    with pytest.raises(DTypeError, match="w_hh is float64 but x is float32"):
        rnn.lstm_layer(*inputs)
    with pytest.raises(ShapeError, match="one bias without the other"):
        rnn.lstm_layer(*_lstm_inputs()[:6])
    with pytest.raises(ShapeError, match="both biases or neither"):
        fw.ops.apply(rnn.LSTM_LAYER, tuple(_lstm_inputs()[:6]),
                     {"reverse": False, "for_backward": False})


def test_rnn_layer_refuses_an_unknown_nonlinearity():
    x, h0 = fw.zeros(T, B, FEATURES), fw.zeros(B, H)
    with pytest.raises(ArgumentError, match="'tanh' or 'relu'"):
        rnn.rnn_layer(x, h0, fw.zeros(H, FEATURES), fw.zeros(H, H), nonlinearity="sigmoid")


def test_backward_meta_wants_the_forward_output_and_its_gradient():
    inputs = _lstm_inputs()
    spec = rnn.LSTM_LAYER_BACKWARD.meta
    specs = [spec_of(t) for t in inputs]
    good = spec_of(fw.zeros(T + 1, B, H))
    size = sum(t.numel() for t in inputs)
    assert spec(good, good, *specs, reverse=False).shape == (size,)
    with pytest.raises(ShapeError, match=r"out must be the lstm_layer output float32\[5, 2, 5\]"):
        spec(spec_of(fw.zeros(T, B, H)), good, *specs, reverse=False)


# -- outputs --------------------------------------------------------------------------------------
@pytest.mark.parametrize("reverse", [False, True])
def test_lstm_layer_returns_the_pieces_of_its_packed_output(reverse):
    inputs = _lstm_inputs("float64")
    packed = fw.ops.apply(rnn.LSTM_LAYER, tuple(inputs), {"reverse": reverse,
                                                          "for_backward": False}).numpy()
    y, h_n, c_n = rnn.lstm_layer(*inputs, reverse=reverse)
    assert tuple(y.shape) == (T, B, H) and tuple(h_n.shape) == tuple(c_n.shape) == (B, H)
    np.testing.assert_array_equal(y.numpy(), packed[:T])
    np.testing.assert_array_equal(h_n.numpy(), packed[0 if reverse else T - 1])
    np.testing.assert_array_equal(c_n.numpy(), packed[T])


def test_gru_and_rnn_final_states_are_the_last_step_run():
    rng = np.random.default_rng(1)
    x = fw.tensor(rng.standard_normal((T, B, FEATURES)))
    h0 = fw.tensor(rng.standard_normal((B, H)))
    for reverse in (False, True):
        y, h_n = rnn.gru_layer(x, h0, fw.randn(3 * H, FEATURES).double(),
                               fw.randn(3 * H, H).double(), reverse=reverse)
        np.testing.assert_array_equal(h_n.numpy(), y.numpy()[0 if reverse else -1])
        y, h_n = rnn.rnn_layer(x, h0, fw.randn(H, FEATURES).double(), fw.randn(H, H).double(),
                               reverse=reverse, nonlinearity="relu")
        np.testing.assert_array_equal(h_n.numpy(), y.numpy()[0 if reverse else -1])


# -- what the forward keeps -----------------------------------------------------------------------
def test_kernels_keep_only_when_a_backward_will_follow_and_only_while_the_output_lives():
    before = len(KEPT)
    y, _, c_n = rnn.lstm_layer(*_lstm_inputs("float64"))
    assert len(KEPT) == before  # nothing requires grad
    inputs = _lstm_inputs("float64", grad=True)
    with fw.no_grad():
        rnn.lstm_layer(*inputs)
    assert len(KEPT) == before
    y, h_n, c_n = rnn.lstm_layer(*inputs)
    assert len(KEPT) == before + 1
    (y.sum() + c_n.sum()).backward()
    del y, h_n, c_n
    assert len(KEPT) == before  # freed with the output once backward released it


def test_double_backward_is_refused_with_the_reason():
    inputs = _lstm_inputs("float64", grad=True)
    y, _, _ = rnn.lstm_layer(*inputs)
    (gx,) = fw.autograd.grad(y.sum(), [inputs[0]], create_graph=True)
    with pytest.raises(UnsupportedError, match="double backward through lstm_layer"):
        gx.sum().backward()
