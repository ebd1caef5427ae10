"""mlp: 784-512-256-10 with ReLU, cross-entropy, Adam; train batch 128, infer batch 1 and 256."""

from .common import Workload, cross_entropy, labels, normal


def build(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                         nn.Linear(256, 10))


def optimizer(optim, params, **extra):
    return optim.Adam(params, lr=1e-3, **extra)


def data(batch, rng):
    return normal(rng, (batch, 784)), labels(rng, (batch,), 10)


WORKLOAD = Workload("mlp", 128, (1, 256), build, optimizer, data, cross_entropy)
