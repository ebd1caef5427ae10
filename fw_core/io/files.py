"""``fw.save`` / ``fw.load``: a nest of tensors, arrays and plain values in one checked file.

The file is a safetensors file (other tools read its tensors). fw's metadata holds the nest's
structure as JSON, with each tensor named by key, dtype and shape, the format version, and a
checksum over the whole file (:mod:`.safetensors_format`). Loading checks the checksum, the
format version, and every tensor against the structure, so a damaged file is refused and never
read as something else. Nothing is ever pickled: loading a file cannot run code.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import numpy as np

from .. import dtypes as _dt
from ..errors import CheckpointError
from ..tensor import Tensor
from . import locations, torch_arguments, torch_checkpoint
from . import safetensors_format as fmt
from .atomic import write_file

FORMAT_VERSION = 2
FORMAT_KEY = "__fw_format__"
STRUCTURE_KEY = "__fw_structure__"
_FW_KEYS = {FORMAT_KEY, STRUCTURE_KEY, fmt.CHECKSUM_KEY}
#: how deeply dicts and lists may nest (a deeper nest is a cycle or a crafted file)
MAX_DEPTH = 100
_CONTAINERS = ("__dict__", "__list__", "__tuple__")


def save(obj, f, pickle_module=None, pickle_protocol=None,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False,
         ) -> None:
    """Save a state dict (or any nest of tensors, arrays, numbers, strings, None, and dicts,
    lists and tuples of them) to one safetensors file: to a path atomically and durably, or
    to a binary file object open for writing (written in one ``write``, at its position).

    torch.save's other arguments are accepted where fw can honour them
    (:mod:`.torch_arguments`): the file is fw's, which ``fw.load`` reads, not a pickle.

    Raises:
        CheckpointError: ``obj`` holds something else (nothing is written then), or the
            destination cannot be written (the previous file stays as it was).
        UnsupportedError: ``pickle_module`` other than pickle, or
            ``_use_new_zipfile_serialization=False``.
    """
    torch_arguments.check_save(pickle_module, pickle_protocol, _use_new_zipfile_serialization)
    if hasattr(f, "write"):
        buffer = io.BytesIO()  # first: a value that cannot be saved writes nothing to f
        dump(obj, buffer)
        f.write(buffer.getvalue())
        return
    arrays, metadata = _encode(obj)  # first: a value that cannot be saved writes nothing
    write_file(Path(f), lambda file: fmt.write(file, arrays, metadata))


def dump(obj, file) -> str:
    """Write what :func:`save` writes to an open binary file; returns the file's checksum."""
    arrays, metadata = _encode(obj)
    return fmt.write(file, arrays, metadata)


def _encode(obj) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    arrays: dict[str, np.ndarray] = {}
    structure = _flatten(obj, arrays, 0)
    return arrays, {FORMAT_KEY: str(FORMAT_VERSION), STRUCTURE_KEY: json.dumps(structure)}


def load(f, map_location=None, pickle_module=None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args):
    """Load what :func:`save` wrote, the tensors of a plain safetensors file (as a dict), or
    a PyTorch checkpoint (``torch.save``'s ``.pt``/``.pth``, zip or legacy format: read by
    :mod:`.torch_checkpoint` without torch and without running code).

    Args:
        f: a path (str or os.PathLike) or a binary file object open for reading.
        map_location: where tensors go (:func:`.locations.resolver`): None puts them on the
            CPU, whatever device they were saved from; or a device ("cuda:0", an fw or torch
            device), a dict {saved location: device} (locations it does not name: the CPU),
            or a callable ``f(storage, location)`` as torch.load takes it.
        pickle_module, weights_only, mmap, pickle_load_args: torch.load's, accepted where fw
            can honour them (:mod:`.torch_arguments`); a file never runs code, even with
            ``weights_only=False``.

    Raises:
        CheckpointError: the file is missing, truncated, damaged, of an unknown format version,
            its content does not match its checksum or structure, or a PyTorch checkpoint
            names a Python global outside the tensors and plain values fw admits.
    """
    options = torch_arguments.check_load(pickle_module, pickle_load_args)
    resolve = locations.resolver(map_location)
    with _opened(f) as (file, name, size):
        head = file.read(torch_checkpoint.HEAD)
        file.seek(-len(head), os.SEEK_CUR)
        layout = torch_checkpoint.kind(head)
        if layout is not None:
            return torch_checkpoint.read(file, name, layout, resolve, options)
        value = _decoded(*fmt.read_open(file, size, name), name)[0]
    device = resolve("cpu")
    if device.type == "cpu":
        return value
    return locations.mapped(value, lambda v: v.to(device) if isinstance(v, Tensor) else v)


@contextlib.contextmanager
def _opened(f):
    """``(file, name, size)`` for a path or a binary file object: a seekable binary file
    at the data's start, its name for messages, and the bytes it holds from there."""
    if hasattr(f, "read"):
        name = str(getattr(f, "name", "<file object>"))
        file = f if f.seekable() else io.BytesIO(f.read())
        start = file.tell()
        size = file.seek(0, os.SEEK_END) - start
        file.seek(start)
        yield file, name, size
        return
    path = Path(f)
    _check_exists(path)
    try:
        file = open(path, "rb")  # closed by the with below, after the caller's block
    except OSError as exc:
        raise CheckpointError(f"cannot read {path}: {exc.strerror or exc}",
                              hint="check the path and its permissions") from exc
    with file:
        yield file, str(path), os.fstat(file.fileno()).st_size


def _check_exists(path: Path) -> None:
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}" + (" (it is a folder)" if path.is_dir()
                                                            else ""),
                              hint="check the path (fw.save wrote one file there; model "
                              "folders load with fw.Model.load)")


def read(path) -> tuple[object, str | None]:
    """What :func:`load` returns for a file fw wrote, and the file's checksum (None for plain
    safetensors)."""
    path = Path(path)
    _check_exists(path)
    return _decoded(*fmt.read(path), path)


def _decoded(arrays: dict, metadata: dict, checksum: str | None, path) -> tuple[object,
                                                                             str | None]:
    """The value and checksum of a safetensors file's arrays and metadata."""
    if not _FW_KEYS & metadata.keys():
        return _plain(arrays, path), None
    decoder = _Decoder(arrays, path)
    if metadata.keys() != _FW_KEYS:
        version = _first_format_version(metadata)
        if version is not None:
            raise decoder.damaged(f"it was written in fw's checkpoint format {version}, whose "
                                  "header had no checksum, so its content cannot be verified",
                                  hint="save it again from the model that produced it")
        missing = sorted(_FW_KEYS - metadata.keys())
        extra = sorted(metadata.keys() - _FW_KEYS)
        raise decoder.damaged("its fw metadata is incomplete (" + "; ".join(
            part for part in (f"missing {', '.join(missing)}" if missing else "",
                              f"unexpected {', '.join(extra)}" if extra else "") if part) + ")")
    if checksum is None:
        raise decoder.damaged("its checksum is malformed")
    version = metadata[FORMAT_KEY]
    if version != str(FORMAT_VERSION):
        raise CheckpointError(
            f"{path} has checkpoint format {version!r}; this fw reads format {FORMAT_VERSION}",
            hint="upgrade fw-core to the version that wrote it (pip install -U fw-core)"
            if version.isdigit() and int(version) > FORMAT_VERSION else
            "the file is damaged: restore it from a backup or save it again")
    structure = fmt.parse_json(metadata[STRUCTURE_KEY], decoder.damaged)
    value = decoder.value(structure, 0)
    unused = sorted(arrays.keys() - decoder.used)
    if unused:
        raise decoder.damaged(f"tensors {', '.join(unused)} belong to no entry")
    return value, checksum


def _first_format_version(metadata: dict) -> int | None:
    """1 for files of fw's first checkpoint format, else None."""
    try:
        structure = json.loads(metadata.get(STRUCTURE_KEY, ""))
    except ValueError:
        return None
    return 1 if isinstance(structure, dict) and structure.get("format") == 1 else None


def _plain(arrays: dict[str, np.ndarray], path: Path) -> dict:
    from ..ops.creation import from_numpy

    for key, array in arrays.items():
        if array.dtype not in _dt.BY_NUMPY:
            raise CheckpointError(f"{path}: tensor {key!r} has dtype {array.dtype}, which fw "
                                  "tensors do not have",
                                  hint="read it with safetensors.numpy.load_file and convert it "
                                  f"(fw's dtypes: {', '.join(d.name for d in _dt.ALL)})")
    return {key: from_numpy(array) for key, array in arrays.items()}


# -- the structure -------------------------------------------------------------------------------
def _flatten(obj, arrays: dict, depth: int):
    """``obj`` as JSON, with tensors and arrays moved into ``arrays`` and named by key."""
    if depth > MAX_DEPTH:
        raise CheckpointError(f"fw.save: the value nests more than {MAX_DEPTH} levels deep (or "
                              "contains itself)", hint="save a flatter structure")
    if isinstance(obj, Tensor):
        return _store(obj.detach().__array__(), arrays, "__tensor__", obj.dtype.name)
    if isinstance(obj, np.ndarray):
        return _store(obj, arrays, "__ndarray__", obj.dtype.name)
    if isinstance(obj, dict):
        for k in obj:
            if isinstance(k, bool) or not isinstance(k, (str, int)):
                raise CheckpointError(f"fw.save: dictionary key {k!r} is a {type(k).__name__}; "
                                      "keys must be strings or integers",
                                      hint="convert other keys to strings first")
        return {"__dict__": [[k, _flatten(v, arrays, depth + 1)] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        kind = "__list__" if isinstance(obj, list) else "__tuple__"
        return {kind: [_flatten(v, arrays, depth + 1) for v in obj]}
    if isinstance(obj, (np.integer, np.floating, np.bool_)):
        return obj.item()
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise CheckpointError(f"fw.save cannot store a {type(obj).__name__}",
                          hint="save tensors, arrays, numbers, strings, None and dicts/lists/"
                          "tuples of them (state_dict() gives exactly that)")


def _store(array: np.ndarray, arrays: dict, kind: str, dtype_name: str) -> dict:
    if fmt.code_of(array.dtype) is None:
        raise CheckpointError(f"fw.save cannot store an array of dtype {array.dtype}",
                              hint="convert it to a bool, integer or float dtype first")
    little = array.dtype.newbyteorder("<")
    if not array.flags.c_contiguous or array.dtype != little:
        array = np.array(array, dtype=little, order="C")  # keeps 0-d arrays 0-d
    key = f"t{len(arrays)}"
    arrays[key] = array
    return {kind: key, "dtype": dtype_name, "shape": list(array.shape)}


class _Decoder:
    """Rebuilds a value from its structure, checking every tensor against the file."""

    def __init__(self, arrays: dict, path: Path):
        self.arrays, self.path, self.used = arrays, path, set()

    def damaged(self, what: str, hint: str | None = None) -> CheckpointError:
        return CheckpointError(f"{self.path} has a damaged fw header ({what})",
                               hint=hint or "restore the file from a backup or save it again")

    def value(self, obj, depth: int):
        if depth > MAX_DEPTH:
            raise self.damaged(f"it nests more than {MAX_DEPTH} levels deep")
        if not isinstance(obj, dict):
            if isinstance(obj, list):
                raise self.damaged("a bare list in the structure")
            return obj
        if len(obj) == 1:
            ((kind, items),) = obj.items()
            if kind in _CONTAINERS and isinstance(items, list):
                return self._container(kind, items, depth)
        if obj.keys() == {"__tensor__", "dtype", "shape"}:
            from ..ops.creation import from_numpy

            return from_numpy(self._array(obj, "__tensor__", fw_dtype=True))
        if obj.keys() == {"__ndarray__", "dtype", "shape"}:
            return self._array(obj, "__ndarray__", fw_dtype=False)
        raise self.damaged(f"an unknown entry {sorted(obj)!r}")

    def _container(self, kind: str, items: list, depth: int):
        if kind == "__dict__":
            out = {}
            for pair in items:
                if not (isinstance(pair, list) and len(pair) == 2
                        and isinstance(pair[0], (str, int)) and not isinstance(pair[0], bool)):
                    raise self.damaged("a dictionary entry that is not a [key, value] pair")
                out[pair[0]] = self.value(pair[1], depth + 1)
            return out
        values = [self.value(v, depth + 1) for v in items]
        return values if kind == "__list__" else tuple(values)

    def _array(self, ref: dict, kind: str, fw_dtype: bool) -> np.ndarray:
        key = ref[kind]
        if not isinstance(key, str) or key not in self.arrays or key in self.used:
            raise self.damaged(f"entry {key!r} names no tensor of the file, or one already used")
        self.used.add(key)
        array = self.arrays[key]
        expected = ref["dtype"]
        if fw_dtype and array.dtype not in _dt.BY_NUMPY:
            raise self.damaged(f"tensor {key!r} has dtype {array.dtype}, not an fw dtype")
        if array.dtype.name != expected or list(array.shape) != ref["shape"]:
            raise self.damaged(f"tensor {key!r} is {array.dtype.name} {list(array.shape)} in the "
                               f"file but {expected} {ref['shape']} in the structure")
        return array
