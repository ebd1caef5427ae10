"""Transforms: values against NumPy, randomness under a seeded generator, input kinds."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.data import DataError
from fw_core.data.transforms import (
    Compose,
    Lambda,
    Normalize,
    RandomCrop,
    RandomHorizontalFlip,
    ToTensor,
)
from fw_core.errors import DTypeError, ShapeError

RNG = np.random.default_rng(0)
IMAGE = RNG.integers(0, 256, size=(6, 5, 3), dtype=np.uint8)  # H x W x C


def test_to_tensor_makes_chw_float_in_unit_range():
    out = ToTensor()(IMAGE)
    assert out.shape == (3, 6, 5) and out.dtype == fw.float32
    np.testing.assert_allclose(out.numpy(), IMAGE.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    grey = ToTensor()(IMAGE[:, :, 0])
    assert grey.shape == (1, 6, 5)
    np.testing.assert_allclose(grey.numpy()[0], IMAGE[:, :, 0] / 255.0, rtol=1e-6)


def test_to_tensor_scales_by_dtype():
    wide = np.array([[0, 65535]], dtype=np.uint16)
    np.testing.assert_allclose(ToTensor()(wide).numpy(), [[[0.0, 1.0]]])
    floats = np.array([[0.5, 2.0]], dtype=np.float64)
    out = ToTensor()(floats)
    assert out.dtype == fw.float32 and out.tolist() == [[[0.5, 2.0]]]
    assert ToTensor()(np.array([[True, False]])).tolist() == [[[1.0, 0.0]]]


def test_to_tensor_rejects_what_it_cannot_scale():
    with pytest.raises(DTypeError, match="value range of int32"):
        ToTensor()(np.zeros((2, 2), np.int32))
    with pytest.raises(DTypeError, match="drop ToTensor"):
        ToTensor()(fw.zeros(1, 2, 2))
    with pytest.raises(ShapeError, match="H x W"):
        ToTensor()(np.zeros((1, 2, 2, 3), np.uint8))


def test_to_tensor_reads_pil_images():
    image = pytest.importorskip("PIL.Image")
    rgb = image.fromarray(IMAGE)
    np.testing.assert_allclose(ToTensor()(rgb).numpy(), IMAGE.transpose(2, 0, 1) / 255.0,
                               rtol=1e-6)
    assert ToTensor()(rgb.convert("L")).shape == (1, 6, 5)


def test_normalize_matches_numpy_per_channel():
    x = RNG.normal(size=(3, 4, 4)).astype(np.float32)
    mean, std = (0.1, 0.2, 0.3), (0.5, 2.0, 4.0)
    out = Normalize(mean, std)(fw.tensor(x))
    expected = (x - np.array(mean, np.float32)[:, None, None]) / np.array(std,
                                                                          np.float32)[:, None, None]
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    assert out.dtype == fw.float32
    batch = Normalize(mean, std)(fw.tensor(np.stack([x, x])))
    np.testing.assert_allclose(batch.numpy()[1], expected, rtol=1e-6)
    one = Normalize(0.5, 0.25)(fw.tensor(x, dtype=fw.float64))
    assert one.dtype == fw.float64
    np.testing.assert_allclose(one.numpy(), (x.astype(np.float64) - 0.5) / 0.25)


def test_normalize_errors():
    with pytest.raises(DataError, match="contains 0"):
        Normalize((0.5, 0.5), (1.0, 0.0))
    with pytest.raises(DataError, match="one value per channel"):
        Normalize((0.1, 0.2), (1.0, 2.0, 3.0))
    with pytest.raises(ShapeError, match=r"3 channel values .* shape \(2, 4, 4\)"):
        Normalize((0.1, 0.2, 0.3), (1, 1, 1))(fw.zeros(2, 4, 4))
    with pytest.raises(ShapeError):
        Normalize(0.0, 1.0)(fw.zeros(4, 4))
    with pytest.raises(DTypeError, match="ToTensor"):
        Normalize(0.0, 1.0)(fw.zeros(1, 2, 2, dtype=fw.uint8))
    with pytest.raises(DTypeError, match="ToTensor"):
        Normalize(0.0, 1.0)(IMAGE)


def _windows(padded, h, w):
    return [padded[i:i + h, j:j + w] for i in range(padded.shape[0] - h + 1)
            for j in range(padded.shape[1] - w + 1)]


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_random_crop_is_a_window_of_the_padded_image(mode):
    crop = RandomCrop((4, 3), padding=2, padding_mode=mode, fill=7, generator=fw.Generator(0))
    options = {"constant_values": 7} if mode == "constant" else {}
    padded = np.pad(IMAGE, [(2, 2), (2, 2), (0, 0)], mode=mode, **options)
    seen = set()
    for _ in range(40):
        out = crop(IMAGE)
        assert out.shape == (4, 3, 3)
        matches = [k for k, win in enumerate(_windows(padded, 4, 3)) if np.array_equal(win, out)]
        assert matches
        seen.update(matches)
    assert len(seen) > 10  # the position really varies


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_random_crop_on_tensors_matches_arrays_for_the_same_draws(mode):
    chw = fw.tensor(IMAGE.transpose(2, 0, 1).astype(np.float32))
    for seed in range(5):
        on_array = RandomCrop(4, padding=(1, 2), padding_mode=mode,
                              generator=fw.Generator(seed))(IMAGE)
        on_tensor = RandomCrop(4, padding=(1, 2), padding_mode=mode,
                               generator=fw.Generator(seed))(chw)
        assert on_tensor.shape == (3, 4, 4)
        np.testing.assert_array_equal(on_tensor.numpy(), on_array.transpose(2, 0, 1))


def test_random_crop_padding_forms_and_pad_if_needed():
    assert RandomCrop(2, padding=(1, 2, 3, 4)).padding == (1, 2, 3, 4)
    assert RandomCrop(2, padding=(1, 2)).padding == (1, 2, 1, 2)
    grown = RandomCrop((8, 9), pad_if_needed=True, generator=fw.Generator(0))(IMAGE)
    assert grown.shape == (8, 9, 3)
    np.testing.assert_array_equal(grown[:6, :5], IMAGE)  # padding goes right and bottom
    with pytest.raises(ShapeError, match=r"8 x 9 crop does not fit a 6 x 5"):
        RandomCrop((8, 9))(IMAGE)
    for bad in ({"size": 0}, {"size": (1, 2, 3)}, {"size": 2, "padding": -1},
                {"size": 2, "padding_mode": "wrap"}):
        with pytest.raises(DataError):
            RandomCrop(**bad)


def test_random_crop_keeps_pil_images():
    image = pytest.importorskip("PIL.Image")
    out = RandomCrop(3, padding=1, generator=fw.Generator(0))(image.fromarray(IMAGE))
    assert isinstance(out, image.Image) and out.size == (3, 3) and out.mode == "RGB"


def test_horizontal_flip_always_and_never():
    np.testing.assert_array_equal(RandomHorizontalFlip(1.0)(IMAGE), IMAGE[:, ::-1])
    assert RandomHorizontalFlip(0.0)(IMAGE) is IMAGE
    chw = fw.tensor(IMAGE.transpose(2, 0, 1))
    np.testing.assert_array_equal(RandomHorizontalFlip(1.0)(chw).numpy(),
                                  IMAGE.transpose(2, 0, 1)[:, :, ::-1])
    with pytest.raises(DataError):
        RandomHorizontalFlip(1.5)


def test_horizontal_flip_probability_and_generator():
    flip = RandomHorizontalFlip(0.3, generator=fw.Generator(1))
    flips = sum(not np.array_equal(flip(IMAGE), IMAGE) for _ in range(2000))
    assert 520 < flips < 680

    def pattern(seed):
        flip = RandomHorizontalFlip(generator=fw.Generator(seed))
        return [np.array_equal(flip(IMAGE), IMAGE) for _ in range(30)]

    assert pattern(4) == pattern(4) and pattern(4) != pattern(5)


def test_horizontal_flip_pil():
    image = pytest.importorskip("PIL.Image")
    out = RandomHorizontalFlip(1.0)(image.fromarray(IMAGE))
    np.testing.assert_array_equal(np.asarray(out), IMAGE[:, ::-1])


def test_compose_applies_in_order_and_lambda_wraps_functions():
    pipeline = Compose([Lambda(lambda a: a[:2]), ToTensor(), Normalize(0.5, 0.5)])
    out = pipeline(IMAGE)
    np.testing.assert_allclose(out.numpy(), (IMAGE[:2].transpose(2, 0, 1) / 255.0 - 0.5) / 0.5,
                               rtol=1e-5, atol=1e-6)
    assert "ToTensor()" in repr(pipeline)
    with pytest.raises(DataError, match="not callable"):
        Compose([ToTensor(), 3])
    with pytest.raises(DataError):
        Lambda(None)
