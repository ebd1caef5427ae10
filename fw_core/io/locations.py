"""``map_location``, as ``torch.load`` takes it, and the walk that rebuilds a loaded nest.

fw puts a loaded tensor on the CPU unless ``map_location`` names another device, whatever
device it was saved from: unlike torch, which restores each tensor to the device it was saved
on, a checkpoint saved on a GPU loads on a machine without one.
"""

from __future__ import annotations

import collections
from collections.abc import Callable

from ..device import Device
from ..device import get as get_device
from ..errors import ArgumentTypeError, CheckpointError

#: how deeply dicts, lists, tuples and sets may nest (a deeper nest is a cycle or a crafted file)
MAX_DEPTH = 100


class StorageHandle:
    """What a ``map_location`` callable receives as its ``storage``: it answers ``cpu()``,
    ``cuda(index)`` and ``to(device)`` with the handle of the storage on that device, as
    ``lambda storage, loc: storage.cuda(0)`` expects; returning the handle keeps the device."""

    def __init__(self, location: str, target: str = "cpu"):
        self.location, self.device = location, target

    def cpu(self) -> StorageHandle:
        return StorageHandle(self.location, "cpu")

    def cuda(self, device=None, non_blocking: bool = False) -> StorageHandle:
        index = getattr(device, "index", device)
        return StorageHandle(self.location, "cuda" if index is None else f"cuda:{index}")

    def to(self, device, non_blocking: bool = False) -> StorageHandle:
        return StorageHandle(self.location, str(device))


def resolver(map_location) -> Callable[[str], Device]:
    """For ``map_location`` (None, a device string, an fw or torch device, a dict from saved
    locations to devices, or a callable ``f(storage, location)``), the function from a saved
    location ("cpu", "cuda:0") to the Device its tensors load onto.

    Raises:
        ArgumentTypeError: ``map_location`` is none of these.
    """
    if map_location is None:
        return lambda location: get_device("cpu")
    if isinstance(map_location, dict):
        table = {str(k): _device_name(v) for k, v in map_location.items()}
        return lambda location: get_device(table.get(location, "cpu"))
    if callable(map_location) and not _is_device(map_location):
        return lambda location: get_device(_called(map_location, location))
    name = _device_name(map_location)
    return lambda location: get_device(name)


def _is_device(value) -> bool:
    return isinstance(value, (str, Device)) or (
        hasattr(value, "type") and hasattr(value, "index"))  # a torch.device


def _device_name(value) -> str:
    if not _is_device(value):
        raise ArgumentTypeError(
            f"map_location {value!r} is a {type(value).__name__}",
            hint="give a device ('cpu', 'cuda:0', fw.device(...)), a dict "
            "{saved location: device}, or a callable f(storage, location)")
    return str(value)


def _called(map_location: Callable, location: str) -> str:
    result = map_location(StorageHandle(location), location)
    if result is None:
        return "cpu"
    if isinstance(result, StorageHandle):
        return result.device
    return _device_name(result)


def mapped(obj, leaf: Callable, depth: int = 0):
    """``obj`` with every value that is not a dict, list, tuple or set replaced by
    ``leaf(value)``; containers are rebuilt with their types (an OrderedDict stays one, with
    its attributes, such as a state dict's ``_metadata``).

    Raises:
        CheckpointError: the nest is deeper than :data:`MAX_DEPTH` (or contains itself).
    """
    if depth > MAX_DEPTH:
        raise CheckpointError(f"the checkpoint nests more than {MAX_DEPTH} levels deep (or "
                              "contains itself)", hint="save a flatter structure")
    if isinstance(obj, dict):
        out = collections.OrderedDict() if isinstance(obj, collections.OrderedDict) else (
            collections.Counter() if isinstance(obj, collections.Counter) else {})
        for key, value in obj.items():
            out[key] = mapped(value, leaf, depth + 1)
        if isinstance(obj, collections.OrderedDict):
            out.__dict__.update(mapped(vars(obj), leaf, depth + 1))
        return out
    if isinstance(obj, (list, tuple, set, frozenset)):
        return type(obj)(mapped(value, leaf, depth + 1) for value in obj)
    return leaf(obj)
