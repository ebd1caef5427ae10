"""Dynamic dimensions: which numbers in a traced graph follow an input's size, and how.

A trace records concrete numbers (``reshape(2, 64, 4, 32)``, ``x[:16]``, a value of shape
``[2, 384]``). The exporter traces the function again with each dynamic dimension one larger,
then compares the graphs number by number: a number that stays put is a constant; one that
moves becomes a *size expression* ``scale * dim_1 * ... * dim_k + offset`` (a JSON object of the
program format), checked against a last trace with every dimension changed at once. What no
such expression fits, or a graph whose ops differ between sizes (a Python loop over the
sequence), is refused with the op and module path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import ExportError


@dataclass(frozen=True)
class Size:
    """``scale * prod(dims) + offset`` for the call's sizes of the named ``dims``."""

    dims: tuple[str, ...]
    scale: int
    offset: int

    def at(self, sizes: dict[str, int]) -> int:
        return self.scale * math.prod(sizes[d] for d in self.dims) + self.offset

    def json(self) -> dict:
        return {"size": {"dims": list(self.dims), "scale": self.scale, "offset": self.offset}}


def shape_entry(entry):
    """A shape entry as the format writes it: an int, a bare dim name, or a size expression."""
    if isinstance(entry, Size):
        if entry.scale == 1 and entry.offset == 0 and len(entry.dims) == 1:
            return entry.dims[0]
        return entry.json()
    return entry


class SizeFitter:
    """Fits the numbers of one base trace against traces at other sizes.

    ``base`` are the example sizes; ``moved[d]`` is the trace with dim ``d`` one larger;
    ``together`` the trace with every dim one larger (None with a single dim)."""

    def __init__(self, base: dict[str, int]):
        self.base = base

    def fit(self, v0: int, moved: dict[str, int], together: int | None, where: str):
        """The constant or :class:`Size` that gives ``v0`` at the base sizes, ``moved[d]`` with
        ``d`` one larger and ``together`` with all of them one larger."""
        deltas = {d: v - v0 for d, v in moved.items() if v != v0}
        if not deltas:
            return v0
        if len(deltas) == 1:
            (d, a), = deltas.items()
            size = Size((d,), a, v0 - a * self.base[d])
        else:
            size = self._product(v0, deltas, where)
        if together is not None and size.at({d: n + 1 for d, n in self.base.items()}) != together:
            raise self._unfit(where, v0)
        return size

    def _product(self, v0: int, deltas: dict[str, int], where: str) -> Size:
        # k * d1 * d2 ...: one dim one larger adds k times the product of the others
        dims = tuple(sorted(deltas))
        rest = {d: math.prod(self.base[e] for e in dims if e != d) for d in dims}
        scales = {deltas[d] // rest[d] for d in dims if deltas[d] % rest[d] == 0}
        if len(scales) != 1 or len([d for d in dims if deltas[d] % rest[d] == 0]) != len(dims):
            raise self._unfit(where, v0)
        k = scales.pop()
        return Size(dims, k, v0 - k * math.prod(self.base[d] for d in dims))

    def _unfit(self, where: str, v0: int) -> ExportError:
        return ExportError(
            f"{where} ({v0} in the example) changes with the dynamic dimensions in a way a size "
            "expression (scale * dim * ... + offset) cannot describe",
            hint="compute the size from the input's shape with one dimension per expression, "
                 "or export with that dimension static (leave it out of dynamic_dims)")


def merge(base, moved: dict[str, object], together, fitter: SizeFitter, where: str):
    """``base`` (an attribute of a node: a nest of lists, tuples, dicts, slices and scalars) with
    every int that moves between the traces replaced by its :class:`Size`."""
    if base.__class__ is bool or base is None or isinstance(base, (float, str)):
        if any(m != base for m in moved.values()) or (together is not None and together != base):
            raise ExportError(f"{where} is {base!r} in the example and changes with a dynamic "
                              "dimension", hint="keep it independent of the input sizes")
        return base
    if isinstance(base, int):
        return fitter.fit(base, moved, together, where)
    if isinstance(base, slice):
        parts = [merge(getattr(base, p), {d: getattr(m, p) for d, m in moved.items()},
                       None if together is None else getattr(together, p), fitter, where)
                 for p in ("start", "stop", "step")]
        return slice(*parts)
    if isinstance(base, (list, tuple)):
        if any(len(m) != len(base) for m in moved.values()):
            raise ExportError(f"{where} has a different length at another input size",
                              hint="keep the number of dimensions independent of the sizes")
        items = [merge(b, {d: m[i] for d, m in moved.items()},
                       None if together is None else together[i], fitter, where)
                 for i, b in enumerate(base)]
        return type(base)(items)
    if isinstance(base, dict):
        return {k: merge(v, {d: m[k] for d, m in moved.items()},
                         None if together is None else together[k], fitter, f"{where}[{k!r}]")
                for k, v in base.items()}
    return base  # dtypes, Ellipsis: compared by the caller's structure check


def fit_graph(base, moved: dict, together, sizes: dict[str, int]):
    """Compare the base graph with the graphs traced at other sizes, step by step. Returns
    ``(attrs, shapes, fills)``: id of each base node whose attributes move -> its attributes
    with :class:`Size` entries; index of each base value -> its shape with sizes; and index of
    each constant made inside the function whose size moves but which holds one value
    throughout (``fw.zeros(batch, hidden)``) -> that value (the program makes it per call)."""
    fitter = SizeFitter(sizes)
    graphs = [*moved.values()] + ([together] if together is not None else [])
    for g in graphs:
        if len(g.steps) != len(base.steps):
            raise ExportError(f"the function runs {len(base.steps)} ops at the example sizes and "
                              f"{len(g.steps)} at other sizes of the dynamic dimensions (a Python "
                              "loop or branch over a size)", hint=_STATIC_HINT)
    attrs, shapes, fills = {}, {}, {}
    for i, step in enumerate(base.steps):
        others = {d: g.steps[i] for d, g in moved.items()}
        last = together.steps[i] if together is not None else None
        where = f"{step.op.name} at {step.module or 'the top level'}"
        traced = [*others.values()] + ([last] if last is not None else [])
        for s in traced:
            if s.op is not step.op:
                raise ExportError(f"op {i} is {where} at the example sizes but {s.op.name} at "
                                  "another size of the dynamic dimensions", hint=_STATIC_HINT)
        merged = merge(step.attrs, {d: s.attrs for d, s in others.items()},
                       None if last is None else last.attrs, fitter, f"the attributes of {where}")
        if merged != step.attrs:
            attrs[id(step)] = merged
        _scalars(step, others, last, fitter, where)
        for k, v in enumerate([*step.reads, step.out]):
            variants = [[*s.reads, s.out][k] for s in traced]
            shape = merge(list(v.shape),
                          {d: list(variants[j].shape) for j, d in enumerate(others)},
                          list(variants[-1].shape) if last is not None else None, fitter,
                          f"the shape of a value of {where}")
            if any(isinstance(n, Size) for n in shape):
                if v.source == "const" and _uniform(v.payload):
                    fills[v.index] = v.payload.reshape(-1)[0].item()
                elif v.source == "const":
                    raise ExportError(
                        f"a tensor made from Python data inside the function, read by {where}, "
                        "has a size that follows a dynamic dimension",
                        hint="derive it from an input with fw ops (x.new_zeros(...), slicing a "
                             "weight), or make it a buffer of the module")
                shapes[v.index] = shape
    return attrs, shapes, fills


def _uniform(array) -> bool:
    flat = array.reshape(-1)
    return flat.size > 0 and bool((flat == flat[0]).all())


def _scalars(step, others, last, fitter, where) -> None:
    """Python numbers passed to an op must not follow a size (a program holds them as constants
    of the op's formula)."""
    for k, x in enumerate(step.inputs):
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            value = merge(x, {d: s.inputs[k] for d, s in others.items()},
                          None if last is None else last.inputs[k], fitter, where)
            if isinstance(value, Size):
                raise ExportError(f"{where} takes the number {x}, which follows a dynamic "
                                  "dimension", hint="compute it with fw ops from the input, or "
                                  "keep that dimension static")


_STATIC_HINT = ("export with that dimension static (leave it out of dynamic_dims), or write the "
                "loop as one op (an nn.LSTM instead of a loop over time steps)")
