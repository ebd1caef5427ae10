"""fw_viz.pictures: training curves, attribution heatmaps and token bars as PNGs."""

import numpy as np
import pytest

import fw_core as fw


def _read(path):
    from matplotlib.image import imread

    return imread(path)  # (H, W, 3 or 4) floats in [0, 1]


def _redness(pixels):
    return pixels[..., 0] - pixels[..., 1]


def test_history_png_one_panel_per_quantity(artifacts):
    from fw_viz.pictures import history_png

    history = {"loss": [1.0, 0.6, 0.4], "val_loss": [1.1, 0.8, 0.7], "accuracy": [0.5, 0.7, 0.8]}
    path = history_png(history, artifacts / "history.png")
    assert _read(path).shape[:2] == (300, 800)  # two panels: loss (+val_loss), accuracy


def test_heatmap_hot_quadrant_is_red_at_expected_size(artifacts):
    from fw_viz.pictures import heatmap_png

    rng = np.random.default_rng(0)
    image = rng.uniform(0, 1, (1, 3, 16, 24)).astype(np.float32)
    attribution = np.zeros_like(image)
    attribution[0, :, :8, 12:] = 1.0  # top-right quadrant is hot
    path = heatmap_png(attribution, image, artifacts / "heatmap.png", scale=10)
    pixels = _read(path)
    assert pixels.shape[:2] == (160, 240)
    red = _redness(pixels)
    hot = red[:80, 120:].mean()
    rest = np.concatenate([red[80:].ravel(), red[:80, :120].ravel()]).mean()
    assert hot > rest + 0.5


def test_heatmap_from_debugger_attribution_and_small_gradcam_map(artifacts):
    fw_debugger = pytest.importorskip("fw_debugger")
    from fw_viz.pictures import heatmap_png

    weights = np.zeros((1, 8, 8), np.float32)
    weights[0, 6:, :2] = 1.0  # the "model" only looks at the bottom-left corner

    def model(x):
        return (x * fw.tensor(weights)).reshape(1, -1).sum(1, keepdim=True)

    x = np.ones((1, 1, 8, 8), np.float32)
    attribution = fw_debugger.explain(model, x, target=0, method="saliency")
    path = heatmap_png(attribution, x, artifacts / "heatmap_saliency.png")
    pixels = _read(path)
    assert pixels.shape[:2] == (256, 256)  # default scale: longer side >= 256
    red = _redness(pixels)
    assert red[192:, :64].mean() > red[:128].mean() + 0.5
    coarse = np.zeros((1, 1, 2, 2))
    coarse[0, 0, 0, 0] = 1.0  # a GradCAM-sized map is resized onto the image
    pixels = _read(heatmap_png(coarse, x[0], artifacts / "heatmap_coarse.png", scale=4))
    assert _redness(pixels)[:16, :16].mean() > _redness(pixels)[16:, 16:].mean() + 0.5


def test_token_bars_hot_token_row(artifacts):
    from fw_viz.pictures import token_bars_png

    tokens = ["the", "movie", "was", "wonderful", "."]
    values = np.array([[0.05, 0.1, -0.3, 1.0, 0.0]])[..., None].repeat(4, axis=-1)  # (N, T, D)
    path = token_bars_png(values, tokens, artifacts / "tokens.png")
    pixels = _read(path)
    assert pixels.shape[:2] == (50 + 24 * len(tokens), 640)
    red = (pixels[..., 0] > 0.7) & (pixels[..., 1] < 0.3) & (pixels[..., 2] < 0.3)
    blue = (pixels[..., 2] > 0.6) & (pixels[..., 0] < 0.3)
    rows = [red[int(20 + 24 * (k + 0.5))].sum() for k in range(len(tokens))]
    assert int(np.argmax(rows)) == 3  # "wonderful" has the longest red bar
    assert blue[int(20 + 24 * 2.5)].sum() > 10  # "was" is negative: blue
