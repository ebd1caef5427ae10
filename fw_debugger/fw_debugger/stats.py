"""Health statistics of a tensor: what a NaN/Inf report and a trace summary show of values."""

from __future__ import annotations

import numpy as np


def host_array(value) -> np.ndarray:
    """A NumPy view or copy of a Tensor (any device), a raw array, or a Python number."""
    data = getattr(value, "_data", value)
    device = getattr(value, "_device", None)
    if device is not None and not isinstance(data, np.ndarray):
        return np.asarray(device.spec.to_numpy(data))
    return np.asarray(data)


def health_stats(value) -> dict:
    """Counts of NaN, +Inf, -Inf and zeros, and min/max/mean over the finite values.

    Args:
        value: a Tensor, a raw array or a number.

    Returns:
        ``{"size", "finite", "nan", "posinf", "neginf", "zeros", "min", "max", "mean"}``;
        min/max/mean are floats, or None when no value is finite. Integer and bool tensors have
        no NaN/Inf.

    Example::

        >>> health_stats(fw.tensor([0.0, 1.0, float("inf")]))["posinf"]
        1
    """
    a = host_array(value)
    size = int(a.size)
    nan = posinf = neginf = 0
    finite = a.reshape(-1)
    if a.dtype.kind == "f":
        nan = int(np.count_nonzero(np.isnan(a)))
        inf = np.isinf(a)
        posinf = int(np.count_nonzero(inf & (a > 0)))
        neginf = int(np.count_nonzero(inf & (a < 0)))
        if nan + posinf + neginf:
            finite = a[np.isfinite(a)]
    stats = {"size": size, "finite": int(finite.size), "nan": nan, "posinf": posinf,
             "neginf": neginf, "zeros": int(size - np.count_nonzero(a)),
             "min": None, "max": None, "mean": None}
    if finite.size:
        stats["min"] = float(finite.min())
        stats["max"] = float(finite.max())
        stats["mean"] = float(finite.mean(dtype=np.float64))
    return stats


def format_stats(stats: dict) -> str:
    """One line: ``"2 NaN, 1 -Inf, 0 zeros of 6; finite in [-1, 3], mean 0.5"``."""
    counts = [f"{stats[key]} {label}" for key, label in
              (("nan", "NaN"), ("posinf", "+Inf"), ("neginf", "-Inf")) if stats[key]]
    head = ", ".join(counts + [f"{stats['zeros']} zeros of {stats['size']}"])
    if stats["min"] is None:
        return head + ("; no finite values" if stats["size"] else "")
    return f"{head}; finite in [{stats['min']:.4g}, {stats['max']:.4g}], mean {stats['mean']:.4g}"
