"""The Graph IR a trace produces and the passes rewrite.

A graph is a list of *steps* in program order over SSA *values*:

- :class:`Value`: one array. ``source`` says where it comes from at run time: ``"input"`` (the
  compiled function's argument number ``payload``), ``"external"`` (a tensor that lives outside
  the graph, read when the plan starts: a parameter, a buffer, optimizer state), ``"grad"`` (the
  ``.grad`` of leaf ``payload``, read when the plan starts), ``"const"`` (an array fixed at
  trace time), ``"host"`` (made again on every run by ``payload()``, e.g. a dropout mask) or
  ``"node"`` (the output of step ``producer``).
- :class:`Node`: one op applied to values and Python scalars, with its attributes.
- :class:`Group`: nodes fused into one generated kernel (made by the fusion pass).
- :class:`Effect`: host work with side effects that must run in order: giving a leaf its
  ``.grad``, an optimizer step's bookkeeping, a write into an external tensor.

Every step exposes ``reads`` (values it needs) and ``writes`` (values it defines), which is all
the generic passes (dead code, liveness) look at.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

SOURCES = ("input", "external", "grad", "const", "host", "node")


class Value:
    """One array in the graph (SSA: defined once). ``strides`` are the traced array's when it
    was not C-contiguous (a transposed or expanded view), else None."""

    __slots__ = ("index", "shape", "dtype", "source", "payload", "producer", "strides")

    def __init__(self, index: int, shape: tuple, dtype: np.dtype, source: str,
                 payload: Any = None, producer=None):
        self.index = index
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.source = source
        self.payload = payload
        self.producer = producer
        self.strides = None

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def __repr__(self) -> str:
        return f"%{self.index}:{self.dtype.name}{list(self.shape)}<{self.source}>"


class Node:
    """An op applied to values (and Python scalars / None, kept inline)."""

    __slots__ = ("op", "inputs", "attrs", "out", "module", "phase")

    def __init__(self, op, inputs: tuple, attrs: dict, out: Value, module: str, phase: str):
        self.op = op
        self.inputs = inputs
        self.attrs = attrs
        self.out = out
        self.module = module
        self.phase = phase  # "forward", "backward" or "update"

    @property
    def reads(self) -> tuple[Value, ...]:
        return tuple(v for v in self.inputs if v.__class__ is Value)

    @property
    def writes(self) -> tuple[Value, ...]:
        return (self.out,)

    def key(self) -> tuple:
        """What makes two nodes compute the same thing (for common-subexpression elimination)."""
        args = tuple(v.index if v.__class__ is Value else ("scalar", type(v).__name__, v)
                     for v in self.inputs)
        return (self.op.name, args, _freeze(self.attrs))

    def __repr__(self) -> str:
        args = ", ".join(repr(v) for v in self.inputs)
        attrs = "".join(f", {k}={v!r}" for k, v in self.attrs.items())
        return f"{self.out!r} = {self.op.name}({args}{attrs})"


class Group:
    """Nodes fused into one kernel by a fusion rule.

    ``inputs`` are the values the group reads from outside it, ``outputs`` the values it
    defines that are used outside it (in that order the generated kernel takes and returns them).
    ``kernel`` is ``fn(*input_arrays) -> tuple of output arrays`` (set by the code generator).
    """

    __slots__ = ("nodes", "inputs", "outputs", "rule", "kernel", "structure")

    def __init__(self, nodes: list[Node], inputs: list[Value], outputs: list[Value],
                 rule=None, structure: str = ""):
        self.nodes = nodes
        self.inputs = inputs
        self.outputs = outputs
        self.rule = rule
        self.kernel: Callable | None = None
        self.structure = structure

    @property
    def reads(self) -> tuple[Value, ...]:
        return tuple(self.inputs)

    @property
    def writes(self) -> tuple[Value, ...]:
        return tuple(self.outputs)

    @property
    def module(self) -> str:
        return self.nodes[0].module

    @property
    def phase(self) -> str:
        return self.nodes[0].phase

    def unfused(self, device: str) -> Callable | None:
        """``run(*input_arrays) -> list of output arrays``: the group's nodes one by one, each by
        ``device``'s kernel, which is what the fused kernel replaces (the fusion pass measures
        the two against each other; a fused kernel runs this for the calls it cannot take).
        None when a node has no kernel on ``device``."""
        from ..ops.registry import kernel as kernel_of

        steps = [(node, kernel_of(node.op, device)) for node in self.nodes]
        if any(kernel is None for _, kernel in steps):
            return None
        inputs, outputs = self.inputs, self.outputs

        def run(*arrays):
            env = {v.index: a for v, a in zip(inputs, arrays)}
            for node, kernel in steps:
                args = [env[v.index] if v.__class__ is Value else v for v in node.inputs]
                env[node.out.index] = kernel(*args, **node.attrs)
            return [env[v.index] for v in outputs]

        return run

    def signature(self) -> tuple:
        """Everything a generated kernel depends on except sizes: ops, attributes, scalars,
        dtypes, ranks and which dimensions each input broadcasts over. Kernels are cached by it,
        so a new batch size or sequence length reuses them."""
        local = {}
        for i, v in enumerate(self.inputs):
            local[v.index] = ("in", i)
        body = []
        for n, node in enumerate(self.nodes):
            args = tuple(local.get(v.index, v.index) if v.__class__ is Value else
                         ("scalar", type(v).__name__, v) for v in node.inputs)
            body.append((node.op.name, args, _freeze(node.attrs)))
            local[node.out.index] = ("node", n)
        ranks = tuple((v.dtype.str, tuple(d == 1 for d in v.shape)) for v in self.inputs)
        outs = tuple(local[v.index] for v in self.outputs)
        out_ranks = tuple((v.dtype.str, len(v.shape)) for v in self.outputs)
        return (tuple(body), ranks, outs, out_ranks)

    def __repr__(self) -> str:
        ops = "+".join(n.op.name for n in self.nodes)
        return f"{self.outputs!r} = fused[{ops}]({', '.join(map(repr, self.inputs))})"


class Effect:
    """Host work with side effects, kept in program order.

    ``run(arrays)`` receives the arrays of ``reads`` (in order) when the plan reaches it.
    ``kind`` is "set_grad", "assign", "call" or "update"; ``what`` is a short description for
    explain(); ``target`` is the tensor a "set_grad" or "assign" effect writes, and for an
    "update" effect (an optimizer step's host work, see :mod:`.updates`) the update nodes after
    it, whose attributes its ``run`` returns for each run (None for host calls).
    """

    __slots__ = ("kind", "reads", "run", "what", "target")

    def __init__(self, kind: str, reads: tuple[Value, ...], run: Callable, what: str,
                 target=None):
        self.kind = kind
        self.reads = reads
        self.run = run
        self.what = what
        self.target = target

    @property
    def writes(self) -> tuple[Value, ...]:
        return ()

    def __repr__(self) -> str:
        return f"effect {self.kind}: {self.what} ({', '.join(map(repr, self.reads))})"


class Graph:
    """A traced run: its values, its steps in program order, and its outputs.

    ``outputs`` are the values the function returned, and ``rebuild(arrays)`` turns their
    arrays back into the function's return structure (tensors in tuples, dicts, ...).
    """

    def __init__(self):
        self.values: list[Value] = []
        self.inputs: list[Value] = []  # the function's tensor arguments, in order
        self.steps: list = []
        self.outputs: list[Value] = []
        self.rebuild: Callable[[list], Any] = lambda arrays: None
        self.log: list[str] = []  # what the passes did, for explain()
        #: value index -> the array seen while tracing (dropped once the plan is built)
        self.samples: dict[int, np.ndarray] = {}

    def value(self, shape, dtype, source: str, payload=None, producer=None) -> Value:
        v = Value(len(self.values), shape, dtype, source, payload, producer)
        self.values.append(v)
        return v

    def nodes(self) -> list[Node]:
        """Every op node, including those inside fused groups, in order."""
        found = []
        for step in self.steps:
            if step.__class__ is Node:
                found.append(step)
            elif step.__class__ is Group:
                found.extend(step.nodes)
        return found

    def users(self) -> dict[int, list]:
        """value index -> the steps that read it."""
        users: dict[int, list] = {}
        for step in self.steps:
            for v in step.reads:
                users.setdefault(v.index, []).append(step)
        return users

    def __repr__(self) -> str:
        lines = [f"graph ({len(self.steps)} steps, outputs {self.outputs!r})"]
        lines += [f"  {step!r}" for step in self.steps]
        return "\n".join(lines)


def _freeze(value):
    """A hashable form of an attribute value (lists and dicts included)."""
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return value
