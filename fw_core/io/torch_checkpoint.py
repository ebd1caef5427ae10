"""PyTorch checkpoints (the files ``torch.save`` writes), read without torch and without
running code.

``torch.save`` writes one of two layouts, and :func:`kind` tells them apart by their first bytes:

- **zip** (PyTorch >= 1.6): one top folder holding ``data.pkl`` (the pickled object),
  ``data/KEY`` (the bytes of each storage), ``byteorder`` ("little" or "big") and version
  records;
- **legacy** (earlier PyTorch, or ``_use_new_zipfile_serialization=False``): pickles in a row
  (a magic number, protocol 1001, system information, the object, the list of storage keys),
  then each storage as an 8-byte element count and its little-endian bytes.

The pickles go through :mod:`.torch_pickle`, which admits only tensors, storages, dtypes and
plain containers. Each storage becomes one NumPy array and each tensor a strided view of it, so
tensors that shared a storage in torch share memory in fw too; tensors come back as fw tensors
(Parameters as fw Parameters) on the device ``map_location`` names. PyTorch's first, tar-based
format (which ``torch.load(weights_only=True)`` refuses too) and TorchScript archives are
refused with what to do.
"""

from __future__ import annotations

import io
import struct
import warnings
import zipfile
import zlib
from collections import Counter

import numpy as np

from .. import dtypes as _dt
from ..errors import CheckpointError
from . import torch_pickle
from .locations import mapped
from .torch_pickle import UNNAMED, Storage, StorageType, TensorRecord, TorchDType, damaged

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
_MAGIC_PICKLED = b"\x8a\x0a" + MAGIC_NUMBER.to_bytes(10, "little")  # LONG1, 10 bytes
#: how many leading bytes :func:`kind` looks at
HEAD = 512


def kind(head: bytes) -> str | None:
    """"zip", "legacy" or "tar" for the first bytes of a PyTorch checkpoint, else None."""
    if head[8:9] == b"{":  # a safetensors header, whatever its length's bytes spell
        return None
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    if head[257:262] == b"ustar":
        return "tar"
    if head[:1] == b"\x80" and _MAGIC_PICKLED in head[:32]:
        return "legacy"
    return None


def read(file, name: str, layout: str, resolve, options: dict):
    """The object a PyTorch checkpoint of ``layout`` (from :func:`kind`) holds, read from the
    seekable binary ``file`` (``name`` says which file in messages), with its tensors on
    ``resolve(saved_location)``; ``options`` go to the unpickler (``encoding``, ``errors``).

    Raises:
        CheckpointError: the file is damaged or truncated, names a global fw does not admit,
            or holds a tensor fw cannot represent; each message says which and what to do.
    """
    try:
        if layout == "tar":
            raise CheckpointError(
                f"{name} is in PyTorch's first checkpoint format (a tar archive, from its "
                "earliest releases), which fw does not read (nor does "
                "torch.load(weights_only=True))",
                hint="load it with an old PyTorch and torch.save(obj) it again")
        reader = _Zip(file, name) if layout == "zip" else _Legacy(file, name)
        obj = reader.load(options)
    except CheckpointError as error:
        if error.message.startswith(UNNAMED):  # a message of torch_pickle's: name the file
            error.message = name + error.message[len(UNNAMED):]
            error.args = (error.message,)
        raise
    tensors = _Tensors(reader, resolve)
    value = mapped(obj, tensors)
    tensors.report(name)
    return value


#: what zipfile raises for a damaged archive (a compression method or encryption it lacks, a
#: broken stream, a wrong CRC, a header that points elsewhere)
_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError, OSError,
               EOFError, ValueError, OverflowError, struct.error, UnicodeDecodeError)


def _storage_id(saved_id, length: int):
    """The fields of a persistent id ``("storage", storage type, key, location, numel...)``."""
    if not (isinstance(saved_id, tuple) and len(saved_id) == length
            and saved_id[0] in ("storage", b"storage")):
        raise damaged(f"a storage reference {saved_id!r}")
    _, storage_type, key, location, numel = saved_id[:5]
    if isinstance(location, bytes):
        location = location.decode("ascii", "replace")
    if not (isinstance(storage_type, StorageType) and isinstance(key, str)
            and isinstance(location, str) and isinstance(numel, int) and numel >= 0):
        raise damaged(f"a storage reference {saved_id!r}")
    return storage_type.dtype, key, location, numel, saved_id[5:]


class _Zip:
    """The zip layout: storages are read from their records as the pickle names them."""

    def __init__(self, file, name: str):
        self.name, self.little = name, True
        self.bytes: dict[str, np.ndarray] = {}
        try:
            self.archive = zipfile.ZipFile(file)
            names = self.archive.namelist()
        except _ZIP_ERRORS as exc:
            raise damaged(f"a broken zip archive: {exc}") from None
        if any(n.endswith("/constants.pkl") for n in names):
            raise CheckpointError(
                f"{name} is a TorchScript archive (torch.jit.save), which holds code",
                hint="in PyTorch, torch.save(model.state_dict()) and load that into the "
                "same fw architecture")
        pickles = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
        if len(pickles) != 1:
            raise damaged(f"{len(pickles)} data.pkl records where there is one")
        self.prefix = pickles[0][: -len("data.pkl")]
        order = self._record(self.prefix + "byteorder") if (
            self.prefix + "byteorder") in names else b"little"
        if order not in (b"little", b"big"):
            raise damaged(f"byte order {order[:20]!r}")
        self.little = order == b"little"

    def _record(self, record: str, nbytes: int | None = None) -> bytes | np.ndarray:
        try:
            info = self.archive.getinfo(record)
            if info.compress_type != zipfile.ZIP_STORED:  # also keeps out zip bombs
                raise damaged(f"record {record} is compressed, and torch.save "
                               "stores every record as it is")
            if nbytes is None:
                return self.archive.read(info)
            if info.file_size != nbytes:
                raise damaged(f"record {record} holds {info.file_size} bytes, its "
                               f"storage needs {nbytes}")
            data = np.empty(nbytes, np.uint8)
            with self.archive.open(info) as member:
                if member.readinto(memoryview(data)) != nbytes or member.read(1):
                    raise damaged(f"record {record} ends early")
            return data
        except CheckpointError:
            raise
        except KeyError:
            raise damaged(f"record {record} is missing") from None
        except _ZIP_ERRORS as exc:
            raise damaged(f"record {record}: {exc}") from None

    def load(self, options: dict):
        data = self._record(self.prefix + "data.pkl")
        return torch_pickle.unpickle(io.BytesIO(data), self._storage, **options)

    def _storage(self, saved_id) -> Storage:
        dtype, key, location, numel, _ = _storage_id(saved_id, 5)
        if dtype.numpy is None:
            raise _no_numpy(dtype)
        nbytes = numel * dtype.itemsize
        if key not in self.bytes:
            self.bytes[key] = self._record(f"{self.prefix}data/{key}", nbytes)
        elif self.bytes[key].size != nbytes:
            raise damaged(f"storage {key} named with two sizes")
        return Storage(dtype, key, location, numel)


class _Legacy:
    """The legacy layout: storages are named by the pickle and their bytes follow it."""

    def __init__(self, file, name: str):
        self.file, self.name, self.little = file, name, True
        self.bytes: dict[str, np.ndarray] = {}
        self.roots: dict[str, Storage] = {}

    def load(self, options: dict):
        if torch_pickle.unpickle(self.file) != MAGIC_NUMBER:
            raise damaged("its magic number is wrong")
        if torch_pickle.unpickle(self.file) != PROTOCOL_VERSION:
            raise damaged("an unknown legacy protocol version")
        info = torch_pickle.unpickle(self.file)
        if not isinstance(info, dict):
            raise damaged("its system information is not a dict")
        self.little = info.get("little_endian", True) is not False
        obj = torch_pickle.unpickle(self.file, self._storage, **options)
        keys = torch_pickle.unpickle(self.file)
        if not (isinstance(keys, list) and all(k in self.roots for k in keys)):
            raise damaged("its list of storages names storages it does not use")
        for key in keys:
            self._read_bytes(self.roots[key])
        return obj

    def _read_bytes(self, root: Storage) -> None:
        head = self.file.read(8)
        if len(head) != 8 or struct.unpack("<q", head)[0] != root.numel:
            raise damaged(f"the bytes of storage {root.key} do not follow")
        nbytes, here = root.numel * root.dtype.itemsize, self.file.tell()
        if nbytes > self.file.seek(0, io.SEEK_END) - here:  # before allocating them
            raise damaged(f"the file ends inside storage {root.key}")
        self.file.seek(here)
        data = np.empty(nbytes, np.uint8)
        if self.file.readinto(memoryview(data)) != nbytes:
            raise damaged(f"the file ends inside storage {root.key}")
        self.bytes[root.key] = data

    def _storage(self, saved_id) -> Storage:
        dtype, key, location, numel, (view,) = _storage_id(saved_id, 6)
        if dtype.numpy is None:
            raise _no_numpy(dtype)
        root = self.roots.setdefault(key, Storage(dtype, key, location, numel))
        if root.dtype != dtype or root.numel != numel:
            raise damaged(f"storage {key} named with two dtypes or sizes")
        if view is None:
            return root
        if not (isinstance(view, tuple) and len(view) == 3 and all(
                isinstance(v, int) and v >= 0 for v in view[1:])
                and view[1] + view[2] <= numel):
            raise damaged(f"a storage view {view!r} of storage {key}")
        return Storage(dtype, str(view[0]), location, view[2], root=root, offset=view[1])


def _no_numpy(dtype: TorchDType) -> CheckpointError:
    return CheckpointError(
        f"{UNNAMED} holds a torch.{dtype.name} tensor, a dtype neither fw nor NumPy has",
        hint="in PyTorch, convert it first (tensor.float(), or .dequantize() for a quantized "
        "tensor) and save that")


class _Tensors:
    """The leaf function that turns the unpickler's records into arrays and fw tensors,
    once per record (a tensor named twice comes back as one tensor), counting what it had
    to change for :meth:`report`."""

    def __init__(self, reader, resolve):
        self.reader, self.resolve = reader, resolve
        self.made: dict[int, object] = {}
        self.typed: dict[tuple[str, str], np.ndarray] = {}
        self.widened = 0
        self.untensored: Counter = Counter()

    def __call__(self, value):
        if isinstance(value, TensorRecord):
            if id(value) not in self.made:
                self.made[id(value)] = (value, self._tensor(value))
            return self.made[id(value)][1]
        if isinstance(value, TorchDType):
            fw_dtype = _dt.BY_NUMPY.get(value.numpy) if not value.widened else None
            return fw_dtype if fw_dtype is not None else f"torch.{value.name}"
        if isinstance(value, Storage):
            return self._elements(value, value.dtype)
        if isinstance(value, StorageType):
            raise self._damaged("a storage class where a value belongs")
        return value

    def _damaged(self, what: str) -> CheckpointError:
        return damaged(what, self.reader.name)

    def _tensor(self, record: TensorRecord):
        array = self._view(record)
        fw_dtype = _dt.BY_NUMPY.get(array.dtype)
        self.widened += record.dtype.widened
        if fw_dtype is None:
            self.untensored[record.dtype.name] += 1
            return array
        from ..nn.parameter import Parameter
        from ..ops.creation import from_numpy

        tensor = from_numpy(array)
        device = self.resolve(record.storage.location)
        if device.type != "cpu":
            tensor = tensor.to(device)
        requires_grad = record.requires_grad and fw_dtype.is_floating_point
        if record.parameter:
            return Parameter(tensor, requires_grad=requires_grad)
        return tensor.requires_grad_(True) if requires_grad else tensor

    def _elements(self, storage: Storage, dtype: TorchDType) -> np.ndarray:
        """The 1-d array of a storage's elements read as ``dtype`` (shared by every tensor of
        it; a legacy view is a slice of its root's)."""
        root = storage.root or storage
        if root.key not in self.reader.bytes:
            raise self._damaged(f"storage {root.key} has no bytes in the file")
        whole = self._typed(root.key, dtype)
        start = storage.offset * root.dtype.itemsize // dtype.itemsize
        count = storage.numel * root.dtype.itemsize // dtype.itemsize
        return whole[start:start + count]

    def _typed(self, key: str, dtype: TorchDType) -> np.ndarray:
        if (key, dtype.name) in self.typed:
            return self.typed[key, dtype.name]
        raw = self.reader.bytes[key]
        stored = np.dtype("<u2" if dtype.widened else dtype.numpy).newbyteorder(
            "<" if self.reader.little else ">")
        if raw.size % stored.itemsize:
            raise self._damaged(f"storage {key} of {raw.size} bytes read as {dtype.name}")
        values = raw.view(stored)
        if dtype.widened:  # bfloat16 is the top half of a float32: exact
            values = (values.astype(np.uint32) << 16).view(np.float32)
        elif not stored.isnative:
            values = values.astype(stored.newbyteorder("="))
        if values.dtype == np.bool_ and values.size and raw.max() > 1:
            raise self._damaged(f"bool storage {key} holds bytes other than 0 and 1")
        self.typed[key, dtype.name] = values
        return values

    def _view(self, record: TensorRecord) -> np.ndarray:
        if record.dtype.numpy is None:
            raise _no_numpy(record.dtype)
        elements = self._elements(record.storage, record.dtype)
        size, stride, offset = record.size, record.stride, record.offset
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        if 0 not in size and last >= elements.size:
            raise self._damaged(f"a tensor of size {size}, stride {stride} and offset {offset} "
                                f"reaches past its storage of {elements.size} elements")
        if 0 in size:
            return np.empty(size, elements.dtype)
        item = elements.itemsize
        return np.lib.stride_tricks.as_strided(elements[offset:], shape=size,
                                               strides=[s * item for s in stride])

    def report(self, name: str) -> None:
        """One warning for what could not come back exactly as torch had it."""
        notes = []
        if self.widened:
            notes.append(f"{self.widened} bfloat16 tensor(s) became float32 (exactly: every "
                         "bfloat16 value is a float32; fw has no bfloat16)")
        if self.untensored:
            kinds = ", ".join(f"{n} {dtype}" for dtype, n in sorted(self.untensored.items()))
            notes.append(f"tensors of dtypes fw lacks came back as NumPy arrays ({kinds})")
        if notes:
            warnings.warn(f"fw.load({name}): " + "; ".join(notes), stacklevel=4)
