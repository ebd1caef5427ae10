"""Process-wide switches PyTorch keeps at top level: the default floating dtype and the
deterministic-algorithms mode.

Unlike grad mode (per thread, :mod:`fw_core._state`), these are global to the process, as in
PyTorch; they are read where a dtype is chosen or a kernel is picked, never per op.
"""

from __future__ import annotations

from . import dtypes as _dt
from .errors import DTypeError

__all__ = ["are_deterministic_algorithms_enabled", "get_default_dtype",
           "is_deterministic_algorithms_warn_only_enabled", "set_default_dtype",
           "use_deterministic_algorithms"]


def set_default_dtype(d) -> None:
    """Make ``d`` (float16, float32 or float64) the dtype of new floating tensors: factories
    (``fw.zeros``, ``fw.rand``, ...) without ``dtype=``, ``fw.tensor`` of Python floats, and
    integer tensors combined with Python floats or passed to float-result ops, as
    ``torch.set_default_dtype``.

    Raises:
        DTypeError: (a TypeError) for a non-floating dtype.
    """
    dtype = _dt.as_dtype(d)
    if dtype.category != _dt.FLOATING:
        raise DTypeError("only floating-point types are supported as the default type",
                         op="set_default_dtype", hint="pass fw.float32 or fw.float64")
    _dt.default_float = dtype


def get_default_dtype():
    """The dtype new floating tensors get (float32 unless :func:`set_default_dtype` changed
    it)."""
    return _dt.default_float


class _Determinism:
    enabled = False
    warn_only = False


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms, as ``torch.use_deterministic_algorithms``.

    fw's CPU kernels (NumPy, Numba) are deterministic already: the same inputs give the same
    bits on every run, so on the CPU the switch only records the request (and is reported by
    :func:`are_deterministic_algorithms_enabled`). On CUDA, kernels that scatter-add with
    atomics (``index_add``, an embedding's gradient) may sum in a different order from run to
    run; this switch does not replace them, nor raise for them as PyTorch does. Random draws
    come from seeded generators (``fw.manual_seed``) either way.
    """
    _Determinism.enabled = bool(mode)
    _Determinism.warn_only = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether :func:`use_deterministic_algorithms` switched the mode on."""
    return _Determinism.enabled


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether the deterministic mode was switched on with ``warn_only=True``."""
    return _Determinism.warn_only
