"""The seam between fw's training loop and a distributed backend plugin (fw-mpi).

fw_core imports no communication library: a plugin registers a :class:`Backend` (from its
``fw_configure`` hook) naming, as ``"module:attribute"`` strings, the function that prepares a
distributed fit and the one that builds a launch command; they are imported only when a
distributed fit or ``fw run -n`` asks for them.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from .errors import PluginError

INSTALL = "pip install fw-mpi[mpich]"


@dataclass(frozen=True)
class Backend:
    """A distributed backend.

    Args:
        name: what it runs on ("mpi").
        fit: ``"module:function"`` of ``prepare_fit(model, loader, shuffle) -> DistributedFit``,
            the object ``Model.fit(distributed=True)`` trains through.
        launcher: ``"module:function"`` of ``command(ranks, program) -> list[str]``: the
            command line that starts ``program`` (a list: python, the script, its arguments)
            on ``ranks`` processes, which ``fw run -n`` executes.
    """

    name: str
    fit: str
    launcher: str


_backends: list[Backend] = []


def register(backend: Backend) -> None:
    """Make ``backend`` the one distributed training uses (the latest registered wins)."""
    if backend not in _backends:
        _backends.append(backend)


def unregister(backend: Backend) -> None:
    if backend in _backends:
        _backends.remove(backend)


def backend(what: str) -> Backend:
    """The registered backend, or a PluginError saying how to install one (``what`` names the
    feature that needs it)."""
    if not _backends:
        raise PluginError(f"{what} needs a distributed backend, and none is loaded",
                          hint=f"{INSTALL} (or remove fw_mpi from FW_DISABLE_PLUGINS / add it "
                               "to FW_PLUGINS)")
    return _backends[-1]


def resolve(target: str):
    """The object ``"module:attribute"`` names, imported now."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)
