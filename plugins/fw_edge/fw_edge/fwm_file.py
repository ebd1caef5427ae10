"""Reading a ``.fwm`` file: a safetensors file whose metadata holds fw's checksum, the format
version and the program (docs/fwm_format.md, "The file").

The reader is compatible with fw's writer (``fw_core/io/safetensors_format.py``): an 8-byte
little-endian header length, a JSON header (per tensor its dtype, shape and byte range; string
metadata under ``__metadata__``), then the tensors' bytes. The checksum is the SHA-256 of the
whole file with its own 64 hex digits written as ``0``. Every field is validated before it is
used, so a damaged or crafted file raises :class:`EdgeError` and nothing else.

The file is memory-mapped, not read: the tensors are read-only views of the mapping, so a
model's weights take memory once (as the file's pages, which the OS may share and page out)
rather than as file bytes plus arrays. The mapping lives as long as a tensor does; the file must
not be rewritten in place meanwhile (replace it by writing a new file and renaming it).
"""

from __future__ import annotations

import hashlib
import json
import math
import mmap
import os
import re
import struct
from typing import NamedTuple

import numpy as np

from .errors import EdgeError

CHECKSUM_KEY = "__fw_sha256__"
FORMAT_KEY = "__fwm_format__"
PROGRAM_KEY = "__fwm_program__"
FORMATS = ("1",)
_PLACEHOLDER = b"0" * 64
_HEX64 = re.compile("[0-9a-f]{64}")
_MAX_RANK = 64
_DROP = getattr(mmap, "MADV_DONTNEED", None)  # absent on Windows: the pages then stay resident

DTYPES = {"BOOL": np.dtype(np.bool_), "U8": np.dtype("u1"), "I8": np.dtype("i1"),
          "U16": np.dtype("<u2"), "I16": np.dtype("<i2"), "F16": np.dtype("<f2"),
          "U32": np.dtype("<u4"), "I32": np.dtype("<i4"), "F32": np.dtype("<f4"),
          "U64": np.dtype("<u8"), "I64": np.dtype("<i8"), "F64": np.dtype("<f8")}


class Contents(NamedTuple):
    """A read ``.fwm`` file: its tensors (read-only arrays over the mapping), its program
    (parsed JSON) and the mapping itself."""

    tensors: dict[str, np.ndarray]
    program: dict
    mapping: mmap.mmap

    def drop_pages(self) -> None:
        """Let go of the file's resident pages, once the loader has what it needs: the checksum
        touched every page, and int8 tensors are never read again once dequantized; the pages
        of tensors a program uses come back from the OS's page cache when it reads them."""
        if _DROP is not None:
            self.mapping.madvise(_DROP)


def read(path) -> Contents:
    """The tensors and the program of the ``.fwm`` file at ``path``, memory-mapped.

    Raises:
        EdgeError: the file cannot be read, is not a complete safetensors file, is refused by
            its checksum, has no program, or is a format version this reader does not know.
    """
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size < 8:  # (an empty file cannot be mapped)
                raise _damaged(path, f"{size} bytes, shorter than a header")
            mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise EdgeError(f"cannot read the program file {path}: {exc.strerror or exc}; check the "
                        "path and its permissions") from exc
    return Contents(*_parse(mapped, path), mapped)


def _damaged(path, what: str) -> EdgeError:
    return EdgeError(f"{path} is not a readable .fwm program ({what}); the file is truncated or "
                     "damaged: export it again with fw.export")


def _parse(data: mmap.mmap, path) -> tuple[dict[str, np.ndarray], dict]:
    size = len(data)
    (length,) = struct.unpack("<Q", data[:8])
    if length < 2 or length > size - 8:
        raise _damaged(path, f"a header length of {length} bytes in a file of {size} bytes")
    text = bytes(data[8:8 + length])
    header = _json(text, path, "header")
    if not isinstance(header, dict):
        raise _damaged(path, "the header is not a JSON object")
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise _damaged(path, "its metadata is not a map of strings")
    entries = _layout(header, len(data) - 8 - length, path)
    _verify_checksum(data, text, metadata.get(CHECKSUM_KEY), path)
    version = metadata.get(FORMAT_KEY)
    if version not in FORMATS:
        raise EdgeError(f"{path} is .fwm format version {version!r}, but this fw-edge reads "
                        f"versions {', '.join(FORMATS)}; upgrade fw-edge, or export the model "
                        "with an fw that writes one of these versions")
    if PROGRAM_KEY not in metadata:
        raise _damaged(path, f"its metadata has no {PROGRAM_KEY!r}")
    program = _json(metadata[PROGRAM_KEY], path, "program")
    return _tensors(data, 8 + length, entries, header, path), program


def _verify_checksum(data: mmap.mmap, text: bytes, checksum, path) -> None:
    """Refuse the file unless its one checksum field matches the SHA-256 of the file with the
    field's digits written as ``0``."""
    if checksum is None or not _HEX64.fullmatch(checksum):
        raise _damaged(path, f"its metadata has no 64-digit checksum under {CHECKSUM_KEY!r}")
    marker = f'"{CHECKSUM_KEY}":"'.encode()
    first = text.find(marker)
    if first < 0 or text.find(marker, first + 1) >= 0:
        raise _damaged(path, "its checksum field is malformed")
    at = 8 + first + len(marker)
    view = memoryview(data)  # hashlib reads the mapping in place, without a copy
    digest = hashlib.sha256(view[:at])
    digest.update(_PLACEHOLDER)
    digest.update(view[at + 64:])
    if digest.hexdigest() != checksum:
        raise EdgeError(f"{path} is refused by its checksum: its content does not match the "
                        "checksum written when it was exported, so a bit of it changed since; "
                        "copy or export the file again")


def _layout(header: dict, available: int, path) -> list:
    """The header's tensor entries in file order, checking their byte ranges tile the
    ``available`` bytes after the header exactly."""
    entries = sorted(((_entry(key, value, path), key) for key, value in header.items()),
                     key=lambda item: item[0][2])
    position = 0
    for (_, _, begin, end), key in entries:
        if begin != position:
            raise _damaged(path, f"tensor {key!r} starts at byte {begin}, not {position}")
        position = end
    if position != available:
        raise _damaged(path, f"the tensors take {position} bytes but {available} follow the "
                       "header")
    return entries


def _tensors(data: mmap.mmap, start: int, entries: list, header: dict,
             path) -> dict[str, np.ndarray]:
    """The tensors of ``entries`` as read-only arrays over the mapping, in header order (a
    tensor whose bytes are not aligned for its dtype is copied, as BLAS wants aligned data)."""
    arrays = {}
    for (dtype, shape, begin, end), key in entries:
        count = (end - begin) // dtype.itemsize
        array = np.frombuffer(data, dtype, count, start + begin).reshape(shape)
        if (start + begin) % dtype.alignment:
            array = array.copy()
            array.flags.writeable = False
        if dtype == np.bool_ and array.size and array.view(np.uint8).max() > 1:
            raise _damaged(path, f"bool tensor {key!r} holds bytes other than 0 and 1")
        arrays[key] = array
    return {key: arrays[key] for key in header}


def _entry(key: str, value, path) -> tuple[np.dtype, tuple, int, int]:
    if not isinstance(value, dict) or set(value) != {"dtype", "shape", "data_offsets"}:
        raise _damaged(path, f"entry {key!r} is not a tensor description")
    dtype = DTYPES.get(value["dtype"]) if isinstance(value["dtype"], str) else None
    if dtype is None:
        raise _damaged(path, f"tensor {key!r} has dtype {value['dtype']!r} (fw-edge reads "
                       f"{', '.join(DTYPES)})")
    shape, offsets = value["shape"], value["data_offsets"]
    if not (isinstance(shape, list) and len(shape) <= _MAX_RANK and all(map(_is_count, shape))):
        raise _damaged(path, f"tensor {key!r} has shape {shape!r}")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(map(_is_count, offsets))
            and offsets[0] <= offsets[1]):
        raise _damaged(path, f"tensor {key!r} has byte range {offsets!r}")
    if offsets[1] - offsets[0] != math.prod(shape) * dtype.itemsize:
        raise _damaged(path, f"tensor {key!r} of shape {tuple(shape)} needs "
                       f"{math.prod(shape) * dtype.itemsize} bytes, its range holds "
                       f"{offsets[1] - offsets[0]}")
    return dtype, tuple(shape), offsets[0], offsets[1]


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**62


def _json(text, path, what: str):
    """JSON without duplicate keys; malformed or too deeply nested text is a damaged file."""
    def unique(pairs):
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            raise ValueError(f"duplicate key {next(k for k in keys if keys.count(k) > 1)!r}")
        return dict(pairs)

    try:
        return json.loads(text, object_pairs_hook=unique)
    except RecursionError:
        raise _damaged(path, f"its {what} nests too deeply") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise _damaged(path, f"malformed {what}: {exc}") from None
