"""What the file-format loaders share: finding the files, reading them, optional packages."""

from __future__ import annotations

import gzip
import importlib
import os
from collections.abc import Sequence
from pathlib import Path

from ..errors import DataFormatError, DatasetError, MissingDependencyError

_GZIP_MAGIC = b"\x1f\x8b"


def read_bytes(path: str | os.PathLike) -> bytes:
    """The file's content, un-gzipped when it is a gzip file (detected by content, not name)."""
    path = Path(path)
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] != _GZIP_MAGIC:
        return raw
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError) as exc:
        raise DataFormatError(f"{path} is a damaged gzip file: {exc}",
                              inputs=f"{path}: {len(raw)} bytes",
                              hint="download or copy it again, or put the unpacked file there "
                              "instead") from None


def locate(dataset: str, folders: Sequence[Path], names: Sequence[str],
           suffixes: Sequence[str] = ("",)) -> list[Path]:
    """The paths of ``names`` (each with one of ``suffixes``), all from the first folder that
    holds every one of them.

    Raises:
        DatasetError: no folder holds them all; the message lists the files missing from the
            most complete folder and says where to put them (fw never downloads data).
    """
    best: tuple[int, Path, list[str]] | None = None
    for folder in folders:
        found = [_first_existing(folder, name, suffixes) for name in names]
        if all(found):
            return found
        missing = [name for name, path in zip(names, found) if path is None]
        if best is None or len(missing) < len(best[2]):
            best = (len(missing), folder, missing)
    _, folder, missing = best
    variants = " (gzipped as .gz or unpacked)" if ".gz" in suffixes else ""
    raise DatasetError(
        f"missing {', '.join(missing)} in {folder}", op=dataset,
        inputs="looked in " + ", ".join(str(f) for f in folders),
        hint=f"put the {dataset} files {', '.join(names)}{variants} into {folders[0]} (or "
             f"{folders[1] if len(folders) > 1 else folders[0]}); fw never downloads data, copy "
             f"them there from the dataset's publisher or a machine that has them")


def _first_existing(folder: Path, name: str, suffixes: Sequence[str]) -> Path | None:
    for suffix in suffixes:
        path = folder / (name + suffix)
        if path.is_file():
            return path
    return None


def require(module: str, who: str, install: str):
    """Import an optional package, or raise MissingDependencyError saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(f"needs the optional package {module!r}, which is not "
                                     f"installed ({exc})", op=who, inputs=f"import {module}",
                                     hint=install) from None
