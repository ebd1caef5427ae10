"""Nested results as a flat list of tensors and a structure to rebuild them from.

Tuples, lists and dicts are containers; tensors are leaves; anything else is kept as a constant
of the structure. A compiled function rebuilds its result from a plan's arrays this way, and the
``fw.func`` transforms map over the tensors of nested arguments and results.
"""

from __future__ import annotations

from .tensor import Tensor


def flatten(obj, leaves: list):
    """Append the tensors of ``obj`` to ``leaves`` (depth first); return its structure."""
    if isinstance(obj, Tensor):
        leaves.append(obj)
        return ("tensor",)
    if isinstance(obj, (tuple, list)):
        return (type(obj), [flatten(o, leaves) for o in obj])
    if isinstance(obj, dict):
        return (dict, [(k, flatten(v, leaves)) for k, v in obj.items()])
    return ("const", obj)


def unflatten(structure, tensors):
    """The object ``structure`` describes, its tensors taken in order from iterator
    ``tensors``."""
    kind = structure[0]
    if kind == "tensor":
        return next(tensors)
    if kind == "const":
        return structure[1]
    if kind is dict:
        return {k: unflatten(s, tensors) for k, s in structure[1]}
    items = [unflatten(s, tensors) for s in structure[1]]
    return kind(items) if kind is not tuple else tuple(items)
