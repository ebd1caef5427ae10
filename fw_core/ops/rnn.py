"""Recurrent ops: one op runs one layer of an RNN, LSTM or GRU in one direction over a sequence.

``lstm_layer``, ``gru_layer`` and ``rnn_layer`` take a time-major sequence ``x`` (T, B, I), the
initial state(s) (B, H), PyTorch's weights (the gates stacked along dimension 0: LSTM i, f, g, o;
GRU r, z, n) and, optionally, both biases. A device computes the whole recurrence in one kernel
(oneDNN's RNN primitive, a NumPy loop over the steps) instead of a dozen dispatched ops per step.

One output per op: fw's dispatch, autograd nodes and compiled graphs carry one array per op, so
whatever a layer returns besides the outputs ``y`` of every step is packed into that one tensor,
and only what ``y`` does not hold already. The final hidden state is always a step of ``y`` (the
last one; the first with ``reverse=True``), so GRU and RNN return ``y`` alone (T, B, H) and LSTM
returns (T + 1, B, H): ``y`` followed by the final cell state. The public functions below hand
back the pieces as views.

Gradients: each op's VJP is its ``*_backward`` op, which returns the gradients of every input
flattened and concatenated in input order (one output again; the VJP takes them apart with views).
Backward ops run the recurrence backwards inside a kernel, so they are not compositions of fw
ops, and the layers are differentiable once: a backward op's own VJP raises (the second
derivative of a whole recurrence has no kernel). ``fw_core.nn.layers.rnn`` keeps the loop of cell
ops, which is twice differentiable, for what these ops do not cover (LSTM's ``proj_size``).

``for_backward`` says whether a backward op will follow (grad is on and an input requires it):
a kernel may then keep what its backward needs (the gate activations, oneDNN's workspace) next
to the output array, where the backward kernel finds it instead of recomputing the forward. It
never changes the result.
"""

from __future__ import annotations

__all__ = ["gru_layer", "lstm_layer", "rnn_layer"]

import math

from .._state import state
from ..errors import ArgumentError, DTypeError, ShapeError, UnsupportedError
from ..records import Structure, TensorSpec
from ..tensor import Tensor
from . import anchors
from .dispatch import apply
from .meta import require_floating
from .registry import define_op
from .shape import narrow, reshape, select

#: gates per cell and states it carries (LSTM: h and c)
_GATES = {"lstm_layer": 4, "gru_layer": 3, "rnn_layer": 1}
_STATES = {"lstm_layer": ("h0", "c0"), "gru_layer": ("h0",), "rnn_layer": ("h0",)}
_NONLINEARITIES = ("tanh", "relu")


# -- meta rules -----------------------------------------------------------------------------------
def _check(op: str, shape, expected, what: str, meaning: str) -> None:
    if tuple(shape) != tuple(expected):
        raise ShapeError(f"{what} must be {meaning} = {tuple(expected)}, got {tuple(shape)}",
                         op=op, hint=f"pass {what} of shape {tuple(expected)}, as the layer's "
                         "parameters and states are shaped")


def _layer_shapes(op: str, x, tensors) -> tuple[int, int, int]:
    """(T, B, H) of a layer op's inputs ``x, *tensors``, or the ShapeError/DTypeError naming
    the first input that does not fit."""
    require_floating(x, op)
    states = _STATES[op]
    if len(x.shape) != 3 or x.shape[0] == 0:
        raise ShapeError(f"x must be a time-major sequence (T, B, input_size) with T >= 1, got "
                         f"shape {tuple(x.shape)}", op=op,
                         hint="transpose a batch-first input first: x.transpose(0, 1)")
    if len(tensors) not in (len(states) + 2, len(states) + 4):
        raise ShapeError(f"expects x, {', '.join(states)}, w_ih, w_hh and optionally b_ih and "
                         f"b_hh, got {1 + len(tensors)} tensors", op=op,
                         hint="pass both biases or neither")
    length, batch, features = x.shape
    h0 = tensors[0]
    if len(h0.shape) != 2 or h0.shape[0] != batch:
        raise ShapeError(f"h0 must be (batch, hidden_size) with batch = {batch}, got "
                         f"{tuple(h0.shape)}", op=op, hint="pass one layer's state, (B, H)")
    hidden = h0.shape[1]
    gates = _GATES[op] * hidden
    names = (*states, "w_ih", "w_hh", "b_ih", "b_hh")
    expected = {"h0": ((batch, hidden), "(batch, hidden_size)"),
                "c0": ((batch, hidden), "(batch, hidden_size)"),
                "w_ih": ((gates, features), f"({_GATES[op]} * hidden_size, input_size)"),
                "w_hh": ((gates, hidden), f"({_GATES[op]} * hidden_size, hidden_size)"),
                "b_ih": ((gates,), f"({_GATES[op]} * hidden_size,)"),
                "b_hh": ((gates,), f"({_GATES[op]} * hidden_size,)")}
    for name, spec in zip(names, tensors):
        _check(op, spec.shape, expected[name][0], name, expected[name][1])
        if spec.dtype is not x.dtype:
            raise DTypeError(f"{name} is {spec.dtype.name} but x is {x.dtype.name}", op=op,
                             hint=f"convert the layer and its input to one dtype, e.g. "
                             f".to(fw.{x.dtype.name})")
    return length, batch, hidden


def _out_length(op: str, length: int) -> int:
    """Rows of a layer op's output: the T steps of y, then LSTM's final cell state."""
    return length + (len(_STATES[op]) - 1)


def _layer_meta(op: str):
    def meta(x, *tensors, reverse, for_backward, nonlinearity=None):
        if op == "rnn_layer" and nonlinearity not in _NONLINEARITIES:
            raise ArgumentError(f"nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}",
                             op=op, hint="pass nonlinearity='tanh' (the default) or 'relu'")
        length, batch, hidden = _layer_shapes(op, x, tensors)
        return TensorSpec((_out_length(op, length), batch, hidden), x.dtype)

    return meta


def _backward_meta(op: str):
    forward = _layer_meta(op)

    def meta(out, g, x, *tensors, reverse, nonlinearity=None):
        attrs = {"nonlinearity": nonlinearity} if op == "rnn_layer" else {}
        spec = forward(x, *tensors, reverse=reverse, for_backward=True, **attrs)
        for what, given in (("out", out), ("g", g)):
            if tuple(given.shape) != spec.shape or given.dtype is not spec.dtype:
                raise ShapeError(f"{what} must be the {op} output {spec} for these inputs, got "
                                 f"{given}", op=f"{op}_backward",
                                 hint=f"pass the output of {op} and its gradient")
        size = sum(math.prod(t.shape) for t in (x, *tensors))
        return TensorSpec((size,), x.dtype)

    return meta


# -- gradients ------------------------------------------------------------------------------------
def _unpack(flat: Tensor, shapes, wanted) -> tuple:
    """The gradients packed in ``flat``, one view per input shape (None where not wanted)."""
    grads, start = [], 0
    for shape, needed in zip(shapes, wanted):
        size = math.prod(shape)
        grads.append(reshape(narrow(flat, 0, start, size), shape) if needed is not None
                     else None)
        start += size
    return tuple(grads)


def _layer_vjp(backward_op):
    def vjp(ctx, g):
        attrs = {k: v for k, v in ctx.attrs.items() if k != "for_backward"}
        flat = apply(backward_op, (ctx.out, g, *ctx.inputs), attrs)
        return _unpack(flat, ctx.input_shapes, ctx.next)

    return vjp


def _no_second_derivative(op: str):
    def vjp(ctx, g):
        raise UnsupportedError(
            f"double backward through {op} is not supported: its gradient is one kernel "
            "running the recurrence backwards, with no kernel for its own derivative",
            op=f"{op}_backward", module=ctx.module or None,
            hint="compute the first gradient without create_graph=True; for second "
            "derivatives write the cell's steps as fw ops (a loop over time)")

    return vjp


_GATE_ANCHOR = anchors.saturation(
    "the gates are sigmoids and tanh: where a gate's pre-activation is large in magnitude its "
    "derivative is near 0, so the gradient through that step vanishes, and across many steps "
    "the gradient through time shrinks (a forget gate near 1 carries the cell state's gradient "
    "on, one near 0 cuts it)")
_RNN_ANCHOR = anchors.saturation(
    "tanh saturates (derivative near 0 for |pre-activation| > 3) and relu is 0 below 0: the "
    "gradient through time is a product of one such derivative times W_hh per step, so it "
    "vanishes, or with relu and a large W_hh explodes, over long sequences")


def _define(op: str, doc: str, signature: str, anchor) -> tuple:
    backward = define_op(
        f"{op}_backward", family="rnn", builtin=True,
        doc=f"The gradients of {op} at its inputs for the gradient g of its output, flattened "
        "and concatenated in input order (its VJP); ``out`` is the forward's output, by which a "
        "kernel finds what its forward kept.",
        signature=f"{op}_backward(out: Tensor, g: Tensor, x, <{op}'s tensors>, reverse) -> "
        "Tensor[n]",
        meta=_backward_meta(op), vjp=_no_second_derivative(op), structure=Structure.OPAQUE,
        anchor=anchor, saves=("inputs",))
    forward = define_op(
        op, family="rnn", builtin=True, doc=doc, signature=signature, meta=_layer_meta(op),
        vjp=_layer_vjp(backward), structure=Structure.OPAQUE, anchor=anchor,
        saves=("inputs", "out"), twice_differentiable=False)
    return forward, backward


LSTM_LAYER, LSTM_LAYER_BACKWARD = _define(
    "lstm_layer",
    "One LSTM layer over a sequence (PyTorch's equations, gates i, f, g, o): per step, "
    "i, f, o = sigmoid(.), g = tanh(.) of x_t W_ih^T + b_ih + h W_hh^T + b_hh; "
    "c = f c + i g; h = o tanh(c). Output (T + 1, B, H): every step's h, then the final c.",
    "lstm_layer(x: Tensor[T, B, I], h0: Tensor[B, H], c0: Tensor[B, H], w_ih: Tensor[4H, I], "
    "w_hh: Tensor[4H, H], b_ih: Tensor[4H] | None, b_hh: Tensor[4H] | None, reverse: bool, "
    "for_backward: bool) -> Tensor[T + 1, B, H]", _GATE_ANCHOR)
GRU_LAYER, GRU_LAYER_BACKWARD = _define(
    "gru_layer",
    "One GRU layer over a sequence (PyTorch's equations, gates r, z, n): per step, "
    "r, z = sigmoid(x_t W_i*^T + b_i* + h W_h*^T + b_h*), "
    "n = tanh(x_t W_in^T + b_in + r (h W_hn^T + b_hn)), h = (1 - z) n + z h. "
    "Output (T, B, H): every step's h.",
    "gru_layer(x: Tensor[T, B, I], h0: Tensor[B, H], w_ih: Tensor[3H, I], w_hh: Tensor[3H, H], "
    "b_ih: Tensor[3H] | None, b_hh: Tensor[3H] | None, reverse: bool, for_backward: bool) -> "
    "Tensor[T, B, H]", _GATE_ANCHOR)
RNN_LAYER, RNN_LAYER_BACKWARD = _define(
    "rnn_layer",
    "One Elman RNN layer over a sequence: per step h = act(x_t W_ih^T + b_ih + h W_hh^T + "
    "b_hh), act tanh or relu. Output (T, B, H): every step's h.",
    "rnn_layer(x: Tensor[T, B, I], h0: Tensor[B, H], w_ih: Tensor[H, I], w_hh: Tensor[H, H], "
    "b_ih: Tensor[H] | None, b_hh: Tensor[H] | None, reverse: bool, for_backward: bool, "
    "nonlinearity: str) -> Tensor[T, B, H]", _RNN_ANCHOR)


# -- public functions -----------------------------------------------------------------------------
def _run(op, tensors: tuple, b_ih, b_hh, reverse: bool, **attrs) -> Tensor:
    if (b_ih is None) != (b_hh is None):
        raise ShapeError("got one bias without the other", op=op.name,
                         hint="pass both b_ih and b_hh, or neither")
    if b_ih is not None:
        tensors = (*tensors, b_ih, b_hh)
    for_backward = state.grad_enabled and any(
        getattr(t, "requires_grad", False) for t in tensors)
    return apply(op, tensors, {"reverse": bool(reverse), "for_backward": for_backward, **attrs})


def _final(y: Tensor, reverse: bool) -> Tensor:
    """The final hidden state: the step processed last."""
    return select(y, 0, 0 if reverse else y.shape[0] - 1)


def lstm_layer(x: Tensor, h0: Tensor, c0: Tensor, w_ih: Tensor, w_hh: Tensor,
               b_ih: Tensor | None = None, b_hh: Tensor | None = None, reverse: bool = False):
    """One LSTM layer over the time-major sequence ``x`` (T, B, I), as PyTorch's nn.LSTM runs
    each layer and direction (gates i, f, g, o stacked in ``w_ih`` (4H, I), ``w_hh`` (4H, H)).

    Returns ``(y, h_n, c_n)``: every step's hidden state (T, B, H) and the final hidden and cell
    states (B, H); with ``reverse=True`` the steps run from T - 1 down to 0 (y stays in input
    order). Raises ShapeError/DTypeError naming the input that does not fit.
    """
    out = _run(LSTM_LAYER, (x, h0, c0, w_ih, w_hh), b_ih, b_hh, reverse)
    y = narrow(out, 0, 0, out.shape[0] - 1)
    return y, _final(y, reverse), select(out, 0, out.shape[0] - 1)


def gru_layer(x: Tensor, h0: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
              b_hh: Tensor | None = None, reverse: bool = False):
    """One GRU layer over ``x`` (T, B, I), as PyTorch's nn.GRU runs each layer and direction
    (gates r, z, n stacked in ``w_ih`` (3H, I), ``w_hh`` (3H, H)).

    Returns ``(y, h_n)``: every step's hidden state (T, B, H) and the final one (B, H).
    """
    y = _run(GRU_LAYER, (x, h0, w_ih, w_hh), b_ih, b_hh, reverse)
    return y, _final(y, reverse)


def rnn_layer(x: Tensor, h0: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
              b_hh: Tensor | None = None, reverse: bool = False, nonlinearity: str = "tanh"):
    """One Elman RNN layer over ``x`` (T, B, I) with a tanh or relu ``nonlinearity``, as
    PyTorch's nn.RNN runs each layer and direction.

    Returns ``(y, h_n)``: every step's hidden state (T, B, H) and the final one (B, H).
    """
    y = _run(RNN_LAYER, (x, h0, w_ih, w_hh), b_ih, b_hh, reverse, nonlinearity=nonlinearity)
    return y, _final(y, reverse)
