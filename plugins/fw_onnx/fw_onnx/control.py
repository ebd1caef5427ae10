"""ONNX's control flow as Python control flow in the imported module's forward: If runs the
branch its condition picks, Loop iterates its body, Scan runs its body over slices. Each
subgraph runs in a scope that sees every outer value. Conditions and trip counts are read on
the host, so a compiled function with a data-dependent one stays eager, as Python's ``if``
does."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from onnx import numpy_helper

import fw_core as fw


@dataclass(frozen=True)
class Branch:
    """A subgraph: its nodes (decoded), the names of its inputs and outputs, and the arrays of
    its own initializers."""

    nodes: list
    inputs: list[str]
    outputs: list[str]
    constants: dict[str, np.ndarray]

    @classmethod
    def of(cls, graph, decode: Callable) -> Branch:
        return cls(decode(graph.node), [i.name for i in graph.input],
                   [o.name for o in graph.output],
                   {i.name: numpy_helper.to_array(i) for i in graph.initializer})


def _lookup(name: str, values: dict, static: dict):
    if not name:
        return None
    return values[name] if name in values else fw.tensor(static[name])


def _host(t) -> np.ndarray:
    return np.asarray(t.detach().numpy() if isinstance(t, fw.Tensor) else t)


def _body(run, branch: Branch, values: dict, static: dict, bound: dict) -> list:
    """The branch's outputs as tensors, its inputs bound to ``bound``."""
    inner_values = {**values, **bound}
    inner_static = {k: v for k, v in {**static, **branch.constants}.items() if k not in bound}
    run(branch.nodes, inner_values, inner_static)
    return [_lookup(name, inner_values, inner_static) for name in branch.outputs]


def if_(node, values: dict, static: dict, run) -> None:
    name = node.inputs[0]
    condition = static[name] if name in static else _host(values[name])
    branch = node.attrs["then_branch" if bool(np.asarray(condition).reshape(-1)[0])
                        else "else_branch"]
    inner_values, inner_static = dict(values), {**static, **branch.constants}
    run(branch.nodes, inner_values, inner_static)
    for outer, inner in zip(node.outputs, branch.outputs):  # a folded result stays folded
        if inner in inner_values:
            values[outer] = inner_values[inner]
        else:
            static[outer] = inner_static[inner]


def loop(node, values: dict, static: dict, run) -> None:
    """While the trip count and the condition allow: the body gets the iteration number, the
    condition and the carried values, and gives the condition, the carried values and one
    element of each scan output (stacked along a new first axis)."""
    body = node.attrs["body"]
    trips, condition, *carried = (_lookup(n, values, static) for n in node.inputs)
    limit = None if trips is None else int(_host(trips).reshape(-1)[0])
    going = True if condition is None else bool(_host(condition).reshape(-1)[0])
    scans: list[list] = [[] for _ in range(len(body.outputs) - 1 - len(carried))]
    step = 0
    while going and (limit is None or step < limit):
        bound = {body.inputs[0]: fw.tensor(np.array(step, np.int64)),
                 body.inputs[1]: fw.tensor(np.array(going)),
                 **dict(zip(body.inputs[2:], carried))}
        outs = _body(run, body, values, static, bound)
        going = bool(_host(outs[0]).reshape(-1)[0])
        carried = outs[1:1 + len(carried)]
        for collected, out in zip(scans, outs[1 + len(carried):]):
            collected.append(out)
        step += 1
    stacked = [fw.stack(c, dim=0) if c else fw.zeros(0) for c in scans]
    values.update((name, out) for name, out in zip(node.outputs, [*carried, *stacked]) if name)


def scan(node, values: dict, static: dict, run) -> None:
    """The body over the slices of the scan inputs along their axes (reversed where a
    direction is 1), carrying its state; scan outputs stacked along their axes."""
    body = node.attrs["body"]
    count = node.get("num_scan_inputs")
    args = [_lookup(n, values, static) for n in node.inputs]
    states, xs = args[:len(args) - count], args[len(args) - count:]
    in_axes = [a % x.ndim for a, x in zip(node.get("scan_input_axes") or [0] * count, xs)]
    xs = [fw.flip(x, (a,)) if d else x for x, a, d in
          zip(xs, in_axes, node.get("scan_input_directions") or [0] * count)]
    k = len(body.outputs) - len(states)
    collected: list[list] = [[] for _ in range(k)]
    for t in range(xs[0].shape[in_axes[0]]):
        slices = [x[(slice(None),) * a + (t,)] for x, a in zip(xs, in_axes)]
        outs = _body(run, body, values, static, dict(zip(body.inputs, [*states, *slices])))
        states = outs[:len(states)]
        for c, out in zip(collected, outs[len(states):]):
            c.append(out)
    stacked = []
    for c, axis, direction in zip(collected, node.get("scan_output_axes") or [0] * k,
                                  node.get("scan_output_directions") or [0] * k):
        c = c[::-1] if direction else c
        stacked.append(fw.stack(c, dim=axis % (c[0].ndim + 1)))
    values.update((name, out) for name, out in zip(node.outputs, [*states, *stacked]) if name)


#: op type -> ``run(node, values, static, run_nodes)``
CONTROL = {"If": if_, "Loop": loop, "Scan": scan}
