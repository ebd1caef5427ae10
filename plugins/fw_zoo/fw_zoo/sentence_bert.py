"""A BERT sentence encoder as one module: tokens in, unit-length sentence embeddings out.

sentence-transformers runs such a model as three modules (Transformer, Pooling, Normalize);
here the pooling and normalisation are in the forward, so the one module is the whole pipeline
and ``fw.export`` can export it as such.
"""

from __future__ import annotations

from fw_core.nn import functional as F

from .bert import BertModel


def mean_pool(tokens, attention_mask):
    """The mean of each sequence's token embeddings over its real tokens.

    tokens (batch, seq, hidden), attention_mask (batch, seq) of 0/1 -> (batch, hidden). As
    sentence-transformers' mean pooling, the count is clamped to 1e-9 so an all-padding row
    gives zeros rather than NaN.
    """
    weights = attention_mask.unsqueeze(-1).to(tokens.dtype)
    return (tokens * weights).sum(1) / weights.sum(1).clamp(min=1e-9)


class SentenceBert(BertModel):
    """BERT, then mean pooling over the real tokens, then L2 normalisation.

    ``forward(input_ids, attention_mask)``: both (batch, seq) int64 -> (batch, hidden) float32
    rows of unit length (cosine similarity is their dot product). The state dict keys are
    those of Hugging Face's ``BertModel`` (the pooler excluded).
    """

    def forward(self, input_ids, attention_mask):
        tokens = super().forward(input_ids, attention_mask)
        return F.normalize(mean_pool(tokens, attention_mask), p=2.0, dim=1)
