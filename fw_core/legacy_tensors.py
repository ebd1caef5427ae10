"""``fw.FloatTensor`` and its kin: PyTorch's legacy typed constructors, and the types
``isinstance`` checks against.

``fw.FloatTensor([1, 2])`` is a float32 tensor of that data; ``fw.FloatTensor(2, 3)`` one of
that shape (its values unset, as ``fw.empty``); ``fw.FloatTensor()`` an empty one; and
``fw.FloatTensor(t)`` a view of a float32 tensor ``t``. ``isinstance(t, fw.FloatTensor)`` is
whether ``t`` is a float32 tensor on the cpu, as in PyTorch. They are cpu types, as PyTorch's
are.

One difference: fw's shapes are plain tuples, and a tuple is data to these constructors (as in
PyTorch, where only a ``torch.Size`` means sizes), so ``fw.FloatTensor(x.shape)`` gives the
shape's numbers; write ``fw.FloatTensor(*x.shape)`` for a tensor of that shape.
"""

from __future__ import annotations

__all__ = ["BoolTensor", "ByteTensor", "DoubleTensor", "FloatTensor", "IntTensor", "LongTensor"]

import numbers

from . import dtypes
from .device import get as _device
from .errors import ArgumentTypeError, DeviceError, DTypeError
from .ops.creation import empty, tensor
from .tensor import Tensor


class LegacyTensorType:
    """One of PyTorch's legacy tensor types: a constructor of tensors of ``dtype`` on the cpu,
    and what ``isinstance`` checks against (a Tensor of that dtype on the cpu)."""

    def __init__(self, name: str, dtype: dtypes.DType):
        self.__name__ = self.__qualname__ = name
        self.dtype = dtype
        self.is_cuda = False

    def __repr__(self) -> str:
        return f"<class 'fw.{self.__name__}'>"

    def __instancecheck__(self, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == self.dtype and obj.device.type == "cpu"

    def __call__(self, *args, device=None) -> Tensor:
        """``(data)``, ``(*sizes)``, ``(tensor)`` or ``()``: see the module's description.

        Raises:
            ArgumentTypeError: data that is not a sequence, or sizes mixed with data.
            DTypeError: a tensor of another dtype.
            DeviceError: a device other than the cpu.
        """
        kind = device.partition(":")[0] if isinstance(device, str) else \
            None if device is None else _device(device).type
        if kind not in (None, "cpu"):
            raise DeviceError(f"legacy constructor expects device type: cpu but device type: "
                              f"{kind} was passed", op=self.__name__,
                              hint=f"fw.tensor(data, dtype=fw.{self.dtype.name}, "
                              f"device={str(device)!r}) makes it on that device")
        if not args:
            return empty(0, dtype=self.dtype)
        if all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args):
            return empty(*(int(a) for a in args), dtype=self.dtype)
        if len(args) == 1:
            return self._from(args[0])
        raise ArgumentTypeError(f"takes data or sizes (ints), got "
                                f"({', '.join(type(a).__name__ for a in args)})",
                                op=self.__name__, hint=f"fw.{self.__name__}([1, 2]) for data, "
                                f"fw.{self.__name__}(2, 3) for a shape")

    def _from(self, data) -> Tensor:
        if isinstance(data, Tensor):
            if data.dtype != self.dtype:
                raise DTypeError(f"expected a {self.dtype.name} tensor, got {data.dtype.name}",
                                 op=self.__name__, hint=f"convert it: t.to(fw.{self.dtype.name})")
            return data.view(data.shape)
        if isinstance(data, (str, bytes, numbers.Number)) or not hasattr(data, "__len__"):
            raise ArgumentTypeError(f"data must be a sequence (got {type(data).__name__})",
                                    op=self.__name__, hint=f"fw.{self.__name__}([{data!r}]) "
                                    f"for one value, fw.{self.__name__}(n) for n values unset")
        return tensor(data, dtype=self.dtype)


FloatTensor = LegacyTensorType("FloatTensor", dtypes.float32)
DoubleTensor = LegacyTensorType("DoubleTensor", dtypes.float64)
LongTensor = LegacyTensorType("LongTensor", dtypes.int64)
IntTensor = LegacyTensorType("IntTensor", dtypes.int32)
BoolTensor = LegacyTensorType("BoolTensor", dtypes.bool_)
ByteTensor = LegacyTensorType("ByteTensor", dtypes.uint8)
