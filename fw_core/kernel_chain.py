"""The kernel that runs each (op, device), built once per load from the kernels plugins keep.

Kernels of one (op, device) form a chain, highest priority first. A kernel with a guard
(``KernelSpec.guard``) takes the calls its guard accepts and hands the others to the next
kernel; the first unguarded kernel takes the rest, and what lies below it never runs. A guard
that looked something up to decide (a cached library primitive for these shapes) may return
the function that runs the call instead of True, so the kernel does not look it up again. So a
library that handles only some dtypes, layouts or attributes (oneDNN, say) serves those, and
fw_cpu serves everything else, decided per call by the guard and never by catching an
exception. The composed chain is a plain function: no lookup or hook call per op.
"""

from __future__ import annotations

import functools
import importlib

from .errors import DTypeError, UnsupportedError
from .records import KernelSpec, LazyKernel


def compose(chain: list[tuple[KernelSpec, str]]):
    """The kernel that runs an (op, device): the first of ``chain`` whose guard takes the call
    (an unguarded kernel takes every call; the rest of the chain never runs)."""
    upto = next((i for i, (spec, _) in enumerate(chain) if spec.guard is None), None)
    fn = _refusing(chain) if upto is None else _callable(*chain[upto])
    for spec, owner in reversed(chain[:upto]):
        fn = _guarded(spec, _callable(spec, owner), fn)
    return fn


def is_lazy(chain: list[tuple[KernelSpec, str]]) -> bool:
    """Whether a kernel or guard of ``chain`` is a :class:`~fw_core.records.LazyKernel` (not
    imported yet): its device's table composes it when the first device of that type is made."""
    return any(isinstance(spec.fn, LazyKernel) or isinstance(spec.guard, LazyKernel)
               for spec, _ in chain)


def _callable(spec: KernelSpec, owner: str):
    return _restricted(spec, owner) if spec.dtypes else _function(spec)


def _function(spec: KernelSpec):
    """The kernel of ``spec``: ``fn`` itself, or what its LazyKernel names."""
    fn = spec.fn
    return _table(fn.table)[fn.op] if isinstance(fn, LazyKernel) else fn


@functools.cache
def _table(name: str) -> dict:
    """What the ``"module:function"`` of a LazyKernel returns, computed once per process."""
    module, _, function = name.partition(":")
    return getattr(importlib.import_module(module), function)()


def name_of(spec: KernelSpec) -> str:
    """The dotted name of the function ``spec`` runs (through partials; what a LazyKernel
    names for one not imported yet): what explanations of dispatch call the implementation."""
    fn = spec.fn
    if isinstance(fn, LazyKernel):
        return f"{fn.table}()[{fn.op!r}]"
    while isinstance(fn, functools.partial):
        fn = fn.func
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    module = getattr(fn, "__module__", None)
    return f"{module}.{name}" if module else name


def guard_of(spec: KernelSpec):
    """The guard of ``spec``: ``guard`` itself, or what its LazyKernel names."""
    guard = spec.guard
    return _table(guard.table)[guard.op] if isinstance(guard, LazyKernel) else guard


def _guarded(spec: KernelSpec, primary, fallback):
    guard = guard_of(spec)

    def kernel(*arrays, **attrs):
        took = guard(*arrays, **attrs)
        if not took:
            return fallback(*arrays, **attrs)
        if callable(took):
            return took(*arrays, **attrs)
        return primary(*arrays, **attrs)

    kernel.__qualname__ = f"guarded[{spec.op}@{spec.device}]"
    return kernel


def _refusing(chain: list[tuple[KernelSpec, str]]):
    """Where every kernel of an (op, device) is guarded: the calls none takes are refused."""
    spec = chain[0][0]
    says = "; ".join(f"{owner} takes {s.takes or 'some calls'}" for s, owner in chain)

    def kernel(*arrays, **attrs):
        raise UnsupportedError(f"no kernel on {spec.device} takes this call ({says})",
                               op=spec.op, hint="convert the inputs to what a kernel takes, "
                               "or install a plugin with an unguarded kernel (fw_cpu has one "
                               "for every core op)")

    return kernel


def describe(chain) -> str | None:
    """How guards split the calls of an (op, device), for dispatch_table()."""
    owners = [owner for _, owner in chain]
    parts = []
    for spec, owner in chain:
        # a plugin with two kernels in the chain (a fast path over its generic kernel): which
        label = owner if owners.count(owner) == 1 else \
            f"{owner}'s {name_of(spec).removeprefix(owner + '.')}"
        if spec.guard is None:
            parts.append(f"else {label}" if parts else None)
            break
        parts.append(f"{label} when it takes the call ({spec.takes or 'its guard holds'})")
    return ", ".join(p for p in parts if p) or None


def _restricted(spec: KernelSpec, owner: str):
    """Wrap a kernel that handles only some dtypes so others get a clear DTypeError."""
    allowed = spec.dtypes
    fn = _function(spec)

    def kernel(*arrays, **attrs):
        for a in arrays:
            dtype = getattr(a, "dtype", None)
            if dtype is not None and dtype.name not in allowed:
                raise DTypeError(
                    f"the {spec.device} kernel of plugin {owner} does not handle {dtype.name}",
                    op=spec.op, hint=f"convert to one of {', '.join(sorted(allowed))}, or run on "
                    "another device")
        return fn(*arrays, **attrs)

    return kernel
