"""The safetensors file format, written and read by fw itself, with one checksum over it all.

A file is an 8-byte little-endian header length, a JSON header (for each tensor its dtype,
shape and byte range; string metadata under ``__metadata__``) and the tensors' bytes, in
order. Other tools read fw's files as plain safetensors. fw adds, in the metadata, a SHA-256
of the *whole file* computed with the checksum's own 64 hex digits set to ``0``: any changed
bit — in the length, the header or the values — is detected. Reading validates every field
before it is used (dtypes, shapes, byte ranges that tile the data exactly, no duplicate keys),
so a damaged or crafted file raises CheckpointError and nothing else.

fw writes the format itself rather than through the safetensors package: that package
(0.8.0) writes strided arrays wrongly and turns 0-d arrays into 1-d ones, and a single pass
can hash while it writes.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import struct

import numpy as np

from .. import dtypes as _dt
from ..errors import CheckpointError

CHECKSUM_KEY = "__fw_sha256__"
_PLACEHOLDER = "0" * 64
_HEX64 = re.compile("[0-9a-f]{64}")
_MAX_HEADER = 100 * 2**20
_MAX_RANK = 64

DTYPES = {"BOOL": np.dtype(np.bool_), "U8": np.dtype("u1"), "I8": np.dtype("i1"),
          "U16": np.dtype("<u2"), "I16": np.dtype("<i2"), "F16": np.dtype("<f2"),
          "U32": np.dtype("<u4"), "I32": np.dtype("<i4"), "F32": np.dtype("<f4"),
          "U64": np.dtype("<u8"), "I64": np.dtype("<i8"), "F64": np.dtype("<f8"),
          "BF16": _dt.bfloat16.numpy}
_CODES = {(d.kind, d.itemsize): code for code, d in DTYPES.items()}


def code_of(dtype: np.dtype) -> str | None:
    """The safetensors dtype code of a NumPy dtype, or None when the format has none."""
    if dtype == _dt.bfloat16.numpy:  # ml_dtypes' kind is "V": not found by kind and size
        return "BF16"
    return _CODES.get((dtype.kind, dtype.itemsize)) if dtype.kind in "biuf" else None


def write(file, arrays: dict[str, np.ndarray], metadata: dict[str, str],
          checksum: bool = True) -> str | None:
    """Write ``arrays`` (C-contiguous, little-endian, dtypes with a code) and string
    ``metadata`` to the binary ``file``; returns the checksum written, if any."""
    header: dict = {}
    offset = 0
    for key, array in arrays.items():
        header[key] = {"dtype": code_of(array.dtype), "shape": list(array.shape),
                       "data_offsets": [offset, offset + array.nbytes]}
        offset += array.nbytes
    meta = dict(metadata)
    if checksum:
        meta[CHECKSUM_KEY] = _PLACEHOLDER
    header["__metadata__"] = meta
    text = json.dumps(header, separators=(",", ":"), allow_nan=False).encode()
    text += b" " * (-len(text) % 8)  # keep the tensors 8-byte aligned, as safetensors does
    prefix = struct.pack("<Q", len(text))
    digest = hashlib.sha256(prefix + text)
    start = file.tell()
    file.write(prefix + text)
    for array in arrays.values():
        data = _bytes_of(array)
        digest.update(data)
        file.write(data)
    if not checksum:
        return None
    hexdigest = digest.hexdigest()
    end = file.tell()
    file.seek(start + 8 + _checksum_at(text))
    file.write(hexdigest.encode())
    file.seek(end)
    return hexdigest


def _bytes_of(array: np.ndarray) -> memoryview:
    return memoryview(array.reshape(-1).view(np.uint8))


def _checksum_at(header: bytes) -> int:
    """Where the checksum's hex digits start in a header; exactly one place is accepted."""
    marker = f'"{CHECKSUM_KEY}":"'.encode()
    first = header.find(marker)
    if first < 0 or header.find(marker, first + 1) >= 0:
        return -1
    return first + len(marker)


def read(path) -> tuple[dict[str, np.ndarray], dict[str, str], str | None]:
    """The arrays, the metadata and the verified checksum of a safetensors file (None when its
    metadata holds no 64-digit checksum under ``__fw_sha256__``).

    Raises:
        CheckpointError: the file is not one complete, undamaged safetensors file, or its
            checksum does not match.
    """
    try:
        with open(path, "rb") as file:
            return read_open(file, os.fstat(file.fileno()).st_size, path)
    except CheckpointError:
        raise
    except OSError as exc:
        raise CheckpointError(f"cannot read {path}: {exc.strerror or exc}",
                              hint="check the path and its permissions") from exc


def read_open(file, size: int, path):
    """What :func:`read` returns, for the ``size`` bytes from an open binary file's position
    (``path`` names it in messages)."""
    def damaged(what: str) -> CheckpointError:
        return CheckpointError(f"{path} is not a readable checkpoint ({what})",
                               hint="the file is truncated or damaged: restore it from a backup "
                               "or save it again")

    if size < 8:
        raise damaged(f"{size} bytes, shorter than a header")
    (length,) = struct.unpack("<Q", file.read(8))
    if length < 2 or length > min(size - 8, _MAX_HEADER):
        raise damaged(f"a header length of {length} bytes in a file of {size} bytes")
    text = file.read(length)
    header = parse_json(text, damaged)
    if not isinstance(header, dict):
        raise damaged("the header is not a JSON object")
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise damaged("its metadata is not a map of strings")
    entries = sorted(((_entry(key, value, damaged), key) for key, value in header.items()),
                     key=lambda item: item[0][2])
    position = 0
    for (_, _, begin, end), key in entries:
        if begin != position:
            raise damaged(f"tensor {key!r} starts at byte {begin}, not {position}")
        position = end
    if position != size - 8 - length:
        raise damaged(f"the tensors take {position} bytes but {size - 8 - length} follow the "
                      "header")

    checksum = metadata.get(CHECKSUM_KEY)
    if checksum is not None and not _HEX64.fullmatch(checksum):
        checksum = None  # not fw's checksum: the caller decides what such a file is
    digest = None
    if checksum is not None:
        at = _checksum_at(text)
        if at < 0 or text[at:at + 64].decode("ascii", "replace") != checksum:
            raise damaged("its checksum field is malformed")
        digest = hashlib.sha256(struct.pack("<Q", length) + text[:at] + _PLACEHOLDER.encode()
                                + text[at + 64:])
    arrays = {}
    for (dtype, shape, begin, end), key in entries:
        array = np.empty(shape, dtype)
        view = array.reshape(-1).view(np.uint8)
        if file.readinto(view) != end - begin:
            raise damaged(f"the file ends inside tensor {key!r}")
        if digest is not None:
            digest.update(view)
        arrays[key] = array
    if digest is not None and digest.hexdigest() != checksum:
        raise CheckpointError(f"{path} is corrupt: its content does not match the checksum "
                              "written when it was saved", hint="a bit of the file changed "
                              "after saving: restore it from a backup or save it again")
    for key, array in arrays.items():
        if array.dtype == np.bool_ and array.size and array.view(np.uint8).max() > 1:
            raise damaged(f"bool tensor {key!r} holds bytes other than 0 and 1")
    return {key: arrays[key] for key in header}, metadata, checksum


def _entry(key: str, value, damaged) -> tuple[np.dtype, tuple, int, int]:
    if not isinstance(value, dict) or set(value) != {"dtype", "shape", "data_offsets"}:
        raise damaged(f"entry {key!r} is not a tensor description")
    dtype = DTYPES.get(value["dtype"]) if isinstance(value["dtype"], str) else None
    if dtype is None:
        raise damaged(f"tensor {key!r} has dtype {value['dtype']!r}, which fw cannot read "
                      f"(it reads {', '.join(DTYPES)})")
    shape, offsets = value["shape"], value["data_offsets"]
    if not (isinstance(shape, list) and len(shape) <= _MAX_RANK and all(
            _is_count(d) for d in shape)):
        raise damaged(f"tensor {key!r} has shape {shape!r}")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(
            _is_count(o) for o in offsets) and offsets[0] <= offsets[1]):
        raise damaged(f"tensor {key!r} has byte range {offsets!r}")
    if offsets[1] - offsets[0] != math.prod(shape) * dtype.itemsize:
        raise damaged(f"tensor {key!r} of shape {tuple(shape)} and dtype {value['dtype']} "
                      f"needs {math.prod(shape) * dtype.itemsize} bytes, its range holds "
                      f"{offsets[1] - offsets[0]}")
    return dtype, tuple(shape), offsets[0], offsets[1]


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**62


def parse_json(text: bytes | str, damaged):
    """JSON without duplicate keys; malformed or too deeply nested text raises ``damaged``."""
    def unique(pairs):
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            raise ValueError(f"duplicate key {next(k for k in keys if keys.count(k) > 1)!r}")
        return dict(pairs)

    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return json.loads(text, object_pairs_hook=unique)
    except RecursionError:
        raise damaged("its header nests too deeply") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise damaged(f"malformed header: {exc}") from None
