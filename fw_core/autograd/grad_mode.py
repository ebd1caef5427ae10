"""Grad modes: switch recording on and off for a block (or a function, as a decorator).

The mode belongs to the calling thread (as in PyTorch): ``no_grad`` in one thread never
changes what another thread records.
"""

from __future__ import annotations

import functools

from .._state import state


class _GradMode:
    """Sets this thread's grad mode for a ``with`` block or a decorated function."""

    enabled: bool

    def __enter__(self):
        self._previous = state.grad_enabled
        state.grad_enabled = self.enabled
        return self

    def __exit__(self, *exc) -> None:
        state.grad_enabled = self._previous

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradMode):
    """Run ops without recording them for backward (evaluation, parameter updates)."""

    enabled = False


class enable_grad(_GradMode):
    """Record ops again inside a ``no_grad`` block."""

    enabled = True


class inference_mode(_GradMode):
    """Like ``no_grad``: nothing is recorded, so no activation is kept alive for backward.

    fw's eager ops already skip all autograd bookkeeping when nothing is recorded, so this is
    the same switch as ``no_grad``; it exists so PyTorch code reads unchanged.
    """

    enabled = False


class set_grad_enabled(_GradMode):
    """``set_grad_enabled(False)`` as a context or decorator; also sets the mode when called."""

    def __init__(self, mode: bool = True):
        self.enabled = bool(mode)
        self._previous = state.grad_enabled
        state.grad_enabled = self.enabled

    def __enter__(self):
        return self

    def __call__(self, fn):
        state.grad_enabled = self._previous
        mode = self.enabled

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper


def is_grad_enabled() -> bool:
    """Whether this thread's ops are currently recorded for backward."""
    return state.grad_enabled
