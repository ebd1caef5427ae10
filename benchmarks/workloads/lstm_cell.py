"""lstm_cell: an LSTM 64->128 over 32 steps written as a Python loop of cell operations (two
matrix products, sigmoid and tanh per step), then a linear head to 10 classes on the last
hidden state; cross-entropy, Adam; train batch 32, infer batch 1. ``lstm.py`` is the same model
with the framework's ``nn.LSTM``."""

import numpy as np

from .common import Workload, cross_entropy, labels, normal

INPUT, HIDDEN, STEPS, CLASSES = 64, 128, 32, 10


def build(lib):
    nn = lib.nn

    class LoopLSTM(nn.Module):
        def __init__(self):
            super().__init__()
            self.input = nn.Linear(INPUT, 4 * HIDDEN)
            self.hidden = nn.Linear(HIDDEN, 4 * HIDDEN, bias=False)
            self.head = nn.Linear(HIDDEN, CLASSES)

        def forward(self, x):  # (STEPS, batch, INPUT)
            h = c = lib.tensor(np.zeros((x.shape[1], HIDDEN), np.float32))
            for t in range(x.shape[0]):
                i, f, g, o = (self.input(x[t]) + self.hidden(h)).chunk(4, 1)
                c = lib.sigmoid(f) * c + lib.sigmoid(i) * lib.tanh(g)
                h = lib.sigmoid(o) * lib.tanh(c)
            return self.head(h)

    return LoopLSTM()


def optimizer(optim, params, **extra):
    return optim.Adam(params, lr=1e-3, **extra)


def data(batch, rng):
    return normal(rng, (STEPS, batch, INPUT)), labels(rng, (batch,), CLASSES)


WORKLOAD = Workload("lstm_cell", 32, (1,), build, optimizer, data, cross_entropy)
