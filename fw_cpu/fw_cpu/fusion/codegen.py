"""Numba source for a fused elementwise group, with an optional trailing sum / mean / sum_to.

The group's elementwise nodes all have one output shape, the *iteration shape*; inputs may
broadcast to it. Which dimensions an input broadcasts over is part of the group's signature,
so the loop is written for that pattern and reused for any sizes: adjacent dimensions where
every input (and the reduction) behaves alike are collapsed into one loop (a bias add over
(batch, seq, features) becomes a 2-level loop over (batch*seq, features)), and a broadcast
dimension is indexed with 0. The kernel is a plain Python wrapper (shapes, allocation, the
serial or parallel choice) around ``@njit`` loops; both live in one generated file so Numba
can cache them on disk (see :mod:`.loader`).

Every node's result is rounded to its value's dtype, as the unfused kernels do; reductions
accumulate in float64, so fused sums are at least as accurate as NumPy's pairwise float32 ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from fw_core.compile.ir import Value
from fw_core.compile.layout import compute_dtype, pointwise_layout

from . import loader, render


@dataclass
class _Layout:
    """How a group maps onto collapsed loops."""

    body: list  # elementwise nodes
    reduction: object  # the trailing reduction node, or None
    rank: int  # rank of the iteration shape
    loops: list  # per collapsed loop: (dims of the iteration shape, input k that sets its size)
    full: list  # per input: per collapsed loop, whether the input spans it (else index 0)
    reduced_loops: list  # per collapsed loop: whether the reduction sums over it
    reduced_dims: list  # per iteration dim: whether the reduction sums over it


def generate(group):
    """A kernel ``kernel(*inputs, out=None) -> tuple`` for ``group``, or None if unsupported."""
    layout = _layout(group)
    if layout is None:
        return None
    return loader.load(_source(group, layout)).kernel


def _layout(group) -> _Layout | None:
    common = pointwise_layout(group, render.supports)
    if common is None:
        return None
    # a dimension of size 1 in the iteration shape is 1 for every input: it needs no loop
    active = [d for d in range(common.rank) if common.shape[d] != 1]
    loops, full, reduced_loops = [], [[] for _ in group.inputs], []
    previous = None
    for d in active:
        column = (tuple(p[d] for p in common.spans), common.reduced[d])
        if column == previous:
            loops[-1][0].append(d)
            continue
        previous = column
        loops.append(([d], column[0].index(True)))
        for k, spans in enumerate(column[0]):
            full[k].append(spans)
        reduced_loops.append(column[1])
    if not loops:  # a group of one-element values: one loop of one step
        loops, reduced_loops = [([], None)], [False]
        full = [[False] for _ in group.inputs]
    return _Layout(common.body, common.reduction, common.rank, loops, full, reduced_loops,
                   common.reduced)


def _source(group, layout: _Layout) -> str:
    """The generated module: the serial loop, its parallel twin, and the wrapper."""
    parallel = not layout.reduced_loops[0]  # threads must not share an accumulator row
    parts = ["import math", "", "import numpy as np", "from numba import njit, prange", "",
             "from fw_cpu.fusion.loader import PARALLEL_LOCK, PARALLEL_MIN, PARALLEL_OK", "",
             _loop_source(group, layout, "_loop", False)]
    if parallel:
        parts.append(_loop_source(group, layout, "_loop_par", True))
    parts.append(_wrapper_source(group, layout, parallel))
    return "\n".join(parts)


def _index(flags) -> str:
    return ", ".join(f"i{j}" if spans else "0" for j, spans in enumerate(flags))


def _loop_source(group, layout: _Layout, name: str, parallel: bool) -> str:
    count = len(layout.loops)
    names = {v.index: f"x{k}" for k, v in enumerate(group.inputs)}
    outputs = {v.index: m for m, v in enumerate(group.outputs)}
    params = [f"n{j}" for j in range(count)] + [f"in{k}" for k in range(len(group.inputs))]
    params += [f"out{m}" for m, v in enumerate(group.outputs) if v is not _result(layout)]
    if layout.reduction is not None:
        params.append("acc")
    flags = "parallel=True, " if parallel else ""
    lines = [f"@njit({flags}cache=True, error_model='numpy', nogil=True)",
             f"def {name}({', '.join(params)}):"]
    inner_sum = layout.reduction is not None and layout.reduced_loops[-1]
    for j in range(count):
        pad = "    " * (j + 1)
        if inner_sum and j == count - 1:
            lines.append(f"{pad}s = 0.0")
        loop_range = "prange" if parallel and j == 0 else "range"
        lines.append(f"{pad}for i{j} in {loop_range}(n{j}):")
    pad = "    " * (count + 1)
    for k in range(len(group.inputs)):
        lines.append(f"{pad}x{k} = in{k}[{_index(layout.full[k])}]")
    for n, node in enumerate(layout.body):
        ctor = render.constructor(compute_dtype(node))
        args = [names[v.index] if v.__class__ is Value else render.literal(v, ctor)
                for v in node.inputs]
        lines += [pad + line for line in render.node_statements(node, args, f"v{n}")]
        names[node.out.index] = f"v{n}"
        if node.out.index in outputs:
            lines.append(f"{pad}out{outputs[node.out.index]}[{_index([True] * count)}] = v{n}")
    if layout.reduction is not None:
        term = f"np.float64({names[layout.reduction.inputs[0].index]})"
        kept = [not r for r in layout.reduced_loops]
        if inner_sum:
            lines.append(f"{pad}s += {term}")
            lines.append(f"{'    ' * count}acc[{_index(kept)}] += s")
        else:
            lines.append(f"{pad}acc[{_index(kept)}] += {term}")
    return "\n".join(lines) + "\n\n"


def _result(layout: _Layout):
    return None if layout.reduction is None else layout.reduction.out


def _wrapper_source(group, layout: _Layout, parallel: bool) -> str:
    inputs = [f"in{k}" for k in range(len(group.inputs))]
    lines = [f"_NONE = {(None,) * len(group.outputs)!r}", "", "",
             f"def kernel({', '.join(inputs)}, out=None):"]
    lines += [f"    s{k} = in{k}.shape" for k in range(len(group.inputs))]
    dims = {}  # iteration dim -> its size's source text
    for j, (loop_dims, k) in enumerate(layout.loops):
        offset = layout.rank - len(group.inputs[k].shape) if k is not None else 0
        for d in loop_dims:
            dims[d] = f"s{k}[{d - offset}]"
        lines.append(f"    n{j} = {' * '.join(dims[d] for d in loop_dims) or '1'}")
    full_shape = [dims.get(d, "1") for d in range(layout.rank)]
    lines.append(f"    full = ({''.join(s + ', ' for s in full_shape)})")
    lines.append("    o = _NONE if out is None else out")
    sizes = [f"n{j}" for j in range(len(layout.loops))]
    args = list(sizes)
    args += [f"in{k}.reshape({''.join((n if f else '1') + ', ' for n, f in zip(sizes, flags))})"
             for k, flags in enumerate(layout.full)]
    for m, v in enumerate(group.outputs):
        if v is _result(layout):
            continue
        lines += [f"    out{m} = o[{m}]", f"    if out{m} is None:",
                  f"        out{m} = np.empty(full, np.{v.dtype.name})"]
        args.append(f"out{m}.reshape({', '.join(sizes)},)")
    if layout.reduction is not None:
        kept = [("1" if r else n) for n, r in zip(sizes, layout.reduced_loops)]
        lines.append(f"    acc = np.zeros(({', '.join(kept)},), np.float64)")
        args.append("acc")
    lines.append(f"    args = ({', '.join(args)},)")
    if parallel:
        lines += ["    if PARALLEL_OK and n0 > 1 and " + " * ".join(sizes) + " >= PARALLEL_MIN:",
                  "        with PARALLEL_LOCK:", "            _loop_par(*args)", "    else:",
                  "        _loop(*args)"]
    else:
        lines.append("    _loop(*args)")
    if layout.reduction is not None:
        lines += _reduction_result(group, layout, sizes, full_shape)
    lines.append(f"    return ({''.join(f'out{m}, ' for m in range(len(group.outputs)))})")
    return "\n".join(lines) + "\n"


def _reduction_result(group, layout: _Layout, sizes, full_shape) -> list[str]:
    node = layout.reduction
    m = group.outputs.index(node.out)
    shape = node.op.reduction.shape(node.attrs, full_shape, layout.reduced_dims)
    text = "(" + "".join(f"{s}, " for s in shape) + ")"
    lines = [f"    red = acc.reshape({text})"]
    if node.op.reduction.mean:
        count = " * ".join(n for n, r in zip(sizes, layout.reduced_loops) if r) or "1"
        lines.append(f"    red = red / ({count})")
    return lines + [f"    out{m} = o[{m}]", f"    if out{m} is None:",
                    f"        out{m} = red.astype(np.{node.out.dtype.name})",
                    "    else:", f"        out{m}[...] = red"]
