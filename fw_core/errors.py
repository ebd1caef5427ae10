"""Errors that read like a teacher: what arrived, what was expected, and what to do.

Every fw error derives from :class:`FwError` and also from the built-in exceptions a Python or
PyTorch user would catch for the same mistake, so existing ``except`` clauses keep working: a
``ShapeError`` is a ``ValueError`` and, as PyTorch raises for shape mismatches, a
``RuntimeError``; a ``DTypeError`` a ``TypeError`` and a ``RuntimeError`` (PyTorch's dtype
mismatches); an index out of range an ``IndexError``.
"""

from __future__ import annotations


class FwError(Exception):
    """Base of all fw errors.

    Args:
        message: one sentence saying what went wrong.
        op: the op that was running, if any.
        module: the module path whose forward was running (``encoder.layers.0.fc1``).
        inputs: a description of what arrived (shapes, dtypes, devices).
        hint: what the user can do about it.
    """

    def __init__(self, message: str, *, op: str | None = None, module: str | None = None,
                 inputs: str | None = None, hint: str | None = None):
        self.message = message
        self.op = op
        self.module = module
        self.inputs = inputs
        self.hint = hint
        super().__init__(message)

    def __str__(self) -> str:
        head = f"{self.op}: {self.message}" if self.op else self.message
        lines = [head]
        if self.module:
            lines.append(f"  in module: {self.module}")
        if self.inputs:
            lines.append(f"  inputs:    {self.inputs}")
        if self.hint:
            lines.append(f"  fix:       {self.hint}")
        return "\n".join(lines)


class ShapeError(FwError, ValueError, RuntimeError):
    """Input shapes that an op cannot combine."""


class IndexOutOfRangeError(ShapeError, IndexError):
    """An index outside a dimension (also an IndexError, as in PyTorch and Python)."""


class DTypeError(FwError, TypeError, RuntimeError):
    """A dtype an op, device or conversion does not support."""


class MissingKeyError(FwError, KeyError):
    """A name that is not in a mapping fw keeps (a ModuleDict entry, ...); also a KeyError."""

    __str__ = FwError.__str__  # not KeyError's repr() of the message


class DeviceError(FwError, RuntimeError):
    """A device that is missing, unavailable, or mixed with another in one op."""


class PluginError(FwError, RuntimeError):
    """A plugin that could not be loaded, or plugins that conflict."""


class AutogradError(FwError, RuntimeError):
    """A backward pass that cannot run as asked (freed graph, modified saved tensor, ...)."""


class UnsupportedError(FwError, NotImplementedError):
    """An op, argument or combination fw does not implement (yet), with what to do instead."""


class KernelError(FwError, RuntimeError):
    """A kernel failed on inputs its op's meta rule accepted: a bug in a plugin's kernel."""


class StateDictError(FwError, RuntimeError):
    """A state dict that does not fit a module or optimizer (missing, unexpected or mis-shaped
    entries)."""


class CheckpointError(FwError, OSError):
    """A checkpoint file that is missing, truncated, corrupt or from another model."""


class NonFiniteError(FwError, RuntimeError):
    """A total gradient norm that is NaN or infinite, so clipping cannot make it finite."""


class ArgumentError(FwError, ValueError):
    """An argument outside the range an op, layer, optimizer or scheduler accepts
    (``arange(step=0)``, ``Dropout(1.5)``, ``Conv2d(kernel_size=0)``, ``lr < 0``, ...)."""


class InvalidArgumentError(ArgumentError, RuntimeError):
    """An argument value PyTorch's kernels refuse with a RuntimeError (an unknown
    ``rounding_mode``, ``clamp`` with neither bound); still an ArgumentError (a ValueError)."""


class ArgumentTypeError(FwError, TypeError):
    """An argument of a type that cannot work: a Python list where a tensor goes, a float
    where a size goes, a number where a module goes, or a call with the wrong arguments."""


class OutOfMemoryError(FwError, MemoryError):
    """An allocation larger than the device can give: the message says how many bytes were
    asked for and what the device has."""


class DivisionByZeroError(FwError, ZeroDivisionError, RuntimeError):
    """Integer division or remainder by zero (a float division gives inf or NaN instead).
    Also a ``RuntimeError``, as PyTorch raises for integer tensors."""


class ExportError(FwError, RuntimeError):
    """A run ``fw.export`` cannot write as a program (a host read, a size no size expression
    describes, an op fw-edge does not run), naming the op, its module path and what to do."""


class MissingNameError(FwError, AttributeError):
    """A name fw does not have (a PyTorch name, mostly): the message names fw's equivalent, or
    says there is none yet. Also an AttributeError, so ``hasattr`` and ``getattr(x, name,
    default)`` behave as for any missing attribute.

    ``name`` and ``obj`` stay None, even where the interpreter sets them on an AttributeError:
    from them Python would append a "Did you mean" guess, a spelling neighbour that is rarely
    what a PyTorch name means in fw.
    """

    name = property(lambda self: None, lambda self, value: None)
    obj = property(lambda self: None, lambda self, value: None)
