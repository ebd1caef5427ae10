"""Sample transforms: callables applied to one sample, chained with :class:`Compose`.

Layouts follow torchvision: NumPy arrays and PIL images are images in height x width
(x channels) layout, tensors are (..., channels, height, width). :class:`ToTensor` turns the
first into the second. Random transforms take an optional ``generator``; without one they draw
from :func:`fw_core.data.sample_generator` (inside a DataLoader, a per-batch stream that is
the same whatever ``num_workers`` is). A generator you pass is shared by all worker threads, so
its draws are in a thread-dependent order when ``num_workers > 1``.

>>> augment = fw.data.transforms.Compose([
...     fw.data.transforms.RandomCrop(32, padding=4),
...     fw.data.transforms.RandomHorizontalFlip(),
...     fw.data.transforms.ToTensor(),
...     fw.data.transforms.Normalize((0.49, 0.48, 0.45), (0.25, 0.24, 0.26)),
... ])
"""

from __future__ import annotations

__all__ = ["Compose", "Lambda", "Normalize", "RandomCrop", "RandomHorizontalFlip", "ToTensor"]

import numbers
from collections.abc import Callable, Sequence

import numpy as np

from .. import random as _random
from ..errors import DTypeError, ShapeError
from ..ops import rearrange as _rearrange
from ..ops.creation import from_numpy, tensor
from ..ops.elementwise import div, sub
from ..ops.meta import describe
from ..tensor import Tensor
from .errors import DataError
from .loader import sample_generator

_PADDING_MODES = ("constant", "edge", "reflect")


class Compose:
    """Apply transforms one after another: ``Compose([a, b])(x) == b(a(x))``."""

    def __init__(self, transforms: Sequence[Callable]):
        self.transforms = list(transforms)
        for t in self.transforms:
            if not callable(t):
                raise DataError(f"{t!r} is not callable", op="Compose",
                                inputs=describe(self.transforms),
                                hint="pass transform objects or functions")

    def __call__(self, sample):
        for t in self.transforms:
            sample = t(sample)
        return sample

    def __repr__(self) -> str:
        inner = "".join(f"\n    {t!r}," for t in self.transforms)
        return f"Compose([{inner}\n])"


class Lambda:
    """A transform from any function of one sample: ``Lambda(lambda x: x * 2)``."""

    def __init__(self, fn: Callable):
        if not callable(fn):
            raise DataError(f"needs a callable, got {type(fn).__name__}", op="Lambda",
                            inputs=describe(fn=fn), hint="pass a function of one sample, "
                            "e.g. Lambda(lambda x: x * 2)")
        self.fn = fn

    def __call__(self, sample):
        return self.fn(sample)

    def __repr__(self) -> str:
        return f"Lambda({getattr(self.fn, '__name__', self.fn)!r})"


class ToTensor:
    """An image (NumPy array or PIL image, H x W or H x W x C) as a C x H x W float32 tensor.

    uint8 values are divided by 255 and uint16 by 65535 (so they land in [0, 1]), bool becomes
    0/1, floating values are kept as they are (cast to float32).

    Raises:
        DTypeError: not an array or PIL image, or an integer dtype with no known scale.
        ShapeError: not 2-d or 3-d.
    """

    _SCALE = {np.dtype(np.uint8): np.float32(1 / 255), np.dtype(np.uint16): np.float32(1 / 65535)}

    def __call__(self, image) -> Tensor:
        array = _as_array(image, "ToTensor")
        if array.ndim == 2:
            array = array[:, :, None]
        if array.ndim != 3:
            raise ShapeError(f"expects an H x W or H x W x C image, got shape {array.shape}",
                             op="ToTensor", inputs=describe((array,)),
                             hint="index one image at a time")
        scale = self._SCALE.get(array.dtype)
        if scale is None and array.dtype.kind not in "bf":
            raise DTypeError(f"does not know the value range of {array.dtype} images",
                             op="ToTensor", inputs=describe((array,)),
                             hint="convert to uint8, uint16 or float first, or use "
                                  "Lambda(lambda a: fw.tensor(a)) for raw values")
        out = np.empty((array.shape[2], array.shape[0], array.shape[1]), np.float32)
        chw = array.transpose(2, 0, 1)
        if scale is None:
            out[...] = chw
        else:
            np.multiply(chw, scale, out=out)
        return from_numpy(out)

    def __repr__(self) -> str:
        return "ToTensor()"


class Normalize:
    """``(x - mean[c]) / std[c]`` for each channel c of a (..., C, H, W) float tensor.

    Args:
        mean: one value per channel (or one for all).
        std: one value per channel (or one for all); none may be 0.

    Raises:
        DataError: a std of 0, or mean/std of different lengths.
        ShapeError: a tensor with fewer than 3 dimensions or another number of channels.
        DTypeError: an integer tensor (apply ToTensor first).
    """

    def __init__(self, mean, std):
        self.mean = np.atleast_1d(np.asarray(mean, dtype=np.float64))
        self.std = np.atleast_1d(np.asarray(std, dtype=np.float64))
        if self.mean.ndim != 1 or self.std.ndim != 1 or (
                len(self.mean) != len(self.std) and 1 not in (len(self.mean), len(self.std))):
            raise DataError(f"mean {self.mean.tolist()} and std {self.std.tolist()} must be "
                            f"one value per channel", op="Normalize",
                            inputs=describe(mean=mean, std=std),
                            hint="give as many means as stds (or one of either for all)")
        if np.any(self.std == 0):
            raise DataError(f"std {self.std.tolist()} contains 0: division by zero",
                            op="Normalize", inputs=describe(mean=mean, std=std),
                            hint="use the per-channel standard deviation of your data")
        self._constants: dict = {}

    def __call__(self, x: Tensor) -> Tensor:
        if not isinstance(x, Tensor):
            raise DTypeError(f"expects a tensor, got {type(x).__name__}", op="Normalize",
                             inputs=describe((x,)), hint="apply ToTensor() first")
        if not x.is_floating_point():
            raise DTypeError(f"expects a floating tensor, got {x.dtype!r}", op="Normalize",
                             inputs=describe((x,)),
                             hint="apply ToTensor() first (it scales uint8 to [0, 1])")
        channels = max(len(self.mean), len(self.std))
        if x.ndim < 3 or channels not in (1, x.shape[-3]):
            raise ShapeError(f"has {channels} channel values but got a tensor of shape "
                             f"{tuple(x.shape)} (channels are dimension -3)", op="Normalize",
                             inputs=describe((x,)),
                             hint="give one mean/std per channel of a (..., C, H, W) tensor")
        key = (x.dtype, x.device)
        if key not in self._constants:
            self._constants[key] = tuple(
                tensor(v.reshape(-1, 1, 1), dtype=x.dtype, device=x.device)
                for v in (self.mean, self.std))
        mean, std = self._constants[key]
        return div(sub(x, mean), std)

    def __repr__(self) -> str:
        return f"Normalize(mean={self.mean.tolist()}, std={self.std.tolist()})"


class RandomCrop:
    """A random ``size`` window of an image, after optional padding.

    Args:
        size: output (height, width), or one int for a square.
        padding: pixels added first: an int for every side, (left/right, top/bottom), or
            (left, top, right, bottom).
        pad_if_needed: pad images smaller than ``size`` up to it instead of raising.
        fill: the value of padded pixels (``padding_mode="constant"``).
        padding_mode: "constant", "edge" (repeat the border) or "reflect" (mirror without
            repeating the border).
        generator: the random stream (default: :func:`fw_core.data.sample_generator`).

    Works on NumPy arrays and PIL images (H x W [x C]) and on tensors (..., H, W).

    Raises:
        ShapeError: the (padded) image is smaller than ``size`` and pad_if_needed is False.
    """

    def __init__(self, size, padding=None, pad_if_needed: bool = False, fill: float = 0,
                 padding_mode: str = "constant", generator: _random.Generator | None = None):
        self.size = _pair(size, "size", "RandomCrop")
        self.padding = _padding(padding)
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        if padding_mode not in _PADDING_MODES:
            raise DataError(f"unknown padding_mode {padding_mode!r}", op="RandomCrop",
                            inputs=describe(padding_mode=padding_mode),
                            hint=f"use one of {', '.join(_PADDING_MODES)}")
        self.padding_mode = padding_mode
        self.generator = generator

    def __call__(self, image):
        h, w = self.size
        left, top, right, bottom = self.padding
        height, width = _image_size(image, "RandomCrop")
        if self.pad_if_needed:
            right += max(0, w - (width + left + right))
            bottom += max(0, h - (height + top + bottom))
        height, width = height + top + bottom, width + left + right
        if height < h or width < w:
            raise ShapeError(f"a {h} x {w} crop does not fit a {height} x {width} (padded) "
                             "image", op="RandomCrop", inputs=describe((image,), size=self.size,
                                                                      padding=self.padding),
                             hint="pass pad_if_needed=True, more padding, or a smaller size")
        rng = (self.generator or sample_generator()).numpy
        i, j = int(rng.integers(0, height - h + 1)), int(rng.integers(0, width - w + 1))
        if isinstance(image, Tensor):
            if left or top or right or bottom:
                if self.padding_mode == "constant":
                    image = _rearrange.pad(image, (left, right, top, bottom), value=self.fill)
                else:
                    mode = {"edge": "replicate"}.get(self.padding_mode, self.padding_mode)
                    image = _rearrange.pad(image, (left, right, top, bottom), mode=mode)
            return image[..., i:i + h, j:j + w]
        return _map_array(image, lambda a: self._crop_array(a, (top, bottom, left, right),
                                                             i, j), "RandomCrop")

    def _crop_array(self, array: np.ndarray, pads, i: int, j: int) -> np.ndarray:
        h, w = self.size
        if any(pads):
            widths = [(pads[0], pads[1]), (pads[2], pads[3])] + [(0, 0)] * (array.ndim - 2)
            options = {"constant_values": self.fill} if self.padding_mode == "constant" else {}
            array = np.pad(array, widths, mode=self.padding_mode, **options)
        return array[i:i + h, j:j + w]

    def __repr__(self) -> str:
        return (f"RandomCrop(size={self.size}, padding={self.padding}, "
                f"padding_mode={self.padding_mode!r})")


class RandomHorizontalFlip:
    """Mirror an image left-right with probability ``p``.

    Works on NumPy arrays and PIL images (H x W [x C]) and on tensors (..., H, W).
    """

    def __init__(self, p: float = 0.5, generator: _random.Generator | None = None):
        if not 0.0 <= p <= 1.0:
            raise DataError(f"p must be in [0, 1], got {p}", op="RandomHorizontalFlip",
                            inputs=describe(p=p), hint="p is the probability of flipping, "
                            "e.g. 0.5")
        self.p = p
        self.generator = generator

    def __call__(self, image):
        if (self.generator or sample_generator()).numpy.random() >= self.p:
            return image
        if isinstance(image, Tensor):
            return _rearrange.flip(image, (-1,))
        return _map_array(image, lambda a: a[:, ::-1], "RandomHorizontalFlip")

    def __repr__(self) -> str:
        return f"RandomHorizontalFlip(p={self.p})"


# -- helpers ---------------------------------------------------------------------------------------
def _is_pil(image) -> bool:
    return type(image).__module__.startswith("PIL.")


def _as_array(image, who: str) -> np.ndarray:
    if isinstance(image, np.ndarray):
        return image
    if _is_pil(image):
        return np.asarray(image)
    raise DTypeError(f"expects a NumPy array or a PIL image, got {type(image).__name__}",
                     op=who, inputs=describe((image,)),
                     hint="a tensor is already converted: drop ToTensor() from the pipeline"
                     if isinstance(image, Tensor) else "load the image with Pillow or NumPy")


def _map_array(image, fn: Callable[[np.ndarray], np.ndarray], who: str):
    """Apply an array function to an image, keeping PIL images PIL images (``who``: the
    transform, for errors)."""
    if not _is_pil(image):
        return fn(_as_array(image, who))
    from PIL import Image

    out = Image.fromarray(np.ascontiguousarray(fn(np.asarray(image))))
    if image.mode == "P":  # the array holds palette indices: give the palette back
        out.putpalette(image.getpalette())
    return out


def _image_size(image, who: str) -> tuple[int, int]:
    if isinstance(image, Tensor):
        if image.ndim < 2:
            raise ShapeError(f"an image tensor needs (..., H, W) dimensions, got shape "
                             f"{tuple(image.shape)}", op=who, inputs=describe((image,)),
                             hint="index one image (C, H, W) or a batch (N, C, H, W)")
        return image.shape[-2], image.shape[-1]
    array = _as_array(image, who)
    if array.ndim not in (2, 3):
        raise ShapeError(f"an image array must be H x W or H x W x C, got shape {array.shape}",
                         op=who, inputs=describe((array,)), hint="index one image at a time")
    return array.shape[0], array.shape[1]


def _pair(value, what: str, who: str) -> tuple[int, int]:
    pair = (value, value) if isinstance(value, numbers.Integral) else tuple(value)
    if len(pair) != 2 or not all(isinstance(v, numbers.Integral) and v > 0 for v in pair):
        raise DataError(f"{what} must be a positive int or (height, width), got {value!r}",
                        op=who, inputs=describe(**{what: value}),
                        hint=f"e.g. {what}=32 or {what}=(32, 24)")
    return int(pair[0]), int(pair[1])


def _padding(padding) -> tuple[int, int, int, int]:
    if padding is None:
        return (0, 0, 0, 0)
    values = (padding,) if isinstance(padding, numbers.Integral) else tuple(padding)
    if len(values) not in (1, 2, 4) or not all(isinstance(v, numbers.Integral) and v >= 0
                                               for v in values):
        raise DataError(f"padding must be an int >= 0, (left/right, top/bottom) or "
                        f"(left, top, right, bottom), got {padding!r}", op="RandomCrop",
                        inputs=describe(padding=padding), hint="e.g. padding=4")
    if len(values) == 1:
        return (values[0],) * 4
    if len(values) == 2:
        return (values[0], values[1], values[0], values[1])
    return tuple(int(v) for v in values)
