"""ONNX's LSTM, GRU and RNN (layout 0: sequence first), run step by step with fw ops so that
gradients flow through an imported recurrent model. Gate order is ONNX's: LSTM i, o, f, c;
GRU z, r, h."""

from __future__ import annotations

import fw_core as fw

_ACTIVATIONS = {"Sigmoid": fw.sigmoid, "Tanh": fw.tanh, "Relu": fw.relu}


def _activations(node, defaults: list[str]):
    names = node.get("activations") or defaults
    unknown = [n for n in names if n not in _ACTIVATIONS]
    if unknown or node.get("clip") is not None or node.get("layout", 0):
        raise fw.errors.UnsupportedError(
            f"{node.op_type} with activations {names}, clip or layout 1", op=node.op_type,
            hint="use the default activations, no clip and layout 0")
    return [_ACTIVATIONS[n] for n in names]


def _directions(node) -> list[bool]:
    """Whether each direction runs reversed."""
    kind = node.get("direction", "forward")
    return {"forward": [False], "reverse": [True], "bidirectional": [False, True]}[kind]


def _run(node, x, initial, step, states: int):
    """Run ``step(x_t, state, d) -> state`` over the sequence in each direction; returns Y
    (T, directions, B, H) and each final state stacked over directions."""
    outs, finals = [], [[] for _ in range(states)]
    for d, reverse in enumerate(_directions(node)):
        state = tuple(s[d] for s in initial)
        hs = []
        order = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
        for t in order:
            state = step(x[t], state, d)
            hs.append(state[0])
        if reverse:
            hs.reverse()
        outs.append(fw.stack(hs, dim=0))
        for k in range(states):
            finals[k].append(state[k])
    y = fw.stack(outs, dim=1)
    return (y, *(fw.stack(f, dim=0) for f in finals))


def _initial(node, x, given, hidden, directions):
    if given is not None:
        return given
    return fw.zeros(directions, x.shape[1], hidden, dtype=x.dtype)


def _bias(b, d, width):
    if b is None:
        return 0.0, 0.0
    return b[d, :width], b[d, width:]


def lstm(node, x, w, r, b=None, lengths=None, h0=None, c0=None, peepholes=None):
    if lengths is not None or peepholes is not None:
        raise fw.errors.UnsupportedError("LSTM with sequence_lens or peepholes", op="LSTM",
                                         hint="pass full sequences without peepholes")
    f, g, h = _activations(node, ["Sigmoid", "Tanh", "Tanh"])
    hidden, n = node.get("hidden_size"), len(_directions(node))
    h0, c0 = (_initial(node, x, s, hidden, n) for s in (h0, c0))

    def step(xt, state, d):
        ht, ct = state
        wb, rb = _bias(b, d, 4 * hidden)
        gates = xt @ w[d].T + ht @ r[d].T + wb + rb
        i, o, fo, c = (gates[:, k * hidden:(k + 1) * hidden] for k in range(4))
        ct = f(fo) * ct + f(i) * g(c)
        return h(ct) * f(o), ct

    return _run(node, x, (h0, c0), step, 2)


def gru(node, x, w, r, b=None, lengths=None, h0=None):
    if lengths is not None:
        raise fw.errors.UnsupportedError("GRU with sequence_lens", op="GRU",
                                         hint="pass full sequences")
    f, g = _activations(node, ["Sigmoid", "Tanh"])
    hidden, n = node.get("hidden_size"), len(_directions(node))
    before = node.get("linear_before_reset", 0)
    h0 = _initial(node, x, h0, hidden, n)

    def step(xt, state, d):
        (ht,) = state
        wb, rb = _bias(b, d, 3 * hidden)
        xw = xt @ w[d].T + wb
        rd = r[d]
        z = f(xw[:, :hidden] + ht @ rd[:hidden].T + _part(rb, 0, hidden))
        reset = f(xw[:, hidden:2 * hidden] + ht @ rd[hidden:2 * hidden].T +
                  _part(rb, 1, hidden))
        if before:
            recur = (ht @ rd[2 * hidden:].T + _part(rb, 2, hidden)) * reset
        else:
            recur = (reset * ht) @ rd[2 * hidden:].T + _part(rb, 2, hidden)
        candidate = g(xw[:, 2 * hidden:] + recur)
        return ((1 - z) * candidate + z * ht,)

    return _run(node, x, (h0,), step, 1)


def _part(bias, k, hidden):
    return bias if isinstance(bias, float) else bias[k * hidden:(k + 1) * hidden]


def rnn(node, x, w, r, b=None, lengths=None, h0=None):
    if lengths is not None:
        raise fw.errors.UnsupportedError("RNN with sequence_lens", op="RNN",
                                         hint="pass full sequences")
    (f,) = _activations(node, ["Tanh"])
    hidden, n = node.get("hidden_size"), len(_directions(node))
    h0 = _initial(node, x, h0, hidden, n)

    def step(xt, state, d):
        wb, rb = _bias(b, d, hidden)
        return (f(xt @ w[d].T + state[0] @ r[d].T + wb + rb),)

    return _run(node, x, (h0,), step, 1)


HANDLERS = {"LSTM": lstm, "GRU": gru, "RNN": rnn}
