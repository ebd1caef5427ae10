"""fw_debugger: see and stop every step of an fw model.

The public names are resolved on first use (a module ``__getattr__``), so ``import
fw_debugger`` and loading the plugin stay cheap; each name lives in the module listed below.
Two names are also the names of their modules (``record``, ``compare``): the package keeps the
function, not the submodule the import system would bind over it.
"""

from __future__ import annotations

from fw_core.lazy import lazy_api

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

lazy_api(__name__, _API)
