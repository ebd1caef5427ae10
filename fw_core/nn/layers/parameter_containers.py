"""ParameterList and ParameterDict: parameters held in a list or a dict, registered on the
module (named "0", "1", ... or by key) so ``parameters()``, optimizers and ``state_dict`` see
them under the same names as PyTorch's.

As in PyTorch, a plain tensor put in either is wrapped in a Parameter; other values are kept
as they are (and are not parameters).
"""

from __future__ import annotations

__all__ = ["ParameterDict", "ParameterList"]

from collections.abc import Iterable, Iterator, Mapping

from ...errors import ArgumentTypeError, MissingKeyError
from ...ops.meta import argument_error
from ...tensor import Tensor
from ..module import Module
from ..parameter import Parameter
from .container import _index


def _as_parameter(value):
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _describe(value) -> str:
    """PyTorch's one line per entry: 'Parameter containing: [torch.float32 of size 2x3]'."""
    if isinstance(value, Tensor):
        size = "x".join(str(n) for n in value.shape)
        kind = "Parameter containing" if isinstance(value, Parameter) else "Tensor"
        device = "" if value.device.type == "cpu" else f" ({value.device})"
        return f"{kind}: [fw.{value.dtype.name} of size {size}{device}]"
    return f"Object of type: {type(value).__name__}"


class ParameterList(Module):
    """A list of parameters: ``self.weights = nn.ParameterList(nn.Parameter(fw.randn(4, 4))
    for _ in range(3))`` registers ``weights.0``, ``weights.1``, ``weights.2``.

    Indexing, slicing (a new ParameterList), ``append``, ``extend``, ``+=``, ``len`` and
    iteration work as on a list.
    """

    def __init__(self, values: Iterable | None = None):
        super().__init__()
        self.__dict__["_size"] = 0
        if values is not None:
            self.extend(values)

    def _key(self, idx) -> str:
        return str(_index(idx, self._size, "ParameterList"))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(self[i] for i in range(self._size)[idx])
        return getattr(self, self._key(idx))

    def __setitem__(self, idx, value) -> None:
        setattr(self, self._key(idx), _as_parameter(value))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator:
        return (self[i] for i in range(self._size))

    def __iadd__(self, values: Iterable) -> ParameterList:
        return self.extend(values)

    def append(self, value) -> ParameterList:
        """Add ``value`` at the end (a tensor becomes a Parameter)."""
        self.__dict__["_size"] = self._size + 1
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable) -> ParameterList:
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise argument_error("ParameterList", f"extend should be called with an iterable, "
                                 f"but got {type(values).__name__}", "pass a list of tensors",
                                 error=ArgumentTypeError, values=values)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(f"({i}): {_describe(v)}" for i, v in enumerate(self))

    def __repr__(self) -> str:
        if not self._size:
            return "ParameterList()"
        lines = "\n".join("    " + line for line in self.extra_repr().split("\n"))
        return f"ParameterList(\n{lines}\n)"


class ParameterDict(Module):
    """A dict of parameters by name (insertion ordered), each registered under its key:
    ``nn.ParameterDict({"scale": nn.Parameter(fw.ones(3))})`` has ``state_dict`` key
    ``scale``. The usual dict methods work (``keys``, ``items``, ``values``, ``update``,
    ``pop``, ``get``, ``setdefault``, ``clear``, ``copy``, ``in``, ``len``).
    """

    def __init__(self, parameters: Mapping | Iterable | None = None):
        super().__init__()
        self.__dict__["_keys"] = {}
        if parameters is not None:
            self.update(parameters)

    def _check_key(self, key) -> str:
        if not isinstance(key, str):
            raise argument_error("ParameterDict", f"keys must be strings, got "
                                 f"{type(key).__name__} {key!r}", "use a name",
                                 error=ArgumentTypeError, key=key)
        return key

    def __getitem__(self, key: str):
        if key not in self._keys:
            raise argument_error("ParameterDict", f"no entry {key!r}",
                                 f"use one of its keys: {', '.join(map(repr, self._keys))}"
                                 if self._keys else "the ParameterDict is empty",
                                 error=MissingKeyError, key=key)
        return getattr(self, key)

    def __setitem__(self, key: str, value) -> None:
        self._keys[self._check_key(key)] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        self[key]  # noqa: B018 - raises a MissingKeyError naming the keys
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._keys))

    def __contains__(self, key) -> bool:
        return key in self._keys

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def keys(self):
        return list(self._keys)

    def values(self):
        return [self[k] for k in self._keys]

    def items(self):
        return [(k, self[k]) for k in self._keys]

    def get(self, key: str, default=None):
        return self[key] if key in self._keys else default

    def setdefault(self, key: str, default=None):
        if key not in self._keys:
            self[key] = default
        return self[key]

    def pop(self, key: str):
        value = self[key]
        del self[key]
        return value

    def popitem(self):
        if not self._keys:
            raise argument_error("ParameterDict", "popitem(): dictionary is empty",
                                 "add an entry first", error=MissingKeyError)
        key = next(reversed(list(self._keys)))
        return key, self.pop(key)

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameters (not copies of them)."""
        return type(self)(self.items())

    def update(self, parameters: Mapping | Iterable) -> None:
        """Add (or replace) entries from a mapping or an iterable of (key, value) pairs."""
        if isinstance(parameters, (Mapping, ParameterDict)):
            pairs = list(parameters.items())
        else:
            pairs = []
            for i, pair in enumerate(parameters):
                try:
                    key, value = pair
                except (TypeError, ValueError):
                    raise argument_error("ParameterDict", f"update entry {i} should be a "
                                         f"(key, value) pair, got {pair!r}", "pass a dict or "
                                         "(key, value) pairs", error=ArgumentTypeError) from None
                pairs.append((key, value))
        for key, value in pairs:
            self[key] = value

    def __or__(self, other: ParameterDict) -> ParameterDict:
        out = self.copy()
        out.update(other)
        return out

    def extra_repr(self) -> str:
        return "\n".join(f"({k}): {_describe(v)}" for k, v in self.items())

    def __repr__(self) -> str:
        lines = "\n".join("    " + line for line in self.extra_repr().split("\n"))
        return f"ParameterDict(\n{lines}\n)" if self._keys else "ParameterDict()"

