"""What the corpus cases share: the Case record and the inputs the calls need."""

from __future__ import annotations

import gzip
import struct
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import fw_core as fw

nn, F, optim, data, T = fw.nn, fw.nn.functional, fw.optim, fw.data, fw.data.transforms
sched = fw.optim.lr_scheduler

HUGE = 10 ** 7  # HUGE x HUGE float32 is 400 TB: more than any machine has
ASKS = r"asks for [\d.]+ [KMGTPE]?i?B .*\(\d[\d,]* bytes\)"  # how many bytes were asked for
HAS = r"has [\d.]+ [KMGTPE]?i?B of RAM.*available"  # and what the device has


@dataclass(frozen=True)
class Case:
    """One bad input: ``call()`` must raise ``error`` naming ``op``; ``says`` is a pattern the
    message must also match."""

    label: str
    call: Callable
    error: type
    op: str
    says: str | None = None


# -- what the calls need ----------------------------------------------------------------------
def x23():
    return fw.randn(2, 3)


def image():
    return fw.randn(1, 1, 5, 5)


def params():
    return [fw.zeros(2, requires_grad=True)]


def sgd():
    return optim.SGD(params(), lr=0.1)


def dataset(n=10):
    return data.TensorDataset(fw.zeros(n, 2), fw.arange(n))


class NegativeLength(data.Dataset):
    def __len__(self):
        return -3

    def __getitem__(self, index):
        return index


class Stream(data.IterableDataset):
    def __iter__(self):
        return iter(range(4))


_folder = None


def folder() -> Path:
    """A temporary folder for the file cases, removed when the process ends."""
    global _folder
    if _folder is None:
        _folder = tempfile.TemporaryDirectory(prefix="fw-error-corpus-")
    return Path(_folder.name)


def idx_bytes(array: np.ndarray) -> bytes:
    header = bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}i", *array.shape)
    return header + array.astype(np.uint8).tobytes()


def mnist_with_label(label: int) -> Path:
    root = folder() / f"mnist-{label}"
    root.mkdir(exist_ok=True)
    images = np.zeros((3, 28, 28), np.uint8)
    (root / "train-images-idx3-ubyte.gz").write_bytes(gzip.compress(idx_bytes(images)))
    labels = np.array([3, label, 1])
    (root / "train-labels-idx1-ubyte.gz").write_bytes(gzip.compress(idx_bytes(labels)))
    return root


def csv_file(name: str, text: str) -> Path:
    path = folder() / name
    path.write_text(text)
    return path


def cifar_truncated() -> Path:
    root = folder() / "cifar-10-batches-bin"
    root.mkdir(exist_ok=True)
    for k in range(1, 6):
        (root / f"data_batch_{k}.bin").write_bytes(b"\x01" * 3000)
    return folder()


def empty_image_folder() -> Path:
    root = folder() / "no-images"
    root.mkdir(exist_ok=True)
    return root


def scheduler_pair():
    opt = sgd()
    return opt, [sched.StepLR(opt, 1), sched.StepLR(opt, 1)]
