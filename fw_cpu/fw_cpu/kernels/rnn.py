"""Recurrent layer kernels: LSTM, GRU and Elman RNN layers, forward and backward, over ``xp``.

Each forward projects every step's input with one matrix product, then loops over the steps
with one product by ``w_hh`` and the gate functions, written in place into the step's slice of
the projection. With ``for_backward`` it keeps the gate activations (LSTM: i, f, g, o and every
cell state; GRU: r, z, n and the recurrent candidate term h W_hn^T + b_hn) next to its output
(:mod:`fw_cpu.kept`). The backward runs the steps in reverse (backpropagation through time) from
them, then finishes with three matrix products over all steps at once for the input and weight
gradients. A backward that finds nothing kept for its ``out`` recomputes the forward, so its
result depends only on the layer's inputs. Shapes follow ``fw_core.ops.rnn``: LSTM's output is
(T + 1, B, H) (every h, then the final c); gradients come flattened in input order.
"""

from __future__ import annotations

from functools import partial
from math import prod

from fw_core.dtypes import bfloat16
from fw_core.errors import DTypeError

from ..kept import KeptForBackward

#: what each forward kept, by output array
KEPT = KeptForBackward()
_GATES = {"lstm": 4, "gru": 3, "rnn": 1}


# -- shared pieces --------------------------------------------------------------------------------
def _sizes(cell: str, x, states, w_ih, w_hh, biases) -> tuple[int, int, int]:
    """(T, B, H), or a ValueError for inputs that do not fit or differ in dtype (fw's dispatch
    then raises the meta rule's error, which names the input)."""
    if x.ndim != 3 or x.shape[0] == 0 or states[0].ndim != 2:
        raise ValueError("rnn kernel: x must be (T >= 1, B, I) and h0 (B, H)")
    length, batch, features = x.shape
    hidden = states[0].shape[1]
    gates = _GATES[cell] * hidden
    shapes = [s.shape for s in states] + [w_ih.shape, w_hh.shape] + [b.shape for b in biases]
    expected = [(batch, hidden)] * len(states) + [(gates, features), (gates, hidden)] + \
        [(gates,)] * len(biases)
    if shapes != expected:
        raise ValueError(f"rnn kernel: shapes {shapes} do not fit {expected}")
    if any(a.dtype != x.dtype for a in (*states, w_ih, w_hh, *biases)):
        raise ValueError("rnn kernel: inputs of different dtypes")
    if x.dtype == bfloat16.numpy:  # the recurrences update float arrays in place, unrounded
        raise DTypeError(f"the cpu {cell} kernel has no bfloat16 path", hint="run the layer "
                         "in float32: layer.float() and x.float(), then .bfloat16() the result")
    return length, batch, hidden


def _biases(b_ih, b_hh) -> tuple:
    """The biases passed, as a tuple: both or neither."""
    return () if b_ih is None else (b_ih, b_hh)


def _steps(length: int, reverse: bool) -> range:
    """The steps in the order the recurrence runs them."""
    return range(length - 1, -1, -1) if reverse else range(length)


def _sigmoid_(xp, a):
    """sigmoid(a) in place, as (tanh(a / 2) + 1) / 2: four passes of NumPy's tanh loop take a
    tenth of the time of one ``scipy.special.expit`` call on float32 (measured at B=32,
    H=128), for an absolute difference below float32's resolution at 0.5."""
    a *= 0.5
    xp.tanh(a, out=a)
    a *= 0.5
    a += 0.5
    return a


def _project(x, w_ih, bias):
    """x_t W_ih^T (+ bias) for every step at once: a fresh (T, B, G * H) array."""
    length, batch, features = x.shape
    pre = x.reshape(length * batch, features) @ w_ih.T
    if bias is not None:
        pre += bias
    return pre.reshape(length, batch, w_ih.shape[0])


def _previous(states, initial, t: int, reverse: bool):
    """The state (of ``states`` per step, or ``initial``) that step ``t`` started from."""
    first = t == (len(states) - 1 if reverse else 0)
    return initial if first else states[t + 1 if reverse else t - 1]


def _packed(xp, dtype, shapes):
    """One flat array for the gradients of inputs of ``shapes``, and a view of it per input."""
    sizes = [prod(s) for s in shapes]
    flat = xp.empty(sum(sizes), dtype)
    views, start = [], 0
    for shape, size in zip(shapes, sizes):
        views.append(flat[start:start + size].reshape(shape))
        start += size
    return flat, views


def _projection_grads(xp, x, y, h0, w_ih, d_in, d_rec, reverse, dx, dw_ih, dw_hh, db):
    """dx, dW_ih, dW_hh and the bias gradients, over all steps at once, from ``d_in`` and
    ``d_rec`` (T, B, G): the gradients of each step's input projection and recurrent term."""
    length, batch, features = x.shape
    rows, gates, hidden = length * batch, d_in.shape[2], h0.shape[1]
    flat_in = d_in.reshape(rows, gates)
    xp.matmul(flat_in, w_ih, out=dx.reshape(rows, features))
    xp.matmul(flat_in.T, x.reshape(rows, features), out=dw_ih)
    if reverse:  # step t started from y[t + 1]; the last one from h0
        first, later, starts = d_rec[length - 1], d_rec[:-1], y[1:]
    else:
        first, later, starts = d_rec[0], d_rec[1:], y[:-1]
    xp.matmul(first.T, h0, out=dw_hh)
    if length > 1:
        dw_hh += later.reshape(-1, gates).T @ starts.reshape(-1, hidden)
    if db:
        db[0][...] = d_in.sum(axis=(0, 1))
        db[1][...] = d_rec.sum(axis=(0, 1))


def _kept_or_recomputed(forward, out, *args, **attrs):
    """(out, what its forward kept): ``out``'s own entry, or a fresh forward's."""
    kept = KEPT.find(out)
    if kept is None:
        out = forward(*args, **attrs, for_backward=True)
        kept = KEPT.find(out)
    return out, kept


# -- LSTM -----------------------------------------------------------------------------------------
def lstm_layer(xp, x, h0, c0, w_ih, w_hh, b_ih=None, b_hh=None, *, reverse,
               for_backward):
    """One LSTM layer: (T + 1, B, H), every step's h and then the final c."""
    length, batch, n = _sizes("lstm", x, (h0, c0), w_ih, w_hh, _biases(b_ih, b_hh))
    acts = _project(x, w_ih, None if b_ih is None else b_ih + b_hh)
    out = xp.empty((length + 1, batch, n), x.dtype)
    cells = xp.empty((length, batch, n), x.dtype) if for_backward else None
    w_hh_t = xp.ascontiguousarray(w_hh.T)  # a third faster products than through the view
    h, c = h0, c0
    for t in _steps(length, reverse):
        gates = acts[t]
        gates += h @ w_hh_t
        _sigmoid_(xp, gates[:, :2 * n])  # i, f
        xp.tanh(gates[:, 2 * n:3 * n], out=gates[:, 2 * n:3 * n])  # g
        _sigmoid_(xp, gates[:, 3 * n:])  # o
        c = gates[:, n:2 * n] * c + gates[:, :n] * gates[:, 2 * n:3 * n]
        h = xp.multiply(gates[:, 3 * n:], xp.tanh(c), out=out[t])
        if cells is not None:
            cells[t] = c
    out[length] = c
    if for_backward:
        KEPT.keep(out, (acts, cells))
    return out


def lstm_layer_backward(xp, out, g, x, h0, c0, w_ih, w_hh, b_ih=None, b_hh=None, *,
                        reverse):
    """Gradients of lstm_layer's inputs for the output gradient ``g``, flattened."""
    biases = _biases(b_ih, b_hh)
    length, batch, n = _sizes("lstm", x, (h0, c0), w_ih, w_hh, biases)
    out, (acts, cells) = _kept_or_recomputed(partial(lstm_layer, xp), out, x, h0, c0,
                                             w_ih, w_hh, *biases, reverse=reverse)
    flat, (dx, dh0, dc0, dw_ih, dw_hh, *db) = _packed(
        xp, x.dtype, [x.shape, h0.shape, c0.shape, w_ih.shape, w_hh.shape] +
        [b.shape for b in biases])
    d_pre = xp.empty_like(acts)
    dh = xp.zeros((batch, n), x.dtype)
    dc = xp.array(g[length], dtype=x.dtype)
    for t in reversed(_steps(length, reverse)):
        step = acts[t]
        i, f, gg, o = step[:, :n], step[:, n:2 * n], step[:, 2 * n:3 * n], step[:, 3 * n:]
        tanh_c = xp.tanh(cells[t])
        dh += g[t]
        dc += dh * o * (1 - tanh_c * tanh_c)
        d = d_pre[t]
        d[:, :n] = dc * gg * i * (1 - i)
        d[:, n:2 * n] = dc * _previous(cells, c0, t, reverse) * f * (1 - f)
        d[:, 2 * n:3 * n] = dc * i * (1 - gg * gg)
        d[:, 3 * n:] = dh * tanh_c * o * (1 - o)
        dc *= f
        dh = d @ w_hh
    dh0[...] = dh
    dc0[...] = dc
    _projection_grads(xp, x, out[:length], h0, w_ih, d_pre, d_pre, reverse, dx, dw_ih, dw_hh,
                      db)
    return flat


# -- GRU ------------------------------------------------------------------------------------------
def gru_layer(xp, x, h0, w_ih, w_hh, b_ih=None, b_hh=None, *, reverse, for_backward):
    """One GRU layer: (T, B, H), every step's h."""
    length, batch, n = _sizes("gru", x, (h0,), w_ih, w_hh, _biases(b_ih, b_hh))
    acts = _project(x, w_ih, b_ih)  # becomes r, z, n step by step
    recurrent = xp.empty((length, batch, n), x.dtype) if for_backward else None
    out = xp.empty((length, batch, n), x.dtype)
    w_hh_t = xp.ascontiguousarray(w_hh.T)  # a third faster products than through the view
    h = h0
    for t in _steps(length, reverse):
        a = acts[t]
        hw = h @ w_hh_t
        if b_hh is not None:
            hw += b_hh
        a[:, :2 * n] += hw[:, :2 * n]
        _sigmoid_(xp, a[:, :2 * n])  # r, z
        candidate = a[:, 2 * n:]
        candidate += a[:, :n] * hw[:, 2 * n:]
        xp.tanh(candidate, out=candidate)
        h = xp.subtract(h, candidate, out=out[t])  # h' = n + z (h - n)
        h *= a[:, n:2 * n]
        h += candidate
        if recurrent is not None:
            recurrent[t] = hw[:, 2 * n:]
    if for_backward:
        KEPT.keep(out, (acts, recurrent))
    return out


def gru_layer_backward(xp, out, g, x, h0, w_ih, w_hh, b_ih=None, b_hh=None, *,
                       reverse):
    """Gradients of gru_layer's inputs for the output gradient ``g``, flattened."""
    biases = _biases(b_ih, b_hh)
    length, batch, n = _sizes("gru", x, (h0,), w_ih, w_hh, biases)
    out, (acts, recurrent) = _kept_or_recomputed(partial(gru_layer, xp), out, x, h0,
                                                 w_ih, w_hh, *biases, reverse=reverse)
    flat, (dx, dh0, dw_ih, dw_hh, *db) = _packed(
        xp, x.dtype, [x.shape, h0.shape, w_ih.shape, w_hh.shape] + [b.shape for b in biases])
    d_in, d_rec = xp.empty_like(acts), xp.empty_like(acts)
    dh = xp.zeros((batch, n), x.dtype)
    for t in reversed(_steps(length, reverse)):
        r, z, candidate = acts[t, :, :n], acts[t, :, n:2 * n], acts[t, :, 2 * n:]
        dh += g[t]
        d_candidate = dh * (1 - z) * (1 - candidate * candidate)
        di, dr = d_in[t], d_rec[t]
        di[:, :n] = d_candidate * recurrent[t] * r * (1 - r)
        di[:, n:2 * n] = dh * (_previous(out, h0, t, reverse) - candidate) * z * (1 - z)
        di[:, 2 * n:] = d_candidate
        dr[:, :2 * n] = di[:, :2 * n]
        dr[:, 2 * n:] = d_candidate * r
        dh = dh * z + dr @ w_hh
    dh0[...] = dh
    _projection_grads(xp, x, out, h0, w_ih, d_in, d_rec, reverse, dx, dw_ih, dw_hh, db)
    return flat


# -- Elman RNN ------------------------------------------------------------------------------------
def rnn_layer(xp, x, h0, w_ih, w_hh, b_ih=None, b_hh=None, *, reverse, for_backward,
              nonlinearity):
    """One Elman RNN layer: (T, B, H), every step's h."""
    _sizes("rnn", x, (h0,), w_ih, w_hh, _biases(b_ih, b_hh))
    if nonlinearity not in ("tanh", "relu"):
        raise ValueError(f"rnn kernel: nonlinearity {nonlinearity!r}")
    pre = _project(x, w_ih, None if b_ih is None else b_ih + b_hh)
    out = xp.empty_like(pre)
    w_hh_t = xp.ascontiguousarray(w_hh.T)  # a third faster products than through the view
    h = h0
    for t in _steps(x.shape[0], reverse):
        a = pre[t]
        a += h @ w_hh_t
        h = xp.tanh(a, out=out[t]) if nonlinearity == "tanh" else xp.maximum(a, 0, out=out[t])
    if for_backward:
        KEPT.keep(out, nonlinearity)  # the output holds all the backward needs
    return out


def rnn_layer_backward(xp, out, g, x, h0, w_ih, w_hh, b_ih=None, b_hh=None, *,
                       reverse, nonlinearity):
    """Gradients of rnn_layer's inputs for the output gradient ``g``, flattened."""
    biases = _biases(b_ih, b_hh)
    length, batch, n = _sizes("rnn", x, (h0,), w_ih, w_hh, biases)
    out, _ = _kept_or_recomputed(partial(rnn_layer, xp), out, x, h0, w_ih, w_hh,
                                 *biases, reverse=reverse, nonlinearity=nonlinearity)
    flat, (dx, dh0, dw_ih, dw_hh, *db) = _packed(
        xp, x.dtype, [x.shape, h0.shape, w_ih.shape, w_hh.shape] + [b.shape for b in biases])
    d_pre = xp.empty_like(out)
    dh = xp.zeros((batch, n), x.dtype)
    for t in reversed(_steps(length, reverse)):
        dh += g[t]
        y = out[t]
        xp.multiply(dh, 1 - y * y if nonlinearity == "tanh" else y > 0, out=d_pre[t])
        dh = d_pre[t] @ w_hh
    dh0[...] = dh
    _projection_grads(xp, x, out, h0, w_ih, d_pre, d_pre, reverse, dx, dw_ih, dw_hh, db)
    return flat


def kernels(xp, special) -> dict:
    """The recurrent kernels for namespace ``xp`` (they need nothing of ``special``)."""
    return {name: partial(fn, xp) for name, fn in (
        ("lstm_layer", lstm_layer), ("lstm_layer_backward", lstm_layer_backward),
        ("gru_layer", gru_layer), ("gru_layer_backward", gru_layer_backward),
        ("rnn_layer", rnn_layer), ("rnn_layer_backward", rnn_layer_backward))}
