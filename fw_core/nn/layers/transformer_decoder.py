"""TransformerDecoderLayer, TransformerDecoder and the whole encoder-decoder Transformer, as
PyTorch's (same parameter names, so state dicts load unchanged)."""

from __future__ import annotations

__all__ = ["Transformer", "TransformerDecoder", "TransformerDecoderLayer"]

import copy
from collections.abc import Callable

from ..._state import state
from ...errors import ShapeError
from ...ops.meta import describe
from .. import functional as F
from .. import init
from ..module import Module
from ._check import check_size
from .container import ModuleList
from .normalization import LayerNorm
from .transformer import (
    TransformerEncoder,
    TransformerEncoderLayer,
    build_sublayers,
    detect_is_causal,
    square_subsequent_mask,
)


class TransformerDecoderLayer(Module):
    """Self-attention over the target, attention from the target to ``memory`` (the encoder's
    output), then a feed-forward network; each block has a residual connection, dropout and a
    LayerNorm (after the residual by default, before the block with ``norm_first``).

    Arguments as TransformerEncoderLayer (d_model, nhead, dim_feedforward, dropout,
    activation "relu" / "gelu" / a callable, layer_norm_eps, batch_first, norm_first, bias).

    Forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False): tgt (T, N, E),
    memory (S, N, E) (N first with batch_first; or unbatched without N); masks as in
    MultiheadAttention (tgt_mask (T, T), memory_mask (T, S)). Returns (T, N, E).
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable = F.relu,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        build_sublayers(self, ("self_attn", "multihead_attn"), d_model, nhead, dim_feedforward,
                        dropout, activation, layer_norm_eps, batch_first, norm_first, bias,
                        {"device": device, "dtype": dtype})

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                               memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _mha_block(self, x, memory, attn_mask, key_padding_mask, is_causal):
        x = self.multihead_attn(x, memory, memory, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, need_weights=False,
                                is_causal=is_causal)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerDecoder(Module):
    """``num_layers`` deep copies of ``decoder_layer`` run in sequence over the target, each
    attending to the same ``memory``, then ``norm`` if given.

    Forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False): the masks go to
    every layer; ``tgt_is_causal=None`` means "causal if tgt_mask is the square subsequent
    mask", as in PyTorch.
    """

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None):
        super().__init__()
        check_size("TransformerDecoder", "num_layers", num_layers, num_layers=num_layers)
        self.layers = ModuleList(copy.deepcopy(decoder_layer) for _ in range(num_layers))
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False):
        output = tgt
        tgt_is_causal = detect_is_causal(tgt_mask, tgt_is_causal,
                                         self.layers[0].self_attn.batch_first, tgt)
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask,
                           tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """The encoder-decoder model of "Attention Is All You Need": a TransformerEncoder over
    ``src`` (with a final LayerNorm) whose output is the memory of a TransformerDecoder over
    ``tgt`` (with a final LayerNorm).

    Args:
        d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
            norm_first, bias: as the encoder and decoder layers.
        num_encoder_layers, num_decoder_layers: depth of each stack.
        custom_encoder, custom_decoder: modules used instead of the built stacks.

    Every parameter with more than one dimension is re-initialised with xavier_uniform_, as
    PyTorch does.

    Forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
    src_key_padding_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
    src_is_causal=None, tgt_is_causal=None, memory_is_causal=False): src (S, N, E), tgt
    (T, N, E) (N first with batch_first) -> (T, N, E).

    Raises:
        ShapeError: (a RuntimeError, as PyTorch's) when src and tgt differ in batch size or
            their features are not d_model.
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable = F.relu, custom_encoder: Module | None = None,
                 custom_decoder: Module | None = None, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        shared = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                  batch_first, norm_first, bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(*shared, **kw), num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(*shared, **kw), num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal: bool | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False):
        batch_dim = 0 if self.batch_first else 1
        if src.ndim == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise self._fail("the batch number of src and tgt must be equal",
                             f"give src and tgt the same batch size (dimension {batch_dim})",
                             src, tgt)
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise self._fail("the feature number of src and tgt must be equal to d_model "
                             f"({self.d_model})", "project the inputs to d_model features",
                             src, tgt)
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None):
        """(sz, sz) float mask: -inf above the diagonal, 0 elsewhere (the causal tgt_mask)."""
        return square_subsequent_mask(sz, device, dtype)

    @staticmethod
    def _fail(message: str, hint: str, *inputs) -> ShapeError:
        return ShapeError(message, op="Transformer", module=state.module_path or None,
                          inputs=describe(inputs), hint=hint)
