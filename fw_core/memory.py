"""Memory: lifecycle tags, a recycling pool per device, live/peak bytes, pressure response.

Every buffer fw holds carries a lifecycle tag (:data:`TAGS`), counted without any per-op cost:
:func:`track` tags a long-lived tensor where it is made (parameter, gradient, optimizer state;
about a microsecond, and its bytes leave the count when it dies), and :func:`allocate` /
:func:`release` hand out raw device arrays from a per-device :class:`Pool` that recycles
blocks by size class. Under pressure (a device holds more than its limit) the pool drops its
free blocks, then calls :func:`on_pressure` callbacks tag by tag in the policy's release order
(debug captures first) until it is under the limit: no ``del`` or ``empty_cache()`` needed.
Policies come from the device plugins (``fw.plugins.memory_policies``), with built-in
"default" and "low_memory" ones for devices that lack them.

Threads share the pools: one re-entrant lock guards every count, free list and table here
(re-entrant because a tensor's death, hence :func:`_forget`, can happen inside any of them).
It is taken per tracked tensor, allocation, release and report, never per op.
"""

from __future__ import annotations

import bisect
import math
import threading
import weakref
from dataclasses import replace

import numpy as np

from .errors import ArgumentError
from .records import MemoryPolicy

#: lifecycle tags, in the order reports list them
TAGS = ("parameter", "gradient", "optimizer_state", "activation", "cache", "debug", "temporary")
_TAGSET = frozenset(TAGS)
_MIN_BLOCK = 512
_lock = threading.RLock()


#: four size classes per octave: at most 25% rounding waste, against 100% for powers of two
_QUARTER_OCTAVES = tuple(base * k // 4 for base in (1 << e for e in range(9, 41))
                         for k in (4, 5, 6, 7))


#: used for a device that registers no policy of the selected name ("*": any device)
BUILTIN_POLICIES = {
    "default": MemoryPolicy(name="default", device="*"),
    "low_memory": MemoryPolicy(name="low_memory", device="*", size_classes=_QUARTER_OCTAVES),
}


class Pool:
    """One device's memory accounting and block cache: its ``device``, the ``policy`` in force
    (a :class:`~fw_core.records.MemoryPolicy`) and ``limit``, the pressure threshold in bytes
    (None: no limit)."""

    def __init__(self, device, policy: MemoryPolicy):
        self.device = device
        self.xp = device.xp
        _apply(self, policy)  # sets .policy and .limit
        self.live, self.peak, self.count = (dict.fromkeys(TAGS, 0) for _ in range(3))
        self.total = self.total_peak = 0
        self.free: dict[int, list] = {}
        self.free_bytes = self.reserved = 0
        self.hits = self.misses = self.pressure_events = 0
        self._out: dict[int, tuple] = {}  # id(array) -> (array, block, size class, tag, nbytes)
        self._relieving = False
        self.untracked_peak = 0  # sampled at each pressure check and report
        self.device_used_peak = 0  # the device allocator's live bytes, sampled likewise

    def _add(self, tag: str, nbytes: int) -> None:
        live = self.live[tag] = self.live[tag] + nbytes
        self.count[tag] += 1
        if live > self.peak[tag]:
            self.peak[tag] = live
        self.total += nbytes
        if self.total > self.total_peak:
            self.total_peak = self.total
        if self.limit is not None and self.held() > self.limit:
            self.relieve()

    def _sub(self, tag: str, nbytes: int) -> None:
        self.live[tag] -= nbytes
        self.count[tag] -= 1
        self.total -= nbytes

    def size_class(self, nbytes: int) -> int:
        """The block size an allocation of ``nbytes`` is rounded up to."""
        classes = self.policy.size_classes
        if classes and nbytes <= classes[-1]:
            return classes[bisect.bisect_left(classes, nbytes)]
        return max(_MIN_BLOCK, 1 << (max(nbytes, 1) - 1).bit_length())

    def allocate(self, shape, dtype, tag: str = "temporary"):
        """A raw array of the device with this shape and dtype, uninitialised, counted under
        ``tag`` until :meth:`release`. Reuses a free block of the same size class if any."""
        _check_tag(tag)
        dtype = np.dtype(getattr(dtype, "numpy", dtype))
        shape = tuple(int(s) for s in shape)
        nbytes = math.prod(shape) * dtype.itemsize
        cls = self.size_class(nbytes)
        with _lock:
            blocks = self.free.get(cls)
            if blocks:
                block = blocks.pop()
                self.free_bytes -= cls
                self.hits += 1
            else:
                block = self.xp.empty(cls, dtype=self.xp.uint8)
                self.reserved += cls
                self.misses += 1
            array = block[:nbytes].view(dtype).reshape(shape)
            self._out[id(array)] = (array, block, cls, tag, nbytes)
            self._add(tag, nbytes)
        return array

    def owns(self, array) -> bool:
        entry = self._out.get(id(array))
        return entry is not None and entry[0] is array

    def release(self, array) -> None:
        """Give back an array from :meth:`allocate`; its block is kept for reuse."""
        with _lock:
            if not self.owns(array):
                raise ArgumentError("this array was not allocated by fw.memory.allocate, or was "
                                    "released already",
                                    hint="release each array it returned once")
            _, block, cls, tag, nbytes = self._out.pop(id(array))
            self._sub(tag, nbytes)
            self.free.setdefault(cls, []).append(block)
            self.free_bytes += cls

    def held(self) -> int:
        """Bytes this device holds for fw: fw's live and cached blocks, or, when the device's
        allocator reports its own figures, its reserved bytes if more."""
        held = self.total + self.free_bytes
        usage = self.device.spec.allocator_usage
        if usage is not None:
            used, reserved = usage(self.device.index)
            self.untracked_peak = max(self.untracked_peak, used - self.total)
            self.device_used_peak = max(self.device_used_peak, used)
            held = max(held, reserved)
        return held

    def trim(self) -> int:
        """Drop every cached free block, then the device allocator's; returns the bytes given
        back to the device."""
        with _lock:
            freed, self.free_bytes = self.free_bytes, 0
            self.free.clear()
            self.reserved -= freed
        release_cached = self.device.spec.release_cached
        if release_cached is not None:
            freed += release_cached(self.device.index)
        return freed

    def relieve(self) -> None:
        """The pressure response: drop free blocks, then call release callbacks in policy
        order (each at most once) until the device is back under its limit."""
        with _lock:
            if self._relieving or self.limit is None or self.held() <= self.limit:
                return
            self._relieving = True
            self.pressure_events += 1
            try:
                self.trim()
                for tag in self.policy.release_order:
                    for entry in list(_callbacks.get(tag, ())):
                        if self.held() <= self.limit:
                            return
                        if entry[0] in (None, str(self.device)) and entry in _callbacks[tag]:
                            _callbacks[tag].remove(entry)
                            entry[1]()
            finally:
                self._relieving = False

    def stats(self) -> dict:
        """This device's entry of :func:`summary`. On a device whose allocator reports its
        figures, the bytes it holds beyond fw's count are "temporary" (their peak, sampled at
        pressure checks and reports, is added to fw's own: a bound, not a simultaneous
        maximum), and "pool" adds the allocator's used and reserved bytes."""
        out: dict = {tag: {"live_bytes": self.live[tag], "peak_bytes": self.peak[tag],
                           "count": self.count[tag]} for tag in TAGS}
        out["pool"] = {"policy": self.policy.name, "limit_bytes": self.limit,
                       "live_bytes": self.total, "peak_bytes": self.total_peak,
                       "reserved_bytes": self.reserved, "free_bytes": self.free_bytes,
                       "hits": self.hits, "misses": self.misses,
                       "pressure_events": self.pressure_events}
        usage = self.device.spec.allocator_usage
        if usage is not None:
            used, reserved = usage(self.device.index)
            untracked = max(used - self.total, 0)
            self.untracked_peak = max(self.untracked_peak, untracked)
            self.device_used_peak = max(self.device_used_peak, used)
            temporary = out["temporary"]
            temporary["live_bytes"] += untracked
            temporary["peak_bytes"] = max(temporary["peak_bytes"] + self.untracked_peak,
                                          temporary["live_bytes"])
            out["pool"].update(live_bytes=self.total + untracked,
                               peak_bytes=max(self.total_peak, self.total + untracked),
                               device_used_bytes=used, device_reserved_bytes=reserved,
                               device_used_peak_bytes=self.device_used_peak)
        return out


_pools: dict[str, Pool] = {}
_tracked: dict[int, _Tracked] = {}  # id(tensor) -> its weak reference and accounting
_callbacks: dict[str, list[tuple]] = {}  # tag -> [(device str or None, callback)]
_limits: dict[str | None, int] = {}  # device str (None: every device) -> limit override
_selected = "default"  # the policy name pools use unless set_policy chose another


def _check_tag(tag: str) -> None:
    if tag not in _TAGSET:
        raise ArgumentError(f"unknown memory tag {tag!r}", hint=f"use one of {', '.join(TAGS)}")


def _policy(device_type: str, name: str, strict: bool) -> MemoryPolicy:
    """The device's registered policy ``name``, else the built-in one; non-strict lookups fall
    back to the device's "default" for names it does not know."""
    from . import plugins

    registered = plugins.memory_policies(device_type)
    for candidate in (name,) if strict else (name, "default"):
        if candidate in registered:
            return registered[candidate]
        if candidate in BUILTIN_POLICIES:
            return replace(BUILTIN_POLICIES[candidate], device=device_type)
    known = sorted({*registered, *BUILTIN_POLICIES})
    raise ArgumentError(f"no memory policy {name!r} for device {device_type!r}",
                        hint=f"policies for {device_type}: {', '.join(known)}")


def _apply(pool: Pool, policy: MemoryPolicy) -> None:
    pool.policy = policy
    key = str(pool.device)
    pool.limit = _limits.get(key, _limits.get(None, policy.limit_bytes))


def pool(device="cpu") -> Pool:
    """The :class:`Pool` of a device (a name like "cpu" or a Device), made on first use."""
    from .device import get

    dev = get(device)
    with _lock:
        found = _pools.get(str(dev))
        if found is None:
            found = _pools[str(dev)] = Pool(dev, _policy(dev.type, _selected, strict=False))
        found.device = dev  # a plugin reload may have replaced the device's record
    return found


# -- tracking tensors -----------------------------------------------------------------------
class _Tracked(weakref.ref):
    """A weak reference to a tracked tensor that carries its accounting (one allocation)."""

    __slots__ = ("key", "pool", "tag", "nbytes")


def _forget(entry: _Tracked) -> None:
    with _lock:
        if _tracked.get(entry.key) is entry:  # not a newer tensor that reused the id
            del _tracked[entry.key]
            entry.pool._sub(entry.tag, entry.nbytes)


def track(tensor, tag: str):
    """Count ``tensor``'s bytes under ``tag`` until it dies; returns the tensor.

    Idempotent; tracking again under another tag moves its bytes there. The size is taken now
    (a tensor whose storage is later swapped keeps its first size). About 1 µs: call it where a
    long-lived tensor is made (parameter, gradient, optimizer state), never per op. Arrays from
    :func:`allocate` are already counted: do not track tensors wrapping them.
    """
    _check_tag(tag)
    key = id(tensor)
    with _lock:
        entry = _tracked.get(key)
        if entry is not None:
            if entry.tag != tag:
                entry.pool._sub(entry.tag, entry.nbytes)
                entry.tag = tag
                entry.pool._add(tag, entry.nbytes)
            return tensor
        entry = _tracked[key] = _Tracked(tensor, _forget)
        entry.key, entry.tag, entry.nbytes = key, tag, tensor._data.nbytes
        entry.pool = _pools.get(str(tensor._device)) or pool(tensor._device)
        entry.pool._add(tag, entry.nbytes)
    return tensor


def tag_of(tensor) -> str | None:
    """The tag a tensor is tracked under (None if untracked)."""
    entry = _tracked.get(id(tensor))
    return entry.tag if entry is not None and entry() is tensor else None


def allocate(shape, dtype, tag: str = "temporary", device="cpu"):
    """A raw, uninitialised array from ``device``'s pool, counted under ``tag``."""
    return pool(device).allocate(shape, dtype, tag)


def release(array) -> None:
    """Give an array from :func:`allocate` back to its pool for reuse."""
    with _lock:
        owner = next((p for p in _pools.values() if p.owns(array)), None) or pool()
        owner.release(array)  # raises when no pool owns it


def on_pressure(tag: str, callback, device=None):
    """Call ``callback()`` once when a device (``device``, or any) is over its limit and the
    policy reaches ``tag`` in its release order; the callback drops what it holds (a debug
    capture drops itself). Returns ``cancel()``, which unregisters it if not yet called."""
    _check_tag(tag)
    entry = (None if device is None else str(device), callback)
    with _lock:
        _callbacks.setdefault(tag, []).append(entry)

    def cancel() -> None:
        with _lock:
            if entry in _callbacks.get(tag, ()):
                _callbacks[tag].remove(entry)

    return cancel


# -- policy and limits ----------------------------------------------------------------------
def set_policy(device, name: str) -> MemoryPolicy:
    """Use policy ``name`` (registered for the device, or built-in) for ``device``'s pool;
    an ArgumentError lists the policies there are when it has none of that name."""
    target = pool(device)
    policy = _policy(target.device.type, name, strict=True)
    with _lock:
        _apply(target, policy)
    return policy


def use_policy(name: str) -> None:
    """Select policy ``name`` on every device, now and for pools made later; a device that has
    no policy of that name keeps its "default" (what ``fw.context("low_memory")`` uses)."""
    global _selected
    from . import plugins
    from .device import registry

    known = {n for t in registry.specs for n in plugins.memory_policies(t)} | set(BUILTIN_POLICIES)
    if name not in known:
        raise ArgumentError(f"no memory policy named {name!r}",
                            hint=f"known policies: {', '.join(sorted(known))}")
    with _lock:
        _selected = name
        for existing in _pools.values():
            _apply(existing, _policy(existing.device.type, name, strict=False))


def set_limit(nbytes: int | None, device=None) -> None:
    """Set the pressure threshold in bytes for ``device`` (None: every device); ``nbytes=None``
    goes back to the policy's ``limit_bytes``. Applies at once (a pool over it is relieved)."""
    key = None if device is None else str(pool(device).device)
    with _lock:
        if nbytes is None:
            _limits.pop(key, None)
        else:
            _limits[key] = int(nbytes)
        for existing in _pools.values():
            _apply(existing, existing.policy)
            existing.relieve()


# -- reports --------------------------------------------------------------------------------
def summary(device=None) -> dict:
    """``{device: {tag: {"live_bytes", "peak_bytes", "count"}, ..., "pool": {...}}}`` for
    ``device`` or every device with a pool; "pool" has policy, limit_bytes, live_bytes,
    peak_bytes, reserved_bytes, free_bytes, hits, misses and pressure_events."""
    with _lock:
        pools = [pool(device)] if device is not None else list(_pools.values())
        return {str(p.device): p.stats() for p in pools}


def reset_peak(device=None) -> None:
    """Start peak counting again from the current live bytes."""
    with _lock:
        for p in [pool(device)] if device is not None else _pools.values():
            p.peak = dict(p.live)
            p.total_peak = p.total
            p.untracked_peak = p.device_used_peak = 0


def _size(nbytes: int | None) -> str:
    if nbytes is None:
        return "none"
    value, step = float(nbytes), 0
    while abs(value) >= 1024 and step < 3:
        value, step = value / 1024, step + 1
    return f"{nbytes} B" if step == 0 else f"{value:.1f} {('KiB', 'MiB', 'GiB')[step - 1]}"


def report(device=None) -> str:
    """:func:`summary` as a readable table, one block per device."""
    lines = []
    for name, stats in summary(device).items():
        p = stats["pool"]
        lines.append(f"memory on {name} (policy {p['policy']}, limit {_size(p['limit_bytes'])})")
        lines.append(f"  {'tag':<16}{'live':>12}{'peak':>12}{'count':>8}")
        for tag in TAGS:
            row = stats[tag]
            lines.append(f"  {tag:<16}{_size(row['live_bytes']):>12}"
                         f"{_size(row['peak_bytes']):>12}{row['count']:>8}")
        lines.append(f"  {'total':<16}{_size(p['live_bytes']):>12}{_size(p['peak_bytes']):>12}")
        lines.append(f"  pool: reserved {_size(p['reserved_bytes'])}, free "
                     f"{_size(p['free_bytes'])}, hits {p['hits']}, misses {p['misses']}, "
                     f"pressure events {p['pressure_events']}")
    return "\n".join(lines)
