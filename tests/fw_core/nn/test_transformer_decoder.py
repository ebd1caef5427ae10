"""TransformerDecoderLayer, TransformerDecoder and Transformer against PyTorch (post- and
pre-norm, batch_first, activations, masks, causal targets, state-dict layout, errors)."""

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_core.nn as nn

from .layer_check import check_layer, const

rng = np.random.default_rng(0)
D, HEADS, FF, T, S, N = 8, 2, 16, 4, 5, 3


def _layer(lib, **options):
    return lib.TransformerDecoderLayer(D, HEADS, FF, dropout=0.0, **options)


def _randomize(theirs):
    with torch.no_grad():
        for name, p in theirs.named_parameters():
            if "bias" in name or "norm" in name:
                p.normal_()


def _inputs(batch_first=False):
    if batch_first:
        return [rng.standard_normal((N, T, D)), rng.standard_normal((N, S, D))]
    return [rng.standard_normal((T, N, D)), rng.standard_normal((S, N, D))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", [{}, {"norm_first": True}, {"activation": "gelu"},
                                     {"batch_first": True}, {"bias": False},
                                     {"activation": torch.nn.functional.silu}],
                         ids=lambda options: str({k: getattr(v, "__name__", v)
                                                  for k, v in options.items()}))
def test_decoder_layer(options, dtype):
    theirs = _layer(torch.nn, **options)
    _randomize(theirs)
    ours_options = dict(options)
    if callable(options.get("activation")):
        ours_options["activation"] = nn.functional.silu
    check_layer(_layer(nn, **ours_options), theirs, _inputs(options.get("batch_first")),
                dtype=dtype)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_masks(norm_first):
    theirs = _layer(torch.nn, norm_first=norm_first)
    _randomize(theirs)
    tgt_mask = np.triu(np.full((T, T), -np.inf), 1)
    memory_mask = np.where(rng.random((T, S)) < 0.3, -1e4, 0.0)
    tgt_kpm = rng.random((N, T)) < 0.3
    tgt_kpm[:, 0] = False
    memory_kpm = rng.random((N, S)) < 0.3
    memory_kpm[:, 0] = False
    masks = {"tgt_mask": const(tgt_mask), "memory_mask": const(memory_mask),
             "tgt_key_padding_mask": const(np.where(tgt_kpm, -1e4, 0.0)),
             "memory_key_padding_mask": const(np.where(memory_kpm, -1e4, 0.0)),
             "tgt_is_causal": True}
    check_layer(_layer(nn, norm_first=norm_first), theirs, _inputs(), masks, dtype="float64")


def test_decoder_layer_unbatched():
    theirs = _layer(torch.nn)
    _randomize(theirs)
    check_layer(_layer(nn), theirs, [rng.standard_normal((T, D)), rng.standard_normal((S, D))],
                dtype="float64")


@pytest.mark.parametrize("options,final_norm", [({}, False), ({"norm_first": True}, True),
                                                 ({"batch_first": True}, True)], ids=str)
def test_decoder_stack(options, final_norm):
    theirs = torch.nn.TransformerDecoder(_layer(torch.nn, **options), 2,
                                         torch.nn.LayerNorm(D) if final_norm else None)
    _randomize(theirs)
    ours = nn.TransformerDecoder(_layer(nn, **options), 2, nn.LayerNorm(D) if final_norm else None)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(T).numpy()
    kpm = rng.random((N, S)) < 0.3
    kpm[:, 0] = False
    check_layer(ours, theirs, _inputs(options.get("batch_first")),
                {"tgt_mask": const(causal), "memory_key_padding_mask": const(kpm)},
                dtype="float64")


@pytest.mark.parametrize("options", [{}, {"norm_first": True, "activation": "gelu"},
                                     {"batch_first": True, "bias": False}], ids=str)
def test_transformer(options):
    kw = {"d_model": D, "nhead": HEADS, "num_encoder_layers": 2, "num_decoder_layers": 2,
          "dim_feedforward": FF, "dropout": 0.0, **options}
    theirs = torch.nn.Transformer(**kw)
    _randomize(theirs)
    src, tgt = _inputs(options.get("batch_first"))[::-1]
    causal = nn.Transformer.generate_square_subsequent_mask(T).numpy()
    src_kpm = rng.random((N, S)) < 0.3
    src_kpm[:, 0] = False
    check_layer(nn.Transformer(**kw), theirs, [src, tgt],
                {"tgt_mask": const(causal), "src_key_padding_mask": const(src_kpm),
                 "memory_key_padding_mask": const(src_kpm)}, dtype="float64")


def test_generate_square_subsequent_mask_matches_torch():
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    assert mask.dtype == fw.float32
    np.testing.assert_array_equal(mask.numpy(),
                                  torch.nn.Transformer.generate_square_subsequent_mask(5))
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=fw.float64).dtype == \
        fw.float64


def test_state_dict_layout_matches_torch():
    kw = {"d_model": D, "nhead": HEADS, "num_encoder_layers": 2, "num_decoder_layers": 1,
          "dim_feedforward": FF}
    ours, theirs = nn.Transformer(**kw), torch.nn.Transformer(**kw)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]


def test_weights_are_xavier_initialised():
    model = nn.Transformer(d_model=D, nhead=HEADS, num_encoder_layers=1, num_decoder_layers=1,
                           dim_feedforward=64)
    w = model.encoder.layers[0].linear1.weight.detach().numpy()
    bound = np.sqrt(6 / (D + 64))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound


def test_custom_encoder_and_decoder_are_used():
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, HEADS, FF), 1)
    decoder = nn.TransformerDecoder(_layer(nn), 1)
    model = nn.Transformer(D, HEADS, custom_encoder=encoder, custom_decoder=decoder)
    assert model.encoder is encoder and model.decoder is decoder
    assert model(fw.randn(S, N, D), fw.randn(T, N, D)).shape == (T, N, D)


def test_errors():
    model = nn.Transformer(D, HEADS, 1, 1, FF)
    with pytest.raises(RuntimeError, match="batch number of src and tgt"):
        model(fw.randn(S, N, D), fw.randn(T, N + 1, D))
    with pytest.raises(RuntimeError, match="must be equal to d_model"):
        model(fw.randn(S, N, D + 1), fw.randn(T, N, D + 1))
    with pytest.raises(ValueError, match="relu/gelu"):
        nn.TransformerDecoderLayer(D, HEADS, activation="swish")


def test_decoder_deep_copies_the_layer():
    layer = _layer(nn)
    decoder = nn.TransformerDecoder(layer, 2)
    assert decoder.layers[0] is not layer
    assert decoder.layers[0].linear1.weight is not decoder.layers[1].linear1.weight
