"""Compiled mode: tracing into a graph, passes, plans cached per signature (DESIGN.md §5).

``fw.compile(fn_or_module)`` returns a :class:`CompiledFunction`; ``fw.compile.explain()``
says what every compiled function did and why.
"""

from __future__ import annotations

import weakref

from ..lazy import lazy_api

_compiled: weakref.WeakSet = weakref.WeakSet()


class _Compile:
    """``fw.compile(fn)`` / ``fw.compile(module)``; ``fw.compile.explain()``, ``.reset()``."""

    def __call__(self, fn=None, *, name: str | None = None):
        if fn is None:  # @fw.compile(name=...)
            return lambda f: self(f, name=name)
        from .function import CompiledFunction

        compiled = CompiledFunction(fn, name)
        _compiled.add(compiled)
        return compiled

    def explain(self) -> str:
        """What every live compiled function compiled, rebuilt or left eager, and why; then
        the counters of the kernel caches (fw's generated kernels, and each plugin's)."""
        parts = [f.explain() for f in sorted(_compiled, key=lambda f: f.name)]
        return "\n".join([*(parts or ["no compiled functions"]), _caches()])

    def reset(self) -> None:
        """Forget the plans of every compiled function."""
        for f in list(_compiled):
            f.reset()

    def __repr__(self) -> str:
        return "<fw.compile>"


def _caches() -> str:
    from .. import plugins
    from .passes.fuse import kernel_cache_info

    rows = [{"name": "fused kernels", "plugin": "fw_core", **kernel_cache_info()},
            *plugins.kernel_caches()]
    lines = ["kernel caches:"]
    for row in rows:
        counters = ", ".join(f"{k} {v}" for k, v in row.items() if k not in ("name", "plugin"))
        lines.append(f"  {row['name']} ({row['plugin']}): {counters}")
    return "\n".join(lines)


compile = _Compile()  # noqa: A001 - fw.compile, as torch.compile
traceable = compile

__all__ = ["CompiledFunction", "compile", "traceable"]

# the tracer and passes load with the first compiled function (a fusion rule's record, which
# plugins import at load, needs only .ir and .epilogue)
lazy_api(__name__, {"CompiledFunction": "function"}, export=False)
