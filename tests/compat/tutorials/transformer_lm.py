"""Transformer language model: Embedding + a learned position table, a causal
TransformerEncoder, AdamW with a warm-up LambdaLR, cross_entropy over flattened logits."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, CONTEXT = 20, 12


class TinyLM(nn.Module):
    def __init__(self, d_model=32, heads=4, layers=2):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, d_model)
        self.positions = nn.Parameter(torch.zeros(1, CONTEXT, d_model))
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=64, dropout=0.0,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=layers)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, VOCAB)

    def forward(self, tokens):
        length = tokens.size(1)
        x = self.tokens(tokens) * math.sqrt(self.tokens.embedding_dim)
        x = x + self.positions[:, :length]
        mask = nn.Transformer.generate_square_subsequent_mask(length)
        return self.head(self.norm(self.encoder(x, mask=mask, is_causal=True)))


def build():
    return TinyLM()


def train(model, data, steps=5):
    tokens = torch.from_numpy(data["tokens"])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 3))
    losses = []
    model.train()
    for _ in range(steps):
        logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        last = model(tokens[:, :-1])[:, -1].softmax(-1)
    return {"losses": losses, "last": last.numpy()}
