"""Cheap imports: public names and subpackages resolved on first use, inspectors whose
callbacks import their implementation on the first call.

A tool plugin (fw_debugger, fw_viz) is loaded at ``import fw_core``; these keep that load from
importing the plugin's heavy modules (matplotlib, tensorboardX, ...) until something is used,
and keep ``import fw_core`` itself to the tensor library (``fw.nn`` imports fw_core.nn).
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable

from .records import Inspector


class _LazyPackage(types.ModuleType):
    """A package whose public names may share a submodule's name (``record`` in ``record.py``):
    importing that submodule would bind it over the public function; the function is kept."""

    def __setattr__(self, name: str, value) -> None:
        api = self.__dict__.get("_lazy_api", {})
        if api.get(name) == name and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


def lazy_api(package: str, api: dict[str, str], submodules: tuple[str, ...] = (),
             missing: Callable[[str], Exception] | None = None, export: bool = True) -> None:
    """Make the names of ``api`` (public name -> submodule of ``package`` defining it) and the
    ``submodules`` attributes of ``package`` that import their submodule on first use. Call it
    at the end of the package's ``__init__``: ``lazy_api(__name__, {"record": "record", ...})``.

    ``missing(name)`` is the exception for any other name (AttributeError by default);
    ``export`` makes ``api`` the package's ``__all__``."""
    module = sys.modules[package]
    lazy = set(api) | set(submodules)

    def __getattr__(name: str):
        if name in api:
            value = getattr(importlib.import_module(f"{package}.{api[name]}"), name)
        elif name in submodules:
            value = importlib.import_module(f"{package}.{name}")
        elif missing is None or name.startswith("__"):  # dunders: the import machinery probing
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        else:
            raise missing(name)
        setattr(module, name, value)  # later look-ups skip this function
        return value

    for name in api:  # a submodule imported already was bound over its namesake
        if isinstance(vars(module).get(name), types.ModuleType):
            delattr(module, name)
    module._lazy_api = api
    module.__getattr__ = __getattr__
    module.__dir__ = lambda: sorted(set(vars(module)) | lazy)
    if export:
        module.__all__ = sorted(api)
    module.__class__ = _LazyPackage


class _Later:
    """``module.name(*args)``, the module imported at the first call (see :func:`later`)."""

    def __init__(self, module: str, name: str):
        self.module, self.name, self.target = module, name, None

    def __call__(self, *args, **kwargs):
        target = self.target
        if target is None:
            target = self.target = getattr(importlib.import_module(self.module), self.name)
        return target(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<{self.module}.{self.name}, imported at the first call>"


def later(module: str, name: str) -> Callable:
    """A function calling ``module.name``, importing ``module`` at its first call: for a
    plugin's record (a fusion rule's ``generate``) whose implementation is costly to import."""
    return _Later(module, name)


class _Forward:
    """``fn(arg)`` calling ``<package>.<module>.INSPECTOR.<callback>(arg)``, importing the
    module on the first call (a missing callback does nothing)."""

    def __init__(self, module: str, callback: str):
        self.module = module
        self.callback = callback
        self.target = None

    def __call__(self, arg) -> None:
        target = self.target
        if target is None:
            inspector = importlib.import_module(self.module).INSPECTOR
            target = self.target = getattr(inspector, self.callback) or (lambda arg: None)
        target(arg)


def lazy_inspectors(package: str, modules: dict[str, str]) -> list[Inspector]:
    """Inactive inspector records, one per ``name -> submodule`` of ``modules``, whose callbacks
    forward to that submodule's ``INSPECTOR`` record, imported on the first call."""
    return [Inspector(name=name, on_op=_Forward(f"{package}.{module}", "on_op"),
                      on_backward=_Forward(f"{package}.{module}", "on_backward"))
            for name, module in modules.items()]
