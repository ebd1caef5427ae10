"""MultiheadAttention against PyTorch: layouts, masks, causal, weights, kdim/vdim, extras."""

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_core.nn as nn
from fw_core.errors import DTypeError, ShapeError

from .layer_check import check_layer, const

rng = np.random.default_rng(0)
E, H, L, S, N = 8, 2, 5, 6, 3


def _pair(**options):
    return nn.MultiheadAttention(E, H, **options), torch.nn.MultiheadAttention(E, H, **options)


def _randomize_biases(theirs):
    with torch.no_grad():  # torch starts biases at 0: make them matter
        for name, p in theirs.named_parameters():
            if "bias" in name:
                p.normal_()


def _check(options, args, kwargs=None, dtype="float32", modes=("train", "eval")):
    ours, theirs = _pair(**options)
    _randomize_biases(theirs)
    return check_layer(ours, theirs, args, kwargs or {}, dtype=dtype, modes=modes)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("average", [True, False])
def test_self_attention(need_weights, average, dtype):
    x = rng.standard_normal((L, N, E))
    _check({}, [x, x, x], {"need_weights": need_weights, "average_attn_weights": average},
           dtype)


@pytest.mark.parametrize("batch_first", [True, False])
def test_cross_attention_with_different_lengths(batch_first):
    q = rng.standard_normal((N, L, E) if batch_first else (L, N, E))
    kv = rng.standard_normal((N, S, E) if batch_first else (S, N, E))
    _check({"batch_first": batch_first}, [q, kv, kv])
    _check({"batch_first": batch_first}, [q, kv, rng.standard_normal(kv.shape)])


def test_unbatched_input():
    q, k = rng.standard_normal((L, E)), rng.standard_normal((S, E))
    mask = rng.random(S) < 0.3
    mask[0] = False
    _check({}, [q, k, k], {"key_padding_mask": mask})
    _check({}, [q, k, k], {"need_weights": False})


def test_kdim_vdim():
    q = rng.standard_normal((L, N, E))
    k, v = rng.standard_normal((S, N, 4)), rng.standard_normal((S, N, 6))
    _check({"kdim": 4, "vdim": 6}, [q, k, v], dtype="float64")
    _check({"kdim": 4, "vdim": 6, "batch_first": True},
           [q.swapaxes(0, 1), k.swapaxes(0, 1), v.swapaxes(0, 1)], {"need_weights": False})


def _bool_mask(shape):
    mask = rng.random(shape) < 0.3
    mask[..., 0] = False  # every query keeps at least one key (no all-masked rows)
    return mask


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("mask_kind", ["bool2d", "float2d", "bool3d", "float3d"])
def test_attention_masks(mask_kind, need_weights):
    x = rng.standard_normal((L, N, E))
    kv = rng.standard_normal((S, N, E))
    shape = (L, S) if mask_kind.endswith("2d") else (N * H, L, S)
    mask = _bool_mask(shape)
    if mask_kind.startswith("float"):
        mask = np.where(mask, -1e4, 0.0) + rng.standard_normal(shape) * 0.5
    _check({}, [x, kv, kv], {"attn_mask": const(mask), "need_weights": need_weights},
           dtype="float64")


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_key_padding_mask_alone_and_with_attn_mask(kind, need_weights):
    x = rng.standard_normal((N, L, E))
    kpm = _bool_mask((N, L))
    if kind == "float":
        kpm = np.where(kpm, -1e4, 0.0)
    opts = {"batch_first": True}
    _check(opts, [x, x, x], {"key_padding_mask": const(kpm), "need_weights": need_weights},
           dtype="float64")
    attn = np.where(_bool_mask((L, L)), -1e4, 0.0) if kind == "float" else _bool_mask((L, L))
    _check(opts, [x, x, x], {"key_padding_mask": const(kpm), "attn_mask": const(attn),
                             "need_weights": need_weights}, dtype="float64")


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("with_padding", [True, False])
def test_is_causal_with_the_causal_mask(need_weights, with_padding):
    x = rng.standard_normal((L, N, E))
    causal = np.triu(np.ones((L, L), dtype=bool), 1)
    kwargs = {"attn_mask": const(causal), "is_causal": True, "need_weights": need_weights}
    if with_padding:
        kpm = np.zeros((N, L), dtype=bool)
        kpm[:, -1] = True
        kwargs["key_padding_mask"] = const(kpm)
    _check({}, [x, x, x], kwargs, dtype="float64")


def test_is_causal_without_a_mask_builds_the_causal_mask():
    ours = nn.MultiheadAttention(E, H)
    x = fw.randn(L, N, E)
    causal = fw.tensor(np.triu(np.ones((L, L), dtype=bool), 1))
    for need_weights in (True, False):
        a, _ = ours(x, x, x, is_causal=True, need_weights=need_weights)
        b, _ = ours(x, x, x, attn_mask=causal, need_weights=need_weights)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-6)


@pytest.mark.parametrize("options", [{"add_bias_kv": True}, {"add_zero_attn": True},
                                     {"add_bias_kv": True, "add_zero_attn": True},
                                     {"bias": False}], ids=str)
def test_extra_keys_and_no_bias(options):
    x = rng.standard_normal((L, N, E))
    kpm = _bool_mask((N, L))
    _check(options, [x, x, x], {"key_padding_mask": const(kpm),
                                "attn_mask": const(_bool_mask((L, L)))}, dtype="float64")
    _check(options, [x, x, x], {"need_weights": False}, dtype="float64")


def test_dropout_on_weights_is_off_in_eval_and_active_in_training():
    x = rng.standard_normal((L, N, E))
    _check({"dropout": 0.5}, [x, x, x], modes=("eval",))
    ours = nn.MultiheadAttention(E, H, dropout=0.5)
    t = fw.tensor(x.astype(np.float32))
    _, weights = ours(t, t, t, average_attn_weights=False)
    w = weights.detach().numpy()
    assert (w == 0).mean() > 0.3  # about half the weights dropped
    kept = w[w != 0]
    assert kept.max() > 1.0 / L  # and the rest scaled by 2


def test_shape_and_dtype_errors_name_the_module():
    model = nn.Sequential(nn.MultiheadAttention(E, H))
    attn = model[0]
    x = fw.randn(L, N, E)
    with pytest.raises(ShapeError, match="expected query with 8 features") as info:
        attn(fw.randn(L, N, 4), x, x)
    with pytest.raises(ShapeError, match="attn_mask of shape"):
        attn(x, x, x, attn_mask=fw.zeros(L, L + 1, dtype=fw.bool))
    with pytest.raises(ShapeError, match="key_padding_mask of shape"):
        attn(x, x, x, key_padding_mask=fw.zeros(N, L + 1, dtype=fw.bool))
    with pytest.raises(ShapeError, match="batch sizes"):
        attn(x, fw.randn(S, N + 1, E), fw.randn(S, N + 1, E))
    with pytest.raises(DTypeError, match="bool or floating"):
        attn(x, x, x, attn_mask=fw.zeros(L, L, dtype=fw.int64))
    with pytest.raises(ShapeError, match="divisible"):
        nn.MultiheadAttention(10, 3)
    del info


def test_parameter_layout_matches_torch():
    for options in ({}, {"kdim": 4, "vdim": 6}, {"add_bias_kv": True}, {"bias": False}):
        ours, theirs = _pair(**options)
        assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
            [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
