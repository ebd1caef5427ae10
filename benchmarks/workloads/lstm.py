"""lstm: lstm_cell's model with the framework's ``nn.LSTM`` (64->128, one layer) in place of the
Python loop of cell operations; same data, head, loss, optimizer and batches."""

from . import lstm_cell
from .common import Workload, cross_entropy
from .lstm_cell import CLASSES, HIDDEN, INPUT


def build(lib):
    nn = lib.nn

    class LibraryLSTM(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(INPUT, HIDDEN)
            self.head = nn.Linear(HIDDEN, CLASSES)

        def forward(self, x):  # (STEPS, batch, INPUT)
            return self.head(self.lstm(x)[0][-1])

    return LibraryLSTM()


WORKLOAD = Workload("lstm", 32, (1,), build, lstm_cell.optimizer, lstm_cell.data,
                    cross_entropy)
