"""Containers: modules that hold other modules (Sequential, ModuleList, ModuleDict).

Children are registered under their index ("0", "1", ...) or key, so parameter names and module
paths read ``layers.3.weight`` exactly as in PyTorch and state dicts carry over.
"""

from __future__ import annotations

__all__ = ["ModuleDict", "ModuleList", "Sequential"]

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping

from ...errors import ArgumentTypeError, IndexOutOfRangeError, MissingKeyError
from ...ops.meta import argument_error
from ..module import Module


def _index(idx, length: int, what: str) -> int:
    """``idx`` as a non-negative position in a container of ``length`` children."""
    try:
        idx = operator.index(idx)
    except TypeError:
        raise argument_error(what, f"indices must be integers or slices, got "
                             f"{type(idx).__name__}", "index with an int (net[0]) or a slice "
                             "(net[1:])", error=ArgumentTypeError, index=idx) from None
    if not -length <= idx < length:
        raise argument_error(what, f"index {idx} is out of range for a {what} of {length} "
                             "modules", f"use an index in [{-length}, {length})" if length
                             else f"the {what} is empty: append modules first",
                             error=IndexOutOfRangeError, index=idx, length=length)
    return idx % length


def _module(container: Module, value, position, arrived=None) -> Module:
    """``value`` if it is a Module (what a container may hold), else an error naming where;
    ``arrived`` is everything the container was given, for the inputs line."""
    if isinstance(value, Module):
        return value
    name = type(container).__name__
    what = "a function" if callable(value) and not isinstance(value, type) else (
        "a class" if isinstance(value, type) else f"{type(value).__name__} {value!r}")
    hint = ("wrap a function in a Module (its forward calls it), e.g. nn.ReLU() for fw.relu"
            if callable(value) else "pass layers such as nn.Linear(2, 2) or nn.ReLU()")
    if isinstance(value, type):
        hint = f"create an instance: {value.__name__}(...)"
    raise argument_error(name, f"entry {position!r} is {what}, not a Module", hint,
                         error=ArgumentTypeError, values=(value,) if arrived is None
                         else arrived)


def _renumber(container: Module, modules: list) -> None:
    """Re-register ``modules`` as children "0", "1", ... (paths and names follow)."""
    for name in list(container._modules):
        delattr(container, name)
    for i, module in enumerate(modules):
        container.add_module(str(i), module)


class _ModuleSequence(Module):
    """What Sequential and ModuleList share: length, iteration and list-style growth."""

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module):
        """Add ``module`` at the end (named by its position)."""
        self.add_module(str(len(self)), _module(self, module, len(self)))
        return self

    def extend(self, modules: Iterable[Module]):
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module):
        """Insert ``module`` before position ``index``; children are renumbered."""
        modules = list(self._modules.values())
        modules.insert(index, _module(self, module, index))
        _renumber(self, modules)
        return self

    def pop(self, index: int = -1) -> Module:
        module = self[index]
        del self[index]
        return module

    def get_config(self) -> dict:
        """The children as they are now, under their names: what a model folder stores to
        rebuild the container (``fw_core.io.config``)."""
        return {"modules": dict(self._modules)}


class Sequential(_ModuleSequence):
    """Modules run one after another: each output is the next module's input.

    ``Sequential(a, b, c)`` names the children "0", "1", "2";
    ``Sequential(OrderedDict(fc=..., act=...))`` keeps the given names. Indexing returns a
    child; slicing returns a Sequential of those children (same names). ``append``,
    ``extend``, ``insert`` and ``pop`` work as on a list.

    >>> net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
    >>> net(fw.randn(3, 4)).shape
    (3, 2)
    """

    def __init__(self, *args: Module):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], Mapping):
            for name, module in args[0].items():
                self.add_module(name, _module(self, module, name, list(args[0].values())))
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), _module(self, module, i, args))

    @classmethod
    def from_config(cls, config: dict) -> Sequential:
        return cls(OrderedDict(config["modules"]))

    def forward(self, x):
        for module in self._modules.values():
            x = module(x)
        return x

    def __getitem__(self, idx):
        items = list(self._modules.items())
        if isinstance(idx, slice):
            return type(self)(OrderedDict(items[idx]))
        return items[_index(idx, len(items), "Sequential")][1]

    def __setitem__(self, idx: int, module: Module) -> None:
        name = list(self._modules)[_index(idx, len(self), "Sequential")]
        setattr(self, name, _module(self, module, idx))

    def __delitem__(self, idx) -> None:
        names = list(self._modules)
        positional = names == [str(i) for i in range(len(names))]
        for name in (names[idx] if isinstance(idx, slice)
                     else [names[_index(idx, len(names), "Sequential")]]):
            delattr(self, name)
        if positional:  # keep "0", "1", ... contiguous, as PyTorch does
            _renumber(self, list(self._modules.values()))


class ModuleList(_ModuleSequence):
    """A list of modules, registered so their parameters are found (and named "0", "1", ...).

    It has no forward: iterate over it in your own forward. Indexing, slicing, ``append``,
    ``extend``, ``insert``, ``pop``, ``del`` and ``+=`` work as on a list.

    >>> self.layers = fw.nn.ModuleList(fw.nn.Linear(8, 8) for _ in range(3))
    """

    def __init__(self, modules: Iterable[Module] | None = None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    @classmethod
    def from_config(cls, config: dict) -> ModuleList:
        return cls(config["modules"].values())

    def __getitem__(self, idx):
        values = list(self._modules.values())
        if isinstance(idx, slice):
            return type(self)(values[idx])
        return values[_index(idx, len(values), "ModuleList")]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(str(_index(idx, len(self), "ModuleList")), _module(self, module, idx))

    def __delitem__(self, idx) -> None:
        modules = list(self._modules.values())
        if isinstance(idx, slice):
            del modules[idx]
        else:
            del modules[_index(idx, len(modules), "ModuleList")]
        _renumber(self, modules)

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return type(self)([*self, *other])


class ModuleDict(Module):
    """A dict of modules by name (insertion ordered), registered like attributes.

    >>> self.heads = fw.nn.ModuleDict({"cls": fw.nn.Linear(8, 3), "box": fw.nn.Linear(8, 4)})
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable | None = None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def get_config(self) -> dict:
        """The children as they are now: what a model folder stores (``fw_core.io.config``)."""
        return {"modules": dict(self._modules)}

    @classmethod
    def from_config(cls, config: dict) -> ModuleDict:
        return cls(config["modules"])

    def __getitem__(self, key: str) -> Module:
        try:
            return self._modules[key]
        except KeyError:
            raise argument_error("ModuleDict", f"no entry {key!r}",
                                 f"use one of its keys: {', '.join(map(repr, self._modules))}"
                                 if self._modules else "the ModuleDict is empty",
                                 error=MissingKeyError, key=key) from None

    def __setitem__(self, key: str, module: Module) -> None:
        if not isinstance(key, str):
            raise argument_error("ModuleDict", f"keys must be strings, got "
                                 f"{type(key).__name__} {key!r}", f"use a name: "
                                 f"ModuleDict({{{str(key)!r}: ...}})", error=ArgumentTypeError,
                                 key=key)
        if "." in key or not key:
            raise argument_error("ModuleDict", f"key {key!r} cannot be a module name (empty or "
                                 "with a '.', which separates path parts)",
                                 f"use a name like {key.replace('.', '_') or 'head'!r}", key=key)
        self.add_module(key, _module(self, module, key))

    def __delitem__(self, key: str) -> None:
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules: Mapping[str, Module] | Iterable) -> None:
        """Add (or replace) entries from a mapping or an iterable of (name, module) pairs."""
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for key, module in pairs:
            self[key] = module

    def pop(self, key: str) -> Module:
        module = self[key]
        del self[key]
        return module

    def clear(self) -> None:
        for key in list(self._modules):
            del self[key]
