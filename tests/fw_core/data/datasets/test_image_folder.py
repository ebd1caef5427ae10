"""ImageFolder: class-per-folder PNGs written here and decoded back."""

import sys

import numpy as np
import pytest

import fw_core as fw
from fw_core.data import DataFormatError, DataLoader, DatasetError, MissingDependencyError
from fw_core.data.datasets import ImageFolder
from fw_core.data.transforms import ToTensor

Image = pytest.importorskip("PIL.Image")
RNG = np.random.default_rng(0)


def make_folder(root):
    pixels = {}
    for name, count in (("dog", 2), ("cat", 3)):
        (root / name).mkdir(parents=True)
        for k in range(count):
            array = RNG.integers(0, 256, (5, 4, 3), dtype=np.uint8)
            path = root / name / f"{k}.png"
            Image.fromarray(array).save(path)
            pixels[path] = array
    (root / "cat" / "notes.txt").write_text("not an image")
    (root / ".hidden").mkdir()
    return pixels


def test_classes_follow_sorted_folders_and_pixels_round_trip(tmp_path):
    pixels = make_folder(tmp_path)
    ds = ImageFolder(tmp_path)
    assert ds.classes == ["cat", "dog"] and ds.class_to_idx == {"cat": 0, "dog": 1}
    assert len(ds) == 5 and ds.targets.tolist() == [0, 0, 0, 1, 1]
    image, label = ds[3]
    assert label == 1 and image.dtype == np.uint8 and image.shape == (5, 4, 3)
    np.testing.assert_array_equal(image, pixels[tmp_path / "dog" / "0.png"])


def test_grey_mode_nested_files_and_a_loader(tmp_path):
    make_folder(tmp_path)
    (tmp_path / "dog" / "more").mkdir()
    Image.fromarray(np.full((5, 4), 200, np.uint8)).save(tmp_path / "dog" / "more" / "x.PNG")
    ds = ImageFolder(tmp_path, mode="L", transform=ToTensor())
    assert len(ds) == 6
    x, y = next(iter(DataLoader(ds, batch_size=6, num_workers=2)))
    assert x.shape == (6, 1, 5, 4) and x.dtype == fw.float32
    assert y.tolist() == [0, 0, 0, 1, 1, 1]
    np.testing.assert_allclose(x.numpy()[5], 200 / 255.0, rtol=1e-6)


def test_layout_errors_say_what_is_expected(tmp_path):
    with pytest.raises(DatasetError, match="does not exist") as info:
        ImageFolder(tmp_path / "nowhere")
    assert "<class name>/<image file>" in str(info.value)
    with pytest.raises(DatasetError, match="no class sub-folders"):
        ImageFolder(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match=r"empty holds no image"):
        ImageFolder(tmp_path)


def test_damaged_image_names_the_file(tmp_path):
    make_folder(tmp_path)
    bad = tmp_path / "cat" / "9.png"
    bad.write_bytes(b"\x89PNG not really")
    ds = ImageFolder(tmp_path)
    position = [p for p, _ in ds.samples].index(bad)
    with pytest.raises(DataFormatError, match="cannot decode .*9.png"):
        ds[position]


def test_missing_pillow_says_how_to_install_it(tmp_path, monkeypatch):
    make_folder(tmp_path)
    monkeypatch.setitem(sys.modules, "PIL", None)
    monkeypatch.setitem(sys.modules, "PIL.Image", None)
    with pytest.raises(MissingDependencyError, match="Pillow|PIL") as info:
        ImageFolder(tmp_path)
    assert "pip install fw-core[images]" in str(info.value)
    assert isinstance(info.value, ImportError)
