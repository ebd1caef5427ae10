"""fw_debugger: see and stop every step of an fw model.

The public names are resolved on first use (a module ``__getattr__``), so ``import
fw_debugger`` and loading the plugin stay cheap; each name lives in the module listed below.
Two names are also the names of their modules (``record``, ``compare``): the package keeps the
function, not the submodule the import system would bind over it.
"""

from __future__ import annotations

import importlib
import sys
import types

__version__ = "0.1.0"

#: public name -> module of this package that defines it
_API: dict[str, str] = {
    "detect_anomaly": "anomaly",
    "AnomalyError": "anomaly",
    "health_stats": "stats",
    "break_on": "breakpoints",
    "history": "teaching",
    "record": "record",
    "Trace": "record",
    "compare": "compare",
    "Divergence": "compare",
    "step": "record",
    "explain_dispatch": "dispatch",
    "describe": "dispatch",
    "GradientHealth": "health",
    "gradient_health": "health",
    "gradcheck": "checks",
    "gradgradcheck": "checks",
    "check_structure": "checks",
    "explain": "attribution",
    "Attribution": "attribution",
}

__all__ = sorted(_API)


def __getattr__(name: str):
    try:
        module = _API[name]
    except KeyError:
        raise AttributeError(f"module 'fw_debugger' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value) -> None:
        # importing fw_debugger.record binds the submodule as the package's ``record``
        # attribute; the public name is the function of that module
        if _API.get(name) == name and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
