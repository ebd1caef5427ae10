"""Plan: a graph after its passes, turned into one generated Python function.

The function is straight-line code over local variables: each step is one call to a kernel (or
a fused kernel, or an effect) with its attributes bound in advance, and each value is dropped
(``del``) after its last use, as the memory plan says. No op lookup, meta rule, Tensor or
autograd node is made per op; what is left per op is one Python call.
"""

from __future__ import annotations

import functools
import threading

import numpy as np

from ..errors import KernelError
from ..ops.dispatch import missing_kernel
from .ir import Effect, Graph, Group, Node, Value

#: how a plan starts by reading each kind of outside value: the name its payload is bound to
#: (prefix + value index; a tensor, an array or a function) and the read of that name
_READS = {"external": ("x", "{}._data"), "grad": ("x", "{}.grad._data"), "const": ("c", "{}"),
          "host": ("h", "{}()")}


class Plan:
    """The executable form of a graph for one signature.

    ``run(args)`` binds the arguments (and reads externals, gradients and host-drawn values),
    runs every step and returns the function's result rebuilt from the output arrays. Threads
    may run one plan at once; a plan with static buffers (the memory plan's) runs them one at a
    time, since every run writes its intermediates into the same buffers.
    """

    def __init__(self, graph: Graph, device, memory_plan=None, allocate=None):
        self.graph = graph
        self.memory_plan = memory_plan
        self.device = device
        self.buffers = _buffers(memory_plan, allocate)
        self._lock = threading.Lock() if self.buffers else None
        self.source, self._fn = self._generate()

    def run(self, args: tuple):
        if self._lock is None:
            return self.graph.rebuild(self._fn(args))
        with self._lock:
            arrays = self._fn(args)
        return self.graph.rebuild(arrays)

    # -- code generation ----------------------------------------------------------------------
    def _generate(self):
        graph = self.graph
        names: dict = {"asarray": np.asarray}
        lines = ["def plan(args):"]
        emit = lines.append
        for v in graph.values:
            if v.source == "input":
                emit(f"    v{v.index} = args[{v.payload}]._data")
            elif v.source in _READS:
                prefix, read = _READS[v.source]
                names[f"{prefix}{v.index}"] = v.payload
                emit(f"    v{v.index} = {read.format(f'{prefix}{v.index}')}")
        frees = self.memory_plan.free_after if self.memory_plan is not None else None
        out_buffers = self.memory_plan.out_buffers if self.memory_plan is not None else {}
        scalars_from: dict[int, str] = {}  # id(update node) -> where its run's scalars are
        for i, step in enumerate(graph.steps):
            if step.__class__ is Node:
                emit("    " + self._node_line(step, i, names, scalars_from.pop(id(step), None)))
            elif step.__class__ is Group:
                names[f"g{i}"] = step.kernel
                ins = ", ".join(f"v{v.index}" for v in step.inputs)
                outs = "".join(f"v{v.index}, " for v in step.outputs)
                buffers = out_buffers.get(i)
                if buffers is not None and any(b is not None for b in buffers):
                    names[f"o{i}"] = tuple(None if b is None else self.buffers[b]
                                           for b in buffers)
                    emit(f"    {outs}= g{i}({ins}, out=o{i})")
                else:
                    emit(f"    {outs}= g{i}({ins})")
            elif step.__class__ is Effect:
                names[f"e{i}"] = step.run
                reads = "".join(f"v{v.index}, " for v in step.reads)
                if step.kind == "update":  # it returns the scalars of its update nodes
                    emit(f"    r{i} = e{i}(({reads}))")
                    scalars_from.update({id(node): f"r{i}[{j}]"
                                         for j, node in enumerate(step.target)})
                else:
                    emit(f"    e{i}(({reads}))")
            if frees is not None and frees[i]:
                emit("    del " + ", ".join(f"v{k}" for k in frees[i]))
        if scalars_from:  # a node fused into a group would run with its traced scalars
            raise KernelError("a fusion rule took an optimizer update node into a fused group",
                              hint="fusion rules leave nodes of ops with effects alone")
        # a constant is one array for every run: each run returns its own copy, as eager makes
        # a new tensor, so a caller writing into one result does not change the next
        outs = "".join(f"v{v.index}.copy(), " if v.source == "const" else f"v{v.index}, "
                       for v in graph.outputs)
        emit(f"    return [{outs}]")
        source = "\n".join(lines) + "\n"
        code = compile(source, "<fw plan>", "exec")
        exec(code, names)  # noqa: S102 - the source is generated above from the graph
        return source, names["plan"]

    def _node_line(self, node: Node, i: int, names: dict, scalars: str | None) -> str:
        """``v = kernel(args)``; ``scalars`` names the attributes of an update node, which its
        update effect computes on every run (the kernel is then bound to none)."""
        args = []
        for j, v in enumerate(node.inputs):
            if v.__class__ is Value:
                args.append(f"v{v.index}")
            elif v is None:
                args.append("None")
            else:
                names[f"s{i}_{j}"] = v
                args.append(f"s{i}_{j}")
        if scalars is None:
            names[f"k{i}"] = _bound_kernel(node, self.device)
        else:
            names[f"k{i}"] = _kernel(node.op, self.device)
            args.append(f"**{scalars}")
        call = f"k{i}({', '.join(args)})"
        if not node.out.shape:  # reductions to a scalar may hand back a NumPy scalar
            call = f"asarray({call})"
        return f"v{node.out.index} = {call}"

    def describe(self) -> str:
        """The generated code, for explain()."""
        return self.source


def _kernel(op, device):
    return device.kernels.get(op) or missing_kernel(op, device)


def _bound_kernel(node: Node, device):
    kernel = _kernel(node.op, device)
    return functools.partial(kernel, **node.attrs) if node.attrs else kernel


def _buffers(memory_plan, allocate) -> list:
    if memory_plan is None:
        return []
    allocate = allocate or (lambda shape, dtype: np.empty(shape, dtype))
    return [allocate(shape, dtype) for shape, dtype in memory_plan.buffers]
