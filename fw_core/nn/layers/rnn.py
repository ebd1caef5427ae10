"""Recurrent layers: RNN (tanh / relu), LSTM and GRU, with PyTorch's parameters and gates.

Parameters are named, shaped and ordered as PyTorch's (``weight_ih_l0``, ``weight_hh_l0``,
``bias_ih_l0``, ``bias_hh_l0``, ``..._reverse``; gates LSTM i, f, g, o and GRU r, z, n), so a
PyTorch state dict loads unchanged. Each layer and direction is one op of
:mod:`fw_core.ops.rnn` (``rnn_layer``, ``lstm_layer``, ``gru_layer``), which a device runs as
one kernel over the whole sequence. An LSTM with ``proj_size`` runs as a loop of fw ops instead
(one matmul for every step's input projection, then one matmul and the gate ops per step), as
the ops take no projection.
"""

from __future__ import annotations

__all__ = ["GRU", "LSTM", "RNN"]

import math
import warnings

from ..._state import state
from ...errors import ShapeError
from ...ops.creation import empty, zeros
from ...ops.elementwise import sigmoid, tanh
from ...ops.indexing import index_select
from ...ops.linalg import linear
from ...ops.meta import argument_error, describe
from ...ops.rnn import gru_layer, lstm_layer, rnn_layer
from ...ops.shape import cat, squeeze, stack, transpose, unbind, unsqueeze
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from ._check import check_choice, check_range, check_size
from .rnn_packed import run_packed

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _fail(layer: str, message: str, hint: str, *values) -> ShapeError:
    """A ShapeError from ``layer``'s forward; ``values`` are the inputs that arrived."""
    return ShapeError(message, op=layer, module=state.module_path or None,
                      inputs=describe(values), hint=hint)


class _RNNBase(Module):
    """Parameters, checks and the layer/direction loop the three recurrent layers share; each
    subclass runs one layer in one direction with ``_layer(x, state, weights, reverse) -> (y,
    final state tuple)``."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        shown = {"input_size": input_size, "hidden_size": hidden_size,
                 "num_layers": num_layers, "dropout": dropout}
        check_size(name, "input_size", input_size, **shown)
        check_size(name, "hidden_size", hidden_size, **shown)
        check_size(name, "num_layers", num_layers, **shown)
        check_range(name, "dropout", dropout, 0.0, 1.0, **shown)
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"{name}: dropout={dropout} acts between layers, so it does nothing "
                          "with num_layers=1", UserWarning, stacklevel=3)
        if proj_size < 0 or (proj_size and proj_size >= hidden_size):
            raise argument_error(name, f"proj_size must be in [0, hidden_size), got {proj_size}",
                                 f"pass proj_size=0 (no projection) or one below "
                                 f"hidden_size={hidden_size}", proj_size=proj_size,
                                 hidden_size=hidden_size)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        out_size = proj_size or hidden_size
        kw = {"device": device, "dtype": dtype}
        self._flat_weights_names = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else out_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, out_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for prefix, shape in shapes:
                    setattr(self, prefix + suffix, Parameter(empty(*shape, **kw)))
                    self._flat_weights_names.append(prefix + suffix)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def flatten_parameters(self) -> None:
        """Accepted for PyTorch compatibility: fw keeps no packed weight buffer to rebuild."""

    def _weights(self, layer: int, direction: int):
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        get = self._parameters.get
        return (get("weight_ih" + suffix), get("weight_hh" + suffix), get("bias_ih" + suffix),
                get("bias_hh" + suffix), get("weight_hr" + suffix))

    # -- checks -------------------------------------------------------------------------------
    def _check_input(self, x) -> bool:
        name = type(self).__name__
        if x.ndim not in (2, 3):
            layout = "(N, L, H_in)" if self.batch_first else "(L, N, H_in)"
            raise _fail(name, f"expected a 3-d input {layout} or a 2-d unbatched (L, H_in), got "
                        f"shape {tuple(x.shape)}",
                        "reshape the input to (sequence, batch, features)", x)
        if x.shape[-1] != self.input_size:
            raise _fail(name, f"expected input with input_size={self.input_size} features (last "
                        f"dimension), got shape {tuple(x.shape)}",
                        f"build the layer with input_size={x.shape[-1]} or fix the input", x)
        if x.shape[1 if x.ndim == 3 and self.batch_first else 0] == 0:
            raise _fail(name, f"got an empty sequence (shape {tuple(x.shape)})",
                        "pass at least one time step", x)
        return x.ndim == 3

    def _check_state(self, h, batch: int, size: int, batched: bool, what: str) -> None:
        layers = self.num_layers * (2 if self.bidirectional else 1)
        expected = (layers, batch, size) if batched else (layers, size)
        if tuple(h.shape) != expected:
            raise _fail(type(self).__name__, f"expected {what} of shape {expected} (num_layers "
                        f"* num_directions, {'batch, ' if batched else ''}size), got "
                        f"{tuple(h.shape)}", f"create {what} with shape {expected}", h)

    # -- running ------------------------------------------------------------------------------
    def _run(self, x, states: list, layer_fn=None):
        """Run every layer and direction; ``states`` holds, per (layer, direction), the
        initial state tuple ((h,) or (h, c)), each (N, size). Returns the last layer's output
        (L, N, D * H_out) time-major and the final state tuples. ``layer_fn`` (default
        ``self._layer``, same signature) runs one layer and direction: a packed input passes
        one that runs it on packed rows (``rnn_packed``)."""
        layer_fn = layer_fn or self._layer
        directions = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                y, final = layer_fn(x, states[layer * directions + direction],
                                    self._weights(layer, direction), bool(direction))
                outputs.append(y)
                finals.append(final)
            x = outputs[0] if directions == 1 else cat(outputs, dim=-1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, finals

    def _prepare(self, x, hx_parts: tuple):
        """Time-major batched input and per-(layer, direction) initial states."""
        batched = self._check_input(x)
        if not batched:
            x = unsqueeze(x, 1)
        elif self.batch_first:
            x = transpose(x, 0, 1)
        return x, batched, self._initial_states(hx_parts, x, x.shape[1], batched)

    def _initial_states(self, hx_parts: tuple, x, batch: int, batched: bool, order=None):
        """Per (layer, direction), the initial state tuple, each (batch, size): the given
        states checked (and, for a packed input, put in its sorted ``order``), zeros where
        None."""
        parts = []
        for h, size, what in zip(hx_parts, self._state_sizes(), ("h_0", "c_0")):
            if h is None:
                h = zeros(self.num_layers * (2 if self.bidirectional else 1), batch, size,
                          dtype=x.dtype, device=x.device)
            else:
                self._check_state(h, batch, size, batched, what)
                if not batched:
                    h = unsqueeze(h, 1)
                if order is not None:
                    h = index_select(h, 1, order)
            parts.append(unbind(h, 0))
        return [tuple(p[i] for p in parts) for i in range(len(parts[0]))]

    def _forward(self, x, hx_parts: tuple):
        """(output, final states stacked (num_layers * D, N, *)) for a tensor input or, with
        the output packed alike, a PackedSequence."""
        if isinstance(x, PackedSequence):
            return run_packed(self, x, hx_parts)
        x, batched, states = self._prepare(x, hx_parts)
        out, finals = self._run(x, states)
        return self._finish(out, finals, batched)

    def _finish(self, out, finals, batched: bool):
        """Output in the caller's layout, and the final states stacked (num_layers * D, N, *)."""
        stacked = [stack([f[i] for f in finals], 0) for i in range(len(finals[0]))]
        if not batched:
            return squeeze(out, 1), [squeeze(s, 1) for s in stacked]
        if self.batch_first:
            out = transpose(out, 0, 1)
        return out, stacked

    def _state_sizes(self) -> tuple[int, ...]:
        return (self.proj_size or self.hidden_size,)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


class RNN(_RNNBase):
    """Elman RNN: h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), act tanh or relu.

    Args:
        input_size, hidden_size: features of x_t and h_t.
        num_layers: stacked layers (each one's output is the next one's input).
        nonlinearity: "tanh" or "relu".
        bias: learn b_ih and b_hh.
        batch_first: input and output are (N, L, *) instead of (L, N, *).
        dropout: dropout on each layer's output except the last (training only).
        bidirectional: also run each layer backwards in time; outputs are concatenated.

    Forward(input, h_0=None) -> (output, h_n): input (L, N, H_in) (or unbatched (L, H_in)),
    h_0 and h_n (num_layers * D, N, H), output (L, N, D * H) with D = 2 if bidirectional.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device=None, dtype=None):
        check_choice("RNN", "nonlinearity", nonlinearity, ("tanh", "relu"))
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def _layer(self, x, state_, weights, reverse: bool):
        w_ih, w_hh, b_ih, b_hh, _ = weights
        y, h = rnn_layer(x, state_[0], w_ih, w_hh, b_ih, b_hh, reverse, self.nonlinearity)
        return y, (h,)

    def forward(self, x, hx=None):
        out, (h_n,) = self._forward(x, (hx,))
        return out, h_n

    def extra_repr(self) -> str:
        s = super().extra_repr()
        return s if self.nonlinearity == "tanh" else s + ", nonlinearity='relu'"


class LSTM(_RNNBase):
    """Long short-term memory, PyTorch's equations (gates in the order i, f, g, o):
    i, f, o = sigmoid(...), g = tanh(...), c_t = f c_{t-1} + i g, h_t = o tanh(c_t), where
    each gate is x_t W_i*^T + b_i* + h_{t-1} W_h*^T + b_h*. With ``proj_size`` > 0,
    h_t = (o tanh(c_t)) W_hr^T.

    Arguments as RNN (no nonlinearity), plus ``proj_size``.

    Forward(input, (h_0, c_0)=None) -> (output, (h_n, c_n)): h (num_layers * D, N, H_out),
    c (num_layers * D, N, H) with H_out = proj_size or H; output (L, N, D * H_out).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device=device, dtype=dtype)

    def _state_sizes(self) -> tuple[int, ...]:
        return (self.proj_size or self.hidden_size, self.hidden_size)

    def _layer(self, x, state_, weights, reverse: bool):
        w_ih, w_hh, b_ih, b_hh, w_hr = weights
        if w_hr is not None:
            return self._projected_layer(x, state_, weights, reverse)
        y, h, c = lstm_layer(x, *state_, w_ih, w_hh, b_ih, b_hh, reverse)
        return y, (h, c)

    def _projected_layer(self, x, state_, weights, reverse: bool):
        """A layer with a projection, as a loop of fw ops: (y, final (h, c))."""
        w_ih, w_hh, b_ih, b_hh, w_hr = weights
        length = x.shape[0]
        steps = unbind(linear(x, w_ih, b_ih), 0)  # one matmul for all time steps
        seq = [None] * length
        for t in (range(length - 1, -1, -1) if reverse else range(length)):
            state_ = self._cell(steps[t], state_, w_hh, b_hh, w_hr)
            seq[t] = state_[0]
        return stack(seq, 0), state_

    def _cell(self, x_proj, state_, w_hh, b_hh, w_hr):
        h, c = state_
        n = self.hidden_size
        gates = x_proj + linear(h, w_hh, b_hh)
        act = sigmoid(gates)  # i, f and o; the g quarter is taken through tanh below
        c = act[:, n:2 * n] * c + act[:, :n] * tanh(gates[:, 2 * n:3 * n])
        return linear(act[:, 3 * n:] * tanh(c), w_hr), c

    def forward(self, x, hx=None):
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise _fail("LSTM", "LSTM expects hx as a tuple (h_0, c_0)",
                        "pass both initial states, or None for zeros", x, hx)
        out, (h_n, c_n) = self._forward(x, (None, None) if hx is None else tuple(hx))
        return out, (h_n, c_n)


class GRU(_RNNBase):
    """Gated recurrent unit, PyTorch's equations (gates in the order r, z, n):
    r, z = sigmoid(x_t W_i*^T + b_i* + h_{t-1} W_h*^T + b_h*),
    n = tanh(x_t W_in^T + b_in + r (h_{t-1} W_hn^T + b_hn)), h_t = (1 - z) n + z h_{t-1}.

    Arguments, shapes and forward as RNN (no nonlinearity).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, device=device, dtype=dtype)

    def _layer(self, x, state_, weights, reverse: bool):
        w_ih, w_hh, b_ih, b_hh, _ = weights
        y, h = gru_layer(x, state_[0], w_ih, w_hh, b_ih, b_hh, reverse)
        return y, (h,)

    def forward(self, x, hx=None):
        out, (h_n,) = self._forward(x, (hx,))
        return out, h_n
