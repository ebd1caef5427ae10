"""fw_viz: pictures of what fw knows — graphs, memory, training, attributions.

The public names are resolved on first use (a module ``__getattr__``), so ``import fw_viz`` and
loading the plugin stay cheap (no matplotlib, no tensorboardX until asked); each name lives in
the module listed below. One name is also the name of its module (``show``): the package keeps
the function, not the submodule the import system would bind over it (reach the module with
``importlib.import_module("fw_viz.show")``).
"""

from __future__ import annotations

import importlib
import sys
import types

__version__ = "0.1.0"

#: public name -> module of this package that defines it
_API: dict[str, str] = {
    "capture": "graph",
    "VizGraph": "graph",
    "example_graph": "graph",
    "to_dot": "dot",
    "save_svg": "dot",
    "show": "show",
    "save_html": "html",
    "render_html": "html",
    "Dashboard": "dashboard",
    "TensorBoard": "tensorboard",
    "heatmap_png": "pictures",
    "token_bars_png": "pictures",
    "history_png": "pictures",
}

__all__ = sorted(_API)


def __getattr__(name: str):
    try:
        module = _API[name]
    except KeyError:
        raise AttributeError(f"module 'fw_viz' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value) -> None:
        # importing fw_viz.show binds the submodule as the package's ``show`` attribute; the
        # public name is the function of that module
        if _API.get(name) == name and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
