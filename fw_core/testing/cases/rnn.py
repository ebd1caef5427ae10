"""Recurrent layer cases: lstm_layer, gru_layer, rnn_layer and their backward ops.

The forward references are the cells' equations step by step in NumPy. The backward ops'
references are exact vector-Jacobian products of those references by complex-step
differentiation (f'(x) v = Im f(x + i h v) / h for h = 1e-30: no subtraction, so no
cancellation), one input element at a time. Each backward case runs its forward first, with
``for_backward`` on (the backward kernel uses what its forward kept) or off (it recomputes).
"""

import numpy as np

from fw_core.testing.conformance import OpCase, arg

T, B, FEATURES, H = 4, 3, 3, 5
_GATES = {"lstm_layer": 4, "gru_layer": 3, "rnn_layer": 1}


# -- NumPy references (complex-safe: complex-step differentiation runs them too) ------------------
def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def _relu(z):
    return np.where(z.real > 0, z, 0)


def _steps(reverse):
    return range(T - 1, -1, -1) if reverse else range(T)


def _split(arrays, states):
    x, rest = arrays[0], list(arrays[1:])
    initial, (w_ih, w_hh), biases = rest[:states], rest[states:states + 2], rest[states + 2:]
    b_ih, b_hh = biases if biases else (0, 0)
    return x, initial, w_ih, w_hh, b_ih, b_hh


def lstm_ref(*arrays, reverse=False):
    x, (h, c), w_ih, w_hh, b_ih, b_hh = _split(arrays, 2)
    y = np.zeros((x.shape[0] + 1, *h.shape), np.result_type(x, w_ih))
    for t in _steps(reverse):
        i, f, g, o = np.split(x[t] @ w_ih.T + b_ih + h @ w_hh.T + b_hh, 4, axis=1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = y[t] = _sigmoid(o) * np.tanh(c)
    y[-1] = c
    return y


def gru_ref(*arrays, reverse=False):
    x, (h,), w_ih, w_hh, b_ih, b_hh = _split(arrays, 1)
    y = np.zeros((x.shape[0], *h.shape), np.result_type(x, w_ih))
    for t in _steps(reverse):
        xr, xz, xn = np.split(x[t] @ w_ih.T + b_ih, 3, axis=1)
        hr, hz, hn = np.split(h @ w_hh.T + b_hh, 3, axis=1)
        r, z = _sigmoid(xr + hr), _sigmoid(xz + hz)
        n = np.tanh(xn + r * hn)
        h = y[t] = (1 - z) * n + z * h
    return y


def rnn_ref(*arrays, reverse=False, nonlinearity="tanh"):
    x, (h,), w_ih, w_hh, b_ih, b_hh = _split(arrays, 1)
    act = np.tanh if nonlinearity == "tanh" else _relu
    y = np.zeros((x.shape[0], *h.shape), np.result_type(x, w_ih))
    for t in _steps(reverse):
        h = y[t] = act(x[t] @ w_ih.T + b_ih + h @ w_hh.T + b_hh)
    return y


_REFERENCES = {"lstm_layer": lstm_ref, "gru_layer": gru_ref, "rnn_layer": rnn_ref}


def vjp_ref(forward, arrays, g, **attrs):
    """The gradients of ``sum(forward(*arrays) * g)`` at each array, flattened and concatenated,
    by complex-step differentiation."""
    step = 1e-30
    grads = []
    for k, a in enumerate(arrays):
        grad = np.zeros(a.size)
        for j in range(a.size):
            moved = [np.asarray(b, np.complex128) for b in arrays]
            moved[k].reshape(-1)[j] += 1j * step
            grad[j] = (forward(*moved, **attrs).imag / step * g).sum()
        grads.append(grad)
    return np.concatenate(grads).astype(arrays[0].dtype)


# -- torch ----------------------------------------------------------------------------------------
def _torch_layer(torch, op, tensors, reverse, nonlinearity="tanh"):
    """``op``'s packed output computed by torch's own layer function."""
    states = 2 if op == "lstm_layer" else 1
    x, initial, params = tensors[0], tensors[1:1 + states], list(tensors[1 + states:])
    run = {"lstm_layer": torch.lstm, "gru_layer": torch.gru,
           "rnn_layer": torch.rnn_tanh if nonlinearity == "tanh" else torch.rnn_relu}[op]
    hx = tuple(s.unsqueeze(0) for s in initial)
    result = run(x.flip(0) if reverse else x, hx if states == 2 else hx[0], params,
                 len(params) == 4, 1, 0.0, True, False, False)
    y = result[0].flip(0) if reverse else result[0]
    return torch.cat([y, result[2]]) if states == 2 else y


def _torch_backward(torch, op, tensors, reverse, **attrs):
    *inputs, g = tensors
    leaves = [t.detach().requires_grad_(True) for t in inputs]
    out = _torch_layer(torch, op, leaves, reverse, **attrs)
    grads = torch.autograd.grad(out, leaves, g)
    return torch.cat([d.reshape(-1) for d in grads])


# -- cases ----------------------------------------------------------------------------------------
def _inputs(op, bias: bool) -> list:
    gates = _GATES[op] * H
    states = [arg(B, H)] * (2 if op == "lstm_layer" else 1)
    weights = [arg(gates, FEATURES, low=-0.8, high=0.8), arg(gates, H, low=-0.8, high=0.8)]
    return [arg(T, B, FEATURES), *states, *weights] + ([arg(gates), arg(gates)] if bias else [])


def _forward(fw, op, tensors, attrs):
    wanted = fw.is_grad_enabled() and any(getattr(t, "requires_grad", False) for t in tensors)
    return fw.ops.apply(fw.ops.get(op), tuple(tensors), {**attrs, "for_backward": wanted})


def _layer_case(op, name, bias=True, reverse=False, **extra):
    attrs = {"reverse": reverse, **extra}
    return OpCase(op, name, _inputs(op, bias),
                  lambda fw, *t: _forward(fw, op, t, attrs),
                  lambda *a: _REFERENCES[op](*a, **attrs).astype(a[0].dtype),
                  torch=lambda torch, *t: _torch_layer(torch, op, t, **attrs))


def _backward_case(op, name, kept: bool, bias=True, reverse=False, **extra):
    attrs = {"reverse": reverse, **extra}
    rows = T + 1 if op == "lstm_layer" else T

    def call(fw, *tensors):
        *inputs, g = tensors
        out = fw.ops.apply(fw.ops.get(op), tuple(inputs), {**attrs, "for_backward": kept})
        return fw.ops.apply(fw.ops.get(f"{op}_backward"), (out, g, *inputs), attrs)

    return OpCase(f"{op}_backward", name, _inputs(op, bias) + [arg(rows, B, H)], call,
                  lambda *a: vjp_ref(_REFERENCES[op], a[:-1], a[-1], **attrs),
                  torch=lambda torch, *t: _torch_backward(torch, op, t, **attrs),
                  grad=False, tolerance={"float32": (2e-5, 1e-4)})


CASES = [
    _layer_case("lstm_layer", "forward"),
    _layer_case("lstm_layer", "reverse_without_bias", bias=False, reverse=True),
    _layer_case("gru_layer", "forward"),
    _layer_case("gru_layer", "reverse_without_bias", bias=False, reverse=True),
    _layer_case("rnn_layer", "tanh", nonlinearity="tanh"),
    _layer_case("rnn_layer", "relu_reverse", reverse=True, nonlinearity="relu"),
    _backward_case("lstm_layer", "kept", kept=True),
    _backward_case("lstm_layer", "recomputed_reverse", kept=False, reverse=True),
    _backward_case("gru_layer", "kept_without_bias", kept=True, bias=False),
    _backward_case("gru_layer", "recomputed_reverse", kept=False, reverse=True),
    _backward_case("rnn_layer", "kept_tanh", kept=True, nonlinearity="tanh"),
    _backward_case("rnn_layer", "recomputed_relu_reverse", kept=False, reverse=True,
                   nonlinearity="relu"),
]
