"""norm, softmax, attention, embedding and rnn kernels against NumPy references."""

from __future__ import annotations

import numpy as np
import pytest

F32 = {"rtol": 1e-6, "atol": 1e-6}


def f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _standardize(x, axes, eps, center=True):
    x = x.astype(np.float64)
    c = x - x.mean(axes, keepdims=True) if center else x
    return c / np.sqrt((c * c).mean(axes, keepdims=True) + eps)


def test_layer_norm(one, rng):
    x, w, b = f32(rng, 2, 3, 8), f32(rng, 8), f32(rng, 8)
    out = one("layer_norm", [x, w, b], [2, 3, 8], weights=(1, 2), normalized_shape=(8,),
              eps=1e-5, has_weight=True, has_bias=True)
    np.testing.assert_allclose(out, _standardize(x, -1, 1e-5) * w + b, **F32)


def test_layer_norm_without_affine_over_two_axes(one, rng):
    x = f32(rng, 2, 3, 4)
    out = one("layer_norm", [x], [2, 3, 4], normalized_shape=(3, 4), eps=1e-5,
              has_weight=False, has_bias=False)
    np.testing.assert_allclose(out, _standardize(x, (1, 2), 1e-5), **F32)


def test_rms_norm(one, rng):
    x, w = f32(rng, 4, 6), f32(rng, 6)
    out = one("rms_norm", [x, w], [4, 6], weights=(1,), normalized_shape=(6,), eps=1e-6,
              has_weight=True)
    np.testing.assert_allclose(out, _standardize(x, -1, 1e-6, center=False) * w, **F32)


@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
def test_half_precision_norms_compute_in_float32(one, rng, op):
    x, w = f32(rng, 5, 384).astype(np.float16), f32(rng, 384).astype(np.float16)
    out = one(op, [x, w], [5, 384], out_dtype="float16", weights=(1,), normalized_shape=(384,),
              eps=1e-5, has_weight=True, has_bias=False)
    assert out.dtype == np.float16
    ref = _standardize(x, -1, 1e-5, center=op == "layer_norm") * w
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=2e-3, atol=2e-3)


def test_layer_norm_of_rows_far_from_zero_keeps_precision(one, rng):
    # float32 holds x to 1e-4 of its spread; E[x^2] - E[x]^2 would lose all of it
    x = f32(rng, 64, 384) * 0.1 + 100
    out = one("layer_norm", [x], [64, 384], normalized_shape=(384,), eps=1e-5,
              has_weight=False, has_bias=False)
    np.testing.assert_allclose(out, _standardize(x, -1, 1e-5), rtol=0, atol=3e-4)


def test_group_norm(one, rng):
    x, w, b = f32(rng, 2, 6, 5), f32(rng, 6), f32(rng, 6)
    out = one("group_norm", [x, w, b], [2, 6, 5], weights=(1, 2), num_groups=3, eps=1e-5,
              has_weight=True, has_bias=True)
    ref = _standardize(x.reshape(2, 3, 10), -1, 1e-5).reshape(x.shape)
    np.testing.assert_allclose(out, ref * w[:, None] + b[:, None], **F32)


def test_batch_norm_eval(one, rng):
    x, w, b = f32(rng, 2, 3, 4, 4), f32(rng, 3), f32(rng, 3)
    mean, var = f32(rng, 3), np.abs(f32(rng, 3)) + 0.5
    out = one("batch_norm", [x, mean, var, w, b], [2, 3, 4, 4], weights=(1, 2, 3, 4),
              training=False, momentum=0.1, eps=1e-5, has_running=True, has_weight=True,
              has_bias=True)
    view = (3, 1, 1)
    ref = (x - mean.reshape(view)) / np.sqrt(var.reshape(view) + 1e-5) * w.reshape(view) + \
        b.reshape(view)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def _softmax(x, dim):
    e = np.exp(x - x.max(dim, keepdims=True))
    return e / e.sum(dim, keepdims=True)


@pytest.mark.parametrize("op", ["softmax", "log_softmax", "safe_softmax"])
def test_softmax_family(one, rng, op):
    x = f32(rng, 3, 4, 5)
    ref = _softmax(x.astype(np.float64), 1)
    out = one(op, [x], [3, 4, 5], dim=1)
    np.testing.assert_allclose(out, np.log(ref) if op == "log_softmax" else ref, **F32)


def test_safe_softmax_gives_zeros_for_all_minus_inf(one):
    x = np.array([[-np.inf, -np.inf], [0.0, 1.0]], np.float32)
    out = one("safe_softmax", [x], [2, 2], dim=-1)
    np.testing.assert_allclose(out, [[0, 0], _softmax(x[1:], -1)[0]], **F32)


def _attention_ref(q, k, v, scale, keep=None, add=None):
    s = (q.astype(np.float64) @ np.swapaxes(k, -1, -2)) * scale
    if add is not None:
        s = s + add
    if keep is not None:
        s = np.where(keep, s, -np.inf)
    top = s.max(-1, keepdims=True)
    top = np.where(np.isinf(top), 0, top)
    e = np.exp(s - top)
    total = e.sum(-1, keepdims=True)
    return (e / np.where(total == 0, 1, total)) @ v


@pytest.mark.parametrize("mask", ["none", "causal", "bool", "float"])
def test_attention(one, rng, mask):
    q, k, v = f32(rng, 2, 3, 4, 8), f32(rng, 2, 3, 5, 8), f32(rng, 2, 3, 5, 6)
    arrays, keep, add = [q, k, v], None, None
    if mask == "causal":
        keep = np.tri(4, 5, dtype=bool)
    elif mask == "bool":
        keep = rng.random((2, 1, 4, 5)) > 0.3
        keep[0, 0, 1] = False  # a row with no allowed key gives 0
        arrays.append(keep)
    elif mask == "float":
        add = f32(rng, 4, 5)
        arrays.append(add)
    out = one("scaled_dot_product_attention", arrays, [2, 3, 4, 6], scale=0.3,
              is_causal=mask == "causal", dropout_p=0.0, has_mask=mask in ("bool", "float"))
    ref = _attention_ref(q, k, v, 0.3, keep, add)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
    if mask == "bool":
        np.testing.assert_array_equal(out[0, :, 1], 0)


@pytest.mark.parametrize("dtype", ["float32", "bool"])
def test_attention_with_a_one_dimensional_mask(one, rng, dtype):
    q, k, v = f32(rng, 2, 3, 4, 8), f32(rng, 2, 3, 5, 8), f32(rng, 2, 3, 5, 6)
    mask = f32(rng, 5) if dtype == "float32" else np.array([True, False, True, True, False])
    out = one("scaled_dot_product_attention", [q, k, v, mask], [2, 3, 4, 6], scale=0.3,
              is_causal=False, dropout_p=0.0, has_mask=True)
    ref = _attention_ref(q, k, v, 0.3, *((None, mask) if dtype == "float32" else (mask, None)))
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


def test_embedding(one, rng):
    weight = f32(rng, 10, 4)
    idx = np.array([[1, 9, 0], [3, 3, 2]])
    out = one("embedding", [idx, weight], [2, 3, 4], weights=(1,), padding_idx=None)
    np.testing.assert_array_equal(out, weight[idx])


def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


def _rnn_ref(op, x, states, w_ih, w_hh, b_ih, b_hh, reverse, nonlinearity="tanh"):
    """PyTorch's equations, step by step, in float64; fw's packed output."""
    h = states[0].astype(np.float64)
    c = states[1].astype(np.float64) if op == "lstm_layer" else None
    n = h.shape[1]
    ys = [None] * x.shape[0]
    for t in (range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])):
        gi, gh = x[t] @ w_ih.T + b_ih, h @ w_hh.T + b_hh
        if op == "lstm_layer":
            g = gi + gh
            i, f, gg, o = (g[:, j * n:(j + 1) * n] for j in range(4))
            c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(gg)
            h = _sigmoid(o) * np.tanh(c)
        elif op == "gru_layer":
            r = _sigmoid(gi[:, :n] + gh[:, :n])
            z = _sigmoid(gi[:, n:2 * n] + gh[:, n:2 * n])
            cand = np.tanh(gi[:, 2 * n:] + r * gh[:, 2 * n:])
            h = (1 - z) * cand + z * h
        else:
            h = np.tanh(gi + gh) if nonlinearity == "tanh" else np.maximum(gi + gh, 0)
        ys[t] = h
    return np.stack(ys + ([c] if c is not None else []))


@pytest.mark.parametrize("op, gates", [("lstm_layer", 4), ("gru_layer", 3), ("rnn_layer", 1)])
@pytest.mark.parametrize("reverse", [False, True])
def test_recurrent_layers_pack_like_fw(one, rng, op, gates, reverse):
    steps, batch, features, hidden = 5, 2, 3, 4
    x = f32(rng, steps, batch, features) * 0.5
    states = [f32(rng, batch, hidden) for _ in range(2 if op == "lstm_layer" else 1)]
    w_ih = f32(rng, gates * hidden, features) * 0.5
    w_hh = f32(rng, gates * hidden, hidden) * 0.5
    b_ih, b_hh = f32(rng, gates * hidden), f32(rng, gates * hidden)
    attrs = {"nonlinearity": "relu"} if op == "rnn_layer" else {}
    ref = _rnn_ref(op, x, states, w_ih, w_hh, b_ih, b_hh, reverse, **attrs)
    n_states = len(states)
    out = one(op, [x, *states, w_ih, w_hh, b_ih, b_hh], list(ref.shape),
              weights=tuple(range(1 + n_states, 5 + n_states)), reverse=reverse,
              for_backward=False, **attrs)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
