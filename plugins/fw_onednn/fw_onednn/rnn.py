"""fw_onednn's kernels for ``cpu``: fw's recurrent layer ops on oneDNN's RNN primitives.

``lstm_layer`` runs on oneDNN's LSTM, ``gru_layer`` on its linear-before-reset GRU (the one whose
candidate is tanh(W x + b + r (U h + b_u)), PyTorch's GRU; oneDNN's plain GRU resets h before
the product) and ``rnn_layer`` on its vanilla RNN with tanh or relu; each ``*_backward`` on the
matching backward primitive. A forward with ``for_backward`` runs ``forward_training`` and keeps
its workspace next to its output (:mod:`fw_cpu.kept`), which the backward hands to oneDNN's
backward primitive; a backward that finds none (the forward ran on fw_cpu) recomputes it with
one more forward.

PyTorch's weights go in through reorders into the layouts the primitives chose, every call: a
kernel sees raw arrays, and nothing in them says whether a weight changed since the last call
(the optimizer updates parameters in place), so a cached reorder could be stale. The reorder of
a layer's weights costs about as much as one step of the recurrence. oneDNN's gates are
PyTorch's for LSTM (i, f, g, o); for GRU oneDNN has (u, r, o) for PyTorch's (z, r, n), so GRU's
weights are permuted on the way in and their gradients on the way out, and its bias has a
fourth row, b_hn, inside the reset product.

Guards take float32 calls whose shapes fit the op (fw_cpu raises the error for the others) and
that oneDNN has a primitive for; everything else (float64, so gradcheck; float16; zero-size
batches) runs on fw_cpu. The primitives are cached per cell, shape, direction and whether they
train (:mod:`fw_onednn.cache`), so after the first call of a shape a guard costs one lookup.
"""

from __future__ import annotations

import threading
from math import prod

import numpy as np

from fw_cpu.kept import KeptForBackward

from . import capi_conv
from . import capi_rnn as a
from .cache import PRIMITIVES
from .catalog import TAKES
from .rnn_primitives import Cell, Layer, Shape, build

F32 = np.dtype(np.float32)
LSTM = Cell("lstm", gates=4, bias_gates=4, cell_state=True)
GRU = Cell("gru", gates=3, bias_gates=4, gate_order=(1, 0, 2))
RNN = {"tanh": Cell("rnn_tanh", gates=1, bias_gates=1, activation=a.ELTWISE_TANH),
       "relu": Cell("rnn_relu", gates=1, bias_gates=1, activation=a.ELTWISE_RELU)}

#: what each forward_training kept for its backward: (workspace, final hidden state)
KEPT = KeptForBackward()
# .entry: the Layer the guard just found, for the kernel the chain runs next in this thread
_found = threading.local()


# -- guards -------------------------------------------------------------------------------------
def _takes(cell: Cell, x, states, w_ih, w_hh, biases, reverse: bool, training: bool) -> bool:
    """Whether oneDNN takes this layer call; leaves its Layer in ``_found.entry``."""
    arrays = (x, *states, w_ih, w_hh, *biases)
    if any(t.dtype is not F32 for t in arrays) or x.ndim != 3 or states[0].ndim != 2:
        return False
    length, batch, features = x.shape
    hidden = states[0].shape[1]
    gates = cell.gates * hidden
    expected = [(batch, hidden)] * len(states) + [(gates, features), (gates, hidden)] + \
        [(gates,)] * len(biases)
    if [t.shape for t in arrays[1:]] != expected or 0 in x.shape or hidden == 0 or \
            len(biases) not in (0, 2):
        return False
    shape = Shape(length, batch, features, hidden, bool(reverse))
    key = (cell.name, training, shape)
    entry = PRIMITIVES.lookup(key) or PRIMITIVES.add(key, build, cell, shape, training)
    _found.entry = entry
    return entry.serves


def takes_lstm(x, h0, c0, w_ih, w_hh, *biases, reverse, for_backward) -> bool:
    """Whether oneDNN runs this ``lstm_layer`` call."""
    return _takes(LSTM, x, (h0, c0), w_ih, w_hh, biases, reverse, for_backward)


def takes_gru(x, h0, w_ih, w_hh, *biases, reverse, for_backward) -> bool:
    """Whether oneDNN runs this ``gru_layer`` call."""
    return _takes(GRU, x, (h0,), w_ih, w_hh, biases, reverse, for_backward)


def takes_rnn(x, h0, w_ih, w_hh, *biases, reverse, for_backward, nonlinearity) -> bool:
    """Whether oneDNN runs this ``rnn_layer`` call."""
    cell = RNN.get(nonlinearity)
    return cell is not None and _takes(cell, x, (h0,), w_ih, w_hh, biases, reverse,
                                       for_backward)


def _takes_backward(cell, out, g, x, states, w_ih, w_hh, biases, reverse) -> bool:
    rows = x.shape[0] + (1 if cell.cell_state else 0) if x.ndim == 3 else -1
    expected = (rows, *states[0].shape) if states[0].ndim == 2 else None
    return out.shape == expected and g.shape == expected and g.dtype is F32 and \
        _takes(cell, x, states, w_ih, w_hh, biases, reverse, True)


def takes_lstm_backward(out, g, x, h0, c0, w_ih, w_hh, *biases, reverse) -> bool:
    """Whether oneDNN runs this ``lstm_layer_backward`` call."""
    return _takes_backward(LSTM, out, g, x, (h0, c0), w_ih, w_hh, biases, reverse)


def takes_gru_backward(out, g, x, h0, w_ih, w_hh, *biases, reverse) -> bool:
    """Whether oneDNN runs this ``gru_layer_backward`` call."""
    return _takes_backward(GRU, out, g, x, (h0,), w_ih, w_hh, biases, reverse)


def takes_rnn_backward(out, g, x, h0, w_ih, w_hh, *biases, reverse, nonlinearity) -> bool:
    """Whether oneDNN runs this ``rnn_layer_backward`` call."""
    cell = RNN.get(nonlinearity)
    return cell is not None and _takes_backward(cell, out, g, x, (h0,), w_ih, w_hh, biases,
                                                reverse)


# -- PyTorch's weights and biases in oneDNN's gate order ------------------------------------------
def _gates_to_onednn(cell: Cell, w):
    """PyTorch's (gates * H, ...) weight (or bias) with its gates in oneDNN's order."""
    if cell.gate_order is None:
        return np.ascontiguousarray(w)
    parts = w.reshape(cell.gates, -1, *w.shape[1:])
    return np.ascontiguousarray(parts[list(cell.gate_order)]).reshape(w.shape)


def _bias(cell: Cell, biases, hidden: int):
    """oneDNN's (bias_gates, H) bias from PyTorch's b_ih and b_hh (zeros without them)."""
    if not biases:
        return np.zeros((cell.bias_gates, hidden), F32)
    b_ih, b_hh = biases
    if cell is not GRU:
        return (b_ih + b_hh).reshape(cell.bias_gates, hidden)
    summed = _gates_to_onednn(cell, b_ih + b_hh).reshape(3, hidden)
    # the candidate's two biases stay apart: b_in outside the reset product, b_hn inside it
    return np.concatenate([summed[:2], b_ih.reshape(3, hidden)[2:], b_hh.reshape(3, hidden)[2:]])


def _bias_grads(cell: Cell, d, db_ih, db_hh) -> None:
    """PyTorch's bias gradients from oneDNN's (bias_gates, H) one."""
    if cell is not GRU:
        db_ih[...] = d.reshape(-1)
        db_hh[...] = d.reshape(-1)
        return
    rz = d[:2][list(cell.gate_order[:2])]  # oneDNN (u, r) -> PyTorch (r, z)
    db_ih.reshape(3, -1)[:2] = rz
    db_hh.reshape(3, -1)[:2] = rz
    db_ih.reshape(3, -1)[2] = d[2]
    db_hh.reshape(3, -1)[2] = d[3]


def _weights(layer: Layer, reorders, w_ih, w_hh) -> tuple[np.ndarray, np.ndarray]:
    """The weights reordered for one primitive: fresh buffers in the layouts it chose."""
    cell, arrays = layer.cell, []
    for reorder, w in zip(reorders, (w_ih, w_hh)):
        buffer = np.empty(reorder.sizes[capi_conv.ARG_TO], np.uint8)
        reorder.run({capi_conv.ARG_FROM: _gates_to_onednn(cell, w), capi_conv.ARG_TO: buffer})
        arrays.append(buffer)
    return arrays[0], arrays[1]


# -- kernels ------------------------------------------------------------------------------------
def _forward(layer: Layer, x, states, w_ih, w_hh, biases, training: bool):
    """Run the forward primitive: (out, kept) where ``kept`` is (workspace, h_n) when
    ``training``."""
    shape = layer.shape
    length, hidden = shape.length, shape.hidden
    cell_state = layer.cell.cell_state
    out = np.empty((length + cell_state, shape.batch, hidden), F32)
    weights_layer, weights_iter = _weights(layer, layer.to_forward, w_ih, w_hh)
    arrays = {a.ARG_SRC_LAYER: np.ascontiguousarray(x),
              a.ARG_SRC_ITER: np.ascontiguousarray(states[0]),
              a.ARG_WEIGHTS_LAYER: weights_layer, a.ARG_WEIGHTS_ITER: weights_iter,
              a.ARG_BIAS: _bias(layer.cell, biases, hidden), a.ARG_DST_LAYER: out[:length]}
    h_n = None
    if cell_state:
        h_n = np.empty((shape.batch, hidden), F32)
        arrays.update({a.ARG_SRC_ITER_C: np.ascontiguousarray(states[1]), a.ARG_DST_ITER: h_n,
                       a.ARG_DST_ITER_C: out[length]})
    workspace = None
    if training:
        workspace = arrays[capi_conv.ARG_WORKSPACE] = np.empty(layer.workspace, np.uint8)
    layer.forward.run(arrays)
    return out, (workspace, h_n)


def _run_forward(x, states, w_ih, w_hh, biases, for_backward: bool):
    out, kept = _forward(_found.entry, x, states, w_ih, w_hh, biases, for_backward)
    if for_backward:
        KEPT.keep(out, kept)
    return out


def run_lstm(x, h0, c0, w_ih, w_hh, *biases, reverse, for_backward):
    """``lstm_layer`` on the Layer :func:`takes_lstm` just found."""
    return _run_forward(x, (h0, c0), w_ih, w_hh, biases, for_backward)


def run_gru(x, h0, w_ih, w_hh, *biases, reverse, for_backward):
    """``gru_layer`` on the Layer :func:`takes_gru` just found."""
    return _run_forward(x, (h0,), w_ih, w_hh, biases, for_backward)


def run_rnn(x, h0, w_ih, w_hh, *biases, reverse, for_backward, nonlinearity):
    """``rnn_layer`` on the Layer :func:`takes_rnn` just found."""
    return _run_forward(x, (h0,), w_ih, w_hh, biases, for_backward)


def _run_backward(out, g, x, states, w_ih, w_hh, biases):
    """The flattened input gradients of a layer call, on the backward primitive."""
    layer: Layer = _found.entry
    cell, shape = layer.cell, layer.shape
    length = shape.length
    kept = KEPT.find(out)
    if kept is None:  # the forward ran elsewhere: regenerate the workspace
        out, kept = _forward(layer, x, states, w_ih, w_hh, biases, True)
    workspace, h_n = kept
    shapes = [x.shape, *(s.shape for s in states), w_ih.shape, w_hh.shape,
              *(b.shape for b in biases)]
    sizes = [prod(s) for s in shapes]
    flat = np.empty(sum(sizes), F32)
    views = [flat[start - size:start].reshape(s)
             for s, size, start in zip(shapes, sizes, np.cumsum(sizes).tolist())]
    weights_layer, weights_iter = _weights(layer, layer.to_backward, w_ih, w_hh)
    diff_layer = np.empty(layer.from_diff[0].sizes[capi_conv.ARG_FROM], np.uint8)
    diff_iter = np.empty(layer.from_diff[1].sizes[capi_conv.ARG_FROM], np.uint8)
    diff_bias = np.empty((cell.bias_gates, shape.hidden), F32)
    arrays = {a.ARG_SRC_LAYER: np.ascontiguousarray(x),
              a.ARG_SRC_ITER: np.ascontiguousarray(states[0]),
              a.ARG_WEIGHTS_LAYER: weights_layer, a.ARG_WEIGHTS_ITER: weights_iter,
              a.ARG_BIAS: _bias(cell, biases, shape.hidden), a.ARG_DST_LAYER: out[:length],
              capi_conv.ARG_WORKSPACE: workspace, a.ARG_DIFF_SRC_LAYER: views[0],
              a.ARG_DIFF_SRC_ITER: views[1], a.ARG_DIFF_WEIGHTS_LAYER: diff_layer,
              a.ARG_DIFF_WEIGHTS_ITER: diff_iter, a.ARG_DIFF_BIAS: diff_bias,
              a.ARG_DIFF_DST_LAYER: np.ascontiguousarray(g[:length])}
    if cell.cell_state:
        arrays.update({a.ARG_SRC_ITER_C: np.ascontiguousarray(states[1]), a.ARG_DST_ITER: h_n,
                       a.ARG_DST_ITER_C: out[length], a.ARG_DIFF_SRC_ITER_C: views[2],
                       # h_n is y's last step: its gradient arrived inside g[:length] already
                       a.ARG_DIFF_DST_ITER: np.zeros_like(h_n),
                       a.ARG_DIFF_DST_ITER_C: np.ascontiguousarray(g[length])})
    layer.backward.run(arrays)
    w = len(states) + 1  # where the weight gradients start
    for reorder, diff, view in zip(layer.from_diff, (diff_layer, diff_iter), views[w:w + 2]):
        if cell.gate_order is None:
            reorder.run({capi_conv.ARG_FROM: diff, capi_conv.ARG_TO: view})
        else:
            plain = np.empty(view.shape, F32)
            reorder.run({capi_conv.ARG_FROM: diff, capi_conv.ARG_TO: plain})
            view[...] = _gates_to_onednn(cell, plain)  # the permutation is its own inverse
    if biases:
        _bias_grads(cell, diff_bias, views[w + 2], views[w + 3])
    return flat


def run_lstm_backward(out, g, x, h0, c0, w_ih, w_hh, *biases, reverse):
    """``lstm_layer_backward`` on the Layer :func:`takes_lstm_backward` just found."""
    return _run_backward(out, g, x, (h0, c0), w_ih, w_hh, biases)


def run_gru_backward(out, g, x, h0, w_ih, w_hh, *biases, reverse):
    """``gru_layer_backward`` on the Layer :func:`takes_gru_backward` just found."""
    return _run_backward(out, g, x, (h0,), w_ih, w_hh, biases)


def run_rnn_backward(out, g, x, h0, w_ih, w_hh, *biases, reverse, nonlinearity):
    """``rnn_layer_backward`` on the Layer :func:`takes_rnn_backward` just found."""
    return _run_backward(out, g, x, (h0,), w_ih, w_hh, biases)


#: (op, guard, kernel, what the guard takes) for every recurrent op fw_onednn serves
KERNELS = tuple((op, guard, kernel, TAKES[op]) for op, guard, kernel in (
    ("lstm_layer", takes_lstm, run_lstm),
    ("lstm_layer_backward", takes_lstm_backward, run_lstm_backward),
    ("gru_layer", takes_gru, run_gru),
    ("gru_layer_backward", takes_gru_backward, run_gru_backward),
    ("rnn_layer", takes_rnn, run_rnn),
    ("rnn_layer_backward", takes_rnn_backward, run_rnn_backward),
))
