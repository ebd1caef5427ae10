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


class inference_mode:
    """``no_grad`` that also marks every tensor made inside as an *inference tensor*, as
    PyTorch's: ``t.is_inference()`` is True for it, and outside the mode autograd may not save
    it for backward, write into it in place, or make it require grad (each raises an
    AutogradError saying so; ``t.clone()`` gives a normal tensor).

    ``inference_mode(False)`` changes nothing. Usable as ``with``, ``@inference_mode()`` and
    ``@inference_mode``.
    """

    def __new__(cls, mode=True):
        if callable(mode):  # @inference_mode without parentheses
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)

    def __enter__(self):
        self._previous = (state.grad_enabled, state.inference_mode)
        if self.mode:
            state.grad_enabled = False
            state.inference_mode = True
        return self

    def __exit__(self, *exc) -> None:
        state.grad_enabled, state.inference_mode = self._previous

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)

        return wrapper


class InferenceVersions:
    """The version counter of every inference tensor (they have none of their own, as in
    PyTorch): reads as version 0; an in-place write is refused outside inference mode."""

    __slots__ = ()

    def __getitem__(self, index) -> int:
        return 0

    def __setitem__(self, index, value) -> None:
        check_inference_write()


def check_inference_write() -> None:
    """Refuse an in-place write into an inference tensor outside inference mode (called
    before the write, so the tensor is left as it was)."""
    if not state.inference_mode:
        from ..errors import AutogradError

        raise AutogradError(
            "Inplace update to inference tensor outside InferenceMode is not allowed",
            hint="make a clone to get a normal tensor before updating it in place: "
            "t = t.clone()")


#: the shared counter that marks a tensor as an inference tensor (``t._vc is INFERENCE``)
INFERENCE = InferenceVersions()


def is_inference_mode_enabled() -> bool:
    """Whether this thread runs inside ``fw.inference_mode()``."""
    return state.inference_mode


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
