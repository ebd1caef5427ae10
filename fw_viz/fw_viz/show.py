"""``fw_viz.show(obj)``: one entry point that picks the right picture for what it is given.

A model (with ``inputs=``), a compiled function or a :class:`VizGraph` become the interactive
graph page; an fw_debugger ``Trace`` an HTML table of its events; a ``History`` (or its
``{name: [values]}`` dict) a PNG of its curves; an fw_debugger ``Attribution`` a heatmap over
``image=`` or token bars for ``tokens=``. The picture is saved to ``path`` (or a new temporary
folder) and its path returned; it is opened in a browser only on a desktop session (a
``DISPLAY``/``WAYLAND_DISPLAY`` or macOS/Windows, with stdout a terminal), never headless.
"""

from __future__ import annotations

import html
import os
import sys
import tempfile
import webbrowser
from pathlib import Path

from fw_core.errors import FwError


def _headless() -> bool:
    desktop = sys.platform in ("darwin", "win32") or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return not (desktop and sys.stdout is not None and sys.stdout.isatty())


def _kind(obj) -> str:
    """What ``obj`` is, by duck typing, so fw_debugger stays optional."""
    import fw_core as fw

    from .graph import VizGraph

    name = type(obj).__name__
    if isinstance(obj, VizGraph) or (isinstance(obj, dict) and "nodes" in obj):
        return "graph"
    if name == "Trace" and hasattr(obj, "events"):
        return "trace"
    if name == "Attribution" and hasattr(obj, "values"):
        return "attribution"
    if hasattr(obj, "history") or (isinstance(obj, dict) and all(
            isinstance(v, list) for v in obj.values())):
        return "history"
    if isinstance(obj, fw.nn.Module) or isinstance(getattr(obj, "module", None), fw.nn.Module) \
            or callable(obj):
        return "model"
    raise FwError(f"fw_viz.show does not know how to draw a {name}",
                  hint="pass a model (with inputs=...), a VizGraph, an fw_debugger Trace or "
                  "Attribution, or a History")


_SUFFIX = {"graph": ".html", "model": ".html", "trace": ".html", "history": ".png",
           "attribution": ".png"}


def _path_and_inputs(kind: str, args: tuple, path, inputs) -> tuple:
    """(path, inputs as a tuple or None) from :func:`show`'s positional ``args``: a model's
    inputs, or (anything else, or a model given ``inputs=``) the one path."""
    if kind == "model" and inputs is None:
        return path, (args or None)
    if len(args) > 1 or (args and path is not None):
        raise FwError(f"fw_viz.show got {len(args)} positional argument(s) after the "
                      f"{kind}{' and path=' if path is not None else ''}, but takes one path",
                      hint="pass the path once (show(obj, 'out.html') or path=...); a model's "
                      "inputs go positionally when inputs= is not given: show(model, x)")
    if args:
        path = args[0]
    if inputs is not None and not isinstance(inputs, tuple):
        inputs = (inputs,)
    return path, inputs


def show(obj, *args, path=None, inputs=None, backward: bool = False, image=None, tokens=None,
         depth: int | None = None):
    """Draw ``obj`` into ``path`` (default: a file in a new temporary folder) and return the
    path; open it in a browser only when a desktop session is attached.

    ``fw_viz.show(model, x)`` runs the model on ``x`` as ``fw_viz.capture(model, x)`` does;
    ``fw_viz.show(graph, "g.html")`` writes a picture to the path given.

    Args:
        obj: a model or function (run once under :func:`fw_viz.capture` on its inputs), a
            VizGraph, a Trace, a History or an Attribution.
        args: for a model or function, its inputs (as :func:`fw_viz.capture` takes them);
            for anything else, the path. With ``inputs=`` given, a model's one positional
            argument is the path too (``show(model, "m.html", inputs=x)``).
        path: where to write (.html for graphs and traces, .png for the others).
        inputs: a tensor or a tuple of tensors to run a model on (in place of ``args``).
        backward: also capture the backward pass (models only).
        image: the image batch under an image attribution's heatmap.
        tokens: the tokens of a sequence attribution (bars per token).
        depth: the graph's fold depth.

    Raises:
        FwError: a model without inputs, a path given twice, or an object it cannot draw.
    """
    kind = _kind(obj)
    path, inputs = _path_and_inputs(kind, args, path, inputs)
    if path is None:
        path = Path(tempfile.mkdtemp(prefix="fw_viz_")) / f"{kind}{_SUFFIX[kind]}"
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind in ("graph", "model"):
        from .html import save_html

        if kind == "model":
            if inputs is None:
                raise FwError("fw_viz.show needs inputs to draw a model's graph",
                              hint="fw_viz.show(model, x) (or inputs=x), or show a graph made "
                              "with fw_viz.capture(model, x)")
            from .graph import capture

            obj = capture(obj, *inputs, backward=backward)
        save_html(obj, path, depth=depth)
    elif kind == "trace":
        path.write_text(trace_html(obj), encoding="utf-8")
    elif kind == "history":
        from .pictures import history_png

        history_png(obj, path)
    else:
        _attribution(obj, path, image, tokens)
    if not _headless():
        webbrowser.open(path.resolve().as_uri())
    return path


def _attribution(attribution, path: Path, image, tokens) -> None:
    from .pictures import heatmap_png, token_bars_png

    if tokens is not None:
        token_bars_png(attribution, tokens, path)
    elif image is not None:
        heatmap_png(attribution, image, path)
    else:
        raise FwError("fw_viz.show needs the picture behind an attribution",
                      hint="pass image=x for an image input (a heatmap overlay) or "
                      "tokens=[...] for a sequence (bars per token)")


def trace_html(trace) -> str:
    """A self-contained HTML table of a Trace's events: phase, op, module, shapes, kernel,
    time (with a bar proportional to it) and memory tag."""
    events = list(trace)
    longest = max((e.elapsed_s for e in events), default=0) or 1

    def spec(shapes, dtypes) -> str:
        return ", ".join("-" if s is None else f"{d}[{','.join(map(str, s))}]"
                         for s, d in zip(shapes, dtypes))

    rows = []
    for e in events:
        width = 100 * e.elapsed_s / longest
        cells = [str(e.index), e.phase, e.kind, e.op, e.module or "(root)",
                 spec(e.input_shapes, e.input_dtypes), spec(e.output_shapes, e.output_dtypes),
                 e.kernel, f"{e.elapsed_s * 1e3:.3f}", e.memory_tag or ""]
        tds = "".join(f"<td>{html.escape(c)}</td>" for c in cells)
        rows.append(f'<tr>{tds}<td><div class="bar" style="width:{width:.1f}%"></div></td></tr>')
    heads = "".join(f"<th>{h}</th>" for h in ("#", "phase", "kind", "op", "module", "inputs",
                                               "outputs", "kernel", "ms", "memory", "time"))
    notes = "".join(f"<p>{html.escape(n)}</p>" for n in getattr(trace, "notes", ()))
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>fw trace</title><style>"
            "body{font:13px sans-serif}table{border-collapse:collapse}td,th{padding:2px 6px;"
            "border-bottom:1px solid #ddd;text-align:left}.bar{background:#e57373;height:10px;"
            "min-width:1px}td:last-child{width:160px}</style></head><body>"
            f"<h1>Trace: {len(events)} events</h1>{notes}<table><tr>{heads}</tr>"
            + "".join(rows) + "</table></body></html>")
