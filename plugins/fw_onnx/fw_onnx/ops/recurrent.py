"""Recurrent layers as ONNX's LSTM, GRU and RNN nodes: fw's gate order (PyTorch's) reordered
to ONNX's, and fw's outputs rebuilt from ONNX's Y (and Y_c)."""

from __future__ import annotations

import numpy as np

from ..graph import GraphBuilder
from .call import Call

#: fw's gate blocks in ONNX's order: LSTM i f g o -> i o f c; GRU r z n -> z r h
LSTM_ORDER = (0, 3, 1, 2)
GRU_ORDER = (1, 0, 2)


def _weights(g: GraphBuilder, c: Call, first: int, order: tuple) -> tuple[str, str, str, int]:
    """W, R and B (ONNX's layouts, one direction) from the weight inputs starting at
    ``first`` (w_ih, w_hh, b_ih, b_hh), and the hidden size."""
    w_ih, w_hh, b_ih, b_hh = c.consts[first:first + 4]
    if w_ih is None or w_hh is None or (c.inputs[first + 2] and b_ih is None) or \
            (c.inputs[first + 3] and b_hh is None):
        raise c.refuse("recurrent weights computed in the graph",
                       "keep the layer's weights parameters")
    hidden = w_hh.shape[1]
    rows = np.concatenate([np.arange(hidden) + hidden * k for k in order])
    zeros = np.zeros(len(rows), w_ih.dtype)
    bias = np.concatenate([zeros if b_ih is None else b_ih[rows],
                           zeros if b_hh is None else b_hh[rows]])
    return (g.const(w_ih[rows][None], "W"), g.const(w_hh[rows][None], "R"),
            g.const(bias[None], "B"), hidden)


def _direction(c: Call) -> str:
    return "reverse" if c.attrs["reverse"] else "forward"


def _initial(g: GraphBuilder, state: str) -> str:
    return g.one("Unsqueeze", [state, g.const(np.array([0], np.int64), "axes")])


def _steps(g: GraphBuilder, y: str) -> str:
    """ONNX's Y (T, directions=1, B, H) as fw's (T, B, H)."""
    return g.one("Squeeze", [y, g.const(np.array([1], np.int64), "axes")])


def lstm_layer(g: GraphBuilder, c: Call) -> None:
    """fw's output: every step's h, then the final c: (T + 1, B, H)."""
    w, r, b, hidden = _weights(g, c, 3, LSTM_ORDER)
    y, _, y_c = g.add("LSTM", [c.inputs[0], w, r, b, "", _initial(g, c.inputs[1]),
                               _initial(g, c.inputs[2])], 3, hidden_size=hidden,
                      direction=_direction(c))
    g.add("Concat", [_steps(g, y), y_c], [c.out], axis=0)


def gru_layer(g: GraphBuilder, c: Call) -> None:
    """PyTorch's GRU applies the reset gate after the recurrent product:
    ``linear_before_reset=1``."""
    w, r, b, hidden = _weights(g, c, 2, GRU_ORDER)
    y = g.add("GRU", [c.inputs[0], w, r, b, "", _initial(g, c.inputs[1])], 2,
              hidden_size=hidden, direction=_direction(c), linear_before_reset=1)[0]
    g.add("Identity", [_steps(g, y)], [c.out])


def rnn_layer(g: GraphBuilder, c: Call) -> None:
    activation = {"tanh": "Tanh", "relu": "Relu"}[c.attrs.get("nonlinearity", "tanh")]
    w, r, b, hidden = _weights(g, c, 2, (0,))
    y = g.add("RNN", [c.inputs[0], w, r, b, "", _initial(g, c.inputs[1])], 2,
              hidden_size=hidden, direction=_direction(c), activations=[activation])[0]
    g.add("Identity", [_steps(g, y)], [c.out])


CONVERTERS = {"lstm_layer": lstm_layer, "gru_layer": gru_layer, "rnn_layer": rnn_layer}
