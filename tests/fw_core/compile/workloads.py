"""Small versions of the benchmark workloads (and a GRU twin of nn.LSTM's), for checking compiled
against eager."""

from __future__ import annotations

import copy

import fw_core as fw


class LSTMCellLoop(fw.nn.Module):
    """An LSTM written as a Python loop of cell ops (matmuls, sigmoid, tanh), then a head."""

    def __init__(self, n_in: int, hidden: int, classes: int):
        super().__init__()
        self.hidden = hidden
        self.ih = fw.nn.Linear(n_in, 4 * hidden)
        self.hh = fw.nn.Linear(hidden, 4 * hidden, bias=False)
        self.head = fw.nn.Linear(hidden, classes)

    def forward(self, x):  # x: (steps, batch, n_in)
        h = fw.zeros(x.shape[1], self.hidden)
        c = fw.zeros(x.shape[1], self.hidden)
        for t in range(x.shape[0]):
            i, f, g, o = (self.ih(x[t]) + self.hh(h)).chunk(4, dim=1)
            c = fw.sigmoid(f) * c + fw.sigmoid(i) * fw.tanh(g)
            h = fw.sigmoid(o) * fw.tanh(c)
        return self.head(h)


class RecurrentHead(fw.nn.Module):
    """nn.LSTM or nn.GRU (two layers, bidirectional, batch first), then a head on the last step:
    one layer op per layer and direction, forward and backward, in the plan."""

    def __init__(self, cell: str, n_in: int, hidden: int, classes: int):
        super().__init__()
        self.rnn = getattr(fw.nn, cell)(n_in, hidden, num_layers=2, bidirectional=True,
                                        batch_first=True)
        self.head = fw.nn.Linear(2 * hidden, classes)

    def forward(self, x):  # x: (batch, steps, n_in)
        return self.head(self.rnn(x)[0][:, -1])


class TinyLM(fw.nn.Module):
    """A pre-LN causal encoder LM with learned positions and GELU."""

    def __init__(self, vocab=50, d=16, heads=2, ffn=32, seq=8, layers=2):
        super().__init__()
        self.tok = fw.nn.Embedding(vocab, d)
        self.pos = fw.nn.Embedding(seq, d)
        layer = fw.nn.TransformerEncoderLayer(d, heads, ffn, dropout=0.0, activation="gelu",
                                              batch_first=True, norm_first=True)
        self.encoder = fw.nn.TransformerEncoder(layer, layers)
        self.norm = fw.nn.LayerNorm(d)
        self.out = fw.nn.Linear(d, vocab)

    def forward(self, tokens):
        seq = tokens.shape[1]
        x = self.tok(tokens) + self.pos(fw.arange(seq))
        mask = fw.triu(fw.full((seq, seq), float("-inf")), diagonal=1)
        return self.out(self.norm(self.encoder(x, mask=mask)))


def mlp():
    model = fw.nn.Sequential(fw.nn.Linear(20, 32), fw.nn.ReLU(), fw.nn.Linear(32, 16),
                             fw.nn.ReLU(), fw.nn.Linear(16, 5))
    return model, (lambda m: fw.optim.Adam(m.parameters(), lr=1e-2)), \
        (lambda: fw.randn(8, 20)), (lambda: fw.randint(0, 5, (8,))), fw.cross_entropy


def cnn():
    model = fw.nn.Sequential(
        fw.nn.Conv2d(1, 4, 3, padding=1), fw.nn.ReLU(), fw.nn.MaxPool2d(2),
        fw.nn.Conv2d(4, 8, 3, padding=1), fw.nn.ReLU(), fw.nn.MaxPool2d(2),
        fw.nn.Flatten(), fw.nn.Linear(8 * 2 * 2, 16), fw.nn.ReLU(), fw.nn.Linear(16, 10))
    return model, (lambda m: fw.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)), \
        (lambda: fw.randn(4, 1, 8, 8)), (lambda: fw.randint(0, 10, (4,))), fw.cross_entropy


def transformer():
    def loss(logits, targets):
        return fw.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))

    return TinyLM(), (lambda m: fw.optim.AdamW(m.parameters(), lr=1e-2)), \
        (lambda: fw.randint(0, 50, (2, 8))), (lambda: fw.randint(0, 50, (2, 8))), loss


def lstm_cell():
    return LSTMCellLoop(6, 12, 4), (lambda m: fw.optim.Adam(m.parameters(), lr=1e-2)), \
        (lambda: fw.randn(5, 3, 6)), (lambda: fw.randint(0, 4, (3,))), fw.cross_entropy


def recurrent(cell: str):
    def workload():
        return RecurrentHead(cell, 6, 12, 4), (lambda m: fw.optim.Adam(m.parameters(), lr=1e-2)), \
            (lambda: fw.randn(3, 5, 6)), (lambda: fw.randint(0, 4, (3,))), fw.cross_entropy

    return workload


WORKLOADS = {"mlp": mlp, "cnn": cnn, "transformer": transformer, "lstm_cell": lstm_cell,
             "lstm": recurrent("LSTM"), "gru": recurrent("GRU")}


def twin_steps(name: str):
    """Two identical (model, step) pairs: one to run eagerly, one to compile."""
    fw.manual_seed(0)
    model, make_opt, make_x, make_y, loss_fn = WORKLOADS[name]()
    twin = copy.deepcopy(model)

    def make_step(m):
        opt = make_opt(m)

        def step(x, y):
            opt.zero_grad()
            loss = loss_fn(m(x), y)
            loss.backward()
            opt.step()
            return loss

        return step

    return (model, make_step(model)), (twin, make_step(twin)), make_x, make_y
