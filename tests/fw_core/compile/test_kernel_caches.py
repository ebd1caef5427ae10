"""fw.compile.explain() ends with the counters of every kernel cache: fw's fused kernels and
each plugin's (fw_register_kernel_caches)."""

import fw_core as fw
from fw_core import hookimpl
from fw_core.records import KernelCache


class Programs:
    """A plugin whose cache reports counters, and one whose report breaks."""

    def __init__(self):
        self.counters = {"hits": 3, "misses": 2, "evictions": 1, "size": 1, "capacity": 1}

    @hookimpl
    def fw_register_kernel_caches(self):
        def broken():
            raise RuntimeError("the library is gone")

        return [KernelCache(name="test.programs", info=lambda: dict(self.counters)),
                KernelCache(name="test.broken", info=broken)]


def test_explain_lists_every_cache_with_its_counters():
    plugin = Programs()
    fw.plugins.register(plugin, "fw_testcaches")
    try:
        text = fw.compile.explain()
        lines = text.splitlines()
        start = lines.index("kernel caches:")
        assert lines[start + 1].startswith("  fused kernels (fw_core): hits ")
        assert ("  test.programs (fw_testcaches): hits 3, misses 2, evictions 1, size 1, "
                "capacity 1") in lines
        assert "  test.broken (fw_testcaches): error RuntimeError: the library is gone" in lines
        plugin.counters["hits"] = 4
        row = next(r for r in fw.plugins.kernel_caches() if r["name"] == "test.programs")
        assert row == {"name": "test.programs", "plugin": "fw_testcaches", "hits": 4,
                       "misses": 2, "evictions": 1, "size": 1, "capacity": 1}
    finally:
        fw.plugins.unregister("fw_testcaches")
    assert "test.programs" not in fw.compile.explain()
