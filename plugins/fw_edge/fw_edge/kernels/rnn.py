"""Recurrent layers: ``lstm_layer``, ``gru_layer`` and ``rnn_layer``, one layer in one
direction over a time-major sequence, with fw's packed output (``fw_core/ops/rnn.py``): LSTM
gives (T + 1, B, H), every step's h then the final c; GRU and RNN give (T, B, H).

Every step's input projection is one matrix product into a working array; the steps then run
in order (from T - 1 down with ``reverse``) with one product by ``w_hh`` each and the gates
computed in place, as fw's CPU kernel does (its sigmoid is (tanh(a / 2) + 1) / 2)."""

from __future__ import annotations

import numpy as np

from ..kernel_api import Kernel, Writes

_GATES = {"lstm_layer": 4, "gru_layer": 3, "rnn_layer": 1}
_STATES = {"lstm_layer": 2, "gru_layer": 1, "rnn_layer": 1}


def _sigmoid_(a):
    a *= 0.5
    np.tanh(a, out=a)
    a *= 0.5
    a += 0.5


def _layer(op):
    def factory(spec):
        """The recurrence of one layer node, its working arrays planned for its shapes."""
        x = spec.inputs[0]
        length, batch, features = x.shape
        hidden = spec.inputs[1].shape[1]
        gates = _GATES[op] * hidden
        biased = len(spec.inputs) == 1 + _STATES[op] + 4
        reverse = bool(spec.attrs.get("reverse", False))
        order = range(length - 1, -1, -1) if reverse else range(length)
        acts = spec.scratch((length, batch, gates), x.dtype)
        flat_acts = acts.reshape(length * batch, gates)
        w_hh_t = spec.scratch((hidden, gates), x.dtype)
        rec = spec.scratch((batch, gates), x.dtype)
        step = _STEPS[op](spec, batch, hidden)
        nonlinear = spec.attrs.get("nonlinearity", "tanh")

        def run(out, x, *tensors):
            states, (w_ih, w_hh) = tensors[:_STATES[op]], tensors[_STATES[op]:_STATES[op] + 2]
            b_ih, b_hh = tensors[-2:] if biased else (None, None)
            np.matmul(x.reshape(length * batch, features), w_ih.T, out=flat_acts)
            if b_ih is not None:
                np.add(flat_acts, b_ih, out=flat_acts)
                if op != "gru_layer":  # GRU keeps b_hh apart: r scales h W_hn^T + b_hn
                    np.add(flat_acts, b_hh, out=flat_acts)
            np.copyto(w_hh_t, w_hh.T)
            step(out, order, acts, rec, w_hh_t, states, b_hh, nonlinear)
        return Writes(run)
    return factory


def _lstm_steps(spec, batch, n):
    """The LSTM's steps with its four gates (i, f, g, o) activated by three calls: with the
    sigmoid's halving folded into the projections (exact: a power of two), every gate is one
    tanh, and i, f, o then take (t + 1) / 2 by one multiply and one add per step."""
    dtype = spec.out.dtype
    cell = spec.scratch((batch, n), dtype)
    tanh_c = spec.scratch((batch, n), dtype)
    halve = np.full(4 * n, 0.5, dtype)
    halve[2 * n:3 * n] = 1.0  # g is a tanh itself
    shift = (1.0 - halve).astype(dtype)  # 0.5 for the sigmoids, 0 for g

    def steps(out, order, acts, rec, w_hh_t, states, b_hh, nonlinear):
        h, c = states
        np.copyto(cell, c)
        np.multiply(acts, halve, out=acts)
        np.multiply(w_hh_t, halve, out=w_hh_t)
        for t in order:
            g = acts[t]
            np.matmul(h, w_hh_t, out=rec)
            g += rec
            np.tanh(g, out=g)
            np.multiply(g, halve, out=g)
            np.add(g, shift, out=g)
            np.multiply(cell, g[:, n:2 * n], out=cell)
            np.multiply(g[:, :n], g[:, 2 * n:3 * n], out=g[:, :n])
            np.add(cell, g[:, :n], out=cell)
            np.tanh(cell, out=tanh_c)
            h = np.multiply(g[:, 3 * n:], tanh_c, out=out[t])
        np.copyto(out[len(order)], cell)
    return steps


def _gru_steps(spec, batch, n):
    def steps(out, order, acts, rec, w_hh_t, states, b_hh, nonlinear):
        (h,) = states
        for t in order:
            a = acts[t]
            np.matmul(h, w_hh_t, out=rec)
            if b_hh is not None:
                np.add(rec, b_hh, out=rec)
            a[:, :2 * n] += rec[:, :2 * n]
            _sigmoid_(a[:, :2 * n])  # r, z
            candidate = a[:, 2 * n:]
            np.multiply(a[:, :n], rec[:, 2 * n:], out=rec[:, 2 * n:])
            candidate += rec[:, 2 * n:]
            np.tanh(candidate, out=candidate)
            h_new = np.subtract(h, candidate, out=out[t])  # h' = n + z (h - n)
            h_new *= a[:, n:2 * n]
            h_new += candidate
            h = h_new
    return steps


def _rnn_steps(spec, batch, n):
    def steps(out, order, acts, rec, w_hh_t, states, b_hh, nonlinear):
        (h,) = states
        for t in order:
            a = acts[t]
            np.matmul(h, w_hh_t, out=rec)
            a += rec
            h = np.tanh(a, out=out[t]) if nonlinear == "tanh" else np.maximum(a, 0, out=out[t])
    return steps


_STEPS = {"lstm_layer": _lstm_steps, "gru_layer": _gru_steps, "rnn_layer": _rnn_steps}

KERNELS = [Kernel(op, _layer(op)) for op in _GATES]
