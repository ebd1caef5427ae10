"""Recurrent cells: one time step of RNN (tanh / relu), LSTM and GRU, as PyTorch's RNNCell,
LSTMCell and GRUCell.

Parameters are ``weight_ih`` (gates * hidden, input), ``weight_hh`` (gates * hidden, hidden),
``bias_ih`` and ``bias_hh`` (gates * hidden), gates stacked as in the full layers (LSTM i, f, g,
o; GRU r, z, n), so a PyTorch state dict loads unchanged. A step is the layer op of
:mod:`fw_core.ops.rnn` over a sequence of length 1, so a cell and a layer compute the same
numbers with the same kernels (and, like the layer ops, a cell has no second derivative).
"""

from __future__ import annotations

__all__ = ["GRUCell", "LSTMCell", "RNNCell"]

import math

from ..._state import state
from ...errors import ShapeError
from ...ops.creation import empty, zeros
from ...ops.meta import describe
from ...ops.rnn import gru_layer, lstm_layer, rnn_layer
from ...ops.shape import squeeze, unsqueeze
from .. import init
from ..module import Module
from ..parameter import Parameter
from ._check import check_choice, check_size


def _fail(cell: str, message: str, hint: str, *values) -> ShapeError:
    return ShapeError(message, op=cell, module=state.module_path or None,
                      inputs=describe(values), hint=hint)


class _RNNCellBase(Module):
    """The parameters, their initialisation and the input checks the three cells share."""

    _gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool, device, dtype):
        super().__init__()
        name = type(self).__name__
        shown = {"input_size": input_size, "hidden_size": hidden_size}
        check_size(name, "input_size", input_size, least=0, **shown)
        check_size(name, "hidden_size", hidden_size, least=0, **shown)
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kw = {"device": device, "dtype": dtype}
        gates = self._gates * hidden_size
        self.weight_ih = Parameter(empty(gates, input_size, **kw))
        self.weight_hh = Parameter(empty(gates, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(empty(gates, **kw))
            self.bias_hh = Parameter(empty(gates, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0.0
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _batched(self, x, states: tuple):
        """(x as (1, N, input_size), the states as (N, hidden) each, whether x was batched);
        missing states are zeros, as PyTorch."""
        name = type(self).__name__
        if x.ndim not in (1, 2):
            raise _fail(name, f"expected input to be 1D or 2D, got {x.ndim}D instead",
                        "pass one step: (N, input_size), or (input_size,) unbatched", x)
        batched = x.ndim == 2
        if x.shape[-1] != self.input_size:
            raise _fail(name, f"input has inconsistent input_size: got {x.shape[-1]} expected "
                        f"{self.input_size}", f"build the cell with input_size={x.shape[-1]} "
                        "or fix the input", x)
        x = x if batched else unsqueeze(x, 0)
        out = []
        for i, h in enumerate(states):
            if h is None:
                h = zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
            else:
                expected = (x.shape[0], self.hidden_size) if batched else (self.hidden_size,)
                if tuple(h.shape) != expected:
                    raise _fail(name, f"expected hidden state {i} of shape {expected} (batch "
                                f"of the input, hidden_size), got {tuple(h.shape)}",
                                f"create the state with shape {expected}", h)
                h = h if batched else unsqueeze(h, 0)
            out.append(h)
        return unsqueeze(x, 0), out, batched

    def _weights(self):
        return self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s


class RNNCell(_RNNCellBase):
    """One Elman RNN step: h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh), act tanh or relu.

    Args:
        input_size, hidden_size: features of x and h.
        bias: learn b_ih and b_hh.
        nonlinearity: "tanh" or "relu" (checked here; PyTorch checks it at the first call).

    Forward(input, hx=None) -> h': input (N, input_size) or unbatched (input_size,), hx and h'
    (N, hidden_size) or (hidden_size,); hx defaults to zeros.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None):
        check_choice("RNNCell", "nonlinearity", nonlinearity, ("tanh", "relu"))
        super().__init__(input_size, hidden_size, bias, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):  # noqa: A002 - PyTorch's argument name
        x, (h,), batched = self._batched(input, (hx,))
        _, h = rnn_layer(x, h, *self._weights(), nonlinearity=self.nonlinearity)
        return h if batched else squeeze(h, 0)


class LSTMCell(_RNNCellBase):
    """One LSTM step, PyTorch's equations (gates i, f, g, o): i, f, o = sigmoid(.),
    g = tanh(.) of x W_ih^T + b_ih + h W_hh^T + b_hh; c' = f c + i g; h' = o tanh(c').

    Forward(input, hx=None) -> (h', c'): hx is a tuple (h, c), each (N, hidden_size) (or
    unbatched (hidden_size,)); None means zeros.
    """

    _gates = 4

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, device, dtype)

    def forward(self, input, hx=None):  # noqa: A002 - PyTorch's argument name
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise _fail("LSTMCell", "LSTMCell expects hx as a tuple (h_0, c_0)",
                        "pass both states, or None for zeros", input, hx)
        x, (h, c), batched = self._batched(input, (None, None) if hx is None else tuple(hx))
        _, h, c = lstm_layer(x, h, c, *self._weights())
        return (h, c) if batched else (squeeze(h, 0), squeeze(c, 0))


class GRUCell(_RNNCellBase):
    """One GRU step, PyTorch's equations (gates r, z, n):
    r, z = sigmoid(x W_i*^T + b_i* + h W_h*^T + b_h*), n = tanh(x W_in^T + b_in + r (h W_hn^T
    + b_hn)), h' = (1 - z) n + z h.

    Forward(input, hx=None) -> h', shapes as RNNCell.
    """

    _gates = 3

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, device, dtype)

    def forward(self, input, hx=None):  # noqa: A002 - PyTorch's argument name
        x, (h,), batched = self._batched(input, (hx,))
        _, h = gru_layer(x, h, *self._weights())
        return h if batched else squeeze(h, 0)
