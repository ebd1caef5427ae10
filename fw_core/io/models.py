"""Model folders: ``model.save(folder)`` and ``fw.Model.load(folder)``.

A folder holds numbered versions and a pointer to the current one::

    classifier/
      CURRENT                 "v000003 sha256:<digest of v000003/model.json>"
      v000003/
        model.json            architecture, loss, optimizer, metrics, epoch, random state
        tensors.safetensors   the module's state dict
        optimizer.safetensors the optimizer's state dict (when compiled with one)

A save fills a staging folder, flushes it, renames it to the next version, then replaces
``CURRENT`` in one rename, and only then deletes older versions: a crash at any instant leaves
the old or the new checkpoint loadable. Saves to one folder hold a lock on it, so two processes
never interleave. Everything loaded is verified: the pointer's digest covers ``model.json``,
which records the checksum of each tensor file, which covers every byte of it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from pathlib import Path

from ..errors import CheckpointError, StateDictError
from . import atomic, files
from .config import Encoder, Resolver, build
from .safetensors_format import parse_json

FORMAT_VERSION = 2
POINTER = "CURRENT"
MODEL_JSON = "model.json"
TENSORS, OPTIMIZER = "tensors.safetensors", "optimizer.safetensors"
_VERSION = re.compile(r"^v(\d{6,})$")
_POINTER_TEXT = re.compile(r"^(v\d{6,}) sha256:([0-9a-f]{64})\n$")
#: what fw's first model format put in the folder itself (pickles among them)
_FIRST_FORMAT = ("architecture.pkl", "loss.pkl", MODEL_JSON, TENSORS, OPTIMIZER)


def save_model(model, directory) -> None:
    """Write ``directory``: the module, optimizer, loss, metrics, epoch and random state of a
    Model, replacing what is there atomically.

    Raises:
        CheckpointError: something in the model cannot be described as data (nothing is
            written then), the folder holds files that are not an fw checkpoint, or it cannot
            be written (the previous checkpoint stays loadable).
    """
    from ..random import get_rng_state

    directory = Path(directory)
    meta = _describe(model)
    meta["rng"] = get_rng_state()
    contents = {TENSORS: model.module.state_dict()}
    if model.optimizer is not None:
        contents[OPTIMIZER] = model.optimizer.state_dict()
    with atomic.os_errors_as_checkpoint_errors(directory):
        directory.mkdir(parents=True, exist_ok=True)
        with _locked(directory):
            _check_ours(directory)
            _write_version(directory, meta, contents)


def _write_version(directory: Path, meta: dict, contents: dict) -> None:
    for leftover in atomic.leftovers(directory):
        atomic.remove(leftover)
    current = _current(directory)
    version = f"v{max(_versions(directory), default=0) + 1:06d}"
    staging = atomic.temp_beside(directory / version)
    try:
        staging.mkdir()
        meta["files"] = {}
        for name, value in contents.items():
            with open(staging / name, "xb") as file:
                meta["files"][name] = files.dump(value, file)
                file.flush()
                os.fsync(file.fileno())
        text = (json.dumps(meta, indent=1) + "\n").encode()
        with open(staging / MODEL_JSON, "xb") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        atomic.fsync_folder(staging)
        os.rename(staging, directory / version)
    except BaseException:
        atomic.remove(staging)
        raise
    atomic.fsync_folder(directory)
    pointer = f"{version} sha256:{hashlib.sha256(text).hexdigest()}\n".encode()
    atomic.write_file(directory / POINTER, lambda file: file.write(pointer))
    for old in _versions(directory):
        if old != int(version[1:]):
            atomic.remove(directory / f"v{old:06d}")
    if current is None:
        for name in _FIRST_FORMAT:
            atomic.remove(directory / name)
    atomic.fsync_folder(directory)


def _describe(model) -> dict:
    """Everything of a Model except tensors, as JSON; raises before anything is written."""
    from .. import __version__

    encoder = Encoder()
    meta = {"format": FORMAT_VERSION, "fw_version": __version__, "epoch": model.epoch,
            "architecture": encoder.root(model.module)}
    loss = getattr(model, "_loss_arg", None)
    if loss is not None:
        meta["loss"] = _object_config(loss, encoder, "loss")
    if model.optimizer is not None:
        names = {id(p): name for name, p in model.module.named_parameters()}
        groups = []
        for group in model.optimizer.param_groups:
            missing = [p for p in group["params"] if id(p) not in names]
            if missing:
                raise CheckpointError(
                    f"cannot save the model: its {type(model.optimizer).__name__} updates "
                    f"{len(missing)} tensor(s) that are not parameters of the module",
                    hint="build the optimizer from model.module.parameters()")
            groups.append([names[id(p)] for p in group["params"]])
        meta["optimizer"] = {"class": encoder.name(type(model.optimizer), "optimizer"),
                             "groups": groups}
    meta["metrics"] = [_object_config(m, encoder, "metric") for m in model.metrics]
    meta["compile"] = model._compile_config
    step = model._step_state()
    if step is not None:
        meta["train_step"] = step
    return meta


def _object_config(obj, encoder: Encoder, what: str):
    """A loss or metric: its name when fw knows it by one, else its class or function."""
    from ..nn import Module
    from ..training.metrics import Metric
    from ..training.metrics import get as metric_by_name

    if isinstance(obj, str):
        return obj
    if isinstance(obj, Module):
        return {"module": encoder.module(obj)}
    if isinstance(obj, Metric):
        with contextlib.suppress(Exception):
            if type(metric_by_name(obj.name)) is type(obj):
                return obj.name
        return {"metric": encoder.name(type(obj), what)}
    return {"function": encoder.name(obj, what)}


# -- the folder ----------------------------------------------------------------------------------
@contextlib.contextmanager
def _locked(directory: Path):
    """Hold an exclusive lock on the folder (released by the OS if the process dies)."""
    try:
        import fcntl
    except ImportError:  # no advisory locks on this platform
        yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _versions(directory: Path) -> list[int]:
    return sorted(int(m[1]) for m in map(_VERSION.match, os.listdir(directory)) if m)


def _check_ours(directory: Path) -> None:
    """Refuse to write into a folder that holds anything but fw checkpoint entries."""
    foreign = sorted(name for name in os.listdir(directory)
                     if name != POINTER and name not in _FIRST_FORMAT and not _VERSION.match(name)
                     and not name.endswith(atomic.SUFFIX))
    if foreign:
        shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
        raise CheckpointError(f"cannot save the model to {directory}: the folder holds files "
                              f"that are not an fw checkpoint ({shown})",
                              hint="save to a new or empty folder (model.save replaces only "
                              "what it wrote itself)")


def _current(directory: Path) -> tuple[str, str] | None:
    """The (version, digest) ``CURRENT`` names, or None when there is no pointer."""
    pointer = directory / POINTER
    try:
        text = pointer.read_bytes()
    except FileNotFoundError:
        return None
    match = _POINTER_TEXT.match(text.decode("ascii", "replace"))
    if match is None:
        raise CheckpointError(f"{pointer} is damaged (it does not name a version and a digest)",
                              hint="restore the folder from a backup, or save the model again")
    return match[1], match[2]


def stale(path) -> list[Path]:
    """Leftovers of killed saves to ``path`` (a file of ``fw.save`` or a model folder): their
    temporary files and staging folders, and versions of a model folder that no pointer
    names. The next save to the same path removes them."""
    path = Path(path)
    found = atomic.leftovers(path.parent, path.name)
    if path.is_dir():
        found += atomic.leftovers(path)
        with contextlib.suppress(CheckpointError, OSError):
            current = _current(path)
            if current is not None and not _save_running(path):
                found += [path / f"v{v:06d}" for v in _versions(path)
                          if f"v{v:06d}" != current[0]]
    return sorted(found)


def _save_running(directory: Path) -> bool:
    try:
        import fcntl
    except ImportError:
        return False
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


# -- loading -------------------------------------------------------------------------------------
def load_model(directory, custom_objects=None):
    """Rebuild a Model saved by :func:`save_model`: module, weights, optimizer state, loss,
    metrics, epoch, and fw's random state.

    Classes and functions are found among fw's own, those registered with
    ``@fw.serializable``, and ``custom_objects`` (a dict of name -> class or function); nothing
    a folder names is ever imported.

    Raises:
        CheckpointError: the folder is missing, incomplete, damaged, of another format, or
            names a class that is not available.
    """
    from ..random import set_rng_state

    directory = Path(directory)
    version_dir, meta = _read_meta(directory)
    loaded = {}
    for name, checksum in meta["files"].items():
        value, actual = files.read(version_dir / name)
        if actual != checksum:
            raise CheckpointError(f"{version_dir / name} is not the file this checkpoint saved "
                                  "(its checksum differs from the one in model.json)",
                                  hint="copy the whole version folder together, or save again")
        loaded[name] = value
    if TENSORS not in loaded:
        raise _damaged(version_dir, f"model.json lists no {TENSORS}")
    resolver = Resolver(custom_objects)
    module = build(meta["architecture"], resolver)
    try:
        module.load_state_dict(loaded[TENSORS])
    except StateDictError as exc:
        raise _damaged(version_dir, f"the weights do not fit the architecture: {exc.message}"
                       ) from None
    model = _compiled(module, meta, loaded.get(OPTIMIZER), resolver, version_dir)
    model.epoch = meta["epoch"]
    step = meta.get("train_step")
    if step is not None:
        if not (isinstance(step, dict) and all(isinstance(step.get(k), dict)
                                               for k in ("calls", "fusion"))):
            raise _damaged(version_dir, "its training step's state is malformed")
        model._restored_step = step
    try:
        set_rng_state(meta["rng"])
    except (KeyError, TypeError, ValueError) as exc:
        raise _damaged(version_dir, f"its random state is malformed ({exc})") from None
    return model


def _read_meta(directory: Path) -> tuple[Path, dict]:
    if not directory.is_dir():
        raise CheckpointError(f"no model checkpoint at {directory}",
                              hint="check the path (model.save wrote a folder there)")
    current = _current(directory)
    if current is None:
        if (directory / "architecture.pkl").exists() or (directory / "loss.pkl").exists():
            raise CheckpointError(
                f"{directory} was saved by an earlier fw that stored pickles; fw never loads "
                "pickles, because loading one can run any code",
                hint="rebuild the model in code and save it again with this fw")
        if not (directory / MODEL_JSON).exists():
            interrupted = atomic.leftovers(directory)
            raise CheckpointError(
                f"{directory} holds no complete model checkpoint" + (
                    " (a save was interrupted before its first version was complete)"
                    if interrupted else ""),
                hint="point Model.load at a folder written by model.save(...)")
        version_dir, digest = directory, None  # a version folder given directly
    else:
        version_dir, digest = directory / current[0], current[1]
    try:
        text = (version_dir / MODEL_JSON).read_bytes()
    except FileNotFoundError:
        raise _damaged(version_dir, f"{MODEL_JSON} is missing") from None
    if digest is not None and hashlib.sha256(text).hexdigest() != digest:
        raise _damaged(version_dir, f"{MODEL_JSON} differs from the digest in {POINTER}")
    meta = parse_json(text, lambda what: _damaged(version_dir, f"{MODEL_JSON}: {what}"))
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_VERSION:
        found = meta.get("format") if isinstance(meta, dict) else None
        raise CheckpointError(f"{version_dir / MODEL_JSON} has model format {found!r}; this fw "
                              f"reads format {FORMAT_VERSION}",
                              hint="load it with the fw version that saved it, or save again")
    needed = {"architecture": dict, "files": dict, "epoch": int, "metrics": list}
    for key, kind in needed.items():
        if not isinstance(meta.get(key), kind):
            raise _damaged(version_dir, f"{MODEL_JSON} lacks a valid {key!r}")
    if not all(isinstance(v, str) and k in (TENSORS, OPTIMIZER) for k, v in meta["files"].items()):
        raise _damaged(version_dir, f"{MODEL_JSON} lists unexpected files")
    return version_dir, meta


def _compiled(module, meta: dict, optimizer_state, resolver: Resolver, version_dir: Path):
    from ..optim import Optimizer
    from ..training.model import Model

    model = Model(module)
    loss = meta.get("loss")
    if loss is None:
        return model
    optimizer = None
    spec = meta.get("optimizer")
    if spec is not None:
        if optimizer_state is None or not isinstance(spec, dict):
            raise _damaged(version_dir, "the optimizer's description or state is missing")
        cls = resolver.find(spec.get("class"), "optimizer class", Optimizer)
        optimizer = _optimizer(cls, module, spec.get("groups"), optimizer_state, version_dir)
    model.compile(optimizer=optimizer, loss=_object(loss, resolver, version_dir),
                  metrics=[_object(m, resolver, version_dir) for m in meta["metrics"]])
    return model


def _optimizer(cls, module, groups, state, version_dir: Path):
    import inspect

    params = dict(module.named_parameters())
    saved = state.get("param_groups") if isinstance(state, dict) else None
    if not (isinstance(groups, list) and isinstance(saved, list) and len(saved) == len(groups)
            and all(isinstance(g, list) and all(n in params for n in g) for g in groups)):
        raise _damaged(version_dir, "the optimizer's parameter groups do not fit the module")
    accepted = inspect.signature(cls.__init__).parameters
    built = []
    for names, hyper in zip(groups, saved):
        if not isinstance(hyper, dict):
            raise _damaged(version_dir, "a parameter group of the optimizer is malformed")
        settings = {k: tuple(v) if isinstance(v, list) else v for k, v in hyper.items()
                    if k in accepted and k != "params"}
        built.append({"params": [params[n] for n in names], **settings})
    try:
        optimizer = cls(built)
        optimizer.load_state_dict(state)
    except CheckpointError:
        raise
    except Exception as exc:
        raise _damaged(version_dir, f"the optimizer cannot be rebuilt: {exc}") from None
    return optimizer


def _object(spec, resolver: Resolver, version_dir: Path):
    """A loss or metric from :func:`_object_config`'s description."""
    from ..nn import Module
    from ..training.metrics import Metric

    if isinstance(spec, str):
        return spec
    if isinstance(spec, dict) and len(spec) == 1:
        ((kind, value),) = spec.items()
        if kind == "module":
            return build(value, resolver)
        if kind == "metric":
            return resolver.find(value, "metric class", Metric)()
        if kind == "function":
            found = resolver.find(value, "loss or metric function")
            if callable(found) and not (isinstance(found, type) and issubclass(found, Module)):
                return found
    raise _damaged(version_dir, f"a loss or metric is described by {spec!r}")


def _damaged(folder: Path, what: str) -> CheckpointError:
    return CheckpointError(f"the model checkpoint in {folder} is damaged ({what})",
                           hint="restore the folder from a backup, or save the model again")
