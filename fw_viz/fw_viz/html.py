"""The interactive graph page: one self-contained HTML file (no network, no CDN).

``render_html`` embeds the graph model (see ``docs/viz_html.md``) as JSON next to the viewer's
JavaScript and CSS, which ship in this package under ``fw_viz/static/`` and are inlined, so the
page works from ``file://`` on a machine with no network. The layout (layered, modules as
collapsible boxes, repeated blocks folded into "× N") is computed in the browser, so expanding a
module re-lays out only what is visible.
"""

from __future__ import annotations

import html as _html
import json
from pathlib import Path
from typing import Any

STATIC = Path(__file__).resolve().parent / "static"

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
{css}
</style>
</head>
<body>
<header id="fw-toolbar">
  <strong id="fw-title">{title}</strong>
  <input id="fw-search" type="search" placeholder="search op or module" autocomplete="off">
  <span id="fw-search-count"></span>
  <button id="fw-fit" type="button">Fit</button>
  <button id="fw-expand-all" type="button">Expand all</button>
  <button id="fw-reset" type="button">Default fold</button>
  <span id="fw-stats"></span>
</header>
<main id="fw-main">
  <svg id="fw-svg"><g id="fw-viewport"></g></svg>
  <aside id="fw-panel"><h2>Details</h2><div id="fw-panel-body">Click a node.</div></aside>
</main>
<div id="fw-tooltip" hidden></div>
<script type="application/json" id="fw-graph-data">{data}</script>
<script>
{js}
</script>
</body>
</html>
"""


def _graph_data(graph: Any, depth: int | None) -> dict:
    """The plain dict of ``graph`` (a VizGraph or the dict itself), with ``depth`` applied."""
    data = getattr(graph, "data", graph)
    if not isinstance(data, dict) or "nodes" not in data:
        from fw_core.errors import FwError

        raise FwError(
            "render_html needs a VizGraph or a graph dict with 'nodes', "
            f"got {type(graph).__name__}",
            hint="build one with fw_viz.capture(model, *inputs)",
        )
    if depth is not None:
        data = {**data, "fold": {**data.get("fold", {}), "default_depth": int(depth)}}
    return data


def render_html(graph: Any, depth: int | None = None) -> str:
    """The whole page as a string; ``depth`` overrides the graph's default fold depth.

    Modules deeper than the fold depth start collapsed; the JSON is embedded with ``<`` escaped
    so no string in the graph (a doc, a module name) can close the script element.
    """
    data = _graph_data(graph, depth)
    payload = json.dumps(data, default=str).replace("<", "\\u003c")
    return PAGE.format(
        title=_html.escape(str(data.get("title") or "fw graph")),
        css=(STATIC / "viewer.css").read_text(encoding="utf-8"),
        js=(STATIC / "viewer.js").read_text(encoding="utf-8"),
        data=payload,
    )


def save_html(graph: Any, path: str | Path, depth: int | None = None) -> Path:
    """Write ``render_html(graph, depth)`` to ``path`` (parents created) and return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(graph, depth), encoding="utf-8")
    return path
