"""Cheap imports for plugin packages: public names resolved on first use, inspectors whose
callbacks import their implementation on the first call.

A tool plugin (fw_debugger, fw_viz) is loaded at ``import fw_core``; these keep that load from
importing the plugin's heavy modules (matplotlib, tensorboardX, ...) until something is used.
"""

from __future__ import annotations

import importlib
import sys
import types

from .records import Inspector


class _LazyPackage(types.ModuleType):
    """A package whose public names may share a submodule's name (``record`` in ``record.py``):
    importing that submodule would bind it over the public function; the function is kept."""

    def __setattr__(self, name: str, value) -> None:
        api = self.__dict__.get("_lazy_api", {})
        if api.get(name) == name and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


def lazy_api(package: str, api: dict[str, str]) -> None:
    """Make the names of ``api`` (public name -> submodule of ``package`` defining it)
    attributes of ``package`` that import their submodule on first use. Call it at the end of
    the package's ``__init__``: ``lazy_api(__name__, {"record": "record", ...})``."""
    module = sys.modules[package]

    def __getattr__(name: str):
        try:
            submodule = api[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(f"{package}.{submodule}"), name)
        setattr(module, name, value)  # later look-ups skip this function
        return value

    module._lazy_api = api
    module.__getattr__ = __getattr__
    module.__dir__ = lambda: sorted(set(vars(module)) | set(api))
    module.__all__ = sorted(api)
    module.__class__ = _LazyPackage


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
