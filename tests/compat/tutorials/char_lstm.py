"""Char-level LSTM: a vocabulary from text, Embedding + 2-layer LSTM + Linear, gradient
clipping, Adam, then greedy generation carrying the hidden state under no_grad."""

import torch
import torch.nn as nn

TEXT = "the quick brown fox jumps over the lazy dog; the dog sleeps. " * 3


class CharLSTM(nn.Module):
    def __init__(self, vocab, embed=12, hidden=24):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        out, state = self.lstm(self.embed(x), state)
        return self.head(out), state


def vocabulary():
    chars = sorted(set(TEXT))
    return chars, {c: i for i, c in enumerate(chars)}


def build():
    chars, _ = vocabulary()
    return CharLSTM(len(chars))


def train(model, data, steps=6, window=16):
    chars, index = vocabulary()
    encoded = torch.tensor([index[c] for c in TEXT], dtype=torch.long)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    criterion = nn.CrossEntropyLoss()
    losses, norms = [], []
    for step in range(steps):
        starts = [(step * 7 + k * 13) % (len(TEXT) - window - 1) for k in range(4)]
        x = torch.stack([encoded[s:s + window] for s in starts])
        y = torch.stack([encoded[s + 1:s + window + 1] for s in starts])
        logits, _ = model(x)
        loss = criterion(logits.reshape(-1, len(chars)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        norms.append(float(nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)))
        optimizer.step()
        losses.append(loss.item())
    generated, state = [index["t"]], None
    with torch.no_grad():
        for _ in range(20):
            logits, state = model(torch.tensor([[generated[-1]]]), state)
            generated.append(int(logits[0, -1].argmax()))
    return {"losses": losses, "norms": norms, "text": "".join(chars[i] for i in generated)}
