"""Sliding windows over the trailing spatial axes, shared by convolution and pooling: a padded
working copy of the input whose border is refilled each call, and strided views of its
windows computed once (all windows at once, or one view per tap)."""

from __future__ import annotations

import numpy as np


def out_lengths(sizes, kernel, stride, padding, dilation, ceil_mode=False) -> tuple[int, ...]:
    """Output lengths per axis (``padding``: (low, high) pairs); ``ceil_mode`` lets the last
    window hang over the end unless it would start in the high padding (PyTorch's rule)."""
    out = []
    for n, k, s, (lo, hi), d in zip(sizes, kernel, stride, padding, dilation):
        length = (n + lo + hi - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (length - 1) * s >= n + lo:
            length -= 1
        out.append(length)
    return tuple(out)


class Windows:
    """The windows of an input of ``shape`` for a window of ``kernel`` taps per spatial axis:
    ``fill(x)`` copies ``x`` into the padded array (border set to ``pad_value``); ``view`` is
    (*shape[:-n], *out, *kernel), over that array, and ``taps`` lists the (*shape[:-n], *out)
    views of its kernel positions in C order (tap ``t`` of every window)."""

    def __init__(self, spec, shape, dtype, kernel, stride, padding, dilation, out, pad_value):
        n = len(kernel)
        spans = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
        lows = tuple(lo for lo, _ in padding)
        total = tuple((o - 1) * s + span for o, s, span in zip(out, stride, spans))
        sizes = tuple(max(t, lo + m) for t, lo, m in zip(total, lows, shape[-n:]))
        self.padded = spec.scratch(tuple(shape[:-n]) + sizes, dtype)
        lead = (slice(None),) * (len(shape) - n)
        self.inside = lead + tuple(slice(lo, lo + m) for lo, m in zip(lows, shape[-n:]))
        self.border = []
        for axis, (lo, m, size) in enumerate(zip(lows, shape[-n:], sizes)):
            for part in (slice(0, lo), slice(lo + m, size)):
                if part.stop > part.start:
                    self.border.append(lead + (slice(None),) * axis + (part,))
        self.pad_value = dtype.type(pad_value)
        view = np.lib.stride_tricks.sliding_window_view(
            self.padded[lead + tuple(slice(0, t) for t in total)], spans,
            axis=tuple(range(len(shape) - n, len(shape))))
        self.view = view[(Ellipsis,) + tuple(slice(None, None, s) for s in stride)
                         + tuple(slice(None, None, d) for d in dilation)]
        self.taps = [self.view[(Ellipsis,) + tap] for tap in np.ndindex(*kernel)]

    def fill(self, x) -> None:
        """Copy ``x`` in and set the border (another node may have used the array since)."""
        for part in self.border:
            self.padded[part] = self.pad_value
        np.copyto(self.padded[self.inside], x, casting="unsafe")
