"""The primitive cache: one oneDNN primitive (or refusal) per op, layout and attributes.

Creating a oneDNN primitive costs 0.4–1.2 ms, and even a hit in oneDNN's own primitive cache
~40 µs, against ~0.4 µs to execute a small one; so fw_onednn keeps the primitives it built. A
key is ``(kind, shape and strides of each operand)``, where ``kind`` names the op, the dtype and
the attributes and post-ops baked into the primitive ("linear+bias:f32"). The cache is bounded:
past its capacity the least recently used entry goes (its native objects are destroyed once no
running call holds it). Refusals are cached too, so a layout oneDNN serves only with its
reference code is asked about once.

Lookups take no lock (a dict lookup is atomic under the GIL; an entry evicted meanwhile lives on
until the call holding it returns); builds and evictions take one. The counters are plain
integers: under concurrent threads they may miss an increment.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass

from .arguments import whole_number

DEFAULT_CAPACITY = 1024


@dataclass(frozen=True)
class CacheInfo:
    """What :func:`fw_onednn.cache_info` reports.

    Attributes:
        hits: lookups that found a primitive or refusal.
        misses: lookups that had to ask oneDNN (each built a primitive or a refusal).
        evictions: entries dropped to stay within ``capacity``.
        size: entries held now.
        capacity: the most entries held.
        refusals: of ``size``, layouts oneDNN does not serve fast (fw_cpu runs those calls).
        by_kind: entries held now, per primitive kind ("matmul:f32": 12).
    """

    hits: int
    misses: int
    evictions: int
    size: int
    capacity: int
    refusals: int
    by_kind: dict[str, int]


class PrimitiveCache:
    """A bounded map from layout keys to primitives (or refusals), least recently used out
    first, with counters.

    An entry carries ``used``, the count of lookups and additions when it was last handed out:
    a hit costs one dict lookup and two integer writes (an ``OrderedDict`` reordered per hit
    costs ~0.25 µs more), and eviction, which happens only when a miss has just spent ~1 ms
    building, finds the oldest by a scan.
    """

    def __init__(self, capacity: int = DEFAULT_CAPACITY):
        self._entries: dict = {}
        self._lock = threading.Lock()
        self.capacity = capacity
        self.hits = self.misses = self.evictions = 0

    def lookup(self, key):
        """The entry for ``key`` (marked as just used), or None."""
        entry = self._entries.get(key)
        if entry is not None:
            self.hits += 1
            entry.used = self.hits + self.misses
        return entry

    def add(self, key, build, *args):
        """Build the entry for ``key`` with ``build(*args)`` after a missed lookup, keep it
        (evicting the least recently used beyond capacity) and return it."""
        with self._lock:
            entry = build(*args)
            self.misses += 1
            entry.used = self.hits + self.misses
            self._entries[key] = entry
            self._evict(self.capacity)
        return entry

    def latest(self):
        """The entry looked up or added last (which primitive a call just used, for tests and
        benchmarks), or None when the cache is empty."""
        return max(self._entries.values(), key=lambda entry: entry.used, default=None)

    def resize(self, capacity: int) -> None:
        """Hold at most ``capacity`` entries from now on, evicting the oldest beyond it."""
        with self._lock:
            self.capacity = capacity
            self._evict(capacity)

    def _evict(self, capacity: int) -> None:
        entries = self._entries
        while len(entries) > capacity:
            del entries[min(entries, key=lambda k: entries[k].used)]
            self.evictions += 1

    def clear(self) -> None:
        """Drop every entry and reset the counters."""
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = self.evictions = 0

    def info(self) -> CacheInfo:
        """The counters and what is held now."""
        entries = list(self._entries.items())
        by_kind: dict[str, int] = {}
        for key, _ in entries:
            by_kind[key[0]] = by_kind.get(key[0], 0) + 1
        return CacheInfo(hits=self.hits, misses=self.misses, evictions=self.evictions,
                         size=len(entries), capacity=self.capacity,
                         refusals=sum(1 for _, e in entries if not e.serves), by_kind=by_kind)


#: the process's cache of every fw_onednn kernel
PRIMITIVES = PrimitiveCache()


def cache_info() -> CacheInfo:
    """Hits, misses, evictions and contents of fw_onednn's primitive cache (a
    :class:`CacheInfo`)."""
    return PRIMITIVES.info()


def info_dict() -> dict:
    """:func:`cache_info` as a dict, for ``fw.plugins.kernel_caches()``."""
    return dataclasses.asdict(PRIMITIVES.info())


def cache_clear() -> None:
    """Drop every cached primitive (they are rebuilt on the next call) and reset the counters."""
    PRIMITIVES.clear()


def set_cache_capacity(capacity: int) -> None:
    """Keep at most ``capacity`` primitives (default 1024), evicting the least recently used.

    Raises:
        ArgumentError: ``capacity`` is not a positive integer.
    """
    PRIMITIVES.resize(whole_number(capacity, least=1, setter="fw_onednn.set_cache_capacity",
                                   name="capacity", example="fw_onednn.set_cache_capacity(4096)"))
