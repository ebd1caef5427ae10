"""fw's pool on a device whose own allocator reports its figures (``allocator_usage``) and can
release its cache (``release_cached``), as fw_cuda's does for CuPy's memory pool.

The test device "alloc" keeps NumPy arrays; its allocator figures are what the test says they
are, standing for bytes the device's allocator holds beyond what fw tracks.
"""

from __future__ import annotations

import numpy as np
import pytest

import fw_core as fw
from fw_core import hookimpl
from fw_core.records import DeviceSpec


class Allocator:
    """Device "alloc" with an allocator holding ``used`` bytes live, ``reserved`` in all."""

    def __init__(self):
        self.used = self.reserved = 0
        self.released = 0
        self.spec = DeviceSpec(name="alloc", xp=np, array_type=np.ndarray,
                               from_numpy=lambda a, index: np.array(a, copy=True),
                               to_numpy=lambda a: a,
                               allocator_usage=lambda index: (self.used, self.reserved),
                               release_cached=self.release)

    def release(self, index):
        freed, self.reserved = self.reserved - self.used, self.used
        self.released += freed
        return freed

    @hookimpl
    def fw_register_devices(self):
        return [self.spec]


@pytest.fixture
def alloc():
    device = Allocator()
    fw.plugins.register(device, "alloc_test_device")
    yield device
    fw.memory.set_limit(None, "alloc")
    fw.plugins.unregister("alloc_test_device")


def test_untracked_allocator_bytes_are_temporary(alloc):
    weight = fw.memory.track(fw.zeros(1000).to("alloc"), "parameter")  # 4000 bytes tracked
    alloc.used, alloc.reserved = 10_000, 16_000
    stats = fw.memory.summary("alloc")["alloc:0"]
    assert stats["parameter"]["live_bytes"] == 4000
    assert stats["temporary"]["live_bytes"] == 6000  # what the allocator holds beyond fw's
    assert stats["pool"]["device_used_bytes"] == 10_000
    assert stats["pool"]["device_reserved_bytes"] == 16_000
    assert stats["pool"]["live_bytes"] == 10_000
    alloc.used = 5000
    again = fw.memory.summary("alloc")["alloc:0"]["temporary"]
    assert again["live_bytes"] == 1000 and again["peak_bytes"] == 6000
    assert "temporary" in fw.memory.report("alloc") and weight.device == "alloc"


def test_pressure_is_judged_on_reserved_bytes_and_releases_the_allocator_cache(alloc):
    fw.memory.track(fw.zeros(1000).to("alloc"), "parameter")
    alloc.used, alloc.reserved = 5000, 50_000
    calls = []
    fw.memory.on_pressure("debug", lambda: calls.append("debug"), device="alloc")
    fw.memory.set_limit(20_000, "alloc")  # fw alone holds 4000 bytes: the allocator is over
    assert alloc.released == 45_000 and alloc.reserved == 5000
    assert calls == []  # the allocator's cache sufficed: captures were kept
    assert fw.memory.summary("alloc")["alloc:0"]["pool"]["pressure_events"] == 1


def test_devices_without_allocator_figures_are_unchanged():
    stats = fw.memory.summary("cpu")["cpu"]
    assert "device_used_bytes" not in stats["pool"]
