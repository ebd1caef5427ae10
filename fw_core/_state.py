"""The switches read on the per-op path, one copy per thread: ``state.<name>`` reads only.

What changes what an op does — grad mode, the module path being run, the active inspectors,
a running recorder — belongs to the thread that set it, as PyTorch keeps grad mode per thread:
two threads training two models, or one evaluating under ``no_grad`` while another trains,
never see each other's settings. ``state`` is a :class:`threading.local`, so every
``from .._state import state`` reads and writes the calling thread's copy. A thread starts with
grad on, outside any module, no recorder and the inspectors that are on from the start
(``Inspector.active``); DataLoader worker threads then take their creator's grad mode.

A read costs ~35 ns against ~5 ns for a plain object's slot (CPython 3.11); the dispatcher
reads three or four per op.
"""

from __future__ import annotations

import threading

#: the inspectors a thread has on when it starts: those registered with ``active=True`` at
#: the last plugin load (set by :func:`fw_core.inspectors._reset`)
initial_inspectors: tuple = ()


class _State(threading.local):
    """One thread's switches; ``__init__`` runs once in each thread, at its first read."""

    def __init__(self):
        self.grad_enabled = True
        #: inside ``fw.inference_mode()``: tensors made here are inference tensors
        self.inference_mode = False
        #: dotted path of the module whose forward is running ("" outside any module)
        self.module_path = ""
        #: the inspectors called on this thread's ops
        self.inspectors: tuple = initial_inspectors
        #: the recorder capturing this thread's run (fw.compile's tracer), or None; see
        #: :mod:`fw_core.capture`
        self.recorder = None
        #: True while an inspector is active or a recorder runs: the only such cost per op
        self.observed = bool(self.inspectors)
        #: inside a backward pass (its gradient rules and gradient sums run as ops)
        self.in_backward = False
        #: the autograd node whose gradient rule is running, or None
        self.vjp_node = None
        #: the update-op calls of the optimizer step being recorded or replayed, or None; see
        #: :func:`fw_core.capture.optimizer_step`
        self.update_calls = None
        #: whether those calls are only collected (a replay: its plan runs the kernels)
        self.defer_updates = False


state = _State()
