"""The memory plan of a program for one input-shape signature, and the call that runs it.

Planning resolves every value's shape, picks each node's kernel and builds its step, then lays
the intermediate values out in a few reused buffers: a value's buffer is free again once the
value and every view of it are dead (a reshape, permute, getitem or broadcast result aliases
its input, so the input lives as long as the view). Views of the program's own buffers and
weights are computed once, here. A call then only allocates its outputs (fresh arrays each
call, so results of earlier calls stay valid) and runs the steps; the intermediates are the
same arrays every call. The call is one generated function, a line per step with the arrays
bound as its globals, so it costs little more than the kernels it calls.
"""

from __future__ import annotations

import numpy as np

from . import blas
from .errors import EdgeError
from .kernel_api import ArraySpec, NodeSpec, View
from .sizes import resolve, resolve_shape
from .thread_choice import ThreadChoice

_INPUT, _WEIGHT, _BUFFER, _FRESH, _VIEW = range(5)


class Plan:
    """A program planned for one signature: ``run(args)`` computes the outputs.

    Attributes:
        buffers: the arrays the intermediates live in (reused by every call).
        intermediates: how many values the buffers hold (more than ``len(buffers)`` when
            values share a buffer after one of them died).
        scratch: the kernels' working arrays.
        source: the generated code of ``run`` (a line per step).
        thread_choice: for a plan of few-row matrix products
            (:func:`fw_edge.blas.prefers_one_thread`), the
            :class:`~fw_edge.thread_choice.ThreadChoice` running each call on NumPy's BLAS
            threads or on one, whichever its recent calls found faster; else None.
    """

    def __init__(self, spec, table, sizes: dict[str, int]):
        self.spec, self.sizes = spec, sizes
        self.arrays = {v: ArraySpec(resolve_shape(value.shape, sizes), value.dtype, None)
                       for v, value in spec.values.items()}
        for v, array in spec.weights.items():
            self.arrays[v] = ArraySpec(array.shape, array.dtype, True, array)
        self._scratch: dict[tuple, np.ndarray] = {}
        self.kind = {p.value: _INPUT for p in spec.inputs} | dict.fromkeys(spec.weights, _WEIGHT)
        outputs = {p.value for p in spec.outputs}
        self.steps = [self._build(node, table, outputs) for node in spec.nodes]
        self.fixed: dict[int, np.ndarray] = dict(spec.weights)  # arrays every call shares
        self.buffers, self.intermediates = self._lay_out()
        self.scratch = list(self._scratch.values())
        self.namespace: dict = {"empty": np.empty}
        self.lines = [self._line(i, node, step) for i, (node, step) in
                      enumerate(zip(spec.nodes, self.steps))]
        self.run = self._generate()
        shapes = {v: a.shape for v, a in self.arrays.items()}
        controls = blas.controls() if blas.prefers_one_thread(spec.nodes, shapes) else None
        self.thread_choice = None
        if controls is not None:
            self.thread_choice = ThreadChoice((self.run, blas.one_thread(self.run, *controls)))
            self.run = self.thread_choice

    # -- kernels ----------------------------------------------------------------------------
    def _build(self, node, table, outputs):
        """The node's step (Writes or View) from the best kernel whose guard accepts it."""
        counter = iter(range(1 << 30))

        def scratch(shape, dtype):
            key = (tuple(shape), np.dtype(dtype), next(counter))
            if key not in self._scratch:
                self._scratch[key] = np.empty(key[0], key[1])
            return self._scratch[key]

        spec = NodeSpec(node.op, resolve(node.attrs, self.sizes),
                        tuple(None if v is None else self.arrays[v] for v in node.inputs),
                        tuple(self.arrays[v] for v in node.outputs), node.module, scratch)
        try:
            record = next((r for r in table[node.op] if r.guard is None or r.guard(spec)), None)
            if record is None:
                raise EdgeError(f"no kernel of fw-edge or its providers runs {spec.where} for "
                                f"inputs {_specs_text(spec.inputs)} and attributes "
                                f"{spec.attrs}; export the model without it, or install a "
                                "provider that runs it")
            step = record.factory(spec)
        except EdgeError:
            raise
        except Exception as exc:
            raise EdgeError(f"the kernel for {spec.where} cannot run inputs "
                            f"{_specs_text(spec.inputs)} with attributes {spec.attrs}: "
                            f"{type(exc).__name__}: {exc}") from exc
        view = step.__class__ is View
        for v in node.outputs:
            self.arrays[v] = self.arrays[v]._replace(contiguous=step.contiguous if view else True)
            self.kind[v] = _VIEW if view else _FRESH if v in outputs else _BUFFER
        return step

    # -- memory -----------------------------------------------------------------------------
    def _lay_out(self) -> tuple[list[np.ndarray], int]:
        """Assign each intermediate a buffer, reusing buffers whose values are dead; allocate
        them; compute the views that only depend on buffers and weights."""
        nodes = self.spec.nodes
        root = {v: v for v in self.kind}
        for node, step in zip(nodes, self.steps):
            if step.__class__ is View:
                root[node.outputs[0]] = root[node.inputs[0]]
        last = {}
        for i, node in enumerate(nodes):
            for v in node.outputs:
                last.setdefault(root[v], i)
            for v in node.inputs:
                if v is not None:
                    last[root[v]] = i
        for port in self.spec.outputs:
            last[root[port.value]] = len(nodes)
        sizes: list[int] = []   # bytes of each logical buffer
        free: list[int] = []
        where: dict[int, int] = {}
        for i, node in enumerate(nodes):
            for v in node.outputs:
                if self.kind[v] == _BUFFER:
                    where[v] = _take(free, sizes, _nbytes(self.arrays[v]))
            for v in {root[u] for u in (*node.inputs, *node.outputs) if u is not None}:
                if last.get(v) == i and v in where:
                    free.append(where[v])
        buffers = [np.empty(n, np.uint8) for n in sizes]
        for v, b in where.items():
            a = self.arrays[v]
            self.fixed[v] = buffers[b][:_nbytes(a)].view(a.dtype).reshape(a.shape)
        self.static = {v for v, k in self.kind.items() if k in (_WEIGHT, _BUFFER)}
        for node, step in zip(nodes, self.steps):
            if step.__class__ is View and all(v is None or v in self.static for v in node.inputs):
                self.fixed[node.outputs[0]] = step.fn(
                    *(None if v is None else self.fixed[v] for v in node.inputs))
                self.static.add(node.outputs[0])
        return buffers, len(where)

    # -- the call ---------------------------------------------------------------------------
    def _name(self, v) -> str:
        """How the generated code names value ``v``: a global for the arrays every call
        shares, a local for the rest."""
        if v is None:
            return "None"
        if v in self.static:
            self.namespace[f"g{v}"] = self.fixed[v]
            return f"g{v}"
        return f"v{v}"

    def _line(self, i: int, node, step) -> str:
        """The code running node ``i`` (empty for a view computed at planning)."""
        self.namespace[f"k{i}"] = step.fn
        ins = ", ".join(map(self._name, node.inputs))
        if step.__class__ is View:
            return "" if node.outputs[0] in self.static else f"v{node.outputs[0]} = k{i}({ins})"
        outs = [self._name(v) for v in node.outputs]
        out = outs[0] if len(outs) == 1 else f"({', '.join(outs)},)"
        return f"k{i}({out}{', ' if ins else ''}{ins})"

    def _prologue(self) -> list[str]:
        """Lines binding the inputs and allocating the fresh outputs."""
        lines = [f"v{p.value} = args[{k}]" for k, p in enumerate(self.spec.inputs)]
        for v, kind in self.kind.items():
            if kind == _FRESH:
                self.namespace[f"s{v}"] = (self.arrays[v].shape, self.arrays[v].dtype)
                lines.append(f"v{v} = empty(*s{v})")
        return lines

    def _generate(self):
        """``run(args)``: the outputs (one array, a tuple, or a dict by name)."""
        results = [self._name(p.value) + ("" if self.kind[p.value] == _FRESH else ".copy()")
                   for p in self.spec.outputs]
        names = [p.name for p in self.spec.outputs]
        if len(results) == 1:
            result = results[0]
        elif all(n != f"output_{i}" for i, n in enumerate(names)):
            result = "{" + ", ".join(f"{n!r}: {r}" for n, r in zip(names, results)) + "}"
        else:
            result = "(" + ", ".join(results) + ",)"
        body = [*self._prologue(), *filter(None, self.lines), f"return {result}"]
        source = "def run(args):\n" + "".join(f"    {line}\n" for line in body)
        exec(compile(source, "<fw_edge plan>", "exec"), self.namespace)  # noqa: S102
        self.source = source
        return self.namespace["run"]

    def diagnose(self, args, exc: Exception) -> EdgeError:
        """The error naming the node that failed with ``exc`` during a call on ``args``,
        found by running the steps again one at a time."""
        local = {"args": args}
        for line in self._prologue():
            exec(line, self.namespace, local)  # noqa: S102
        for node, line in zip(self.spec.nodes, self.lines):
            try:
                exec(line, self.namespace, local)  # noqa: S102
            except Exception as again:
                shapes = ", ".join("None" if v is None else str(
                    (self.fixed.get(v) if v in self.static else local.get(f"v{v}")).shape)
                    for v in node.inputs)
                return EdgeError(f"{node.where} failed on inputs of shapes ({shapes}): "
                                 f"{type(again).__name__}: {again}; check the inputs' values "
                                 "(e.g. indices in range)")
        return EdgeError(f"the program failed: {type(exc).__name__}: {exc}")


def _nbytes(a: ArraySpec) -> int:
    count = 1
    for n in a.shape:
        count *= n
    return count * a.dtype.itemsize


def _take(free: list[int], sizes: list[int], need: int) -> int:
    """A logical buffer for ``need`` bytes: the smallest free one that fits, else the largest
    free one grown to fit, else a new one."""
    if free:
        fits = [b for b in free if sizes[b] >= need]
        b = min(fits, key=sizes.__getitem__) if fits else max(free, key=sizes.__getitem__)
        free.remove(b)
        sizes[b] = max(sizes[b], need)
        return b
    sizes.append(need)
    return len(sizes) - 1


def _specs_text(specs) -> str:
    return "(" + ", ".join("None" if s is None else f"{s.dtype}{list(s.shape)}"
                           for s in specs) + ")"
