"""A loaded program: its signature, the checks a call's inputs pass, and a memory plan per
input-shape signature (built on the first call with those shapes, then reused)."""

from __future__ import annotations

import numpy as np

from .errors import EdgeError
from .planner import Plan
from .sizes import shape_text

#: plans kept per program; the oldest is dropped past this (a new shape plans again)
MAX_PLANS = 8


class Program:
    """A program of a ``.fwm`` file, callable on NumPy arrays.

    ``prog(x)``, ``prog(x, y)`` or ``prog(input_ids=..., attention_mask=...)``: inputs by
    position or by name, each an ``np.ndarray`` (lists are refused: convert them with
    ``np.asarray(..., dtype)`` so the dtype is yours to choose) of the declared dtype, rank and
    fixed sizes, with each named dimension one size across the inputs. Returns one array, a
    tuple of arrays, or a dict by output name (when every output has a name of its own). The
    results are fresh arrays: later calls never overwrite them.

    A Program reuses its buffers from call to call, so one Program must not be called from
    two threads at once (load one per thread).

    Attributes:
        inputs, outputs: the signature, as :class:`~fw_edge.program_spec.Port` records
            (``name``, ``dtype``, ``shape`` with dimension names for dynamic sizes).
        ops: the op names the program uses.
    """

    def __init__(self, spec, table, path):
        self._spec, self._table, self._path = spec, table, path
        self.inputs, self.outputs = spec.inputs, spec.outputs
        self.ops = sorted({node.op for node in spec.nodes})
        self._names = [p.name for p in spec.inputs]
        self._dtypes = [p.dtype for p in spec.inputs]
        self._arity = len(spec.inputs)
        self._plans: dict = {}

    def __repr__(self) -> str:
        def ports(items):
            return ", ".join(f"{p.name}: {p.dtype}{shape_text(p.shape)}" for p in items)
        return f"<fw_edge.Program {self._path}: ({ports(self.inputs)}) -> ({ports(self.outputs)})>"

    def __call__(self, *args, **kwargs):
        if kwargs or len(args) != self._arity:
            args = self._bind(args, kwargs)
        for a, dtype in zip(args, self._dtypes):
            if a.__class__ is not np.ndarray or a.dtype is not dtype:
                self._check_types(args)
                break
        key = args[0].shape if self._arity == 1 else tuple([a.shape for a in args])
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plan(args, key)
        try:
            return plan.run(args)
        except Exception as exc:
            raise plan.diagnose(args, exc) from exc

    def plan_for(self, *args, **kwargs) -> Plan:
        """The memory plan a call with these inputs runs (built if new): for inspecting its
        ``buffers`` and ``intermediates``."""
        args = self._bind(args, kwargs)
        self._check_types(args)
        key = args[0].shape if self._arity == 1 else tuple(a.shape for a in args)
        return self._plans.get(key) or self._plan(args, key)

    # -- checks (off the hot path: they run when the cheap test fails or shapes are new) ---------
    def _bind(self, args: tuple, kwargs: dict) -> tuple:
        """The inputs in signature order, from positional and named arguments."""
        if len(args) > self._arity:
            raise EdgeError(f"the program takes {self._arity} input(s) "
                            f"({', '.join(self._names)}), got {len(args)}; pass one array each")
        bound = dict(zip(self._names, args))
        for name, value in kwargs.items():
            if name not in self._names:
                raise EdgeError(f"the program has no input named {name!r}; its inputs are "
                                f"{', '.join(self._names)}")
            if name in bound:
                raise EdgeError(f"input {name!r} is given twice (by position and by name)")
            bound[name] = value
        missing = [n for n in self._names if n not in bound]
        if missing:
            raise EdgeError(f"input(s) {', '.join(map(repr, missing))} missing: the program "
                            f"takes {', '.join(self._names)}")
        return tuple(bound[n] for n in self._names)

    def _check_types(self, args) -> None:
        for a, port in zip(args, self.inputs):
            if not isinstance(a, np.ndarray):
                raise EdgeError(f"input {port.name!r} is a {type(a).__name__}, the program takes "
                                f"an np.ndarray of {port.dtype} shaped {shape_text(port.shape)}; "
                                f"convert it with np.asarray(value, dtype=np.{port.dtype})")
            if a.dtype != port.dtype:
                raise EdgeError(f"input {port.name!r} is {a.dtype}, the program expects "
                                f"{port.dtype}; convert it with .astype(np.{port.dtype})")

    def _sizes(self, args) -> dict[str, int]:
        """The sizes the inputs give the named dimensions, checking ranks and fixed sizes."""
        sizes: dict[str, int] = {}
        set_by: dict[str, str] = {}
        for a, port in zip(args, self.inputs):
            expected = shape_text(port.shape)
            if a.ndim != len(port.shape):
                raise EdgeError(f"input {port.name!r} has shape {a.shape} ({a.ndim}-d), the "
                                f"program expects {len(port.shape)}-d {expected}")
            for axis, (n, entry) in enumerate(zip(a.shape, port.shape)):
                if isinstance(entry, int) and n != entry:
                    raise EdgeError(f"input {port.name!r} has shape {a.shape}, the program "
                                    f"expects {expected}: dimension {axis} must be {entry}")
                if isinstance(entry, str):
                    if entry in sizes and sizes[entry] != n:
                        raise EdgeError(
                            f"input {port.name!r} has shape {a.shape}: dimension {axis} is "
                            f"{entry!r} = {n}, but {set_by[entry]} set {entry!r} = "
                            f"{sizes[entry]}; give every input the same {entry!r} size")
                    sizes.setdefault(entry, n)
                    set_by.setdefault(entry, f"input {port.name!r}")
        for a, port in zip(args, self.inputs):
            for axis, (n, entry) in enumerate(zip(a.shape, port.shape)):
                if not isinstance(entry, (int, str)) and entry.at(sizes) != n:
                    raise EdgeError(f"input {port.name!r} has shape {a.shape}: dimension {axis} "
                                    f"must be {entry} = {entry.at(sizes)} for these sizes")
        return sizes

    def _plan(self, args, key) -> Plan:
        plan = Plan(self._spec, self._table, self._sizes(args))
        if len(self._plans) >= MAX_PLANS:
            del self._plans[next(iter(self._plans))]
        self._plans[key] = plan
        return plan
