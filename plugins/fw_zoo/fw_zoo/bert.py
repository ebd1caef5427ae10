"""A BERT encoder in fw, with Hugging Face's module names, for inference.

The submodules are named as in ``transformers``' ``BertModel`` (``embeddings.word_embeddings``,
``encoder.layer.0.attention.self.query``, ...), so a Hugging Face state dict loads with
``load_state_dict(strict=True)`` and no renaming. Dropout is left out: these models are for
inference, where it is the identity.

The forward is written to trace to the same ops at every batch size and sequence length
(``fw.export`` traces it at two sizes of each): positions are the first rows of the position
table (a slice, not an ``arange`` made from Python data), token types are all 0 (row 0 of their
table), head splits use ``unflatten``/``flatten`` rather than sizes read from the input, and
nothing reads tensor values back into Python.
"""

from __future__ import annotations

import fw_core as fw
from fw_core.errors import ShapeError
from fw_core.nn import functional as F

from .bert_config import BertConfig


class BertEmbeddings(fw.nn.Module):
    """Token, position and token-type embeddings summed, then layer-normalised.

    Shape: ``input_ids`` (batch, seq) int64 -> (batch, seq, hidden). Every token has type 0.

    Raises:
        ShapeError: seq exceeds ``max_position_embeddings``.
    """

    def __init__(self, config: BertConfig):
        super().__init__()
        self.word_embeddings = fw.nn.Embedding(config.vocab_size, config.hidden_size)
        self.position_embeddings = fw.nn.Embedding(config.max_position_embeddings,
                                                   config.hidden_size)
        self.token_type_embeddings = fw.nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = fw.nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, input_ids):
        positions = self.position_embeddings.weight
        seq = input_ids.shape[1]
        if seq > positions.shape[0]:
            raise ShapeError(f"a sequence of {seq} tokens is longer than the {positions.shape[0]} "
                             "positions this model has embeddings for",
                             inputs=f"input_ids {tuple(input_ids.shape)}",
                             hint="truncate the input (the tokenizer's max_length)")
        summed = (self.word_embeddings(input_ids) + positions[:seq]
                  + self.token_type_embeddings.weight[0])
        return self.LayerNorm(summed)


class BertSelfAttention(fw.nn.Module):
    """Multi-head scaled dot-product attention of the sequence over itself.

    ``forward(hidden, allowed)``: hidden (batch, seq, hidden); allowed (batch, 1, 1, seq) bool,
    True for the keys a query may attend to (the real tokens). Returns (batch, seq, hidden).
    """

    def __init__(self, config: BertConfig):
        super().__init__()
        self.heads = config.num_attention_heads
        self.head_size = config.head_size
        self.query = fw.nn.Linear(config.hidden_size, config.hidden_size)
        self.key = fw.nn.Linear(config.hidden_size, config.hidden_size)
        self.value = fw.nn.Linear(config.hidden_size, config.hidden_size)

    def _split_heads(self, x):
        # (batch, seq, hidden) -> (batch, heads, seq, head_size)
        return x.unflatten(-1, (self.heads, self.head_size)).transpose(1, 2)

    def forward(self, hidden, allowed):
        q, k, v = (self._split_heads(proj(hidden)) for proj in (self.query, self.key, self.value))
        mixed = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
        return mixed.transpose(1, 2).flatten(2)


class BertResidualOutput(fw.nn.Module):
    """A projection added to the block's input, then layer-normalised (both of BERT's
    ``attention.output`` and ``output``)."""

    def __init__(self, in_features: int, config: BertConfig):
        super().__init__()
        self.dense = fw.nn.Linear(in_features, config.hidden_size)
        self.LayerNorm = fw.nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, x, residual):
        return self.LayerNorm(self.dense(x) + residual)


class BertAttention(fw.nn.Module):
    """Self-attention (``self``) and its residual output (``output``)."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.self = BertSelfAttention(config)
        self.output = BertResidualOutput(config.hidden_size, config)

    def forward(self, hidden, allowed):
        return self.output(self.self(hidden, allowed), hidden)


class BertIntermediate(fw.nn.Module):
    """The feed-forward block's expansion: a projection to ``intermediate_size``, exact gelu."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = fw.nn.Linear(config.hidden_size, config.intermediate_size)

    def forward(self, hidden):
        return F.gelu(self.dense(hidden))


class BertLayer(fw.nn.Module):
    """One transformer block: attention, then the feed-forward block, each with a residual."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.attention = BertAttention(config)
        self.intermediate = BertIntermediate(config)
        self.output = BertResidualOutput(config.intermediate_size, config)

    def forward(self, hidden, allowed):
        attended = self.attention(hidden, allowed)
        return self.output(self.intermediate(attended), attended)


class BertEncoder(fw.nn.Module):
    """The stack of :class:`BertLayer` (``layer.0`` ... ``layer.N-1``)."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.layer = fw.nn.ModuleList(BertLayer(config) for _ in range(config.num_hidden_layers))

    def forward(self, hidden, allowed):
        for block in self.layer:
            hidden = block(hidden, allowed)
        return hidden


class BertModel(fw.nn.Module):
    """BERT's encoder without the pooler: token ids to contextual token embeddings.

    ``forward(input_ids, attention_mask)``: both (batch, seq) int64, the mask 1 for real tokens
    and 0 for padding (padded keys get no attention). Returns (batch, seq, hidden).
    """

    def __init__(self, config: BertConfig):
        super().__init__()
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)

    def forward(self, input_ids, attention_mask):
        allowed = (attention_mask > 0).unsqueeze(1).unsqueeze(2)
        return self.encoder(self.embeddings(input_ids), allowed)
