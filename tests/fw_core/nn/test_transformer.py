"""TransformerEncoderLayer and TransformerEncoder against PyTorch (post- and pre-norm, masks,
activations, deep copies)."""

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_core.nn as nn

from .layer_check import check_layer, const

rng = np.random.default_rng(0)
D, HEADS, FF, L, N = 8, 2, 16, 5, 3


def _layer(lib, **options):
    return lib.TransformerEncoderLayer(D, HEADS, FF, dropout=0.0, **options)


def _randomize(theirs):
    with torch.no_grad():
        for name, p in theirs.named_parameters():
            if "bias" in name or "norm" in name:
                p.normal_()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", [{}, {"norm_first": True}, {"activation": "gelu"},
                                     {"batch_first": True}, {"bias": False},
                                     {"layer_norm_eps": 1e-3, "norm_first": True}], ids=str)
def test_encoder_layer(options, dtype):
    theirs = _layer(torch.nn, **options)
    _randomize(theirs)
    x = rng.standard_normal((N, L, D) if options.get("batch_first") else (L, N, D))
    check_layer(_layer(nn, **options), theirs, [x], dtype=dtype)


def test_encoder_layer_with_a_callable_activation():
    theirs = _layer(torch.nn, activation=torch.nn.functional.silu)
    _randomize(theirs)
    check_layer(_layer(nn, activation=nn.functional.silu), theirs,
                [rng.standard_normal((L, N, D))])


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_masks(norm_first):
    theirs = _layer(torch.nn, norm_first=norm_first)
    _randomize(theirs)
    kpm = rng.random((N, L)) < 0.3
    kpm[:, 0] = False
    kpm = np.where(kpm, -1e4, 0.0)  # PyTorch deprecates mixing bool and float masks
    mask = np.where(rng.random((L, L)) < 0.3, -1e4, 0.0)
    check_layer(_layer(nn, norm_first=norm_first), theirs, [rng.standard_normal((L, N, D))],
                {"src_mask": const(mask), "src_key_padding_mask": const(kpm)}, dtype="float64")


def test_encoder_layer_causal():
    theirs = _layer(torch.nn)
    _randomize(theirs)
    causal = np.triu(np.full((L, L), -np.inf), 1)
    check_layer(_layer(nn), theirs, [rng.standard_normal((L, N, D))],
                {"src_mask": const(causal), "is_causal": True}, dtype="float64")


@pytest.mark.parametrize("options,final_norm", [({}, False), ({"norm_first": True}, True),
                                                 ({"batch_first": True}, True)], ids=str)
def test_encoder_stack(options, final_norm):
    theirs = torch.nn.TransformerEncoder(_layer(torch.nn, **options), 3,
                                         torch.nn.LayerNorm(D) if final_norm else None,
                                         enable_nested_tensor=False)
    _randomize(theirs)
    ours = nn.TransformerEncoder(_layer(nn, **options), 3, nn.LayerNorm(D) if final_norm else None)
    x = rng.standard_normal((N, L, D) if options.get("batch_first") else (L, N, D))
    kpm = rng.random((N, L)) < 0.3
    kpm[:, 0] = False
    check_layer(ours, theirs, [x], {"src_key_padding_mask": const(kpm)}, dtype="float64")


def test_encoder_deep_copies_the_layer():
    layer = _layer(nn)
    encoder = nn.TransformerEncoder(layer, 2)
    assert encoder.layers[0] is not layer
    assert encoder.layers[0].linear1.weight is not encoder.layers[1].linear1.weight
    np.testing.assert_array_equal(encoder.layers[0].linear1.weight.detach().numpy(),
                                  encoder.layers[1].linear1.weight.detach().numpy())
    out = {}
    encoder.layers[1].linear1.register_forward_hook(lambda m, a, o: out.setdefault("o", o))
    encoder(fw.randn(L, N, D))
    assert out["o"].module == "layers.1.linear1"


def test_dropout_is_active_only_in_training():
    ours = nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.5)
    x = fw.randn(L, N, D)
    ours.eval()
    np.testing.assert_array_equal(ours(x).detach().numpy(), ours(x).detach().numpy())
    ours.train()
    assert not np.allclose(ours(x).detach().numpy(), ours(x).detach().numpy())


def test_unknown_activation():
    with pytest.raises(ValueError, match="relu/gelu"):
        nn.TransformerEncoderLayer(D, HEADS, activation="swish")


def test_state_dict_layout_matches_torch():
    ours = nn.TransformerEncoder(_layer(nn), 2, nn.LayerNorm(D))
    theirs = torch.nn.TransformerEncoder(_layer(torch.nn), 2, torch.nn.LayerNorm(D),
                                         enable_nested_tensor=False)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
