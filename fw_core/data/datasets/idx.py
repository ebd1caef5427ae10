"""IDX files (the MNIST family's format) and the MNIST / Fashion-MNIST datasets.

An IDX file is a 4-byte magic number (0, 0, element type, number of dimensions), one
big-endian int32 per dimension, then the values in C order, big-endian. fw reads them raw or
gzipped, from files you put in place: it never downloads.
"""

from __future__ import annotations

__all__ = ["MNIST", "FashionMNIST", "read_idx"]

import os
from pathlib import Path

import numpy as np

from ...errors import FwError
from ...ops.meta import describe, located
from ..dataset import ArrayDataset, check_class_indices
from ..errors import DataFormatError
from ._files import locate, read_bytes

#: IDX element type code -> big-endian NumPy dtype
IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """The array stored in an IDX file (raw or gzipped), in native byte order.

    Raises:
        DataFormatError: not an IDX file (bad magic number or type code), or a size that does
            not match its header (a truncated download).

    >>> images = fw.data.datasets.read_idx("mnist/train-images-idx3-ubyte.gz")  # (60000, 28, 28)
    """
    try:
        raw = read_bytes(path)
    except FwError as err:
        raise located(err, "read_idx", path=str(path)) from None
    arrived = f"{path}: {len(raw)} bytes (un-gzipped), starting {raw[:8].hex(' ')}"
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in IDX_TYPES:
        raise DataFormatError(f"{path} is not an IDX file: it starts with {raw[:4].hex(' ')}, "
                              f"expected 00 00 <type> <ndim> with type one of "
                              f"{', '.join(f'{t:02x}' for t in IDX_TYPES)}", op="read_idx",
                              inputs=arrived,
                              hint="check the file name and that it is not an HTML error page")
    dtype, ndim = np.dtype(IDX_TYPES[raw[2]]), raw[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise DataFormatError(f"{path}: the header promises {ndim} dimensions but the file ends "
                              f"after {len(raw)} bytes", op="read_idx", inputs=arrived,
                              hint="the file is truncated: copy it again")
    shape = tuple(int(d) for d in np.frombuffer(raw, ">i4", ndim, 4))
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(raw) - header != expected:
        raise DataFormatError(f"{path}: the header says shape {shape} ({expected} bytes of "
                              f"values) but {len(raw) - header} bytes follow it",
                              op="read_idx", inputs=arrived,
                              hint="the file is truncated or damaged: copy it again")
    return np.frombuffer(raw, dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


class MNIST(ArrayDataset):
    """The MNIST handwritten digits from its four IDX files (raw or .gz).

    Sample ``i`` is ``(image, label)``: a 28 x 28 uint8 NumPy array and an int64 label
    (``ToTensor()`` makes the image a 1 x 28 x 28 float tensor in [0, 1]).

    Args:
        root: the folder holding ``train-images-idx3-ubyte[.gz]``,
            ``train-labels-idx1-ubyte[.gz]``, ``t10k-images-idx3-ubyte[.gz]`` and
            ``t10k-labels-idx1-ubyte[.gz]``; ``root/MNIST/raw`` (torchvision's layout) is
            searched too.
        train: the 60,000 training images (True) or the 10,000 test images (False).
        transform, target_transform: applied to each image / label.

    Raises:
        DatasetError: a file is missing (the message says which and where to put it; fw never
            downloads).
        DataFormatError: a file is damaged, or images and labels disagree in number.
    """

    folder = "MNIST"
    classes = [str(d) for d in range(10)]

    def __init__(self, root: str | os.PathLike, train: bool = True, transform=None,
                 target_transform=None):
        name = type(self).__name__
        root = Path(root)
        split = "train" if train else "t10k"
        names = (f"{split}-images-idx3-ubyte", f"{split}-labels-idx1-ubyte")
        folders = (root, root / self.folder / "raw", root / self.folder)
        image_path, label_path = locate(name, folders, names, ("", ".gz"))
        images, labels = read_idx(image_path), read_idx(label_path)
        if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
            raise DataFormatError(f"{image_path} holds shape {images.shape} and {label_path} "
                                  f"shape {labels.shape}; expected (N, H, W) images and N "
                                  "labels", op=name,
                                  inputs=describe(images=images, labels=labels),
                                  hint="the image and label files must be from the same split")
        check_class_indices(name, labels, len(type(self).classes), source=label_path)
        super().__init__(images, labels.astype(np.int64), transform, target_transform,
                         type(self).classes)
        self.root, self.train = root, train


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: the MNIST file names and format, clothing instead of digits.

    ``root/FashionMNIST/raw`` is searched as well as ``root``; see :class:`MNIST`.
    """

    folder = "FashionMNIST"
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot"]
