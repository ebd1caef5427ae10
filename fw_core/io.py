"""Saving and loading: ``fw.save``/``fw.load`` for state dicts, and whole-model checkpoints.

Tensors are stored in safetensors files (arrays made contiguous first: safetensors 0.8.0 writes
strided arrays wrongly), everything else as JSON inside the same file's metadata. Every write
goes to a temporary file (or folder) that is renamed into place, so an interrupted save never
leaves a half-written checkpoint; every read is verified and fails with a CheckpointError that
names the file and what to do.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import tempfile
from pathlib import Path

import numpy as np

from .errors import CheckpointError
from .tensor import Tensor

_STRUCTURE_KEY = "__fw_structure__"
_CHECKSUM_KEY = "__fw_sha256__"
FORMAT_VERSION = 1


# -- state dicts ---------------------------------------------------------------------------------
def _flatten(obj, arrays: dict, prefix: str = ""):
    """Replace tensors by references into ``arrays``; keep the rest as JSON-able values."""
    if isinstance(obj, Tensor):
        key = f"t{len(arrays)}"
        arrays[key] = np.ascontiguousarray(obj.detach().__array__())
        return {"__tensor__": key, "dtype": obj.dtype.name}
    if isinstance(obj, dict):
        if not all(isinstance(k, (str, int)) for k in obj):
            raise CheckpointError("fw.save: dictionary keys must be strings or integers",
                                  hint="convert other keys to strings first")
        return {"__dict__": [[k, _flatten(v, arrays)] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        return {"__list__" if isinstance(obj, list) else "__tuple__":
                [_flatten(v, arrays) for v in obj]}
    if isinstance(obj, np.ndarray):
        key = f"t{len(arrays)}"
        arrays[key] = np.ascontiguousarray(obj)
        return {"__ndarray__": key}
    if isinstance(obj, (np.integer, np.floating, np.bool_)):
        return obj.item()
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise CheckpointError(f"fw.save cannot store a {type(obj).__name__}",
                          hint="save tensors, arrays, numbers, strings and dicts/lists of them "
                          "(state_dict() gives exactly that)")


def _unflatten(obj, arrays: dict):
    from .ops.creation import from_numpy

    if isinstance(obj, dict):
        if "__tensor__" in obj:
            return from_numpy(np.array(arrays[obj["__tensor__"]]))
        if "__ndarray__" in obj:
            return np.array(arrays[obj["__ndarray__"]])
        if "__dict__" in obj:
            return {k: _unflatten(v, arrays) for k, v in obj["__dict__"]}
        if "__list__" in obj:
            return [_unflatten(v, arrays) for v in obj["__list__"]]
        if "__tuple__" in obj:
            return tuple(_unflatten(v, arrays) for v in obj["__tuple__"])
    return obj


def _digest(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).reshape(-1).view(np.uint8)).hexdigest()


def _atomic_write(path: Path, write) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def save(obj, path) -> None:
    """Save a state dict (or any nest of tensors, arrays, numbers, strings, dicts and lists)
    to one safetensors file, atomically."""
    from safetensors.numpy import save_file

    arrays: dict = {}
    structure = _flatten(obj, arrays)
    metadata = {_STRUCTURE_KEY: json.dumps({"format": FORMAT_VERSION, "value": structure}),
                _CHECKSUM_KEY: json.dumps({k: _digest(a) for k, a in arrays.items()})}
    _atomic_write(Path(path), lambda tmp: save_file(arrays, tmp, metadata=metadata))


def load(path):
    """Load what :func:`save` wrote (tensors come back on the CPU).

    Raises:
        CheckpointError: the file is missing, truncated, corrupt or not an fw file.
    """
    from safetensors import safe_open

    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"no checkpoint at {path}", hint="check the path (fw.save wrote "
                              "one file there)")
    try:
        with safe_open(str(path), framework="numpy") as f:
            metadata = f.metadata() or {}
            arrays = {k: f.get_tensor(k) for k in f.keys()}
    except Exception as exc:
        raise CheckpointError(f"{path} is not a readable checkpoint ({type(exc).__name__}: "
                              f"{exc})", hint="the file is truncated or corrupt: restore it from "
                              "a backup or save it again") from None
    if _CHECKSUM_KEY in metadata:
        expected = json.loads(metadata[_CHECKSUM_KEY])
        damaged = sorted(k for k, a in arrays.items() if expected.get(k) != _digest(a))
        if damaged:
            raise CheckpointError(f"{path} is corrupt: the values of {len(damaged)} tensor(s) do "
                                  "not match their checksums", hint="restore the file from a "
                                  "backup or save it again")
    if _STRUCTURE_KEY not in metadata:
        from .ops.creation import from_numpy

        return {k: from_numpy(v) for k, v in arrays.items()}  # a plain safetensors file
    try:
        structure = json.loads(metadata[_STRUCTURE_KEY])
        return _unflatten(structure["value"], arrays)
    except (KeyError, ValueError) as exc:
        raise CheckpointError(f"{path} has a damaged fw header ({exc})",
                              hint="save the checkpoint again") from None


# -- whole models --------------------------------------------------------------------------------
class _TensorPickler(pickle.Pickler):
    """Pickles a module's structure with every tensor replaced by a reference into a table."""

    def __init__(self, file, tensors: dict):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.tensors = tensors

    def persistent_id(self, obj):
        if isinstance(obj, Tensor):
            key = f"t{len(self.tensors)}"
            self.tensors[key] = obj
            return ("tensor", key, type(obj).__name__, bool(obj.requires_grad))
        return None


class _TensorUnpickler(pickle.Unpickler):
    def __init__(self, file, arrays: dict):
        super().__init__(file)
        self.arrays = arrays

    def persistent_load(self, pid):
        from .nn.parameter import Parameter
        from .ops.creation import from_numpy

        _, key, kind, requires_grad = pid
        t = from_numpy(np.array(self.arrays[key]))
        if kind == "Parameter":
            return Parameter(t, requires_grad=requires_grad)
        return t.requires_grad_(requires_grad) if requires_grad else t


def save_model(model, directory) -> None:
    """Write ``directory/`` with the module (architecture + tensors), optimizer state, epoch,
    compile settings and RNG state; replaces an existing checkpoint atomically."""
    import io as _io

    from . import __version__
    from .random import get_rng_state

    directory = Path(directory)
    tensors: dict = {}
    buffer = _io.BytesIO()
    try:
        _TensorPickler(buffer, tensors).dump(model.module)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise CheckpointError(f"cannot save the module's structure: {exc}",
                              hint="define the module class at module level (not inside a "
                              "function) so it can be imported when loading") from None
    meta = {
        "format": FORMAT_VERSION, "fw_version": __version__, "epoch": model.epoch,
        "compile": model._compile_config, "rng": get_rng_state(),
        "optimizer_class": type(model.optimizer).__module__ + ":" +
        type(model.optimizer).__name__ if model.optimizer is not None else None,
    }
    loss = model.loss_fn
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    try:
        (staging / "architecture.pkl").write_bytes(buffer.getvalue())
        save({k: v for k, v in tensors.items()}, staging / "tensors.safetensors")
        if model.optimizer is not None:
            save(model.optimizer.state_dict(), staging / "optimizer.safetensors")
        (staging / "loss.pkl").write_bytes(pickle.dumps(loss))
        (staging / "model.json").write_text(json.dumps(meta, indent=1))
        old = None
        if directory.exists():
            old = directory.with_name(f".{directory.name}.old")
            if old.exists():
                shutil.rmtree(old)
            os.replace(directory, old)
        os.replace(staging, directory)
        if old is not None:
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def load_model(directory):
    """Rebuild a Model saved by :func:`save_model`, with optimizer state and RNG restored."""
    import importlib
    import io as _io

    from .random import set_rng_state
    from .training.model import Model

    directory = Path(directory)
    needed = ["model.json", "architecture.pkl", "tensors.safetensors", "loss.pkl"]
    missing = [n for n in needed if not (directory / n).exists()]
    if missing:
        raise CheckpointError(f"{directory} is not a complete fw model checkpoint (missing "
                              f"{', '.join(missing)})", hint="point Model.load at a folder "
                              "written by model.save(...)")
    try:
        meta = json.loads((directory / "model.json").read_text())
    except ValueError as exc:
        raise CheckpointError(f"{directory / 'model.json'} is corrupt: {exc}",
                              hint="save the model again") from None
    arrays = {k: v.__array__() for k, v in load(directory / "tensors.safetensors").items()}
    try:
        module = _TensorUnpickler(_io.BytesIO((directory / "architecture.pkl").read_bytes()),
                                  arrays).load()
        loss = pickle.loads((directory / "loss.pkl").read_bytes())
    except (pickle.UnpicklingError, EOFError, KeyError) as exc:
        raise CheckpointError(f"{directory} has a damaged architecture file ({exc})",
                              hint="save the model again") from None
    model = Model(module)
    model.epoch = meta["epoch"]
    if meta.get("optimizer_class"):
        module_name, cls_name = meta["optimizer_class"].split(":")
        state = load(directory / "optimizer.safetensors")
        cls = getattr(importlib.import_module(module_name), cls_name)
        hyper = {k: v for k, v in state["param_groups"][0].items() if k != "params"}
        optimizer = cls(module.parameters(), **_constructor_args(cls, hyper))
        optimizer.load_state_dict(state)
        model.compile(optimizer=optimizer, loss=loss, metrics=meta["compile"].get("metrics", []))
    set_rng_state(meta["rng"])
    return model


def _constructor_args(cls, hyper: dict) -> dict:
    import inspect

    accepted = inspect.signature(cls.__init__).parameters
    return {k: (tuple(v) if isinstance(v, list) else v) for k, v in hyper.items()
            if k in accepted}
