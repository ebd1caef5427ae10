"""Parameter: a tensor a Module owns and an optimizer updates."""

from __future__ import annotations

from .. import memory
from ..tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that requires grad by default and registers itself on a Module.

    ``Parameter(fw.randn(3, 4))`` shares the tensor's storage. Its bytes count under the
    "parameter" tag of ``fw.memory.summary()`` while it lives.
    """

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            from ..ops.creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            from ..ops.creation import tensor

            data = tensor(data)
        p = Tensor._wrap(data._data, data._device)
        p.__class__ = cls
        if requires_grad:
            p.requires_grad_(True)
        return memory.track(p, "parameter")

    def __init__(self, data=None, requires_grad: bool = True):
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()
