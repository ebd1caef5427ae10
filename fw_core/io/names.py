"""Names of classes and functions in checkpoints, and finding them again without imports.

A checkpoint names fw's own objects by their public path (``fw.nn.Linear``), registered ones
by the name given to :func:`serializable`, and others by ``module.qualname``. Names resolve
only through fw's own objects, registered ones and the ``custom_objects`` a caller passes:
nothing named in a file is ever imported, so loading cannot run code from outside the program
that loads it.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping

from ..errors import CheckpointError

_registered: dict[str, object] = {}
_builtin: dict[str, object] = {}
_names: dict[int, str] = {}  # id(object) -> name, for fw's own objects and registered ones


def serializable(obj=None, *, name: str | None = None):
    """Register a class or function so that ``model.save`` can name it and ``fw.Model.load``
    can find it again; use as ``@fw.serializable`` or ``@fw.serializable(name="my.Net")``.

    The name defaults to ``module.qualname``. Registration happens when the defining module is
    imported, so import it before loading (fw itself never imports what a checkpoint names).
    """
    def register(target):
        key = name or f"{target.__module__}.{target.__qualname__}"
        if "<" in key:
            raise CheckpointError(f"fw.serializable: {target!r} has no stable name",
                                  hint="define it at module level, or pass name=...")
        if key in _registered and _registered[key] is not target:
            raise CheckpointError(f"fw.serializable: the name {key!r} is already registered "
                                  f"for {_registered[key]!r}", hint="pass another name=...")
        _registered[key] = target
        _names[id(target)] = key
        return target

    return register if obj is None else register(obj)


def _fw_objects() -> dict[str, object]:
    """fw's own classes and functions under their public names (built on first use)."""
    if not _builtin:
        import fw_core as fw

        from ..nn import Module
        from ..optim import Optimizer
        from ..training.metrics import Metric

        tables = [("fw.nn", fw.nn, Module), ("fw.optim", fw.optim, Optimizer),
                  ("fw.metrics", fw.metrics, Metric)]
        for prefix, namespace, base in tables:
            for attr in dir(namespace):
                value = getattr(namespace, attr)
                if isinstance(value, type) and issubclass(value, base):
                    _builtin[f"{prefix}.{attr}"] = value
        for prefix, namespace in (("fw.nn.functional", fw.nn.functional), ("fw", fw)):
            for attr in getattr(namespace, "__all__", None) or dir(namespace):
                value = getattr(namespace, attr, None)
                if inspect.isfunction(value) and not attr.startswith("_"):
                    _builtin.setdefault(f"{prefix}.{attr}", value)
        for key, value in _builtin.items():
            _names.setdefault(id(value), key)
    return _builtin


def name_of(obj, what: str) -> str:
    """The name a checkpoint stores for a class or function."""
    _fw_objects()
    known = _names.get(id(obj))
    if known is not None:
        return known
    qualname = getattr(obj, "__qualname__", None)
    module = getattr(obj, "__module__", None)
    if not (isinstance(obj, type) or inspect.isfunction(obj)) or not qualname or not module \
            or "<" in qualname:
        raise CheckpointError(f"cannot save {what} {obj!r}: it has no name to be found by",
                              hint="use a class or a function defined at module level (a def, "
                              "not a lambda or a function inside a function), or one of fw's")
    return f"{module}.{qualname}"


class Resolver:
    """Finds what a checkpoint names: the caller's ``custom_objects`` (by full or short name),
    then registered objects, then fw's own."""

    def __init__(self, custom_objects: Mapping | None = None):
        self.custom = dict(custom_objects or {})

    def find(self, name, what: str, kind: type | None = None):
        if not isinstance(name, str):
            raise CheckpointError(f"the checkpoint's {what} is named by {name!r}, not a string",
                                  hint="the model folder is damaged: save the model again")
        short = name.rsplit(".", 1)[-1]
        for table in (self.custom, _registered, _fw_objects()):
            found = table.get(name, table.get(short) if table is self.custom else None)
            if found is not None:
                break
        else:
            raise CheckpointError(
                f"the checkpoint's {what} is {name!r}, which is not one of fw's and was not "
                "registered (fw never imports what a checkpoint names)",
                hint=f"pass custom_objects={{{short!r}: {short}}} to fw.Model.load, or decorate "
                f"{short} with @fw.serializable and import its module before loading")
        if kind is not None and not (isinstance(found, type) and issubclass(found, kind)):
            raise CheckpointError(f"the checkpoint's {what} {name!r} is {found!r}, not a "
                                  f"{kind.__name__}", hint="pass the right class in "
                                  "custom_objects, or save the model again")
        return found


