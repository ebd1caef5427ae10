"""Plan cache: plans keyed by call signature, bounded (LRU), with counters and the reasons of
every miss, so ``fw.compile.explain()`` can say why each recompile happened."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from .._state import state
from ..tensor import Tensor


def signature(args: tuple) -> tuple:
    """What a plan depends on: per argument its shape, dtype, device and requires_grad (a tensor)
    or its value (anything else), plus the grad mode."""
    parts = []
    for a in args:
        if isinstance(a, Tensor):
            d = a._data
            parts.append((d.shape, d.dtype.str, a._device.type, a._device.index,
                          a.requires_grad))
        else:
            try:
                hash(a)
                parts.append(("value", a))
            except TypeError:
                parts.append(("object", id(a)))
    return (state.grad_enabled, tuple(parts))


def describe_signature(key: tuple) -> str:
    grad, parts = key
    shown = []
    for p in parts:
        if p[0] in ("value", "object"):
            shown.append(repr(p[1]) if p[0] == "value" else "<object>")
        else:
            shown.append(f"{_dtype_name(p[1])}{list(p[0])}")
    return f"({', '.join(shown)}){'' if grad else ' no_grad'}"


def size_changes(old: tuple, new: tuple) -> list[tuple[int, int, int, int]] | None:
    """``[(argument, dim, old size, new size)]`` when ``new`` differs from ``old`` only in
    tensor sizes (same ranks, dtypes, devices, values); None otherwise."""
    if old[0] != new[0] or len(old[1]) != len(new[1]):
        return None
    changes = []
    for position, (a, b) in enumerate(zip(old[1], new[1])):
        if a[0] in ("value", "object") or b[0] in ("value", "object"):
            if a != b:
                return None
            continue
        if a[1:] != b[1:] or len(a[0]) != len(b[0]):
            return None
        changes += [(position, dim, x, y) for dim, (x, y) in enumerate(zip(a[0], b[0]))
                    if x != y]
    return changes


@dataclass
class Entry:
    """One cached signature: a plan, or the reasons the function stays eager for it."""

    plan: object | None
    breaks: list[str] = field(default_factory=list)
    modules: tuple = ()  # (module, training) pairs the trace depends on
    grads: tuple = ()  # (leaf, had a .grad) pairs the trace depends on
    rebuilt: bool = False  # made by a partial rebuild (for a size of a dynamic dimension)

    def guards_hold(self) -> str | None:
        """None when the plan still applies, else why not."""
        for module, training in self.modules:
            if module.training != training:
                mode = "train()" if module.training else "eval()"
                return f"module {module.path or type(module).__name__} switched to {mode}"
        for leaf, had_grad in self.grads:
            if (leaf.grad is not None) != had_grad:
                return (f"a {leaf.dtype.name}{list(leaf.shape)} leaf "
                        f"{'has' if leaf.grad is not None else 'no longer has'} a .grad")
        return None


class PlanCache:
    """An LRU map from signature to :class:`Entry` with hit/miss/eviction counters."""

    def __init__(self, max_plans: int = 32):
        self.max_plans = max_plans
        self._entries: OrderedDict[tuple, Entry] = OrderedDict()
        self.hits = self.misses = self.evictions = 0

    def get(self, key: tuple) -> Entry | None:
        entry = self._entries.get(key)
        if entry is None:
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return entry

    def put(self, key: tuple, entry: Entry) -> tuple | None:
        """Store ``entry``; returns the evicted key, if any."""
        self._entries[key] = entry
        self._entries.move_to_end(key)
        if len(self._entries) > self.max_plans:
            evicted, _ = self._entries.popitem(last=False)
            self.evictions += 1
            return evicted
        return None

    def keys(self) -> list[tuple]:
        return list(self._entries)

    def items(self) -> list[tuple[tuple, Entry]]:
        """Every (signature, entry), least recently used first, without counting hits."""
        return list(self._entries.items())

    def drop(self, key: tuple) -> None:
        self._entries.pop(key, None)

    def clear(self) -> None:
        self._entries.clear()

    def info(self) -> dict:
        return {"entries": len(self._entries), "max_plans": self.max_plans, "hits": self.hits,
                "misses": self.misses, "evictions": self.evictions}

    def __len__(self) -> int:
        return len(self._entries)


def _dtype_name(code: str) -> str:
    import numpy as np

    return np.dtype(code).name
