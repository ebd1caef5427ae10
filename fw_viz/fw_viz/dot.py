"""Graphviz output: a captured graph as DOT text, and as SVG through the ``dot`` program.

The DOT drawing is of the folded view (:meth:`VizGraph.fold`): module boxes as clusters (one per
module and phase), folded modules and "× N" repeated blocks as boxes, edges labelled with
shape and dtype, fused regions filled with one colour per group, parameters and gradients
marked by their memory tag, and value/grad summaries in the labels when they were captured.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from fw_core.errors import FwError

#: fill colours of fused groups, cycled
_FUSED = ("#ffe0b2", "#c8e6c9", "#bbdefb", "#f8bbd0", "#d1c4e9", "#fff9c4")
_SHAPES = {"input": "cds", "parameter": "note", "constant": "plaintext",
           "module": "box3d", "repeat": "box3d"}
_TAGS = {"parameter": "#fff3c4", "gradient": "#fde7e7"}


def _q(text) -> str:
    """A DOT double-quoted string."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _spec(spec: dict) -> str:
    dtype = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
             "int64": "i64", "int32": "i32"}.get(spec["dtype"], spec["dtype"])
    return f"{dtype}[{','.join(map(str, spec['shape']))}]"


def _num(x: float) -> str:
    return f"{x:.3g}"


def _stats(s: dict) -> str:
    return f"{_num(s['mean'])} [{_num(s['min'])}, {_num(s['max'])}]"


def _label(node: dict) -> str:
    if node["op"] in ("module", "repeat"):
        return f"{node['label']}\n{node['ops']} ops"
    lines = [node.get("name") or node["op"]]
    if node["op"] in ("input", "parameter", "constant") and node["outputs"]:
        lines.append(_spec(node["outputs"][0]))
    if node.get("summary"):
        lines.append(f"value {_stats(node['summary'])}")
    if node.get("grad_summary"):
        lines.append(f"grad {_stats(node['grad_summary'])}")
    return "\n".join(lines)


def _tooltip(node: dict) -> str:
    if node["op"] in ("module", "repeat"):
        return node["label"]
    parts = [node.get("signature") or node["op"], f"module: {node['module'] or '(root)'}"]
    if node.get("inputs"):
        parts.append("in: " + ", ".join(_spec(s) for s in node["inputs"]))
    if node.get("outputs"):
        parts.append("out: " + ", ".join(_spec(s) for s in node["outputs"]))
    if node.get("memory_tag"):
        parts.append(f"memory: {node['memory_tag']}")
    if node.get("fused"):
        parts.append(f"fused: {node['fused']} ({node['fused_rule']})")
    return "\n".join(parts)


def _attrs(node: dict, fused_colour: dict) -> str:
    attrs = {"label": _label(node), "tooltip": _tooltip(node),
             "shape": _SHAPES.get(node["op"], "ellipse")}
    fill = _TAGS.get(node.get("memory_tag") or "")
    if node.get("fused"):
        fill = fused_colour.setdefault(node["fused"], _FUSED[len(fused_colour) % len(_FUSED)])
        attrs["penwidth"] = "2"
    if node["op"] == "repeat":
        attrs["peripheries"] = "2"
        fill = "#e3f2fd"
    elif node["op"] == "module":
        fill = "#eeeeee"
    if fill:
        attrs["style"], attrs["fillcolor"] = "filled", fill
    return ", ".join(f"{k}={_q(v)}" for k, v in attrs.items())


def _cluster_of(node: dict, types: dict) -> str:
    """The module box a visible node is drawn in: its module, or the parent of its block."""
    if node["op"] in ("module", "repeat"):
        path = node["module"].rpartition(".")[0] if "." in node["module"] else ""
        return path if path in types else ""
    return node["module"]


def to_dot(graph, depth: int | None = None, repeats: bool = True, leaves: bool = True) -> str:
    """DOT text of ``graph`` (a VizGraph or its ``.data``) folded at ``depth`` (default: the
    graph's default fold depth); ``repeats``/``leaves`` as in :meth:`VizGraph.fold`."""
    from .graph import VizGraph

    graph = graph if isinstance(graph, VizGraph) else VizGraph(graph)
    view = graph.fold(depth, repeats=repeats, leaves=leaves)
    types = {m["path"]: m["type"] for m in graph.data["modules"]}
    tree: dict[tuple, list] = {}  # (module path, phase) -> node lines drawn directly inside
    fused_colour: dict[str, str] = {}
    for node in view["nodes"]:
        key = (_cluster_of(node, types), node["phase"])
        tree.setdefault(key, []).append(f"  {_q(node['id'])} [{_attrs(node, fused_colour)}];")
    lines = [f"digraph {_q(view['title'])} {{", "  rankdir=TB; compound=true;",
             '  node [fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=8, color="#555555"];',
             f"  label={_q(view['title'])}; labelloc=t;"]
    lines += _clusters("", "forward", tree, types) + _clusters("", "backward", tree, types)
    for e in view["edges"]:
        label = _spec(e) + (f" ×{e['count']}" if e.get("count", 1) > 1 else "")
        lines.append(f"  {_q(e['source'])} -> {_q(e['target'])} [label={_q(label)}];")
    lines.append("}")
    return "\n".join(lines)


def _clusters(path: str, phase: str, tree: dict, types: dict) -> list[str]:
    """The lines of the box of module ``path`` in ``phase``, with its sub-boxes, if any node
    is drawn in it or below it."""
    body = list(tree.get((path, phase), ()))
    prefix = f"{path}." if path else ""
    children = sorted({p[len(prefix):].split(".")[0] for p, ph in tree
                       if ph == phase and p.startswith(prefix) and p != path})
    for child in children:
        body += _clusters(prefix + child, phase, tree, types)
    if not path or not body:
        return body
    name = f"{path} ({types[path]})" if types.get(path) else path
    label = name if phase == "forward" else f"{name} · backward"
    cid = _q(f"cluster_{phase}_{path}")
    return [f"  subgraph {cid} {{", f"  label={_q(label)}; style=rounded; color=\"#9e9e9e\";",
            *body, "  }"]


def save_svg(graph, path, depth: int | None = None, repeats: bool = True,
             leaves: bool = True) -> str:
    """Draw ``graph`` with Graphviz's ``dot`` into the SVG file ``path``; returns the path."""
    dot = shutil.which("dot")
    if dot is None:
        raise FwError("Graphviz's `dot` program was not found on PATH",
                      hint="install Graphviz: `apt-get install graphviz` (Debian/Ubuntu) or "
                      "`brew install graphviz` (macOS); or write DOT text with fw_viz.to_dot")
    text = to_dot(graph, depth, repeats=repeats, leaves=leaves)
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    run = subprocess.run([dot, "-Tsvg", "-o", path], input=text.encode(), capture_output=True,
                         check=False)
    if run.returncode != 0:
        raise FwError(f"Graphviz's dot failed: {run.stderr.decode(errors='replace').strip()}",
                      hint="this is a bug in fw_viz's DOT output; please report it")
    return path
