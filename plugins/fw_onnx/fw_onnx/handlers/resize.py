"""ONNX's Resize (and the older Upsample): nearest, linear and cubic interpolation, axis by
axis. Each output coordinate is mapped back to the input by the coordinate transformation mode;
the taps and their weights depend only on the sizes, so they are computed with NumPy and the
data is gathered and weighted with fw ops (gradients flow to the input)."""

from __future__ import annotations

import numpy as np

import fw_core as fw

from .node import host


def _source(mode: str, out: np.ndarray, n: int, m: int, scale: float) -> np.ndarray:
    """Input coordinates of output positions ``out`` along an axis of ``n`` -> ``m``."""
    if mode == "half_pixel":
        return (out + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (out + 0.5) / scale - 0.5 if m > 1 else np.zeros_like(out)
    if mode == "align_corners":
        return out * (n - 1) / (m - 1) if m > 1 else np.zeros_like(out)
    if mode == "asymmetric":
        return out / scale
    if mode == "half_pixel_symmetric":
        adjustment = m / (scale * n)
        return n / 2 * (1 - adjustment) + (out + 0.5) / scale - 0.5
    raise fw.errors.UnsupportedError(f"coordinate_transformation_mode={mode!r}", op="Resize",
                                     hint="use half_pixel, pytorch_half_pixel, align_corners, "
                                          "asymmetric or half_pixel_symmetric")


def _nearest(x: np.ndarray, rule: str) -> np.ndarray:
    return {"round_prefer_floor": np.ceil(x - 0.5), "round_prefer_ceil": np.floor(x + 0.5),
            "floor": np.floor(x), "ceil": np.ceil(x)}[rule]


def _cubic(t: np.ndarray, a: float) -> list[np.ndarray]:
    """The four weights of taps -1, 0, 1, 2 at fraction ``t`` (Keys' kernel with ``a``)."""
    def far(d):
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    def near(d):
        return ((a + 2) * d - (a + 3)) * d * d + 1

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _taps(node, n: int, m: int, scale: float) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Input indices and weights of every output position along one axis."""
    x = _source(node.get("coordinate_transformation_mode", "half_pixel"),
                np.arange(m, dtype=np.float64), n, m, scale)
    mode = node.get("mode", "nearest")
    if mode == "nearest":
        index = np.clip(_nearest(x, node.get("nearest_mode", "round_prefer_floor")), 0, n - 1)
        return [index.astype(np.int64)], [np.ones(m)]
    base = np.floor(x)
    t = x - base
    if mode == "linear":
        offsets, weights = (0, 1), [1 - t, t]
    else:
        offsets, weights = (-1, 0, 1, 2), _cubic(t, node.get("cubic_coeff_a", -0.75))
    indices = [base + k for k in offsets]
    if node.get("exclude_outside", 0):
        weights = [np.where((i >= 0) & (i < n), w, 0.0) for i, w in zip(indices, weights)]
        total = sum(weights)
        weights = [w / total for w in weights]
    return [np.clip(i, 0, n - 1).astype(np.int64) for i in indices], weights


def _sizes(node, x, scales, sizes):
    """The output size and scale of every axis."""
    rank = x.ndim
    axes = [a % rank for a in node.get("axes", range(rank))]
    shape = list(x.shape)
    factors = [1.0] * rank
    if sizes is not None and sizes.numel():
        wanted = [int(v) for v in host(sizes).reshape(-1)]
        policy = node.get("keep_aspect_ratio_policy", "stretch")
        ratios = [w / shape[a] for a, w in zip(axes, wanted)]
        if policy != "stretch":
            common = min(ratios) if policy == "not_larger" else max(ratios)
            ratios = [common] * len(axes)
            wanted = [int(np.floor(shape[a] * common + 0.5)) for a in axes]
        for a, w, r in zip(axes, wanted, ratios):
            shape[a], factors[a] = w, r
    else:
        for a, s in zip(axes, host(scales).reshape(-1).tolist()):
            factors[a], shape[a] = s, int(np.floor(x.shape[a] * s))
    return shape, factors


def resize(node, x, roi=None, scales=None, sizes=None):
    if node.get("antialias", 0) or node.get("coordinate_transformation_mode") == \
            "tf_crop_and_resize":
        raise fw.errors.UnsupportedError("antialiased or tf_crop_and_resize resizing",
                                         op="Resize", hint="resize without antialias or roi")
    shape, factors = _sizes(node, x, scales, sizes)
    out = x
    for axis, (n, m, scale) in enumerate(zip(x.shape, shape, factors)):
        if n == m and scale == 1.0 and node.get("mode", "nearest") == "nearest":
            continue
        indices, weights = _taps(node, n, m, scale)
        spread = [-1 if a == axis else 1 for a in range(x.ndim)]
        total = None
        for index, weight in zip(indices, weights):
            picked = out[(slice(None),) * axis + (fw.tensor(index),)]
            if not np.all(weight == 1):
                picked = picked * fw.tensor(weight.reshape(spread)).to(x.dtype)
            total = picked if total is None else total + picked
        out = total
    return out


def upsample(node, x, scales=None):
    scales = scales if scales is not None else fw.tensor(np.array(node.get("scales"),
                                                                  np.float32))
    return resize(_AsResize(node), x, None, scales, None)


class _AsResize:
    """An Upsample node read as a Resize: its modes, with asymmetric coordinates."""

    def __init__(self, node):
        self.node = node

    def get(self, key, default=None):
        if key == "coordinate_transformation_mode":
            return "asymmetric"
        if key == "nearest_mode":
            return "floor"
        return self.node.get(key, default)


HANDLERS = {"Resize": resize, "Upsample": upsample}
