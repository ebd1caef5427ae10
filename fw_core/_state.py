"""Process-wide switches read on the per-op path: one object, attribute reads only."""

from __future__ import annotations


class _State:
    __slots__ = ("grad_enabled", "module_path", "inspecting", "inspectors", "tracer")

    def __init__(self):
        self.grad_enabled = True
        #: dotted path of the module whose forward is running ("" outside any module)
        self.module_path = ""
        #: True while at least one inspector is active; the only inspector cost per op
        self.inspecting = False
        self.inspectors: tuple = ()
        #: the compile Tracer recording the current run, or None (it also sets ``inspecting``)
        self.tracer = None


state = _State()
