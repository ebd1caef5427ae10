"""Shapes with named dimensions: a shape entry is an int, a dimension name, or a *size
expression* ``scale * dim_1 * ... * dim_k + offset`` (docs/fwm_format.md), resolved from the
sizes a call's inputs give the named dimensions."""

from __future__ import annotations

import math
from typing import NamedTuple

from .errors import EdgeError


class Size(NamedTuple):
    """``scale * prod(dims) + offset`` for a call's dimension sizes."""

    dims: tuple[str, ...]
    scale: int
    offset: int

    def at(self, sizes: dict[str, int]) -> int:
        """The value for the dimension sizes ``sizes`` (every name in ``dims`` bound)."""
        return self.scale * math.prod(sizes[d] for d in self.dims) + self.offset

    def __str__(self) -> str:
        terms = "*".join([str(self.scale)] * (self.scale != 1 or not self.dims) + list(self.dims))
        return terms + (f"{self.offset:+d}" if self.offset else "")


def decode_size(obj, where: str) -> Size:
    """The Size of a format object ``{"dims": [...], "scale": k, "offset": c}``."""
    if not (isinstance(obj, dict) and set(obj) == {"dims", "scale", "offset"}
            and isinstance(obj["dims"], list) and all(isinstance(d, str) for d in obj["dims"])
            and all(_is_int(obj[k]) for k in ("scale", "offset"))):
        raise EdgeError(f"{where}: {obj!r} is not a size expression (expected "
                        '{"dims": [names], "scale": int, "offset": int}); export the model again')
    return Size(tuple(obj["dims"]), obj["scale"], obj["offset"])


def decode_shape(entries, where: str) -> tuple:
    """A shape as the format writes it: a list of ints >= 0, dimension names and sizes."""
    if not isinstance(entries, list):
        raise EdgeError(f"{where}: shape {entries!r} is not a list; export the model again")
    shape = []
    for entry in entries:
        if isinstance(entry, dict) and set(entry) == {"size"}:
            shape.append(decode_size(entry["size"], where))
        elif isinstance(entry, str) or (_is_int(entry) and entry >= 0):
            shape.append(entry)
        else:
            raise EdgeError(f"{where}: shape entry {entry!r} is neither a size, a dimension name "
                            "nor a size expression; export the model again")
    return tuple(shape)


def dims_of(obj, names: bool = True) -> set[str]:
    """The dimension names a decoded shape mentions (``names``: bare strings are names) or,
    with ``names=False``, that the size expressions in an attribute mention."""
    if isinstance(obj, str):
        return {obj} if names else set()
    if isinstance(obj, Size):
        return set(obj.dims)
    if isinstance(obj, (tuple, list)):
        return set().union(*(dims_of(x, names) for x in obj))
    if isinstance(obj, slice):
        return dims_of((obj.start, obj.stop, obj.step), names)
    if isinstance(obj, dict):
        return dims_of(tuple(obj.values()), names)
    return set()


def resolve(obj, sizes: dict[str, int]):
    """``obj`` (a shape, or an attribute holding sizes) with every dimension name and size
    expression replaced by its value for ``sizes``; strings stay strings outside shapes."""
    if obj.__class__ is Size:
        return obj.at(sizes)
    if isinstance(obj, tuple):
        return tuple(resolve(x, sizes) for x in obj)
    if isinstance(obj, slice):
        return slice(resolve(obj.start, sizes), resolve(obj.stop, sizes), resolve(obj.step, sizes))
    if isinstance(obj, dict):
        return {k: resolve(v, sizes) for k, v in obj.items()}
    return obj


def resolve_shape(shape: tuple, sizes: dict[str, int]) -> tuple[int, ...]:
    """A decoded shape's sizes for the dimension sizes ``sizes``."""
    return tuple(sizes[e] if isinstance(e, str) else resolve(e, sizes) for e in shape)


def shape_text(shape) -> str:
    """A decoded shape as a user reads it: ``(batch, 16)``."""
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
