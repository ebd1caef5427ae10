"""Capture a model run as a graph (a plain JSON-able dict), and fold it for reading.

:func:`capture` runs the model eagerly under an inspector and records every op: its module path,
phase (forward/backward), input/output shapes and dtypes, the op contract (signature, doc,
structure, anchor), a memory tag, and, with ``values="summary"``, min/max/mean of its output
and of the gradient that reached it. Edges follow the tensors from the op that made them to the
ops that read them. A ``fw.compile``'d function runs eagerly too (inspectors make it run as
written); the nodes its cached plan fused are marked with their group id and rule.

:meth:`VizGraph.fold` collapses modules deeper than a depth into one block each, and sibling
modules with the same op sequence (the layers of an encoder) into one "× N" block, so a
transformer's hundreds of ops read as a few dozen boxes.
"""

from __future__ import annotations

import json
import time

import numpy as np

import fw_core as fw
from fw_core.records import Inspector
from fw_core.tensor import Tensor

#: fold depth views use when none is given
DEFAULT_DEPTH = 2
#: nodes that are not ops (they fold with their module but do not count as its ops)
_LEAVES = frozenset({"input", "parameter", "constant"})

_current: list = []  # the running _Recorder (at most one)


def _on_op(event) -> None:
    if _current:
        _current[-1].on_op(event)


#: the inspector capture switches on (the plugin registers one of the same name)
INSPECTOR = Inspector(name="fw_viz.capture", on_op=_on_op)


def _spec(t) -> dict:
    return {"shape": list(t.shape), "dtype": t.dtype.name}


def _summary(t) -> dict | None:
    data = np.asarray(t.detach().numpy() if isinstance(t, Tensor) else t)
    if data.size == 0 or not np.issubdtype(data.dtype, np.number):
        return None
    data = data.astype(np.float64)
    return {"min": float(data.min()), "max": float(data.max()), "mean": float(data.mean())}


def _tensors(x) -> list:
    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for t in x if isinstance(t, Tensor)]
    return []


class _Recorder:
    """Turns op events into nodes and edges."""

    def __init__(self, params: dict, values: str | None):
        self.params = params  # id(parameter) -> (name, owner module path)
        self.values = values
        self.nodes: list[dict] = []
        self.edges: list[dict] = []
        self.producer: dict[int, str] = {}  # id(tensor) -> node id
        self.keep: list = []  # tensors alive for the capture, so ids are not reused
        self.keep_index: dict[str, int] = {}  # node id -> index in keep of its first output
        self.phase = "forward"
        self.clock = time.perf_counter()

    def add_node(self, **fields) -> dict:
        node = {"id": f"n{len(self.nodes)}", "op": "", "module": "", "phase": self.phase,
                "inputs": [], "outputs": [], "signature": "", "doc": "", "structure": "",
                "anchor": "", "time_ms": None, "memory_tag": None, "fused": None,
                "fused_rule": None, "summary": None, "grad_summary": None}
        node.update(fields)
        self.nodes.append(node)
        return node

    def source(self, t) -> str:
        """The node that made ``t``, adding a parameter/constant node for one seen first here."""
        key = id(t)
        if key not in self.producer:
            name, owner = self.params.get(key, (None, None))
            if name is not None:
                node = self.add_node(op="parameter", module=owner, phase="forward",
                                     name=name, outputs=[_spec(t)], memory_tag="parameter")
            else:
                node = self.add_node(op="constant", module="", phase="forward",
                                     outputs=[_spec(t)], memory_tag=fw.memory.tag_of(t))
            self.bind(t, node)
        return self.producer[key]

    def bind(self, t, node: dict) -> None:
        self.producer[id(t)] = node["id"]
        self.keep_index.setdefault(node["id"], len(self.keep))
        self.keep.append(t)
        if self.values == "summary" and node["summary"] is None:
            node["summary"] = _summary(t)
            if t.requires_grad and not t.is_leaf and self.phase == "forward":
                t.register_hook(lambda g, node=node: node.update(grad_summary=_summary(g)))

    def on_op(self, event) -> None:
        if event.phase != "forward":  # the backward summary event; its ops were seen one by one
            return
        now = time.perf_counter()
        ins, outs = _tensors(event.inputs), _tensors(event.output)
        sources = [self.source(t) for t in ins]
        op = event.op
        grad = any(t.requires_grad for t in outs)
        tag = "gradient" if self.phase == "backward" else ("activation" if grad else "temporary")
        node = self.add_node(
            op=op.name, module=event.module or "", inputs=[_spec(t) for t in ins],
            outputs=[_spec(t) for t in outs], signature=op.signature, doc=op.doc,
            structure=op.structure.value, anchor=op.anchor.says,
            time_ms=round((now - self.clock) * 1e3, 4), memory_tag=tag)
        for src, t in zip(sources, ins):
            self.edges.append({"source": src, "target": node["id"], **_spec(t)})
        for t in outs:
            self.bind(t, node)
        self.clock = time.perf_counter()


def _module_table(model) -> list[dict]:
    """The modules of ``model`` with their parent and repeat group (filled by _repeats)."""
    if not isinstance(model, fw.nn.Module):
        return []
    rows = []
    for path, module in model.named_modules():
        if path:
            rows.append({"path": path, "type": type(module).__name__,
                         "parent": path.rpartition(".")[0], "repeat_group": None})
    return rows


def _repeats(modules: list[dict], nodes: list[dict]) -> None:
    """Mark numbered siblings (the items of a ModuleList or Sequential) of one type whose
    forward passes run the same op sequence: the layers of an encoder."""
    ops: dict[str, list] = {m["path"]: [] for m in modules}
    for node in nodes:
        path = node["module"]
        while path and node["phase"] == "forward":
            if path in ops:
                ops[path].append(node["op"])
            path = path.rpartition(".")[0]
    groups: dict[tuple, list[dict]] = {}
    for m in modules:
        if ops[m["path"]] and m["path"].rpartition(".")[2].isdigit():
            groups.setdefault((m["parent"], m["type"], tuple(ops[m["path"]])), []).append(m)
    runs = []  # consecutive numbers of one group: 0, 1, 2 repeat; 0 and 2 around a ReLU do not
    for members in groups.values():
        run = [members[0]]
        for m in members[1:]:
            if _index(m) == _index(run[-1]) + 1:
                run.append(m)
            else:
                runs.append(run)
                run = [m]
        runs.append(run)
    runs = [run for run in runs if len(run) > 1]
    for run in runs:
        parent = run[0]["parent"]
        alone = sum(r[0]["parent"] == parent for r in runs) == 1
        prefix = f"{parent}." if parent else ""
        name = f"{prefix}*" if alone else f"{prefix}{_index(run[0])}-{_index(run[-1])}"
        for m in run:
            m["repeat_group"] = name


def _index(module: dict) -> int:
    return int(module["path"].rpartition(".")[2])


def _attribute_accumulation(nodes: list[dict], edges: list[dict]) -> None:
    """Give backward ops run outside any module (gradient accumulation) the deepest module
    common to the ops that feed them, so they fold with the modules they join."""
    by_id = {n["id"]: n for n in nodes}
    feeds: dict[str, list[str]] = {}
    for e in edges:
        feeds.setdefault(e["target"], []).append(e["source"])
    for node in nodes:
        if node["phase"] == "backward" and not node["module"] and feeds.get(node["id"]):
            sources = [by_id[s]["module"] for s in feeds[node["id"]]]  # earlier: already set
            parts = [m.split(".") for m in sources if m]
            common = []
            for level in zip(*parts) if parts else ():
                if len(set(level)) > 1:
                    break
                common.append(level[0])
            node["module"] = ".".join(common)


def _mark_fused(nodes: list[dict], fn) -> None:
    """Mark nodes the last plan of a CompiledFunction fused, matching plan nodes in order."""
    plans = fn.plans() if hasattr(fn, "plans") else []
    if not plans:
        return
    wanted = []  # (op name, group id, rule name) in plan order
    for g, step in enumerate(plans[-1].graph.steps):
        for node in getattr(step, "nodes", ()):
            wanted.append((node.op.name, node.phase, f"g{g}", getattr(step.rule, "name", None)))
    i = 0
    for name, phase, gid, rule in wanted:
        j = i
        while j < len(nodes) and (nodes[j]["op"], nodes[j]["phase"]) != (name, phase):
            j += 1
        if j < len(nodes):
            nodes[j].update(fused=gid, fused_rule=rule)
            i = j + 1


def capture(model_or_fn, *inputs, backward: bool = False, values: str | None = None,
            title: str | None = None) -> VizGraph:
    """Run ``model_or_fn(*inputs)`` once, eagerly, and return its graph.

    Args:
        model_or_fn: an ``fw.nn.Module`` (or a training ``Model``: its module), a function, or
            a ``fw.compile``'d function (run
            eagerly; nodes its cached plan fused get ``fused``/``fused_rule``).
        inputs: the arguments (tensors become "input" nodes).
        backward: also run backward from the output (summed first when not a scalar) and
            record the backward ops (phase "backward").
        values: "summary" records min/max/mean of every op's output and, with backward, of the
            gradient that reached it (the teaching view for small graphs).
        title: the graph's title (default: the model's class or the function's name).
    """
    if values not in (None, "summary"):
        raise fw.errors.ArgumentError(f"values={values!r} is not supported",
                                      hint='use values=None or values="summary"')
    model = model_or_fn
    if isinstance(getattr(model, "module", None), fw.nn.Module):  # a training Model
        model = model.module
    params = {}
    if isinstance(model, fw.nn.Module):
        params = {id(p): (name, name.rpartition(".")[0])
                  for name, p in model.named_parameters()}
    recorder = _Recorder(params, values)
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor):
            node = recorder.add_node(id=f"in{i}", op="input", outputs=[_spec(t)])
            recorder.nodes[-1] = node
            recorder.bind(t, node)
    _current.append(recorder)
    try:
        with fw.inspectors.activated(INSPECTOR):
            out = model(*inputs)
            if backward:
                loss = out if out.numel() == 1 else out.sum()
                recorder.phase = "backward"
                loss.backward()
    finally:
        _current.remove(recorder)
    if backward and values == "summary":  # leaves keep no hook: read their .grad
        for node in recorder.nodes:
            if node["op"] in ("input", "parameter") and node["grad_summary"] is None:
                t = recorder.keep[recorder.keep_index[node["id"]]]
                if t.grad is not None:
                    node["grad_summary"] = _summary(t.grad)
    _mark_fused(recorder.nodes, model)
    _attribute_accumulation(recorder.nodes, recorder.edges)
    modules = _module_table(model)
    _repeats(modules, recorder.nodes)
    name = title or (type(model).__name__ if isinstance(model, fw.nn.Module)
                     else getattr(model, "__name__", getattr(model, "name", "graph")))
    return VizGraph({
        "title": name, "nodes": recorder.nodes, "edges": recorder.edges,
        "inputs": [{"id": n["id"], **n["outputs"][0]} for n in recorder.nodes
                   if n["op"] == "input"],
        "modules": modules, "fold": {"default_depth": DEFAULT_DEPTH}})


class VizGraph:
    """A captured graph. ``.data`` is the JSON-able dict (see docs/viz.md for its fields)."""

    def __init__(self, data: dict):
        self.data = data

    def __repr__(self) -> str:
        return (f"VizGraph({self.data['title']!r}: {len(self.data['nodes'])} nodes, "
                f"{len(self.data['edges'])} edges, {len(self.data['modules'])} modules)")

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.data, **kwargs)

    def modules(self) -> list[dict]:
        return self.data["modules"]

    def to_dot(self, depth: int | None = None, **fold) -> str:
        """DOT text of the folded view (see :func:`fw_viz.to_dot`)."""
        from .dot import to_dot

        return to_dot(self, depth, **fold)

    def _folder(self, depth: int, repeats: bool, leaves: bool):
        """``block_of(node) -> (name, module) or None``: the folded block holding a node."""
        by_path = {m["path"]: m for m in self.data["modules"]}
        parents = {m["parent"] for m in self.data["modules"]}
        ops: dict[tuple, int] = {}
        for node in self.data["nodes"]:
            if node["op"] not in _LEAVES:
                key = (node["module"], node["phase"])
                ops[key] = ops.get(key, 0) + 1

        def block_of(node: dict):
            path = node["module"]
            parts = path.split(".") if path else []
            for k in range(1, len(parts) + 1):
                prefix = ".".join(parts[:k])
                module = by_path.get(prefix) or {"path": prefix, "type": ""}
                if repeats and module.get("repeat_group"):
                    return module["repeat_group"], module
                if k > depth:
                    return prefix, module
            if leaves and path and path not in parents and ops.get((path, node["phase"]), 0) > 1:
                return path, by_path.get(path) or {"path": path, "type": ""}
            return None

        return block_of

    def fold(self, depth: int | None = None, repeats: bool = True, leaves: bool = True) -> dict:
        """A collapsed view: ``{"title", "depth", "nodes", "edges"}``.

        Ops of modules more than ``depth`` levels deep become one block per module (node
        ``op`` "module"); with ``repeats``, repeated sibling modules become one block for all of
        them (``op`` "repeat", ``repeat`` N, label "name × N"); with ``leaves``, a leaf module
        (no submodules) running more than one op is one block. Forward and backward fold
        separately. Edges between the same two visible nodes merge (``count`` says how many).
        ``fold(depth=99, repeats=False, leaves=False)`` is the full graph."""
        depth = self.data["fold"]["default_depth"] if depth is None else depth
        members: dict[str, set] = {}
        for m in self.data["modules"]:
            if m["repeat_group"]:
                members.setdefault(m["repeat_group"], set()).add(m["path"])
        visible: dict[str, str] = {}
        nodes: dict[str, dict] = {}
        block_of = self._folder(depth, repeats, leaves)
        for node in self.data["nodes"]:
            block = block_of(node)
            if block is None:
                visible[node["id"]] = node["id"]
                nodes[node["id"]] = node
                continue
            name, module = block
            bid = f"m:{name}:{node['phase']}"
            visible[node["id"]] = bid
            if bid not in nodes:
                n = len(members.get(name, ())) if name in members else None
                label = f"{name} × {n}" if n else name
                nodes[bid] = {"id": bid, "op": "repeat" if n else "module", "module": name,
                              "type": module["type"], "phase": node["phase"], "repeat": n,
                              "label": f"{label} ({module['type']})" if module["type"] else label,
                              "ops": 0, "fused": None, "memory_tag": None, "outputs": []}
            nodes[bid]["ops"] += 1
        edges: dict[tuple, dict] = {}
        for e in self.data["edges"]:
            s, t = visible[e["source"]], visible[e["target"]]
            if s == t:
                continue
            if (s, t) in edges:
                edges[(s, t)]["count"] += 1
            else:
                edges[(s, t)] = {**e, "source": s, "target": t, "count": 1}
        return {"title": self.data["title"], "depth": depth, "nodes": list(nodes.values()),
                "edges": list(edges.values())}


def example_graph(backward: bool = False, values: str | None = "summary") -> VizGraph:
    """The graph of a tiny 2-layer MLP (Linear 4→8, ReLU, Linear 8→2) on a batch of 3: a small,
    deterministic graph for docs and tests of the renderers."""
    fw.manual_seed(0)
    model = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
    x = fw.randn(3, 4)
    return capture(model, x, backward=backward, values=values, title="MLP")
