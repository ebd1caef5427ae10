"""fw_viz: pictures of what fw knows — graphs, memory, training, attributions.

The public names are resolved on first use (a module ``__getattr__``), so ``import fw_viz`` and
loading the plugin stay cheap (no matplotlib, no tensorboardX until asked); each name lives in
the module listed below. One name is also the name of its module (``show``): the package keeps
the function, not the submodule the import system would bind over it (reach the module with
``importlib.import_module("fw_viz.show")``).
"""

from __future__ import annotations

from fw_core.lazy import lazy_api

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

lazy_api(__name__, _API)
