"""CIFAR-10 / CIFAR-100 binary batches written here and read back."""

import numpy as np
import pytest

from fw_core.data import DataError, DataFormatError, DatasetError
from fw_core.data.datasets import CIFAR10, CIFAR100

RNG = np.random.default_rng(0)


def records(labels: np.ndarray, images_chw: np.ndarray) -> bytes:
    """Binary CIFAR records: label byte(s) then 1024 red, 1024 green, 1024 blue bytes."""
    rows = [np.concatenate([np.atleast_1d(lab).astype(np.uint8), img.reshape(-1)])
            for lab, img in zip(labels, images_chw)]
    return np.stack(rows).astype(np.uint8).tobytes()


def cifar10_folder(root, per_batch=2):
    folder = root / "cifar-10-batches-bin"
    folder.mkdir(parents=True)
    written = {}
    for name in [f"data_batch_{k}.bin" for k in range(1, 6)] + ["test_batch.bin"]:
        labels = RNG.integers(0, 10, per_batch)
        images = RNG.integers(0, 256, (per_batch, 3, 32, 32), dtype=np.uint8)
        (folder / name).write_bytes(records(labels, images))
        written[name] = labels, images
    return folder, written


def test_cifar10_reads_all_training_batches_as_hwc(tmp_path):
    _, written = cifar10_folder(tmp_path)
    train = CIFAR10(tmp_path)
    assert len(train) == 10 and train.data.shape == (10, 32, 32, 3)
    labels, images = written["data_batch_3.bin"]
    image, label = train[5]  # batch 3, record 1
    np.testing.assert_array_equal(image, images[1].transpose(1, 2, 0))
    assert label == labels[1] and train.targets.dtype == np.int64
    test = CIFAR10(tmp_path, train=False)
    np.testing.assert_array_equal(test.targets, written["test_batch.bin"][0])
    assert test.classes[3] == "cat"


def test_cifar10_accepts_the_batches_folder_and_its_class_names(tmp_path):
    folder, _ = cifar10_folder(tmp_path)
    (folder / "batches.meta.txt").write_text("\n".join(f"c{k}" for k in range(10)) + "\n\n")
    ds = CIFAR10(folder, train=False)
    assert len(ds) == 2 and ds.classes[9] == "c9"


def test_cifar10_missing_batch_names_file_and_folder(tmp_path):
    folder, _ = cifar10_folder(tmp_path)
    (folder / "test_batch.bin").unlink()
    with pytest.raises(DatasetError) as info:
        CIFAR10(tmp_path, train=False)
    assert isinstance(info.value, FileNotFoundError)
    assert f"missing test_batch.bin in {folder}" in str(info.value)
    assert "never downloads" in str(info.value)


def test_cifar10_rejects_partial_records_and_cifar100_files(tmp_path):
    folder, _ = cifar10_folder(tmp_path)
    (folder / "test_batch.bin").write_bytes(b"\x00" * 3000)
    with pytest.raises(DataFormatError, match="3000 bytes, not a whole number of 3073-byte"):
        CIFAR10(tmp_path, train=False)
    (folder / "test_batch.bin").write_bytes(records(np.array([42]), np.zeros((1, 3, 32, 32))))
    with pytest.raises(DataFormatError, match="label 42"):
        CIFAR10(tmp_path, train=False)


def test_cifar100_fine_and_coarse_labels(tmp_path):
    folder = tmp_path / "cifar-100-binary"
    folder.mkdir()
    labels = np.array([[3, 77], [19, 5], [0, 99]])
    images = RNG.integers(0, 256, (3, 3, 32, 32), dtype=np.uint8)
    (folder / "train.bin").write_bytes(records(labels, images))
    (folder / "coarse_label_names.txt").write_text("\n".join(f"super{k}" for k in range(20)))
    fine = CIFAR100(tmp_path)
    assert fine.targets.tolist() == [77, 5, 99] and fine.classes[77] == "77"
    np.testing.assert_array_equal(fine[2][0], images[2].transpose(1, 2, 0))
    coarse = CIFAR100(tmp_path, labels="coarse")
    assert coarse.targets.tolist() == [3, 19, 0] and coarse.classes[19] == "super19"
    with pytest.raises(DatasetError, match="test.bin"):
        CIFAR100(tmp_path, train=False)
    with pytest.raises(DataError, match="'fine' or 'coarse'"):
        CIFAR100(tmp_path, labels="medium")
