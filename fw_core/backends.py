"""fw.backends: the switches PyTorch programs set on ``torch.backends``, kept where fw has a
matching behaviour and accepted (stored, readable, effect-free) where it has none.

What each flag does in fw:

- ``cudnn.enabled``, ``cudnn.benchmark``, ``cudnn.deterministic``, ``cudnn.allow_tf32``: fw
  calls no cuDNN (fw_cuda's convolutions are CuPy products and fw's own CUDA C kernels), so
  there is no algorithm to pick or to autotune; the flags are stored and change nothing.
  ``cudnn.is_available()`` is False and ``cudnn.version()`` None, as in a PyTorch build
  without cuDNN.
- ``cuda.matmul.allow_tf32``: fw_cuda's float32 products run in full float32 (CuPy without
  ``CUPY_TF32``), which is what PyTorch's default ``False`` means; ``True`` is stored and
  does not switch TF32 on. ``allow_fp16_reduced_precision_reduction`` and
  ``allow_bf16_reduced_precision_reduction`` likewise.
- ``mkldnn.is_available()``: whether the fw_onednn plugin (oneDNN kernels for ``cpu``) is
  loaded. ``mkldnn.enabled`` is stored and changes nothing: to run without oneDNN, block the
  plugin (``FW_DISABLE_PLUGINS=fw_onednn``, or ``fw.plugins.use`` without it).
- ``cuda.is_built()``, ``mps.is_built()``: whether a loaded plugin provides the device type;
  ``mps.is_available()``: whether it is usable here (no fw plugin provides ``mps`` yet).

Assigning a flag anything but a bool raises an InvalidArgumentError (a TypeError and, as in
PyTorch, a RuntimeError); an unknown flag name an AttributeError.

>>> fw.backends.cudnn.benchmark = True
>>> fw.backends.cudnn.benchmark
True
"""

from __future__ import annotations

__all__ = ["cuda", "cudnn", "mkldnn", "mps"]

from .device import registry
from .errors import InvalidArgumentError


class Flags:
    """A group of boolean switches with their PyTorch defaults; a name not in the group
    raises AttributeError on reading and on setting, so a misspelled flag is never silently
    kept."""

    def __init__(self, path: str, **defaults: bool):
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_values", dict(defaults))

    def __getattr__(self, name: str):
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError(f"{self._path} has no flag {name!r} (flags: "
                             f"{', '.join(sorted(values))})")

    def __setattr__(self, name: str, value) -> None:
        if name not in self._values:
            raise AttributeError(f"{self._path} has no flag {name!r} (flags: "
                                 f"{', '.join(sorted(self._values))})")
        if not isinstance(value, bool):
            raise InvalidArgumentError(
                f"{self._path}.{name} expects a bool, but got {type(value).__name__}",
                hint=f"{self._path}.{name} = True (or False)")
        self._values[name] = value

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in self._values.items())
        return f"<fw.backends {self._path}: {shown}>"


def _provided(kind: str) -> bool:
    return kind in registry.specs


def _usable(kind: str) -> bool:
    return kind in registry.specs and registry.unavailable_reason(kind) is None


class _Cudnn(Flags):
    """``torch.backends.cudnn``: fw uses no cuDNN; the flags are stored only."""

    def is_available(self) -> bool:
        """False: fw calls no cuDNN on any device."""
        return False

    def version(self) -> None:
        """None, as PyTorch answers without cuDNN."""
        return None


class _Cuda:
    """``torch.backends.cuda``: ``matmul`` flags (stored only) and ``is_built()``."""

    def __init__(self):
        self.matmul = Flags("backends.cuda.matmul", allow_tf32=False,
                            allow_fp16_reduced_precision_reduction=True,
                            allow_bf16_reduced_precision_reduction=True)

    def is_built(self) -> bool:
        """Whether a loaded plugin provides the ``cuda`` device (fw_cuda), usable or not."""
        return _provided("cuda")


class _Mps:
    """``torch.backends.mps``: Apple GPUs, which no fw plugin provides yet."""

    def is_available(self) -> bool:
        """Whether a loaded plugin's ``mps`` device is usable here."""
        return _usable("mps")

    def is_built(self) -> bool:
        """Whether a loaded plugin provides an ``mps`` device."""
        return _provided("mps")


class _Mkldnn(Flags):
    """``torch.backends.mkldnn``: oneDNN, which fw has as the fw_onednn plugin."""

    def is_available(self) -> bool:
        """Whether fw_onednn is loaded (its oneDNN kernels serve ``cpu`` where they apply)."""
        from . import plugins

        return any(i.name == "fw_onednn" and i.state == plugins.LOADED for i in plugins.info())


cudnn = _Cudnn("backends.cudnn", enabled=True, benchmark=False, deterministic=False,
               allow_tf32=True)
cuda = _Cuda()
mps = _Mps()
mkldnn = _Mkldnn("backends.mkldnn", enabled=True)
