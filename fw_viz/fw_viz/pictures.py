"""PNG pictures through matplotlib (Agg, no display): training curves, attribution heatmaps,
token bars, and the line/bar/area plots the training dashboard is made of.

Every function writes one PNG at ``path`` and returns the path. Pixel sizes are fixed by the
data (documented per function), so pictures line up across runs and tests can check them.
matplotlib is imported inside the functions with the Agg backend: ``import fw_viz`` stays cheap
and nothing ever opens a window.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["area_png", "bars_png", "heatmap_png", "history_png", "lines_png", "token_bars_png"]

DPI = 100
HOT = np.array([1.0, 0.0, 0.0])  # attribution overlay colour: red, alpha grows with the value


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _array(x) -> np.ndarray:
    """An fw tensor, an Attribution (its ``.values``) or anything array-like, as float64."""
    values = getattr(x, "values", None)
    x = x if values is None or callable(values) else values  # not a dict.values method
    x = x.numpy() if hasattr(x, "numpy") else x
    return np.asarray(x, dtype=np.float64)


def _save(fig, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    _pyplot().close(fig)
    return path


# -- training curves -------------------------------------------------------------------------
def _panels(series: dict[str, list]) -> dict[str, list[str]]:
    """Group ``loss``/``val_loss`` (any ``val_`` twin) into one panel per base name."""
    panels: dict[str, list[str]] = {}
    for key in series:
        panels.setdefault(key[4:] if key.startswith("val_") else key, []).append(key)
    return panels


def history_png(history, path) -> Path:
    """Curves of a ``History`` (or a ``{name: [value per epoch]}`` dict): one panel per
    quantity, its ``val_`` twin drawn in the same panel. Size: 400 px wide per panel, 300 high."""
    series = dict(getattr(history, "history", history))
    epochs = list(getattr(history, "epoch", []))
    panels = _panels(series) or {"(no logs)": []}
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(4.0 * len(panels), 3.0), squeeze=False)
    for ax, (title, keys) in zip(axes[0], panels.items()):
        for key in keys:
            ys = series[key]
            xs = epochs if len(epochs) == len(ys) else range(len(ys))
            ax.plot(list(xs), ys, marker="o", markersize=3, label=key)
        ax.set_title(title)
        ax.set_xlabel("epoch")
        if keys:
            ax.legend(fontsize="small")
    fig.tight_layout()
    return _save(fig, path)


def lines_png(series: dict, path, title: str = "", xlabel: str = "step", ylabel: str = "",
              logy: bool = False) -> Path:
    """``{label: (xs, ys)}`` as lines on one axis (640 x 360 px)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for label, (xs, ys) in series.items():
        ax.plot(list(xs), list(ys), label=label)
    if logy and any(len(ys) for _, ys in series.values()):
        ax.set_yscale("log")
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    if 0 < len(series) <= 12:
        ax.legend(fontsize="small")
    fig.tight_layout()
    return _save(fig, path)


def area_png(xs, stacks: dict, path, title: str = "", xlabel: str = "step",
             ylabel: str = "") -> Path:
    """``{label: ys}`` stacked over ``xs`` (memory by lifecycle tag over time; 640 x 360 px)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    if stacks:
        ax.stackplot(list(xs), *[list(v) for v in stacks.values()], labels=list(stacks))
        ax.legend(fontsize="small", loc="upper left")
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    fig.tight_layout()
    return _save(fig, path)


def bars_png(labels, values, path, title: str = "", xlabel: str = "") -> Path:
    """Horizontal bars, first label on top (per-op time breakdown; 640 px wide)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 1.2 + 0.25 * max(len(labels), 1)))
    ax.barh(range(len(labels)), list(values), color="#4c72b0")
    ax.set_yticks(range(len(labels)), [str(x) for x in labels], fontsize="small")
    ax.invert_yaxis()
    ax.set(title=title, xlabel=xlabel)
    fig.tight_layout()
    return _save(fig, path)


# -- attributions ----------------------------------------------------------------------------
def _plane(values: np.ndarray, index: int) -> np.ndarray:
    """One sample's attribution as an (H, W) map: channels folded by summed magnitude."""
    if values.ndim == 4:  # (N, C, H, W)
        values = values[index]
    if values.ndim == 3:  # (C, H, W)
        values = np.abs(values).sum(axis=0)
    return np.abs(values)


def _gray(image, index: int) -> np.ndarray:
    """The picture under the overlay as an (H, W) gray image in [0, 1]."""
    image = _array(image)
    if image.ndim == 4:
        image = image[index]
    if image.ndim == 3:  # (C, H, W) when C is small, else (H, W, C)
        image = image.mean(axis=0 if image.shape[0] <= 4 else -1)
    span = image.max() - image.min()
    return (image - image.min()) / span if span > 0 else np.full_like(image, 0.5)


def _resize(a: np.ndarray, shape) -> np.ndarray:
    """Nearest-neighbour resize (GradCAM maps come at a conv layer's size)."""
    rows = (np.arange(shape[0]) * a.shape[0] // shape[0])
    cols = (np.arange(shape[1]) * a.shape[1] // shape[1])
    return a[rows][:, cols]


def heatmap_png(attribution, image, path, index: int = 0, scale: int | None = None,
                alpha: float = 0.75) -> Path:
    """An attribution over its image: the image in gray, each pixel tinted red in proportion
    to its attribution magnitude (normalised by the largest).

    ``attribution``: an fw_debugger ``Attribution`` or an array shaped like the image batch
    ((N, C, H, W), (N, 1, h, w) maps from GradCAM are resized). ``image``: (N, C, H, W),
    (C, H, W), (H, W, C) or (H, W). The PNG is exactly (H * scale) x (W * scale) pixels;
    ``scale`` defaults to the smallest integer making the longer side at least 256 px.
    """
    from matplotlib.image import imsave

    gray = _gray(image, index)
    heat = _plane(_array(attribution), index)
    if heat.shape != gray.shape:
        heat = _resize(heat, gray.shape)
    peak = heat.max()
    heat = heat / peak if peak > 0 else heat
    weight = (alpha * heat)[..., None]
    rgb = (1 - weight) * gray[..., None] + weight * HOT
    scale = scale or max(1, -(-256 // max(gray.shape)))
    rgb = np.repeat(np.repeat(rgb, scale, axis=0), scale, axis=1)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    imsave(path, np.clip(rgb, 0, 1))
    return path


def token_bars_png(attribution, tokens, path, index: int = 0) -> Path:
    """One bar per token, first token on top: red for positive attribution, blue for negative
    (an (N, T) or (N, T, D) attribution; D, e.g. embeddings, is summed).

    The PNG is 640 px wide and 50 + 24 * T px high; token k's bar is centred 20 + 24 * (k + 0.5)
    px from the top.
    """
    values = _array(attribution)
    if values.ndim >= 2 and values.shape[0] != len(tokens):
        values = values[index]
    scores = values.reshape(len(tokens), -1).sum(axis=1)
    n, height = len(tokens), 50 + 24 * len(tokens)
    plt = _pyplot()
    fig = plt.figure(figsize=(6.4, height / DPI))
    ax = fig.add_axes((0.2, 30 / height, 0.75, 24 * n / height))
    colors = ["#d62728" if s >= 0 else "#1f77b4" for s in scores]
    ax.barh(range(n), scores, height=0.8, color=colors)
    ax.set_yticks(range(n), [str(t) for t in tokens], fontsize="small")
    ax.set_ylim(n - 0.5, -0.5)
    ax.axvline(0, color="black", linewidth=0.5)
    return _save(fig, path)
