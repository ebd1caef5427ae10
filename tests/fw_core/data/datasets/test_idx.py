"""IDX files and MNIST / Fashion-MNIST read back from small files written here."""

import gzip
import struct

import numpy as np
import pytest

import fw_core as fw
from fw_core.data import DataFormatError, DataLoader, DatasetError
from fw_core.data.datasets import MNIST, FashionMNIST, read_idx
from fw_core.data.transforms import ToTensor

TYPE_CODES = {np.dtype(np.uint8): 0x08, np.dtype(np.int8): 0x09, np.dtype(">i2"): 0x0B,
              np.dtype(">i4"): 0x0C, np.dtype(">f4"): 0x0D, np.dtype(">f8"): 0x0E}


def idx_bytes(array: np.ndarray) -> bytes:
    """An IDX file, written from the format's definition (independently of the reader)."""
    big = array.astype(array.dtype.newbyteorder(">"))
    header = struct.pack(">BBBB", 0, 0, TYPE_CODES[big.dtype], array.ndim)
    header += struct.pack(f">{array.ndim}i", *array.shape)
    return header + big.tobytes()


def write(path, array, gz=False):
    data = idx_bytes(array)
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


RNG = np.random.default_rng(0)
TRAIN_X = RNG.integers(0, 256, (6, 4, 3), dtype=np.uint8)
TRAIN_Y = np.array([3, 1, 4, 1, 5, 9], dtype=np.uint8)
TEST_X = RNG.integers(0, 256, (2, 4, 3), dtype=np.uint8)
TEST_Y = np.array([2, 7], dtype=np.uint8)


def mnist_files(folder, gz_train=True, gz_test=False):
    folder.mkdir(parents=True, exist_ok=True)
    suffix = ".gz" if gz_train else ""
    write(folder / f"train-images-idx3-ubyte{suffix}", TRAIN_X, gz_train)
    write(folder / f"train-labels-idx1-ubyte{suffix}", TRAIN_Y, gz_train)
    suffix = ".gz" if gz_test else ""
    write(folder / f"t10k-images-idx3-ubyte{suffix}", TEST_X, gz_test)
    write(folder / f"t10k-labels-idx1-ubyte{suffix}", TEST_Y, gz_test)
    return folder


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, ">i2", ">i4", ">f4", ">f8"])
def test_read_idx_round_trips_every_type(tmp_path, gz, dtype):
    array = (RNG.normal(size=(3, 2, 5)) * 50).astype(dtype)
    out = read_idx(write(tmp_path / "x.idx", array, gz))
    assert out.shape == (3, 2, 5) and out.dtype.isnative
    np.testing.assert_array_equal(out, array)
    out[0, 0, 0] = 1  # a writable copy


def test_read_idx_rejects_bad_magic_and_truncated_files(tmp_path):
    html = tmp_path / "page"
    html.write_bytes(b"<html>not found</html>")
    with pytest.raises(DataFormatError, match="not an IDX file: it starts with 3c 68 74 6d"):
        read_idx(html)
    short = tmp_path / "short"
    short.write_bytes(idx_bytes(TRAIN_X)[:-5])
    with pytest.raises(DataFormatError, match=r"shape \(6, 4, 3\) \(72 bytes.* 67 bytes"):
        read_idx(short)
    header_only = tmp_path / "header"
    header_only.write_bytes(idx_bytes(TRAIN_X)[:9])
    with pytest.raises(DataFormatError, match="3 dimensions"):
        read_idx(header_only)
    broken = tmp_path / "broken.gz"
    broken.write_bytes(gzip.compress(idx_bytes(TRAIN_X))[:-10])
    with pytest.raises(DataFormatError, match="damaged gzip"):
        read_idx(broken)


def test_mnist_reads_gzipped_and_raw_files(tmp_path):
    root = mnist_files(tmp_path, gz_train=True, gz_test=False)
    train, test = MNIST(root), MNIST(root, train=False)
    assert len(train) == 6 and len(test) == 2
    image, label = train[2]
    np.testing.assert_array_equal(image, TRAIN_X[2])
    assert label == 4 and train.targets.dtype == np.int64
    np.testing.assert_array_equal(test.data, TEST_X)
    assert train.classes[9] == "9"


def test_mnist_finds_torchvision_layout_and_fashion_names(tmp_path):
    mnist_files(tmp_path / "MNIST" / "raw")
    assert len(MNIST(tmp_path)) == 6
    mnist_files(tmp_path / "FashionMNIST" / "raw", gz_train=False, gz_test=True)
    fashion = FashionMNIST(tmp_path, train=False)
    assert len(fashion) == 2 and fashion.classes[fashion[1][1]] == "Sneaker"


def test_mnist_batches_through_a_loader_with_to_tensor(tmp_path):
    ds = MNIST(mnist_files(tmp_path), transform=ToTensor())
    x, y = next(iter(DataLoader(ds, batch_size=4)))
    assert x.shape == (4, 1, 4, 3) and x.dtype == fw.float32 and y.tolist() == [3, 1, 4, 1]
    np.testing.assert_allclose(x.numpy()[1, 0], TRAIN_X[1] / 255.0, rtol=1e-6)
    raw_x, _ = next(iter(DataLoader(MNIST(tmp_path), batch_size=6)))
    assert raw_x.dtype == fw.uint8
    np.testing.assert_array_equal(raw_x.numpy(), TRAIN_X)


def test_missing_mnist_file_says_what_to_put_where(tmp_path):
    root = mnist_files(tmp_path)
    (root / "train-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(DatasetError) as info:
        MNIST(root)
    message = str(info.value)
    assert isinstance(info.value, FileNotFoundError)
    assert f"missing train-labels-idx1-ubyte in {root}" in message
    assert "train-images-idx3-ubyte" in message and "never downloads" in message
    assert str(root / "MNIST" / "raw") in message
    with pytest.raises(DatasetError, match="FashionMNIST: missing t10k-images-idx3-ubyte"):
        FashionMNIST(tmp_path / "empty", train=False)


def test_mnist_images_and_labels_must_agree(tmp_path):
    root = mnist_files(tmp_path)
    write(root / "train-labels-idx1-ubyte.gz", TRAIN_Y[:5], gz=True)
    with pytest.raises(DataFormatError, match=r"\(6, 4, 3\) .* \(5,\)"):
        MNIST(root)


@pytest.mark.parametrize("label", [200, 10])
def test_mnist_label_outside_its_ten_classes_is_refused(tmp_path, label):
    # a label of 200 used to load, and then index past a 10-way classifier's outputs
    root = mnist_files(tmp_path)
    write(root / "train-labels-idx1-ubyte.gz", np.array([3, 1, label, 1, 5, 9], np.uint8),
          gz=True)
    with pytest.raises(DataFormatError) as info:
        MNIST(root)
    text = str(info.value)
    assert text.startswith("MNIST: ") and f"label {label} at position 2" in text
    assert "train-labels-idx1-ubyte.gz" in text and "10 classes (labels 0 to 9)" in text
    assert "\n  inputs:" in text and "\n  fix:" in text
    assert len(MNIST(mnist_files(tmp_path / "good"))) == 6  # labels 0-9 still load


def test_fashion_mnist_checks_labels_against_its_own_classes(tmp_path):
    root = mnist_files(tmp_path)
    write(root / "train-labels-idx1-ubyte.gz", np.array([0, 1, 2, 3, 4, 12], np.uint8), gz=True)
    with pytest.raises(DataFormatError, match="FashionMNIST: .*label 12 at position 5"):
        FashionMNIST(root)
