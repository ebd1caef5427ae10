"""transformer: a 2-layer pre-LN encoder language model (d 128, 4 heads, FFN 512, GELU, no
dropout), sequence 64, vocabulary 1000, learned positions, causal mask; cross-entropy over every
position, AdamW; train batch 16, infer batch 1."""

import numpy as np

from .common import Workload, cross_entropy, labels

D, HEADS, FFN, LAYERS, SEQ, VOCAB = 128, 4, 512, 2, 64, 1000


def build(lib):
    nn = lib.nn

    class EncoderLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = nn.Embedding(VOCAB, D)
            self.positions = nn.Embedding(SEQ, D)
            self.layers = nn.ModuleList(
                nn.TransformerEncoderLayer(D, HEADS, FFN, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
                for _ in range(LAYERS))
            self.norm = nn.LayerNorm(D)
            self.head = nn.Linear(D, VOCAB)
            # a plain attribute, not a buffer: the state dict holds only the weights
            self.causal = lib.tensor(np.triu(np.full((SEQ, SEQ), -np.inf, np.float32), 1))

        def forward(self, tokens):
            x = self.tokens(tokens) + self.positions.weight
            for layer in self.layers:
                x = layer(x, src_mask=self.causal, is_causal=True)
            return self.head(self.norm(x))

    return EncoderLM()


def optimizer(optim, params, **extra):
    return optim.AdamW(params, lr=1e-3, weight_decay=0.01, **extra)


def data(batch, rng):
    """Token ids (batch, SEQ) and next-token targets flattened to (batch * SEQ,)."""
    return labels(rng, (batch, SEQ), VOCAB), labels(rng, (batch * SEQ,), VOCAB)


def loss(lib, logits, targets):
    return cross_entropy(lib, logits.reshape(-1, VOCAB), targets)


WORKLOAD = Workload("transformer", 16, (1,), build, optimizer, data, loss)
