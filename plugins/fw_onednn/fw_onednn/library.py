"""Find and load oneDNN's shared library, ``libdnnl.so.3``, from the ``onednn-cpu-gomp`` wheel.

The wheel installs the library as a data file, next to ``site-packages`` rather than inside it
(``<prefix>/lib/libdnnl.so.3`` in a virtualenv, ``~/.local/lib`` for ``pip install --user``), so
it is found through the wheel's own file list (its RECORD), wherever pip put it. It links the
system's GNU OpenMP runtime, ``libgomp.so.1``, which the wheel does not ship.

Anything that stops the library from loading is a :class:`~fw_core.errors.PluginError` raised at
import, naming the cause and the fix: the plugin manager then shows fw_onednn as failed and
fw_cpu serves every call.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import pathlib

from fw_core.errors import PluginError

DISTRIBUTION = "onednn-cpu-gomp"
SONAME = "libdnnl.so.3"
_REINSTALL = f"pip install --force-reinstall {DISTRIBUTION}==2023.2.0"


def find() -> pathlib.Path:
    """Where the installed ``onednn-cpu-gomp`` wheel put ``libdnnl.so.3``.

    Raises:
        PluginError: the wheel is not installed, or its file list has no such library.
    """
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise PluginError(f"the oneDNN library is not installed ({DISTRIBUTION} is missing)",
                          op="fw_onednn", hint=f"pip install {DISTRIBUTION}==2023.2.0") from None
    for file in dist.files or ():
        if file.name == SONAME:
            path = pathlib.Path(file.locate()).resolve()
            if path.exists():
                return path
    raise PluginError(f"{DISTRIBUTION} {dist.version} is installed but {SONAME} is not where its "
                      "file list says", op="fw_onednn", hint=_REINSTALL)


def load() -> ctypes.CDLL:
    """``libdnnl.so.3``, loaded.

    Raises:
        PluginError: it is missing, or the dynamic linker cannot load it (most often the system
            OpenMP runtime ``libgomp.so.1`` is absent).
    """
    path = find()
    try:
        return ctypes.CDLL(str(path))
    except OSError as exc:
        missing_gomp = "libgomp" in str(exc)
        raise PluginError(
            f"cannot load {path}: {exc}", op="fw_onednn",
            hint="install the GNU OpenMP runtime (apt-get install libgomp1, dnf install libgomp)"
            if missing_gomp else _REINSTALL) from None
