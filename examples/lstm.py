"""Sequence classification with an LSTM: each MNIST digit is read as a sequence of 28 rows
(28 pixels each, top to bottom), and the last hidden state says which digit it was.

    python examples/lstm.py [--epochs 10] [--samples 4000] [--hidden 64]

The network never sees the image as a whole: it has to carry what it saw in earlier rows in
its memory cell. Prints one line per epoch and the accuracy on the 1,000 test digits (0.925
after the default 10 epochs, about 30 s on two CPU cores).
"""

import argparse

import fw_core as fw
from fw_core import nn


class RowLSTM(nn.Module):
    """(N, 1, 28, 28) images -> (N, 10) logits, via an LSTM over the 28 rows."""

    def __init__(self, hidden: int, rows: int = 28, classes: int = 10):
        super().__init__()
        self.rows = rows
        self.lstm = nn.LSTM(rows, hidden, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, images):
        sequences = images.reshape(images.shape[0], self.rows, -1)  # (N, time = row, pixels)
        _, (h_n, _) = self.lstm(sequences)
        return self.head(h_n[-1])  # the last layer's state after the last row


def main(epochs: int, samples: int, hidden: int) -> float:
    fw.manual_seed(0)
    train = fw.data.datasets.load_mnist_sample("train")
    test = fw.data.datasets.load_mnist_sample("test")
    if samples < len(train):
        train = fw.data.Subset(train, range(samples))  # the split is shuffled: any prefix
    model = fw.Model(RowLSTM(hidden))                   # keeps every digit
    model.compile(optimizer="adam", lr=3e-3, loss="cross_entropy", metrics=["accuracy"])
    # a cosine decay of the learning rate to 0 settles the last epochs
    decay = fw.optim.lr_scheduler.CosineAnnealingLR(model.optimizer, T_max=epochs)
    model.fit(train, epochs=epochs, batch_size=64,
              callbacks=[fw.callbacks.LearningRateScheduler(decay)])
    accuracy = model.evaluate(test, batch_size=250)["accuracy"]
    print(f"test accuracy {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--samples", type=int, default=4000,
                        help="training images to use (at most 4,000)")
    parser.add_argument("--hidden", type=int, default=64, help="LSTM hidden size")
    args = parser.parse_args()
    main(args.epochs, args.samples, args.hidden)
