"""Weight-only int8 quantization at export: each weight of a linear, convolution or embedding
is stored as int8 with float scales (``max |w| / 127``), a quarter of its float32 size; fw-edge
dequantizes it when it loads the program.

Convolutions and embeddings get one scale per output channel (per row). A linear weight gets one
per output channel and group of :data:`GROUP` input features: one scale for a whole row lets a
few large weights set the step for all of it, and on all-MiniLM-L6-v2 that alone costs cosine
0.9985 to fp32 where groups of 64 keep 0.9997."""

from __future__ import annotations

import numpy as np

_CONVOLUTIONS = frozenset({"conv1d", "conv2d", "conv3d"})
#: input features sharing one scale in a linear weight's output channel
GROUP = 64


def channel_axis(op: str, position: int, attrs: dict) -> int | None:
    """The output-channel axis of input ``position`` of an ``op`` node when it is a weight
    worth quantizing, else None."""
    if position != 1:
        return None
    if op == "linear":
        return 1 if attrs.get("weight_layout") == "in_out" else 0
    if op in _CONVOLUTIONS or op == "embedding":
        return 0
    return None


def group_of(op: str, weight: np.ndarray, axis: int) -> int | None:
    """The group size for ``op``'s weight (None: one scale per channel)."""
    if op != "linear" or weight.ndim != 2 or weight.shape[1 - axis] % GROUP:
        return None
    return GROUP


def int8_per_channel(weight: np.ndarray, axis: int, group: int | None = None,
                     ) -> tuple[np.ndarray, np.ndarray]:
    """``(q, scale)`` with ``q * scale`` closest to ``weight``: symmetric rounding, int8 in
    [-127, 127], float32 scales (1 for an all-zero channel), of shape ``[C]``, or with ``group``
    (a matrix only) ``[C, K / group]`` for groups of ``group`` entries along the other axis."""
    channels = np.moveaxis(weight, axis, 0).reshape(weight.shape[axis], -1)
    if group is not None:
        channels = channels.reshape(channels.shape[0], -1, group)
    peak = np.abs(channels).max(axis=-1).astype(np.float64)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(channels / scale[..., None]), -127, 127).astype(np.int8)
    q = np.moveaxis(q.reshape(np.moveaxis(weight, axis, 0).shape), 0, axis)
    return np.ascontiguousarray(q), scale
