"""A folder of images, one sub-folder per class (``root/cat/001.png``, ``root/dog/002.jpg``)."""

from __future__ import annotations

__all__ = ["IMAGE_EXTENSIONS", "ImageFolder"]

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ...ops.meta import describe
from ..dataset import Dataset, check_index
from ..errors import DataFormatError, DatasetError
from ._files import require

IMAGE_EXTENSIONS = (".bmp", ".gif", ".jpeg", ".jpg", ".png", ".ppm", ".tif", ".tiff", ".webp")


class ImageFolder(Dataset):
    """Images sorted into one sub-folder per class; class indices follow the sorted folder names.

    Sample ``i`` is ``(image, label)``: the decoded image as an H x W x C uint8 NumPy array
    (H x W for ``mode="L"``) and an int64 label. Decoding needs Pillow
    (``pip install fw-core[images]``).

    Args:
        root: the folder whose sub-folders are the classes (searched recursively for images).
        transform, target_transform: applied to each image / label.
        extensions: file name endings that count as images (case-insensitive).
        mode: the Pillow mode every image is converted to ("RGB", "L", "RGBA", ...), or None to
            keep each file's own mode.

    Attributes: ``classes`` (sorted names), ``class_to_idx``, ``samples`` (path, label) pairs
    and ``targets``.

    Raises:
        MissingDependencyError: Pillow is not installed.
        DatasetError: ``root`` does not exist, has no class folders, or a class folder holds no
            image.
        DataFormatError: (when a sample is read) a file Pillow cannot decode.
    """

    def __init__(self, root: str | os.PathLike, transform=None, target_transform=None,
                 extensions: Sequence[str] = IMAGE_EXTENSIONS, mode: str | None = "RGB"):
        self._image = require("PIL.Image", "ImageFolder",
                              "pip install fw-core[images]  (or: pip install pillow)")
        self.root = Path(root)
        layout = f"the layout is {self.root}/<class name>/<image file>"
        if not self.root.is_dir():
            raise DatasetError(f"folder {self.root} does not exist", op="ImageFolder",
                               inputs=describe(root=str(root)), hint=layout)
        self.classes = sorted(d.name for d in self.root.iterdir()
                              if d.is_dir() and not d.name.startswith("."))
        if not self.classes:
            raise DatasetError(f"{self.root} has no class sub-folders", op="ImageFolder",
                               inputs=describe(root=str(root)), hint=layout)
        self.class_to_idx = {name: k for k, name in enumerate(self.classes)}
        endings = tuple(e.lower() for e in extensions)
        self.samples: list[tuple[Path, int]] = []
        for name, label in self.class_to_idx.items():
            files = sorted(p for p in (self.root / name).rglob("*")
                           if p.is_file() and p.name.lower().endswith(endings))
            if not files:
                raise DatasetError(f"class folder {self.root / name} holds no image",
                                   op="ImageFolder", inputs=describe(root=str(root),
                                                                     extensions=endings),
                                   hint=f"add images ending in {', '.join(endings)}, remove the "
                                        f"folder, or pass extensions=...")
            self.samples.extend((path, label) for path in files)
        self.targets = np.array([label for _, label in self.samples], dtype=np.int64)
        self.transform, self.target_transform, self.mode = transform, target_transform, mode

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, index) -> tuple:
        path, _ = self.samples[check_index(index, len(self.samples), self)]
        image = self.load(path)
        target = self.targets[index]
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target

    def load(self, path: Path) -> np.ndarray:
        """The image at ``path`` as a NumPy array in ``self.mode``."""
        try:
            with self._image.open(path) as image:
                if self.mode is not None and image.mode != self.mode:
                    image = image.convert(self.mode)
                return np.array(image)
        except (OSError, SyntaxError, ValueError) as exc:
            raise DataFormatError(f"cannot decode {path}: {exc}", op="ImageFolder",
                                  inputs=f"{path}: {path.stat().st_size} bytes",
                                  hint="remove or replace the damaged file") from None

    def __repr__(self) -> str:
        return f"ImageFolder({self.root}: {len(self)} images, {len(self.classes)} classes)"
