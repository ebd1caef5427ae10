"""CIFAR-10 and CIFAR-100 from their binary distributions (the ``*-binary`` tarballs, unpacked).

Each record is the label byte(s) then 3072 bytes: 32 x 32 red, then green, then blue values.
fw reads the files you put in place: it never downloads.
"""

from __future__ import annotations

__all__ = ["CIFAR10", "CIFAR100"]

import os
from pathlib import Path

import numpy as np

from ...errors import FwError
from ...ops.meta import describe, located
from ..dataset import ArrayDataset
from ..errors import DataError, DataFormatError
from ._files import locate, read_bytes

_PIXELS = 3 * 32 * 32


def read_records(path: Path, label_bytes: int, classes: int) -> tuple[np.ndarray, np.ndarray]:
    """(images N x 32 x 32 x 3 uint8, labels N x label_bytes int64) from one binary batch."""
    raw = np.frombuffer(read_bytes(path), np.uint8)
    record = label_bytes + _PIXELS
    if raw.size == 0 or raw.size % record:
        raise DataFormatError(f"{path} holds {raw.size} bytes, not a whole number of "
                              f"{record}-byte records ({label_bytes} label byte(s) + {_PIXELS} "
                              f"pixel bytes)", inputs=f"{path}: {raw.size} bytes",
                              hint="the file is truncated, or it is a batch of the other "
                              "CIFAR dataset")
    records = raw.reshape(-1, record)
    labels = records[:, :label_bytes].astype(np.int64)
    if labels.max() >= classes:
        raise DataFormatError(f"{path} has label {labels.max()}, but this dataset has "
                              f"{classes} classes", inputs=f"{path}: {len(records)} records",
                              hint="is it a batch of the other CIFAR dataset?")
    images = records[:, label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    return np.ascontiguousarray(images), labels


def _class_names(path: Path, default: list[str]) -> list[str]:
    if not path.is_file():
        return default
    names = [line.strip() for line in path.read_text().splitlines() if line.strip()]
    return names if len(names) == len(default) else default


class CIFAR10(ArrayDataset):
    """CIFAR-10: 32 x 32 colour images in 10 classes.

    Sample ``i`` is ``(image, label)``: a 32 x 32 x 3 uint8 NumPy array (height x width x
    channel, as ``ToTensor`` expects) and an int64 label.

    Args:
        root: the folder holding ``cifar-10-batches-bin/`` (with ``data_batch_1.bin`` ...
            ``data_batch_5.bin`` and ``test_batch.bin``), or that folder itself.
        train: the 50,000 training images (True) or the 10,000 test images (False).
        transform, target_transform: applied to each image / label.

    Raises:
        DatasetError: a batch file is missing (the message says which and where).
        DataFormatError: a file is not whole records or has labels out of range.
    """

    folder = "cifar-10-batches-bin"
    classes = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
               "truck"]

    def __init__(self, root: str | os.PathLike, train: bool = True, transform=None,
                 target_transform=None):
        root = Path(root)
        names = ([f"data_batch_{k}.bin" for k in range(1, 6)] if train else ["test_batch.bin"])
        paths = locate("CIFAR10", (root / self.folder, root), names)
        try:
            parts = [read_records(p, 1, 10) for p in paths]
        except FwError as err:
            raise located(err, "CIFAR10", root=str(root), train=train) from None
        super().__init__(np.concatenate([images for images, _ in parts]),
                         np.concatenate([labels[:, 0] for _, labels in parts]), transform,
                         target_transform,
                         _class_names(paths[0].parent / "batches.meta.txt", CIFAR10.classes))
        self.root, self.train = root, train


class CIFAR100(ArrayDataset):
    """CIFAR-100: 32 x 32 colour images in 100 fine classes grouped into 20 coarse ones.

    Args:
        root: the folder holding ``cifar-100-binary/`` (with ``train.bin`` and ``test.bin``),
            or that folder itself.
        train: the 50,000 training images (True) or the 10,000 test images (False).
        labels: "fine" (100 classes, default) or "coarse" (20 superclasses).
        transform, target_transform: applied to each image / label.

    Samples are as in :class:`CIFAR10`. ``coarse_targets`` and ``fine_targets`` hold both
    labelings; ``classes`` names the chosen one when the ``*_label_names.txt`` files are there.
    """

    folder = "cifar-100-binary"

    def __init__(self, root: str | os.PathLike, train: bool = True, labels: str = "fine",
                 transform=None, target_transform=None):
        if labels not in ("fine", "coarse"):
            raise DataError(f"labels must be 'fine' or 'coarse', got {labels!r}", op="CIFAR100",
                            inputs=describe(labels=labels), hint='pass labels="fine" (100 '
                            'classes) or "coarse" (20 superclasses)')
        root = Path(root)
        (path,) = locate("CIFAR100", (root / self.folder, root),
                         ["train.bin" if train else "test.bin"])
        try:
            images, both = read_records(path, 2, 100)
        except FwError as err:
            raise located(err, "CIFAR100", root=str(root), train=train) from None
        self.coarse_targets, self.fine_targets = both[:, 0], both[:, 1]
        if self.coarse_targets.max() >= 20:
            raise DataFormatError(f"{path} has coarse label {self.coarse_targets.max()}, but "
                                  f"CIFAR-100 has 20 superclasses", op="CIFAR100",
                                  inputs=f"{path}: {len(both)} records",
                                  hint="the file is damaged or not CIFAR-100's: copy it again")
        count = 100 if labels == "fine" else 20
        names = _class_names(path.parent / f"{labels}_label_names.txt",
                             [str(k) for k in range(count)])
        super().__init__(images, both[:, 1 if labels == "fine" else 0], transform,
                         target_transform, names)
        self.root, self.train = root, train
