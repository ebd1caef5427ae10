"""TransformerEncoderLayer and TransformerEncoder, as PyTorch's (same parameter names, so
state dicts load unchanged)."""

from __future__ import annotations

__all__ = ["TransformerEncoder", "TransformerEncoderLayer"]

import copy
import math
from collections.abc import Callable

from ... import capture
from ...ops.creation import full
from ...ops.meta import argument_error
from ...ops.rearrange import triu
from .. import functional as F
from ..module import Module
from ._check import check_size
from .attention import MultiheadAttention, check_heads
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .normalization import LayerNorm

_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


def resolve_activation(layer: str, activation: str | Callable) -> Callable:
    """The feed-forward activation a transformer layer was given: "relu", "gelu" or a
    callable (kept as it is); any other string is refused naming ``layer``."""
    if not isinstance(activation, str):
        return activation
    if activation not in _ACTIVATIONS:
        raise argument_error(layer, f"activation should be relu/gelu, not {activation!r}",
                             'pass activation="relu" or "gelu", or a callable such as '
                             "fw.nn.functional.silu", activation=activation)
    return _ACTIVATIONS[activation]


def build_sublayers(layer: Module, attentions: tuple[str, ...], d_model: int, nhead: int,
                    dim_feedforward: int, dropout: float, activation, layer_norm_eps: float,
                    batch_first: bool, norm_first: bool, bias: bool, kw: dict) -> None:
    """Give an encoder or decoder layer torch's submodules, in torch's order (its state-dict
    keys): the attentions named, the feed-forward block, and one LayerNorm and Dropout per
    residual branch (each attention and the feed-forward)."""
    name = type(layer).__name__
    check_heads(name, d_model, nhead, dropout)
    check_size(name, "dim_feedforward", dim_feedforward, dim_feedforward=dim_feedforward)
    activation = resolve_activation(name, activation)
    for attention in attentions:
        setattr(layer, attention, MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                     batch_first=batch_first, **kw))
    layer.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
    layer.dropout = Dropout(dropout)
    layer.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
    layer.norm_first = norm_first
    branches = range(1, len(attentions) + 2)
    for i in branches:
        setattr(layer, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
    for i in branches:
        setattr(layer, f"dropout{i}", Dropout(dropout))
    layer.activation = activation


def square_subsequent_mask(size: int, device=None, dtype=None):
    """The causal mask for ``size`` positions: (size, size), -inf above the diagonal (a
    position may not attend to later ones), 0 elsewhere; the default float dtype unless
    ``dtype``."""
    return triu(full((size, size), -math.inf, dtype=dtype, device=device), 1)


def detect_is_causal(mask, is_causal: bool | None, batch_first: bool, x) -> bool:
    """PyTorch's ``_detect_is_causal_mask``: ``is_causal`` when given; with None, whether
    ``mask`` is exactly the square subsequent mask for the sequence length of ``x``."""
    if is_causal is not None or mask is None:
        return bool(is_causal)
    size = x.shape[1 if batch_first and x.ndim == 3 else 0]
    if tuple(mask.shape) != (size, size) or capture.recorder() is not None:
        return False  # the mask applies as given: the same values, and no host read mid-trace
    return bool((mask == square_subsequent_mask(size, mask.device, mask.dtype)).all())


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward network, each with a residual connection, dropout
    and LayerNorm (after the residual by default; before it with ``norm_first``).

    Args:
        d_model: E, the model size.
        nhead: attention heads.
        dim_feedforward: hidden size of the feed-forward network.
        dropout: dropout after attention, inside and after the feed-forward network.
        activation: "relu", "gelu" or a callable.
        layer_norm_eps: LayerNorm's eps.
        batch_first: (N, L, E) instead of (L, N, E).
        norm_first: pre-norm (``x + sa(norm1(x))``) instead of post-norm
            (``norm1(x + sa(x))``).
        bias: biases in the linear layers and LayerNorms.

    Forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False): masks as in
    MultiheadAttention. Shape: (L, N, E) (or (N, L, E), or (L, E)) -> same.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable = "relu",
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        build_sublayers(self, ("self_attn",), d_model, nhead, dim_feedforward, dropout,
                        activation, layer_norm_eps, batch_first, norm_first, bias,
                        {"device": device, "dtype": dtype})

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerEncoder(Module):
    """``num_layers`` deep copies of ``encoder_layer`` run in sequence, then ``norm`` if given.

    Forward(src, mask=None, src_key_padding_mask=None, is_causal=None): the masks go to every
    layer. ``enable_nested_tensor`` and ``mask_check`` are accepted for PyTorch compatibility;
    fw computes padded positions like any other (PyTorch's nested-tensor fast path, taken only
    in inference, returns zeros there).
    """

    def __init__(self, encoder_layer: Module, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True):
        super().__init__()
        check_size("TransformerEncoder", "num_layers", num_layers, num_layers=num_layers)
        self.layers = ModuleList(copy.deepcopy(encoder_layer) for _ in range(num_layers))
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal: bool | None = None):
        output = src
        is_causal = detect_is_causal(mask, is_causal, self.layers[0].self_attn.batch_first, src)
        for layer in self.layers:
            output = layer(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                           is_causal=is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output
