"""cnn: conv(1->16, 3, p1)+ReLU+maxpool2, conv(16->32, 3, p1)+ReLU+maxpool2, fc(1568->128)+ReLU,
fc(128->10); cross-entropy, SGD with momentum 0.9; train batch 64, infer batch 1 and 64."""

from .common import Workload, cross_entropy, labels, normal


def build(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(1568, 128), nn.ReLU(), nn.Linear(128, 10))


def optimizer(optim, params, **extra):
    return optim.SGD(params, lr=0.01, momentum=0.9, **extra)


def data(batch, rng):
    return normal(rng, (batch, 1, 28, 28)), labels(rng, (batch,), 10)


WORKLOAD = Workload("cnn", 64, (1, 64), build, optimizer, data, cross_entropy)
